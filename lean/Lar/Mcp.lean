/-
MCP tools as the workflow and the verifier name them (core/schema/mcp.ts): `mcp__SERVER__TOOL`
in OpenAI's function-name alphabet (`[A-Za-z0-9_-]`, at most 64 characters), and the stage entries
that permit them (`mcp__` then a glob over that alphabet). Everything works on `List Char`, as in
`Lar.Glob`, so nothing depends on how `String` is represented.
-/
namespace Lar

/-- The longest function name the OpenAI API (and so vLLM's and SGLang's parsers) accept. -/
def maxToolName : Nat := 64

/-- A letter, a digit or `-`: what a server's name is made of between single `_`. ASCII only, as the
TypeScript regular expressions (`Char.isAlphanum` is ASCII). -/
def isMcpWordChar (c : Char) : Bool := c.isAlphanum || c == '-'

/-- OpenAI's alphabet for function names. -/
def isMcpNameChar (c : Char) : Bool := isMcpWordChar c || c == '_'

/-- The text after the prefix `mcp__`; `none` without it. -/
def dropMcpPrefix : List Char → Option (List Char)
  | 'm' :: 'c' :: 'p' :: '_' :: '_' :: rest => some rest
  | _ => none

/-- The text split at its first `__` (JavaScript's `indexOf('__')`): before and after; `none`
without one. -/
def splitAtDunder : List Char → Option (List Char × List Char)
  | [] => none
  | c :: rest =>
    if c == '_' && rest.head? == some '_' then some ([], rest.drop 1)
    else (splitAtDunder rest).map fun p => (c :: p.1, p.2)

/-- A server's part of a name (`SERVER_PART`, `^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$`): not empty, in the
alphabet, no `_` first or last, never two in a row. -/
def isServerPartL (s : List Char) : Bool :=
  !s.isEmpty && s.all isMcpNameChar && s.head? != some '_' && s.getLast? != some '_' &&
    (splitAtDunder s).isNone

def isServerPart (s : String) : Bool := isServerPartL s.toList

/-- A tool's part of a name (`TOOL_PART`, `^[A-Za-z0-9_-]+$`). -/
def isToolPartL (t : List Char) : Bool := !t.isEmpty && t.all isMcpNameChar

/-- `mcp__SERVER__TOOL` split into server and tool (`parseMcpName`): at most 64 characters, the
prefix, SERVER the text before the first `__` after it, TOOL the rest. -/
def parseMcpNameL (name : List Char) : Option (List Char × List Char) :=
  if name.length > maxToolName then none
  else
    match dropMcpPrefix name with
    | none => none
    | some rest =>
      match splitAtDunder rest with
      | none => none
      | some p => if isServerPartL p.1 && isToolPartL p.2 then some p else none

def parseMcpName (name : String) : Option (String × String) :=
  (parseMcpNameL name.toList).map fun p => (String.ofList p.1, String.ofList p.2)

/-- The name is an MCP tool's (`isMcpName`). No built-in tool's name is one: none starts with `mcp__`. -/
def isMcpName (name : String) : Bool := (parseMcpNameL name.toList).isSome

/-- A stage entry that permits MCP tools (`isMcpPattern`): `mcp__`, at most 64 characters, only the
name alphabet and the glob's `*` and `?`. -/
def isMcpPattern (entry : String) : Bool :=
  let cs := entry.toList
  decide (cs.length ≤ maxToolName) && (dropMcpPrefix cs).isSome &&
    cs.all (fun c => isMcpNameChar c || c == '*' || c == '?')

/-- The prefix of every tool name of a server: a server's `mcp_tools` line replaces these. -/
def mcpServerPrefix (server : String) : String := "mcp__" ++ server ++ "__"

end Lar
