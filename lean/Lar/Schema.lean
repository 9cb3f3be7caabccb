import Lean.Data.Json
import Lar.Num
import Lar.Mcp

/-
The JSON shapes of core/schema/workflow.ts and core/schema/trajectory.ts
(`"lar": 1`) as Lean structures, with `FromJson` / `ToJson` instances.

`lar-verify` receives what the TypeScript side's zod parse outputs (defaults
filled in, unknown keys of events stripped), so reading is strict where zod is
strict (workflow objects reject unknown keys) and lenient where zod strips
(events ignore keys they do not use). Defaults are applied here too, so a
hand-written workflow also loads.
-/
namespace Lar
open Lean

/-! ## Reading JSON -/

/-- The value of a key; `none` when the key is absent (a `null` value is present). -/
def field? (j : Json) (k : String) : Option Json :=
  match j.getObjVal? k with
  | .ok v => some v
  | .error _ => none

def isObject (j : Json) : Bool :=
  match j.getObj? with
  | .ok _ => true
  | .error _ => false

/-- The keys of an object (none for any other value). -/
def objectKeys (j : Json) : List String :=
  match j.getObj? with
  | .ok kvs => kvs.toList.map (·.1)
  | .error _ => []

/-- A string argument, when the key is present with a string value. -/
def strArg? (j : Json) (k : String) : Option String :=
  match field? j k with
  | some (.str s) => some s
  | _ => none

namespace Read

def object (ctx : String) (j : Json) : Except String Unit :=
  if isObject j then pure () else throw s!"{ctx}: expected an object"

/-- Rejects keys outside `allowed`, as zod's `strictObject` does. -/
def strict (ctx : String) (j : Json) (allowed : List String) : Except String Unit := do
  object ctx j
  for k in objectKeys j do
    unless allowed.contains k do throw s!"{ctx}: unknown key \"{k}\""

def req (ctx : String) (j : Json) (k : String) : Except String Json :=
  match field? j k with
  | some v => pure v
  | none => throw s!"{ctx}: missing \"{k}\""

def str (ctx : String) : Json → Except String String
  | .str s => pure s
  | _ => throw s!"{ctx}: expected a string"

def nonEmptyStr (ctx : String) (j : Json) : Except String String := do
  let s ← str ctx j
  if s == "" then throw s!"{ctx}: must not be empty" else pure s

def bool (ctx : String) : Json → Except String Bool
  | .bool b => pure b
  | _ => throw s!"{ctx}: expected true or false"

def num (ctx : String) : Json → Except String JsonNumber
  | .num n => pure n
  | _ => throw s!"{ctx}: expected a number"

def int (ctx : String) (j : Json) : Except String Int := do
  match Num.safeIntOf? (← num ctx j) with
  | some i => pure i
  | none => throw s!"{ctx}: expected an integer"

def posNat (ctx : String) (j : Json) : Except String Nat := do
  let i ← int ctx j
  if i > 0 then pure i.toNat else throw s!"{ctx}: expected a positive integer"

def nat (ctx : String) (j : Json) : Except String Nat := do
  let i ← int ctx j
  if i ≥ 0 then pure i.toNat else throw s!"{ctx}: expected a non-negative integer"

def array (ctx : String) : Json → Except String (List Json)
  | .arr a => pure a.toList
  | _ => throw s!"{ctx}: expected an array"

def strList (ctx : String) (j : Json) : Except String (List String) := do
  (← array ctx j).mapM (str ctx)

