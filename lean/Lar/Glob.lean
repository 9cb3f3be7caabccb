/-
Patterns (docs/rewards.md, "Patterns"): the glob relation and its decision
procedure, whitespace normalization, command parts and workspace paths.

Everything here works on `List Char`, so the proofs never look inside `String`
(whose representation is a byte array). A glob character is a Unicode scalar
value (a Lean `Char`); see docs/lean.md for how that compares with the
TypeScript matcher, which indexes UTF-16 code units.
-/
namespace Lar

/-! ## The glob relation -/

/-! ## Deciding it: a set-of-suffixes automaton

The recursive definition is exponential in the number of `*` on bad inputs, so
the checker runs the pattern as a nondeterministic automaton whose states are
suffixes of the pattern, kept without duplicates (at most `|p| + 1` of them).
`globMatchL_iff` proves it decides exactly `Matches`. -/

/-- The pattern suffix accepts the empty text. -/
def nullable : List Char → Bool
  | [] => true
  | c :: p => decide (c = '*') && nullable p

/-- The pattern suffixes that remain after reading one character `d`. -/
def deriv (d : Char) : List Char → List (List Char)
  | [] => []
  | c :: p =>
    if c = '*' then (c :: p) :: deriv d p
    else if c = '?' ∨ c = d then [p] else []

/-- Adds a state unless it is already there. -/
def addUniq (q : List Char) (S : List (List Char)) : List (List Char) :=
  if q ∈ S then S else q :: S

/-- One step of the automaton. -/
def step (d : Char) : List (List Char) → List (List Char)
  | [] => []
  | q :: S => (deriv d q).foldr addUniq (step d S)

/-- Runs the automaton from the state set `S` over the text. -/
def runNFA : List (List Char) → List Char → Bool
  | S, [] => S.any nullable
  | S, d :: s => runNFA (step d S) s

/-- The decision procedure for `Matches`. -/
def globMatchL (p s : List Char) : Bool := runNFA [p] s

/-- `match(pattern, text)` of docs/rewards.md on strings. -/
def globMatch (pattern text : String) : Bool := globMatchL pattern.toList text.toList

/-! ## Whitespace normalization and command parts -/

/-- Space, tab, newline, carriage return, form feed, vertical tab. -/
def isSpace (c : Char) : Bool :=
  c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0c' || c == '\x0b'

/-- The separators of command parts: `;` `&` `|` newline, carriage return, `(` `)` and backtick. -/
def isPartSep (c : Char) : Bool :=
  c == ';' || c == '&' || c == '|' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == '`'

/-- Splits at every separator (dropping it); empty pieces are kept. -/
def splitBy (sep : Char → Bool) : List Char → List (List Char)
  | [] => [[]]
  | c :: cs =>
    let rest := splitBy sep cs
    if sep c then [] :: rest
    else match rest with
      | [] => [[c]]
      | w :: ws => (c :: w) :: ws

/-- Joins pieces with one separator character between them. -/
def joinWith (sep : Char) : List (List Char) → List Char
  | [] => []
  | [w] => w
  | w :: ws => w ++ sep :: joinWith sep ws

/-- `norm(t)`: split at whitespace, drop empty words, join with one space. -/
def normL (t : List Char) : List Char :=
  joinWith ' ' ((splitBy isSpace t).filter (fun w => !w.isEmpty))

/-- `parts(cmd)`: split at the part separators, normalize each piece, drop empty ones. -/
def partsL (cmd : List Char) : List (List Char) :=
  ((splitBy isPartSep cmd).map normL).filter (fun w => !w.isEmpty)

def norm (t : String) : String := String.ofList (normL t.toList)

/-- A pattern matches a command when it matches the normalized command or one of its parts. -/
def commandMatchesB (pattern cmd : List Char) : Bool :=
  globMatchL pattern (normL cmd) || (partsL cmd).any (globMatchL pattern)

/-- The first pattern of the list that matches the command, as `firstMatch` in core/policy/command.ts. -/
def firstCommandMatch (patterns : List String) (cmd : String) : Option String :=
  patterns.find? (fun p => commandMatchesB p.toList cmd.toList)

/-! ## Workspace paths -/

def isAsciiLetter (c : Char) : Bool :=
  ('a' ≤ c && c ≤ 'z') || ('A' ≤ c && c ≤ 'Z')

/-- Drops empty and `.` segments and resolves `..`; `none` when `..` climbs out. -/
def resolveSegs : List (List Char) → List (List Char) → Option (List (List Char))
  | acc, [] => some acc.reverse
  | acc, seg :: rest =>
    if seg.isEmpty || seg == ['.'] then resolveSegs acc rest
    else if seg == ['.', '.'] then
      (match acc with
       | [] => none
       | _ :: acc' => resolveSegs acc' rest)
    else resolveSegs (seg :: acc) rest

/-- `npath(p)`: the normalized workspace-relative path, or why it is rejected. -/
def npath (path : String) : Except String String :=
  let cs := path.toList.map (fun c => if c == '\\' then '/' else c)
  let drive := match cs with
    | c :: ':' :: _ => isAsciiLetter c
    | _ => false
  if cs.head? == some '/' then
    .error s!"\"{path}\" is an absolute path; paths must be relative to the workspace"
  else if cs.head? == some '~' then
    .error s!"\"{path}\" starts with \"~\" (the home folder), which is outside the workspace"
  else if drive then
    .error s!"\"{path}\" names a drive; paths must be relative to the workspace"
  else
    match resolveSegs [] (splitBy (· == '/') cs) with
    | none => .error s!"\"{path}\" climbs out of the workspace with \"..\""
    | some [] => .ok "."
    | some segs => .ok (String.ofList (joinWith '/' segs))

/-- The form of a changed file that `file_changed` patterns see: `npath`, or the path as recorded. -/
def npathOrSelf (path : String) : String :=
  match npath path with
  | .ok n => n
  | .error _ => path

end Lar
