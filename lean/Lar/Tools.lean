import Lean.Data.Json
import Lar.Num
import Lar.Schema

/-
The eight agent tools and their strict argument schemas: the same table as
core/schema/tools.ts (required keys, types, no unknown keys, strings that must
be non-empty, integers that must be positive).
-/
namespace Lar
open Lean

inductive Tool where
  | runCommand | readFile | writeFile | editFile | listFiles | search | enterStage | submit
  deriving DecidableEq, Repr, Inhabited

def Tool.name : Tool → String
  | .runCommand => "run_command"
  | .readFile => "read_file"
  | .writeFile => "write_file"
  | .editFile => "edit_file"
  | .listFiles => "list_files"
  | .search => "search"
  | .enterStage => "enter_stage"
  | .submit => "submit"

def Tool.all : List Tool :=
  [.runCommand, .readFile, .writeFile, .editFile, .listFiles, .search, .enterStage, .submit]

/-- The first tool of the list with this name. -/
def findTool (name : String) : List Tool → Option Tool
  | [] => none
  | t :: ts => if t.name = name then some t else findTool name ts

def Tool.ofName? (name : String) : Option Tool := findTool name Tool.all

/-! ## Argument schemas -/

inductive ArgType where
  /-- any string -/
  | str
  /-- a string of at least one character (`z.string().min(1)`) -/
  | nonEmptyStr
  /-- a safe integer greater than zero (`z.number().int().positive()`) -/
  | posInt
  | bool
  deriving DecidableEq, Repr

structure ArgSpec where
  key : String
  type : ArgType
  required : Bool
  deriving Repr

/-- The argument table, in the order of core/schema/tools.ts (zod reports the
first failing key in this order, then unknown keys). -/
def Tool.argSpecs : Tool → List ArgSpec
  | .runCommand => [⟨"command", .nonEmptyStr, true⟩, ⟨"cwd", .nonEmptyStr, false⟩, ⟨"timeoutMs", .posInt, false⟩]
  | .readFile => [⟨"path", .nonEmptyStr, true⟩, ⟨"startLine", .posInt, false⟩, ⟨"endLine", .posInt, false⟩]
  | .writeFile => [⟨"path", .nonEmptyStr, true⟩, ⟨"content", .str, true⟩]
  | .editFile => [⟨"path", .nonEmptyStr, true⟩, ⟨"search", .nonEmptyStr, true⟩, ⟨"replace", .str, true⟩]
  | .listFiles => [⟨"path", .nonEmptyStr, false⟩, ⟨"recursive", .bool, false⟩]
  | .search => [⟨"pattern", .nonEmptyStr, true⟩, ⟨"path", .nonEmptyStr, false⟩, ⟨"regex", .bool, false⟩]
  | .enterStage => [⟨"stage", .nonEmptyStr, true⟩, ⟨"reason", .str, false⟩]
  | .submit => [⟨"summary", .str, false⟩]

/-- Argument keys that name a path and so fall under the path policy. -/
def Tool.pathArgs : Tool → List String
  | .runCommand => ["cwd"]
  | .readFile | .writeFile | .editFile | .listFiles | .search => ["path"]
  | .enterStage | .submit => []

/-- The tools that change files: the read-only paths are refused to them. -/
def Tool.writes : Tool → Bool
  | .writeFile | .editFile => true
  | .runCommand | .readFile | .listFiles | .search | .enterStage | .submit => false

def ArgType.accepts : ArgType → Json → Bool
  | .str, .str _ => true
  | .nonEmptyStr, .str s => s != ""
  | .posInt, .num n =>
    (match Num.safeIntOf? n with
     | some i => decide (i > 0)
     | none => false)
  | .bool, .bool _ => true
  | _, _ => false

def ArgType.describe : ArgType → String
  | .str => "expected a string"
  | .nonEmptyStr => "expected a non-empty string"
  | .posInt => "expected a positive integer"
  | .bool => "expected true or false"

/-- One declared key is fine: absent and optional, or present with the right type. -/
def fieldOk (args : Json) (spec : ArgSpec) : Bool :=
  match field? args spec.key with
  | none => !spec.required
  | some v => spec.type.accepts v

/-- Bracketed to the right, like the conjunction of `ArgsValid`: `&&` associates to the
left and core `simp` does not reassociate, so a left-nested chain would leave
`(A ∧ B) ∧ C ↔ A ∧ B ∧ C` unsolved. -/
def argsValidB (t : Tool) (args : Json) : Bool :=
  isObject args && (t.argSpecs.all (fieldOk args) &&
    (objectKeys args).all (fun k => t.argSpecs.any (fun s => decide (s.key = k))))

/-- The first problem with the arguments, in zod's order, as (path inside `args`, message). -/
def firstArgsIssue (t : Tool) (args : Json) : Option (List String × String) :=
  if !isObject args then some ([], "expected an object")
  else match t.argSpecs.find? (fun s => !fieldOk args s) with
    | some s =>
      some ([s.key], match field? args s.key with
        | none => "required"
        | some _ => s.type.describe)
    | none =>
      match (objectKeys args).find? (fun k => !t.argSpecs.any (fun s => s.key == k)) with
      | some k => some ([], s!"unrecognized key \"{k}\"")
      | none => none

end Lar