/-- A list of non-empty strings (zod's `z.array(z.string().min(1, …))`); `what` names an entry in
the message ("a pattern", "a path"). -/
def nonEmptyStrList (ctx what : String) (j : Json) : Except String (List String) := do
  (← array ctx j).mapM fun v => do
    let s ← str ctx v
    if s == "" then throw s!"{ctx}: {what} must not be empty" else pure s

/-- A list of patterns (core/schema/workflow.ts `Pattern`, `z.string().min(1)`). -/
def patternList (ctx : String) (j : Json) : Except String (List String) :=
  nonEmptyStrList ctx "a pattern" j

/-- A host path (core/schema/workflow.ts `HostPath`, `^(\/|~(\/|$))`): absolute (`/…`), `~`, or
under it (`~/…`). -/
def isHostPathL : List Char → Bool
  | '/' :: _ => true
  | ['~'] => true
  | '~' :: '/' :: _ => true
  | _ => false

/-- A list of host paths (`z.array(HostPath)`). -/
def hostPathList (ctx : String) (j : Json) : Except String (List String) := do
  (← array ctx j).mapM fun v => do
    let s ← str ctx v
    unless isHostPathL s.toList do
      throw s!"{ctx}: a host path is absolute (\"/…\") or in the home folder (\"~/…\"), got \"{s}\""
    pure s

/-- A size as the sandbox's limits take it (core/schema/workflow.ts `Size`): a string of a whole
number without leading zeros, then optionally K, M, G or T (powers of 1024), e.g. "512M" or "8G";
at least `least` bytes (written `leastText` in the message). Kept as written. -/
def size (ctx : String) (least : Nat) (leastText : String) (j : Json) : Except String String := do
  let s ← str ctx j
  let cs := s.toList
  let digits := cs.takeWhile Char.isDigit
  let shift? : Option Nat := match cs.dropWhile Char.isDigit with
    | [] => some 0
    | ['K'] => some 10
    | ['M'] => some 20
    | ['G'] => some 30
    | ['T'] => some 40
    | _ => none
  match digits, shift? with
  | d :: _, some shift =>
    if d == '0' then throw s!"{ctx}: a size is a whole number followed by K, M, G or T (powers of 1024), e.g. \"512M\" or \"8G\""
    let n := digits.foldl (fun (acc : Nat) (c : Char) => acc * 10 + (c.toNat - '0'.toNat)) 0
    if n * 2 ^ shift < least then throw s!"{ctx}: must be at least {leastText}"
    pure s
  | _, _ => throw s!"{ctx}: a size is a whole number followed by K, M, G or T (powers of 1024), e.g. \"512M\" or \"8G\""

/-- An optional key read with `f`, or the default when absent. -/
def optD {α : Type} (j : Json) (k : String) (d : α) (f : Json → Except String α) : Except String α :=
  match field? j k with
  | some v => f v
  | none => pure d

/-- An optional key read with `f`. -/
def opt {α : Type} (j : Json) (k : String) (f : Json → Except String α) : Except String (Option α) :=
  match field? j k with
  | some v => some <$> f v
  | none => pure none

end Read

/-! ## Workflow (core/schema/workflow.ts) -/

/-- Exit conditions: a small, decidable language evaluated over one stage visit. -/
inductive ExitCondition where
  | toolSucceeded (tool : String) (atLeast : Nat)
  | commandSucceeded (pattern : String) (afterLastChange : Bool)
  | commandRan (pattern : String) (afterLastChange : Bool)
  | fileChanged (pattern : Option String)
  /-- The workflow's outcome command itself ran, and its tests with it (`outcome_ran`). -/
  | outcomeRan (afterLastChange : Bool)
  deriving Repr, Inhabited

def ExitCondition.kind : ExitCondition → String
  | .toolSucceeded .. => "tool_succeeded"
  | .commandSucceeded .. => "command_succeeded"
  | .commandRan .. => "command_ran"
  | .fileChanged .. => "file_changed"
  | .outcomeRan .. => "outcome_ran"

def ExitCondition.fromJson? (j : Json) : Except String ExitCondition := do
  let kind ← Read.str "exit.kind" (← Read.req "exit condition" j "kind")
  match kind with
  | "tool_succeeded" =>
    Read.strict kind j ["kind", "tool", "atLeast"]
    let tool ← Read.nonEmptyStr "tool_succeeded.tool" (← Read.req kind j "tool")
    let atLeast ← Read.optD j "atLeast" 1 (Read.posNat "tool_succeeded.atLeast")
    pure (.toolSucceeded tool atLeast)
  | "command_succeeded" | "command_ran" =>
    Read.strict kind j ["kind", "pattern", "afterLastChange"]
    let pattern ← Read.nonEmptyStr s!"{kind}.pattern" (← Read.req kind j "pattern")
    let alc ← Read.optD j "afterLastChange" false (Read.bool s!"{kind}.afterLastChange")
    pure (if kind == "command_ran" then .commandRan pattern alc else .commandSucceeded pattern alc)
  | "file_changed" =>
    Read.strict kind j ["kind", "pattern"]
    let pattern ← Read.opt j "pattern" (Read.nonEmptyStr "file_changed.pattern")
    pure (.fileChanged pattern)
  | "outcome_ran" =>
    Read.strict kind j ["kind", "afterLastChange"]
    pure (.outcomeRan (← Read.optD j "afterLastChange" true (Read.bool "outcome_ran.afterLastChange")))
  | other => throw s!"unknown exit condition kind \"{other}\""

instance : FromJson ExitCondition := ⟨ExitCondition.fromJson?⟩

/-- An `outcome_ran` exit: ill-formed in a workflow whose outcome is judged outside the run. -/
def ExitCondition.isOutcomeRan : ExitCondition → Bool
  | .outcomeRan _ => true
  | _ => false

instance : ToJson ExitCondition where
  toJson
    | .toolSucceeded t n =>
      Json.mkObj [("kind", toJson "tool_succeeded"), ("tool", toJson t), ("atLeast", toJson n)]
    | .commandSucceeded p a =>
      Json.mkObj [("kind", toJson "command_succeeded"), ("pattern", toJson p), ("afterLastChange", toJson a)]
    | .commandRan p a =>
      Json.mkObj [("kind", toJson "command_ran"), ("pattern", toJson p), ("afterLastChange", toJson a)]
    | .fileChanged p => Json.mkObj ([("kind", toJson "file_changed")] ++ Json.opt "pattern" p)
    | .outcomeRan a => Json.mkObj [("kind", toJson "outcome_ran"), ("afterLastChange", toJson a)]

/-- A stage id (core/schema/workflow.ts `StageId`, `^[A-Za-z][A-Za-z0-9_-]*$`): a letter, then
letters, digits, `_` or `-`. ASCII classes, as the regular expression's (`Char.isAlpha` and
`Char.isAlphanum` are ASCII). -/
def isStageIdL : List Char → Bool
  | c :: rest => c.isAlpha && rest.all (fun d => d.isAlphanum || d == '_' || d == '-')
  | [] => false

def isStageId (s : String) : Bool := isStageIdL s.toList

structure Stage where
  id : String
  description : Option String := none
  /-- Tool names permitted in this stage. -/
  tools : List String
  exit : List ExitCondition := []
  /-- Maximum tool calls in one visit, the call that leaves the stage included. -/
  budget : Nat
  deriving Repr, Inhabited

def Stage.fromJson? (j : Json) : Except String Stage := do
  Read.strict "stage" j ["id", "description", "tools", "exit", "budget"]
  let id ← Read.str "stage.id" (← Read.req "stage" j "id")
  unless isStageId id do
    throw s!"stage.id: a stage id is a letter followed by letters, digits, \"_\" or \"-\" (got \"{id}\")"
  let ctx := s!"stage \"{id}\""
  pure {
    id := id
    description := (← Read.opt j "description" (Read.str s!"{ctx}.description"))
    tools := (← Read.strList s!"{ctx}.tools" (← Read.req ctx j "tools"))
    exit := (← Read.optD j "exit" [] fun v => do (← Read.array s!"{ctx}.exit" v).mapM ExitCondition.fromJson?)
    budget := (← Read.posNat s!"{ctx}.budget" (← Read.req ctx j "budget"))
  }

instance : FromJson Stage := ⟨Stage.fromJson?⟩

instance : ToJson Stage where
  toJson s := Json.mkObj <|
    [("id", toJson s.id)] ++ Json.opt "description" s.description ++
    [("tools", toJson s.tools), ("exit", toJson s.exit), ("budget", toJson s.budget)]

structure OutcomeCheck where
  command : String
  expectExitCode : Int := 0
  timeoutMs : Nat := 600000
  deriving Repr, Inhabited

/-- A workflow's outcome: the command the host runs after `submit`, or a judge outside the
run (`{"external": J}`: Harbor's verifier runs the task's tests after the agent), for whom
nothing runs and no `outcome` event is written. -/
inductive WorkflowOutcome where
  | command (check : OutcomeCheck)
  | external (judge : String)
  deriving Repr, Inhabited

/-- The outcome command; `none` when the outcome is judged outside the run. -/
def WorkflowOutcome.check? : WorkflowOutcome → Option OutcomeCheck
  | .command c => some c
  | .external _ => none

/-- Who judges the outcome outside the run; `none` for an outcome command. -/
def WorkflowOutcome.judge? : WorkflowOutcome → Option String
  | .command _ => none
  | .external j => some j

structure CommandPolicy where
  deny : List String := []
  ask : List String := []
  deriving Repr, Inhabited

structure PathPolicy where
  workspaceOnly : Bool := true
  deny : List String := []
  deriving Repr, Inhabited

structure Policy where
  commands : CommandPolicy := {}
  paths : PathPolicy := {}
  deriving Repr, Inhabited

/-- The sandbox's bounds (core/schema/workflow.ts `SandboxLimitsSection`): what is absent gets the
host's default when the sandbox is made (core/sandbox/limits.ts), so it stays absent here. Sizes
are kept as written ("512M", "8G"). Not read by the verifier. -/
structure SandboxLimits where
  memory : Option String := none
  tasks : Option Nat := none
  tmp : Option String := none
  deriving Repr, Inhabited

/-- The workflow's `sandbox` section (core/schema/workflow.ts `SandboxSection`).
The verifier reads `required` (for `tool.sandbox_required`) and `protectedPaths`
(read-only to the write tools, `tool.path_policy`); the rest is for the host
that builds the sandbox. JSON key `protected` (a keyword in Lean). -/
structure SandboxSection where
  required : Bool := false
  network : String := "none"
  /-- With `network` "allowlist": the hosts commands may reach through the run's proxy. -/
  hosts : List String := []
  protectedPaths : List String := []
  writable : List String := []
  readable : List String := []
  hidden : List String := []
  limits : SandboxLimits := {}
  deriving Repr, Inhabited

/-- Workspace paths no write tool may change whatever the workflow says
(core/schema/workflow.ts `ALWAYS_READ_ONLY`). -/
def alwaysReadOnly : List String := [".lar", ".git/config", ".git/hooks", ".vscode"]

/-- The workflow's `mcp` section (core/schema/workflow.ts `McpSection`): the servers (as configured)
whose stdio sandbox gets the host's network. For the host that starts them; not read by the verifier. -/
structure McpSection where
  network : List String := []
  deriving Repr, Inhabited

/-- The reward weights, kept as the JSON numbers they were given as (so they are
written back unchanged); `Float` versions are computed where the return is. -/
structure RewardWeights where
  alpha : JsonNumber := ⟨5, 1⟩
  beta : JsonNumber := ⟨25, 2⟩
  deriving Inhabited

structure Workflow where
  lar : Nat := 1
  id : String
  description : Option String := none
  stages : List Stage
  /-- Legal transitions: stage id ↦ the stage ids it may move to (a JSON object). -/
  transitions : List (String × List String)
  start : String
  terminal : List String
  outcome : WorkflowOutcome
  policy : Policy := {}
  sandbox : SandboxSection := {}
  /-- Absent when the workflow has no `mcp` section (zod's `optional`, no default). -/
  mcp : Option McpSection := none
  rewards : RewardWeights := {}
  deriving Inhabited

/-- What a run may not change when its workflow has no `sandbox` section (core/schema/workflow.ts
`DEFAULT_PROTECTED`): the tests, manifests, lock files and test runners' configuration. -/
def defaultProtected : List String :=
  ["test", "tests", "__tests__", "spec", "package.json", "package-lock.json",
   "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", ".npmrc", "node_modules", "jest.config.js",
   "jest.config.cjs", "jest.config.mjs", "jest.config.ts", "jest.config.json", "vitest.config.js", "vitest.config.mjs",
   "vitest.config.ts", "vite.config.js", "vite.config.mjs", "vite.config.ts", ".mocharc.js", ".mocharc.cjs",
   ".mocharc.json", ".mocharc.yml", ".mocharc.yaml", "babel.config.js", ".babelrc"]

/-- The paths the write tools must leave alone: the always read-only ones, then the protected ones. -/
def Workflow.readOnlyPaths (wf : Workflow) : List String := alwaysReadOnly ++ wf.sandbox.protectedPaths

/-- One form or the other (a zod union of two strict objects): `external` alone, with some
character that is not a space, tab or line break; or the command's keys. -/
def WorkflowOutcome.fromJson? (oj : Json) : Except String WorkflowOutcome :=
  match field? oj "external" with
  | some ej => do
    Read.strict "workflow.outcome" oj ["external"]
    let judge ← Read.str "workflow.outcome.external" ej
    unless judge.toList.any (fun c => c != ' ' && c != '\t' && c != '\n' && c != '\r') do
      throw "workflow.outcome.external: say who judges the outcome (not only spaces)"
    pure (.external judge)
  | none => do
    Read.strict "workflow.outcome" oj ["command", "expectExitCode", "timeoutMs"]
    let command ← Read.nonEmptyStr "workflow.outcome.command" (← Read.req "workflow.outcome" oj "command")
    let expectExitCode ← Read.optD oj "expectExitCode" 0 (Read.int "workflow.outcome.expectExitCode")
    let timeoutMs ← Read.optD oj "timeoutMs" 600000 (Read.posNat "workflow.outcome.timeoutMs")
    pure (.command { command := command, expectExitCode := expectExitCode, timeoutMs := timeoutMs })

def Workflow.fromJson? (j : Json) : Except String Workflow := do
  Read.strict "workflow" j
    ["lar", "id", "description", "stages", "transitions", "start", "terminal", "outcome", "policy", "sandbox", "mcp",
     "rewards"]
  let lar ← Read.int "workflow.lar" (← Read.req "workflow" j "lar")
  unless lar == 1 do throw s!"workflow.lar: expected 1, got {lar}"
  let stages ← (← Read.array "workflow.stages" (← Read.req "workflow" j "stages")).mapM Stage.fromJson?
  if stages.isEmpty then throw "workflow.stages: a workflow needs at least one stage"
  let tj ← Read.req "workflow" j "transitions"
  Read.object "workflow.transitions" tj
  let transitions ← (objectKeys tj).mapM fun k => do
    pure (k, (← Read.strList s!"workflow.transitions.{k}" (← Read.req "workflow.transitions" tj k)))
  let terminal ← Read.strList "workflow.terminal" (← Read.req "workflow" j "terminal")
  if terminal.isEmpty then throw "workflow.terminal: a workflow needs at least one terminal stage"
  let outcome ← WorkflowOutcome.fromJson? (← Read.req "workflow" j "outcome")
  let policy : Policy ← Read.optD j "policy" {} fun pj => do
    Read.strict "workflow.policy" pj ["commands", "paths"]
    let commands : CommandPolicy ← Read.optD pj "commands" {} fun cj => do
      Read.strict "workflow.policy.commands" cj ["deny", "ask"]
      pure {
        deny := (← Read.optD cj "deny" [] (Read.patternList "workflow.policy.commands.deny"))
        ask := (← Read.optD cj "ask" [] (Read.patternList "workflow.policy.commands.ask"))
      }
    let paths : PathPolicy ← Read.optD pj "paths" {} fun qj => do
      Read.strict "workflow.policy.paths" qj ["workspaceOnly", "deny"]
      let wo ← Read.optD qj "workspaceOnly" true (Read.bool "workflow.policy.paths.workspaceOnly")
      unless wo do throw "workflow.policy.paths.workspaceOnly: must be true in version 1"
      pure { workspaceOnly := wo, deny := (← Read.optD qj "deny" [] (Read.patternList "workflow.policy.paths.deny")) }
    pure { commands := commands, paths := paths }
  let sandbox : SandboxSection ← Read.optD j "sandbox" { protectedPaths := defaultProtected } fun sj => do
    Read.strict "workflow.sandbox" sj ["required", "network", "hosts", "protected", "writable", "readable", "hidden", "limits"]
    let network ← Read.optD sj "network" "none" (Read.str "workflow.sandbox.network")
    unless network == "none" || network == "host" || network == "allowlist" do throw s!"workflow.sandbox.network: expected \"none\", \"host\" or \"allowlist\", got \"{network}\""
    let limits : SandboxLimits ← Read.optD sj "limits" {} fun lj => do
      Read.strict "workflow.sandbox.limits" lj ["memory", "tasks", "tmp"]
      let tasks ← Read.opt lj "tasks" fun tj => do
        let n ← Read.int "workflow.sandbox.limits.tasks" tj
        if n < 32 then throw "workflow.sandbox.limits.tasks: must be at least 32" else pure n.toNat
      pure {
        memory := (← Read.opt lj "memory" (Read.size "workflow.sandbox.limits.memory" (64 * 1024 * 1024) "64M"))
        tasks := tasks
        tmp := (← Read.opt lj "tmp" (Read.size "workflow.sandbox.limits.tmp" (1024 * 1024) "1M"))
      }
    pure {
      required := (← Read.optD sj "required" false (Read.bool "workflow.sandbox.required"))
      network := network
      hosts := (← Read.optD sj "hosts" [] (Read.strList "workflow.sandbox.hosts"))
      protectedPaths :=
        (← Read.optD sj "protected" defaultProtected (Read.nonEmptyStrList "workflow.sandbox.protected" "a path"))
      -- `z.union([HostPath, WorkspacePath])`: every non-empty string is a `WorkspacePath`.
      writable := (← Read.optD sj "writable" [] (Read.nonEmptyStrList "workflow.sandbox.writable" "a path"))
      readable := (← Read.optD sj "readable" [] (Read.hostPathList "workflow.sandbox.readable"))
      hidden := (← Read.optD sj "hidden" [] (Read.hostPathList "workflow.sandbox.hidden"))
      limits := limits
    }
  let mcp ← Read.opt j "mcp" fun mj => do
    Read.strict "workflow.mcp" mj ["network"]
    let network ← Read.optD mj "network" [] fun nj => do
      (← Read.array "workflow.mcp.network" nj).mapM (Read.nonEmptyStr "workflow.mcp.network[]")
    pure ({ network := network } : McpSection)
  let rewards : RewardWeights ← Read.optD j "rewards" {} fun rj => do
    Read.strict "workflow.rewards" rj ["alpha", "beta"]
    let weight (k : String) (d : JsonNumber) : Except String JsonNumber := do
      let n ← Read.optD rj k d (Read.num s!"workflow.rewards.{k}")
      if n.mantissa < 0 then throw s!"workflow.rewards.{k}: must not be negative" else pure n
    pure { alpha := (← weight "alpha" ⟨5, 1⟩), beta := (← weight "beta" ⟨25, 2⟩) }
  pure {
    lar := lar.toNat
    id := (← Read.nonEmptyStr "workflow.id" (← Read.req "workflow" j "id"))
    description := (← Read.opt j "description" (Read.str "workflow.description"))
    stages := stages
    transitions := transitions
    start := (← Read.nonEmptyStr "workflow.start" (← Read.req "workflow" j "start"))
    terminal := terminal
    outcome := outcome
    policy := policy
    sandbox := sandbox
    mcp := mcp
    rewards := rewards
  }

instance : FromJson Workflow := ⟨Workflow.fromJson?⟩

instance : ToJson Workflow where
  toJson w := Json.mkObj <|
    [("lar", toJson w.lar), ("id", toJson w.id)] ++ Json.opt "description" w.description ++
    [("stages", toJson w.stages),
     ("transitions", Json.mkObj (w.transitions.map fun (k, v) => (k, toJson v))),
     ("start", toJson w.start),
     ("terminal", toJson w.terminal),
     ("outcome", match w.outcome with
        | .command c => Json.mkObj [("command", toJson c.command),
            ("expectExitCode", toJson c.expectExitCode), ("timeoutMs", toJson c.timeoutMs)]
        | .external judge => Json.mkObj [("external", toJson judge)]),
     ("policy", Json.mkObj [
        ("commands", Json.mkObj [("deny", toJson w.policy.commands.deny), ("ask", toJson w.policy.commands.ask)]),
        ("paths", Json.mkObj [("workspaceOnly", toJson w.policy.paths.workspaceOnly),
          ("deny", toJson w.policy.paths.deny)])]),
     ("sandbox", Json.mkObj [("required", toJson w.sandbox.required), ("network", toJson w.sandbox.network),
        ("hosts", toJson w.sandbox.hosts), ("protected", toJson w.sandbox.protectedPaths), ("writable", toJson w.sandbox.writable),
        ("readable", toJson w.sandbox.readable), ("hidden", toJson w.sandbox.hidden),
        ("limits", Json.mkObj (Json.opt "memory" w.sandbox.limits.memory ++ Json.opt "tasks" w.sandbox.limits.tasks ++
          Json.opt "tmp" w.sandbox.limits.tmp))])] ++
    (match w.mcp with
     | some m => [("mcp", Json.mkObj [("network", toJson m.network)])]
     | none => []) ++
    [("rewards", Json.mkObj [("alpha", Json.num w.rewards.alpha), ("beta", Json.num w.rewards.beta)])]

/-- The stage with this id. Stage ids are unique in a well-formed workflow. -/
def Workflow.findStage? (wf : Workflow) (id : String) : Option Stage :=
  wf.stages.find? (fun s => s.id == id)

/-- The stages `src` may move to (`transitions[src] ?? []`). -/
def Workflow.succs (wf : Workflow) (src : String) : List String :=
  match wf.transitions.find? (fun kv => kv.1 == src) with
  | some (_, targets) => targets
  | none => []

/-! ## Trajectory events (core/schema/trajectory.ts) -/

inductive CallStatus where
  | ok | error | blocked | denied | timeout | interrupted
  deriving DecidableEq, Repr, Inhabited

def CallStatus.ofString? : String → Option CallStatus
  | "ok" => some .ok
  | "error" => some .error
  | "blocked" => some .blocked
  | "denied" => some .denied
  | "timeout" => some .timeout
  | "interrupted" => some .interrupted
  | _ => none

def CallStatus.name : CallStatus → String
  | .ok => "ok" | .error => "error" | .blocked => "blocked"
  | .denied => "denied" | .timeout => "timeout" | .interrupted => "interrupted"

/-- How the end of a command was observed. -/
inductive Completion where
  | marker | exit | timeout | unobserved
  deriving DecidableEq, Repr, Inhabited

def Completion.ofString? : String → Option Completion
  | "marker" => some .marker
  | "exit" => some .exit
  | "timeout" => some .timeout
  | "unobserved" => some .unobserved
  | _ => none

def Completion.name : Completion → String
  | .marker => "marker" | .exit => "exit" | .timeout => "timeout" | .unobserved => "unobserved"

/-- The parts of a tool result the verifier reads (the rest is ignored). An absent
`result` reads as `{}`, which every check treats the same way. -/
structure ToolResult where
  /-- `none` for an absent or `null` exit code. -/
  exitCode : Option Int := none
  completion : Option Completion := none
  filesChanged : Option (List String) := none
  /-- The tool's error message (status `error`), for the `tool.succeeded` reason. -/
  error : Option String := none
  /-- A command: whether it ran in the OS sandbox (`none` when not recorded). -/
  sandboxed : Option Bool := none
  /-- A command: the tests its output says ran (when the host recognised a test runner). -/
  testsRan : Option Nat := none
  deriving Repr, Inhabited

/-- A `tool_call` event. `args` is `null` when absent. -/
structure ToolCall where
  tool : String
  args : Json := Json.null
  argsError : Option String := none
  status : CallStatus
  result : ToolResult := {}
  deriving Inhabited

/-- An `outcome` event: the result of the workflow's outcome check. -/
structure OutcomeEvent where
  command : String
  exitCode : Option Int
  completion : Option Completion := none
  /-- Tests the check's output says it ran (when the host recognised a test runner). -/
  testsRan : Option Nat := none
  deriving Repr, Inhabited

/-- The events of a trajectory; only tool calls and outcomes are judged. A
`compaction` (the conversation made smaller to fit the model's context window)
changes what the model sees, nothing that happened: like a message, it is read
and never scored. A `restore` (the user put the workspace back to a checkpoint
between runs of a chat, recorded at the start of the next run) is read and never
scored either, nor is `tokens` (a model turn's token ids and logprobs, for a trainer).
An `mcp_tools` line is not scored either, but it changes the state: it replaces what its
server offers (`server`, and the tools as (name, schema digest)), which `tool.known` reads. -/
inductive Event where
  | toolCall (c : ToolCall)
  | message
  | outcome (o : OutcomeEvent)
  | compaction
  | restore
  | tokens
  | mcpTools (server : String) (tools : List (String × String))
  | finish
  deriving Inhabited

/-- The event's `type` as written in the trajectory. -/
def Event.typeName : Event → String
  | .toolCall _ => "tool_call"
  | .message => "message"
  | .outcome _ => "outcome"
  | .compaction => "compaction"
  | .restore => "restore"
  | .tokens => "tokens"
  | .mcpTools .. => "mcp_tools"
  | .finish => "end"

/-- What a trajectory header records of the sandbox its run's commands had
(core/schema/trajectory.ts `SandboxRecord`); the verifier reads these fields. -/
structure SandboxRecord where
  confined : Bool
  /-- The user required the sandbox for this run (`lar run --sandbox required`). -/
  required : Bool := false
  reason : Option String := none
  /-- The run was inside a container that is its sandbox (`lar run --sandbox container`): commands
  ran without bubblewrap, held by the container the user vouched for. -/
  container : Bool := false
  deriving Repr, Inhabited

/-- The run's commands were held: by the OS sandbox, or by the container that is the run's sandbox. -/
def SandboxRecord.held (r : SandboxRecord) : Bool := r.confined || r.container

def SandboxRecord.fromJson? (j : Json) : Except String SandboxRecord := do
  Read.object "sandbox" j
  pure {
    confined := (← Read.bool "sandbox.confined" (← Read.req "sandbox" j "confined"))
    required := (← Read.optD j "required" false (Read.bool "sandbox.required"))
    reason := (← Read.opt j "reason" (Read.str "sandbox.reason"))
    container := (← Read.optD j "container" false (Read.bool "sandbox.container"))
  }

/-- A call the model proposes, before it runs (the gate's input). -/
structure ProposedCall where
  tool : String
  args : Json := Json.null
  argsError : Option String := none
  deriving Inhabited

def ToolCall.toProposed (c : ToolCall) : ProposedCall :=
  { tool := c.tool, args := c.args, argsError := c.argsError }

def readCompletion (ctx : String) (j : Json) : Except String Completion := do
  let s ← Read.str ctx j
  match Completion.ofString? s with
  | some c => pure c
  | none => throw s!"{ctx}: unknown completion \"{s}\""

/-- An integer that may be `null` (read as `none`). -/
def readNullableInt (ctx : String) : Json → Except String (Option Int)
  | .null => pure none
  | j => some <$> Read.int ctx j

def ToolResult.fromJson? (j : Json) : Except String ToolResult := do
  Read.object "result" j
  pure {
    exitCode := (← Read.opt j "exitCode" (readNullableInt "result.exitCode")).getD none
    completion := (← Read.opt j "completion" (readCompletion "result.completion"))
    filesChanged := (← Read.opt j "filesChanged" (Read.strList "result.filesChanged"))
    error := (← Read.opt j "error" (Read.str "result.error"))
    sandboxed := (← Read.opt j "sandboxed" (Read.bool "result.sandboxed"))
    testsRan := (← Read.opt j "testsRan" (Read.nat "result.testsRan"))
  }

/-- The most tokens one count may hold (core/schema/trajectory.ts `MAX_TURN_TOKENS`). -/
def maxTurnTokens : Nat := 1000000000

def Read.tokens (ctx : String) (j : Json) : Except String Nat := do
  let n ← Read.nat ctx j
  if n > maxTurnTokens then throw s!"{ctx}: at most {maxTurnTokens} tokens"
  pure n

/-- A model turn's token counts, `usage` on its message or its first call (core/schema/trajectory.ts
`TurnUsage`), checked as the TypeScript schema checks them so that both readers refuse the same
malformed lines; nothing in it is judged. -/
def TurnUsage.check (ctx : String) (j : Json) : Except String Unit := do
  match field? j "usage" with
  | none => pure ()
  | some u =>
    Read.object s!"{ctx}.usage" u
    let prompt ← Read.tokens s!"{ctx}.usage.prompt" (← Read.req s!"{ctx}.usage" u "prompt")
    discard <| Read.tokens s!"{ctx}.usage.completion" (← Read.req s!"{ctx}.usage" u "completion")
    match (← Read.opt u "cached" (Read.tokens s!"{ctx}.usage.cached")) with
    | some cached =>
      if cached > prompt then throw s!"{ctx}.usage.cached: cached tokens are part of the prompt, so at most prompt"
    | none => pure ()

/-- A schema digest: sha-256 of a tool's input schema, 64 lowercase hex digits (core/schema/mcp.ts `SchemaDigest`). -/
def isSchemaDigest (s : String) : Bool :=
  s.length == 64 && s.all fun c => c.isDigit || (c.val ≥ 97 && c.val ≤ 102)

def Read.schemaDigest (ctx : String) (j : Json) : Except String String := do
  let s ← Read.str ctx j
  unless isSchemaDigest s do throw s!"{ctx}: expected a schema digest (64 lowercase hex digits)"
  pure s

/-- A call's `mcp` record (`McpCallRecord`): which server and tool it went to, and the schema digest.
Recorded, never judged. -/
def McpCallRecord.check (j : Json) : Except String Unit := do
  Read.object "tool_call.mcp" j
  discard <| Read.str "tool_call.mcp.server" (← Read.req "tool_call.mcp" j "server")
  discard <| Read.str "tool_call.mcp.tool" (← Read.req "tool_call.mcp" j "tool")
  discard <| Read.schemaDigest "tool_call.mcp.digest" (← Read.req "tool_call.mcp" j "digest")

def ToolCall.fromJson? (j : Json) : Except String ToolCall := do
  let status ← Read.str "tool_call.status" (← Read.req "tool_call" j "status")
  let some status := CallStatus.ofString? status
    | throw s!"tool_call.status: unknown status \"{status}\""
  TurnUsage.check "tool_call" j
  discard <| Read.opt j "mcp" McpCallRecord.check
  pure {
    tool := (← Read.str "tool_call.tool" (← Read.req "tool_call" j "tool"))
    args := (field? j "args").getD Json.null
    argsError := (← Read.opt j "argsError" (Read.str "tool_call.argsError"))
    status := status
    result := (← Read.optD j "result" {} ToolResult.fromJson?)
  }

def OutcomeEvent.fromJson? (j : Json) : Except String OutcomeEvent := do
  pure {
    command := (← Read.str "outcome.command" (← Read.req "outcome" j "command"))
    exitCode := (← readNullableInt "outcome.exitCode" (← Read.req "outcome" j "exitCode"))
    completion := (← Read.opt j "completion" (readCompletion "outcome.completion"))
    testsRan := (← Read.opt j "testsRan" (Read.nat "outcome.testsRan"))
  }

/-- A `compaction` event's fields, checked as the TypeScript schema checks them
(core/schema/trajectory.ts `CompactionEvent`), so that both readers refuse the
same malformed lines; nothing in it is judged. -/
def CompactionEvent.check (j : Json) : Except String Unit := do
  let reason ← Read.str "compaction.reason" (← Read.req "compaction" j "reason")
  unless reason == "window" || reason == "context_error" do
    throw s!"compaction.reason: unknown reason \"{reason}\" (expected window or context_error)"
  discard <| Read.posNat "compaction.window" (← Read.req "compaction" j "window")
  for k in ["tokensBefore", "tokensAfter", "elided", "summarized"] do
    discard <| Read.nat s!"compaction.{k}" (← Read.req "compaction" j k)
  discard <| Read.opt j "summary" (Read.str "compaction.summary")
  discard <| Read.opt j "summaryTokens" (Read.nat "compaction.summaryTokens")
  match (← Read.opt j "durationMs" (Read.num "compaction.durationMs")) with
  | some n =>
    if n.mantissa < 0 then throw "compaction.durationMs: expected a number of milliseconds, not negative"
  | none => pure ()
  match (← Read.opt j "summaryBy" (Read.str "compaction.summaryBy")) with
  | some author =>
    unless author == "model" || author == "host" do
      throw s!"compaction.summaryBy: unknown author \"{author}\" (expected model or host)"
  | none => pure ()

/-- A checkpoint id: 40 or 64 lowercase hex digits (core/schema/trajectory.ts `CheckpointId`). -/
def isCheckpointId (s : String) : Bool :=
  (s.length == 40 || s.length == 64) && s.all fun c => c.isDigit || (c.val ≥ 97 && c.val ≤ 102)

def Read.checkpointId (ctx : String) (j : Json) : Except String String := do
  let s ← Read.str ctx j
  unless isCheckpointId s do throw s!"{ctx}: expected a checkpoint id (40 or 64 hex digits)"
  pure s

/-- A run's trajectory file name (core/schema/trajectory.ts `RUN_FILE`,
`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.lar\.jsonl$`): a letter or digit, at most 200 more letters,
digits, `.`, `_` or `-`, then `.lar.jsonl`; so 11 to 211 characters. ASCII classes, as the regular
expression's (`Char.isAlphanum` is ASCII). -/
def isRunFileNameL (cs : List Char) : Bool :=
  decide (11 ≤ cs.length) && decide (cs.length ≤ 211) && ".lar.jsonl".toList.isSuffixOf cs &&
    match cs.take (cs.length - 10) with
    | c :: rest => c.isAlphanum && rest.all (fun d => d.isAlphanum || d == '.' || d == '_' || d == '-')
    | [] => false

def isRunFileName (s : String) : Bool := isRunFileNameL s.toList

def Read.runFileName (ctx : String) (j : Json) : Except String String := do
  let s ← Read.str ctx j
  unless isRunFileName s do
    throw s!"{ctx}: expected a run's file name (a letter or digit, at most 200 more letters, digits, \".\", \"_\" or \"-\", then \".lar.jsonl\")"
  pure s

/-- A `restore` event's fields, checked as the TypeScript schema checks them
(core/schema/trajectory.ts `RestoreEvent`); nothing in it is scored. `undo` is `z.literal(true)`:
absent, or `true`. -/
def RestoreEvent.check (j : Json) : Except String Unit := do
  discard <| Read.checkpointId "restore.checkpoint" (← Read.req "restore" j "checkpoint")
  discard <| Read.checkpointId "restore.before" (← Read.req "restore" j "before")
  discard <| Read.opt j "step" (Read.posNat "restore.step")
  discard <| Read.opt j "run" (Read.runFileName "restore.run")
  match (← Read.opt j "undo" (Read.bool "restore.undo")) with
  | some false => throw "restore.undo: expected true (the key is absent when the restore undid nothing)"
  | _ => pure ()
  for k in ["reverted", "deleted", "restored"] do
    discard <| Read.strList s!"restore.{k}" (← Read.req "restore" j k)
  discard <| Read.opt j "leftovers" (Read.strList "restore.leftovers")
  discard <| Read.opt j "at" (Read.nonEmptyStr "restore.at")

/-- The most ids (or logprobs) one turn's list may hold (core/schema/trajectory.ts `MAX_TURN_IDS`). -/
def maxTurnIds : Nat := 1048576

/-- A list of at most `bound` entries, each read with `f`; the bound is checked before any entry is read. -/
def Read.listAtMost {α : Type} (ctx : String) (bound : Nat) (f : String → Json → Except String α) (j : Json) :
    Except String (List α) := do
  let xs ← Read.array ctx j
  if xs.length > bound then throw s!"{ctx}: at most {bound} entries"
  xs.mapM (f ctx)

/-- A list of at most `maxTurnIds` entries, each read with `f`. -/
def Read.boundedList {α : Type} (ctx : String) (f : String → Json → Except String α) (j : Json) :
    Except String (List α) :=
  Read.listAtMost ctx maxTurnIds f j

/-- A token id: an integer in [0, 2^31). -/
def Read.tokenId (ctx : String) (j : Json) : Except String Nat := do
  let n ← Read.nat ctx j
  if n ≥ 2 ^ 31 then throw s!"{ctx}: a token id is below 2^31"
  pure n

/-- A logprob: a number at most 0. -/
def Read.logprob (ctx : String) (j : Json) : Except String Unit := do
  let n ← Read.num ctx j
  if n.mantissa > 0 then throw s!"{ctx}: a logprob is at most 0"

/-- A `tokens` event's fields, checked as the TypeScript schema checks them (core/schema/trajectory.ts
`TokensEvent`): the ids, the logprobs, or only why they are missing; nothing in it is scored. -/
def TokensEvent.check (j : Json) : Except String Unit := do
  discard <| Read.posNat "tokens.turn" (← Read.req "tokens" j "turn")
  let shared ← Read.opt j "promptShared" (Read.nat "tokens.promptShared")
  if (shared.getD 0) > maxTurnIds then throw s!"tokens.promptShared: at most {maxTurnIds}"
  let prompt ← Read.opt j "promptIds" (Read.boundedList "tokens.promptIds" Read.tokenId)
  let completion ← Read.opt j "completionIds" (Read.boundedList "tokens.completionIds" Read.tokenId)
  let logprobs ← Read.opt j "logprobs" (Read.boundedList "tokens.logprobs" Read.logprob)
  let missing ← Read.opt j "missing" (Read.str "tokens.missing")
  match missing, prompt, completion, logprobs with
  | none, some _, some c, some l =>
    unless c.length == l.length do throw "tokens.logprobs: one logprob per completion id"
  | some _, none, none, none =>
    if shared.isSome then throw "tokens: a tokens line has promptIds, completionIds and logprobs, or only missing"
  | _, _, _, _ => throw "tokens: a tokens line has promptIds, completionIds and logprobs, or only missing"

/-- The most tools one server may offer a run (core/schema/mcp.ts `MAX_SERVER_TOOLS`). -/
def maxServerTools : Nat := 256

/-- One tool of an `mcp_tools` line (`McpToolRecord`), as (name, digest). Its annotations
(`readOnly`, `destructive`) are checked for type and then dropped: they only set whether the user
is asked, never a verdict. -/
def Read.mcpTool (ctx : String) (j : Json) : Except String (String × String) := do
  Read.object ctx j
  let name ← Read.str s!"{ctx}.name" (← Read.req ctx j "name")
  unless isMcpName name do throw s!"{ctx}.name: an MCP tool name is mcp__SERVER__TOOL"
  discard <| Read.nonEmptyStr s!"{ctx}.tool" (← Read.req ctx j "tool")
  let digest ← Read.schemaDigest s!"{ctx}.digest" (← Read.req ctx j "digest")
  discard <| Read.opt j "readOnly" (Read.bool s!"{ctx}.readOnly")
  discard <| Read.opt j "destructive" (Read.bool s!"{ctx}.destructive")
  pure (name, digest)

/-- An `mcp_tools` event (core/schema/mcp.ts `McpToolsEvent`): a server's tools at the start, after it
said its list changed, or none once it stopped; every name is one of this server's. Checked as the
TypeScript schema checks it, so both readers refuse the same lines; returns the server and its tools. -/
def McpToolsEvent.fromJson? (j : Json) : Except String (String × List (String × String)) := do
  let server ← Read.str "mcp_tools.server" (← Read.req "mcp_tools" j "server")
  unless isServerPart server do
    throw s!"mcp_tools.server: \"{server}\" is not a server's name in tool names (letters, digits, -, single _)"
  let reason ← Read.str "mcp_tools.reason" (← Read.req "mcp_tools" j "reason")
  unless reason == "start" || reason == "list_changed" || reason == "stopped" do
    throw s!"mcp_tools.reason: unknown reason \"{reason}\" (expected start, list_changed or stopped)"
  let tools ← Read.listAtMost "mcp_tools.tools" maxServerTools Read.mcpTool (← Read.req "mcp_tools" j "tools")
  discard <| Read.opt j "omitted" (Read.posNat "mcp_tools.omitted")
  discard <| Read.opt j "error" (Read.str "mcp_tools.error")
  discard <| Read.opt j "at" (Read.nonEmptyStr "mcp_tools.at")
  unless tools.all (fun t => t.1.startsWith (mcpServerPrefix server)) do
    throw "mcp_tools.tools: every tool's name is mcp__SERVER__TOOL with this line's server"
  pure (server, tools)

def Event.fromJson? (j : Json) : Except String Event := do
  Read.object "event" j
  match (← Read.str "event.type" (← Read.req "event" j "type")) with
  | "tool_call" => return .toolCall (← ToolCall.fromJson? j)
  | "message" =>
    TurnUsage.check "message" j
    return .message
  | "outcome" => return .outcome (← OutcomeEvent.fromJson? j)
  | "compaction" =>
    CompactionEvent.check j
    return .compaction
  | "restore" =>
    RestoreEvent.check j
    return .restore
  | "tokens" =>
    TokensEvent.check j
    return .tokens
  | "mcp_tools" =>
    let r ← McpToolsEvent.fromJson? j
    return .mcpTools r.1 r.2
  | "end" => return .finish
  | other =>
    throw s!"unknown event type \"{other}\" (expected tool_call, message, outcome, compaction, restore, tokens, mcp_tools or end)"

instance : FromJson Event := ⟨Event.fromJson?⟩

def ProposedCall.fromJson? (j : Json) : Except String ProposedCall := do
  Read.object "call" j
  pure {
    tool := (← Read.str "call.tool" (← Read.req "call" j "tool"))
    args := (field? j "args").getD Json.null
    argsError := (← Read.opt j "argsError" (Read.str "call.argsError"))
  }

instance : FromJson ProposedCall := ⟨ProposedCall.fromJson?⟩

instance : ToJson ToolResult where
  toJson r := Json.mkObj <|
    (match r.exitCode with | some c => [("exitCode", toJson c)] | none => []) ++
    Json.opt "completion" (r.completion.map Completion.name) ++
    Json.opt "filesChanged" r.filesChanged ++ Json.opt "error" r.error

instance : ToJson Event where
  toJson
    | .toolCall c => Json.mkObj <|
        [("type", toJson "tool_call"), ("tool", toJson c.tool), ("args", c.args)] ++
        Json.opt "argsError" c.argsError ++
        [("status", toJson c.status.name), ("result", toJson c.result)]
    | .message => Json.mkObj [("type", toJson "message")]
    | .outcome o => Json.mkObj <|
        [("type", toJson "outcome"), ("command", toJson o.command),
         ("exitCode", match o.exitCode with | some c => toJson c | none => Json.null)] ++
        Json.opt "completion" (o.completion.map Completion.name) ++
        Json.opt "testsRan" o.testsRan
    | .compaction => Json.mkObj [("type", toJson "compaction")]
    | .restore => Json.mkObj [("type", toJson "restore")]
    | .tokens => Json.mkObj [("type", toJson "tokens")]
    | .mcpTools server tools => Json.mkObj [("type", toJson "mcp_tools"), ("server", toJson server),
        ("tools", Json.arr (tools.map fun t => Json.mkObj [("name", toJson t.1), ("digest", toJson t.2)]).toArray)]
    | .finish => Json.mkObj [("type", toJson "end")]

end Lar
