import Std.Data.HashMap
import Lean.Data.Json
import Lar.Num
import Lar.Glob
import Lar.Mcp
import Lar.Schema
import Lar.Tools
import Lar.Checks
import Lar.Rewards

/-
The incremental verifier: a state fed one event at a time, mirroring
`VerifierState` in core/verifier/state.ts, with its visits in stages.ts (same checks, same order, same
rewards, same JSON results). What is proved about it is in the library `LarProofs`, which
docs/lean.md lists module by module.
-/
namespace Lar
open Lean

/-! ## Results (the JSON shapes of core/verifier/types.ts) -/

/-- One visit of a stage, scored when it ends. -/
structure StageVisitResult where
  stage : String
  visit : Nat
  startLine : Nat
  endLine : Option Nat
  endedBy : VisitEnd
  steps : Nat
  budget : Nat
  verdicts : List Verdict
  reward : Int

instance : ToJson StageVisitResult where
  toJson r := Json.mkObj <|
    [("stage", toJson r.stage), ("visit", toJson r.visit), ("startLine", toJson r.startLine)] ++
    Json.opt "endLine" r.endLine ++
    [("endedBy", toJson r.endedBy.name), ("steps", toJson r.steps), ("budget", toJson r.budget),
     ("verdicts", toJson r.verdicts), ("reward", toJson r.reward)]

/-- The verdicts and rewards of one event. -/
structure StepResult where
  line : Nat
  type : String
  step : Option Nat := none
  /-- The tool named by a tool call, as written (it may not be a known tool). -/
  tool : Option String := none
  stage : Option String := none
  visit : Option Nat := none
  verdicts : List Verdict
  toolReward : Option Int := none
  stageVisit : Option StageVisitResult := none
  runningReturn : Float

instance : ToJson StepResult where
  toJson r := Json.mkObj <|
    [("line", toJson r.line), ("type", toJson r.type)] ++
    Json.opt "step" r.step ++ Json.opt "tool" r.tool ++ Json.opt "stage" r.stage ++ Json.opt "visit" r.visit ++
    [("verdicts", toJson r.verdicts)] ++
    Json.opt "toolReward" r.toolReward ++ Json.opt "stageVisit" r.stageVisit ++
    [("runningReturn", Num.floatToJson r.runningReturn)]

inductive GateDecision where
  | allow | ask | block
  deriving DecidableEq, Repr

def GateDecision.name : GateDecision → String
  | .allow => "allow" | .ask => "ask" | .block => "block"

/-- What the gate decides about a proposed call, before it runs. -/
structure GateResult where
  decision : GateDecision
  verdicts : List Verdict
  reason : String
  askPattern : Option String := none
  toolReward : Int

instance : ToJson GateResult where
  toJson g := Json.mkObj <|
    [("decision", toJson g.decision.name), ("verdicts", toJson g.verdicts), ("reason", toJson g.reason)] ++
    Json.opt "askPattern" g.askPattern ++ [("toolReward", toJson g.toolReward)]

/-! ## Helpers -/

def listOrNone (xs : List String) : String := if xs.isEmpty then "none" else ", ".intercalate xs

/-- Files a call changed: as recorded, or the written/edited path of a successful write or edit. -/
def changedFiles (c : ToolCall) : List String :=
  match c.result.filesChanged with
  | some fs => fs
  | none =>
    if c.status == .ok && (c.tool == "write_file" || c.tool == "edit_file") then
      (match strArg? c.args "path" with
       | some p => [p]
       | none => [])
    else []

/-- "The same call" for loop detection: the tool and its arguments in a canonical
form. Lean's JSON objects are ordered maps, so `Json.compress` prints the keys of
every object in one fixed order whatever order they arrived in (descending, in the
Lean releases we read: `Printer.lean` folds the sorted map onto a list); the
TypeScript side sorts ascending, but each checker only compares its own keys. -/
def callKey (tool : String) (args : Json) : String := tool ++ "\x00" ++ args.compress

def failureReason (c : ToolCall) : String :=
  match c.status with
  | .ok =>
    (match c.result.completion, c.result.exitCode with
     | some .timeout, _ =>
       "the command's end was not observed (timeout), so it does not count as a success"
     | some .unobserved, _ =>
       "the command's end was not observed (unobserved), so it does not count as a success"
     | _, none => "the command has no recorded exit code"
     | _, some code => s!"the command exited with code {code}")
  | .error =>
    (match c.result.error with
     | some m => if m.isEmpty then "the tool failed" else s!"the tool failed: {m}"
     | none => "the tool failed")
  | .blocked => "the call was blocked by the verifier and did not run"
  | .denied => "the user rejected the call; it did not run"
  | .timeout => "the call timed out and was stopped"
  | .interrupted => "the call was interrupted before it finished"

/-! ## The checks decidable before a call runs

Every verdict here is built with `Verdict.ofBool` from the `Bool` procedure that
has an `_iff` theorem in `LarProofs.Checks` (or is a fixed pass or fail), so whether it
passes is that procedure; the failure wording is computed separately and only
read on failure. `preChecks_err` (LarProofs.Verifier) proves that the error verdicts of
`preChecks` are exactly the negation of `callConformsB`. -/

/-- `tool.run_open`. -/
def openVerdict (cur : Option Stage) (tool : String) : Verdict :=
  Verdict.ofBool .toolRunOpen (runOpenB cur) "the run has not ended (no call after a submit)"
    s!"the run already ended with a submit; no {tool} call can follow it" (some ["tool"])

/-- `tool.known` for a name that is not one of the tools. -/
def unknownVerdict (tool : String) : Verdict :=
  .fail .toolKnown (s!"\"{tool}\" is not a tool; the tools are run_command, read_file, " ++
    "write_file, edit_file, list_files, search, enter_stage and submit") (some ["tool"])

/-- `tool.known` for one of the tools. -/
def knownVerdict : Verdict := .pass .toolKnown "the tool is one of the agent tools"

/-- Why `tool.args` fails (zod's first issue) and where inside `args`. -/
def argsFailure (t : Tool) (c : ProposedCall) : String × List String :=
  match c.argsError with
  | some e => (s!"the arguments are not valid JSON: {e}", [])
  | none =>
    let issue := (firstArgsIssue t c.args).getD ([], "invalid arguments")
    let at_ := if issue.1.isEmpty then "" else s!"\"{".".intercalate issue.1}\": "
    (s!"bad arguments for {c.tool}: {at_}{issue.2}", issue.1)

/-- `tool.args`. -/
def argsVerdict (t : Tool) (c : ProposedCall) : Verdict :=
  Verdict.ofBool .toolArgs (argsOkFor t c) "the arguments match the tool's schema"
    (argsFailure t c).1 (some ("args" :: (argsFailure t c).2))

/-- `tool.permitted`, made while the run is open. -/
def permittedVerdicts (cur : Option Stage) (tool : String) : List Verdict :=
  match cur with
  | some st =>
    [Verdict.ofBool .toolPermitted (permittedB st tool) "the tool is permitted in the current stage"
      s!"{tool} is not permitted in stage \"{st.id}\" (permitted: {listOrNone st.tools})" (some ["tool"])]
  | none => []

/-- `tool.transition` for an `enter_stage` call made in stage `st`. -/
def transitionVerdict (wf : Workflow) (st : Stage) (args : Json) : Verdict :=
  Verdict.ofBool .toolTransition (transitionOkB wf st args)
    s!"\"{st.id}\" → \"{stageArg args}\" is a legal transition"
    (if !stageDefinedB wf (stageArg args) then
      s!"there is no stage \"{stageArg args}\" (stages: {", ".intercalate (wf.stages.map (·.id))})"
     else
      s!"\"{st.id}\" → \"{stageArg args}\" is not a legal transition (from \"{st.id}\": {listOrNone (wf.succs st.id)})")
    (some ["args", "stage"])

def transitionVerdicts (wf : Workflow) (cur : Option Stage) (args : Json) : List Verdict :=
  match cur with
  | some st => [transitionVerdict wf st args]
  | none => []

/-- `tool.submit_terminal` for a `submit` made in stage `st`. -/
def submitVerdict (wf : Workflow) (st : Stage) : Verdict :=
  Verdict.ofBool .toolSubmitTerminal (terminalB wf st.id) "submit is called from a terminal stage"
    s!"submit from \"{st.id}\", which is not a terminal stage (terminal: {", ".intercalate wf.terminal})"
    (some ["tool"])

def submitVerdicts (wf : Workflow) (cur : Option Stage) : List Verdict :=
  match cur with
  | some st => [submitVerdict wf st]
  | none => []

/-- `tool.command_policy`, given `commandOkB wf args`. -/
def commandVerdict (ok : Bool) (wf : Workflow) (args : Json) : Verdict :=
  Verdict.ofBool .toolCommandPolicy ok "the command matches no deny pattern"
    s!"the command matches the deny pattern \"{(firstCommandMatch wf.policy.commands.deny (commandArg args)).getD ""}\""
    (some ["args", "command"])

/-- Why a path argument breaks the path policy, with its key; `none` when it is
absent or fine. -/
def pathIssue (deny ro : List String) (args : Json) (key : String) : Option (String × String) :=
  match strArg? args key with
  | none => none
  | some p =>
    (match npath p with
     | .error reason => some (reason, key)
     | .ok n =>
       (match deny.find? (fun pat => globMatch pat n) with
        | some pat => some (s!"\"{n}\" matches the path deny pattern \"{pat}\"", key)
        | none =>
          (match ro.find? (fun r => underB r n) with
           | some r =>
             let q := readOnlyPathText r
             let why := if alwaysReadOnly.contains q then "always read-only" else "protected by the workflow's sandbox section"
             some (s!"\"{n}\" is read-only for the agent (\"{q}\" is {why}): it can be read, not changed", key)
           | none => none)))

/-- The first path argument of the call that breaks the path policy. -/
def pathIssues (wf : Workflow) (t : Tool) (args : Json) : Option (String × String) :=
  t.pathArgs.findSome? (pathIssue wf.policy.paths.deny (wf.readOnlyFor t) args)

/-- `tool.path_policy`. Whether it passes is `pathPolicyB`; the reason and the
key reported on failure are those of the first failing argument. -/
def pathVerdict (wf : Workflow) (t : Tool) (args : Json) : Verdict :=
  Verdict.ofBool .toolPathPolicy (pathPolicyB wf.policy.paths.deny (wf.readOnlyFor t) t args)
    "every path stays inside the workspace and off the deny list"
    (((pathIssues wf t args).map (·.1)).getD "a path argument breaks the path policy")
    (some ["args", ((pathIssues wf t args).map (·.2)).getD "path"])

/-- Why a run's commands were not confined, as its header says. -/
def unconfinedReason : Option SandboxRecord → String
  | some r => r.reason.getD "no sandbox"
  | none => "the trajectory does not record a sandbox"

/-- `tool.sandbox_required`, decided from the header's record `sb`. -/
def sandboxVerdict (wf : Workflow) (sb : Option SandboxRecord) : Verdict :=
  Verdict.ofBool .toolSandboxRequired (sandboxOkB wf sb)
    "no command runs unconfined where the sandbox is required (by the workflow or the user)"
    s!"the sandbox is required and this run's commands are not confined ({unconfinedReason sb})"
    (some ["tool"])

/-- The checks that depend on the tool, made once its arguments are valid (in
the order of docs/rewards.md), and the `ask` pattern of a `run_command` that no
deny pattern matches. -/
def toolVerdicts (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (args : Json) : Tool → List Verdict × Option String
  | .runCommand =>
    let ok := commandOkB wf args
    ([commandVerdict ok wf args, pathVerdict wf .runCommand args, sandboxVerdict wf sb],
      if ok then firstCommandMatch wf.policy.commands.ask (commandArg args) else none)
  | .readFile => ([pathVerdict wf .readFile args], none)
  | .writeFile => ([pathVerdict wf .writeFile args], none)
  | .editFile => ([pathVerdict wf .editFile args], none)
  | .listFiles => ([pathVerdict wf .listFiles args], none)
  | .search => ([pathVerdict wf .search args], none)
  | .enterStage => (transitionVerdicts wf cur args, none)
  | .submit => (submitVerdicts wf cur, none)

/-- The verdicts every call of a known tool gets. -/
def headVerdicts (cur : Option Stage) (t : Tool) (c : ProposedCall) : List Verdict :=
  [openVerdict cur c.tool, knownVerdict, argsVerdict t c] ++ permittedVerdicts cur c.tool

/-- The pre-run checks of a call of the known tool `t`, given whether its
arguments are valid (when they are not, only `tool.permitted` follows). -/
def knownChecks (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall) (t : Tool) :
    Bool → List Verdict × Option String
  | true =>
    let rest := toolVerdicts wf sb cur c.args t
    (headVerdicts cur t c ++ rest.1, rest.2)
  | false => (headVerdicts cur t c, none)

/-- `preChecks` with the tool looked up. -/
def preChecksFor (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall) :
    Option Tool → List Verdict × Option String
  | none => ([openVerdict cur c.tool, unknownVerdict c.tool], none)
  | some t => knownChecks wf sb cur c t (argsOkFor t c)

/-- `tool.known` for an MCP name no server of the run offers now. -/
def mcpUnknownVerdict (tool : String) : Verdict :=
  .fail .toolKnown s!"\"{tool}\" is not a tool any MCP server of this run offers now" (some ["tool"])

/-- `tool.known` for an MCP tool a server offers now. -/
def mcpKnownVerdict : Verdict := .pass .toolKnown "an MCP server of this run offers the tool now"

/-- `tool.args` for an MCP tool: JSON, and an object; the server judges the rest against its own schema. -/
def mcpArgsVerdict (c : ProposedCall) : Verdict :=
  Verdict.ofBool .toolArgs (mcpArgsOkB c) "the arguments are a JSON object"
    (match c.argsError with
     | some e => s!"the arguments are not valid JSON: {e}"
     | none => s!"bad arguments for {c.tool}: they must be a JSON object")
    (some ["args"])

/-- The pre-run checks of an MCP tool's call, given whether a server offers it now: like an unknown
tool, one no server offers gets nothing after `tool.known`. No command, path, transition, submit
or sandbox check: the server's process is confined by the sandbox, not by the workflow's policy. -/
def mcpChecks (cur : Option Stage) (c : ProposedCall) : Bool → List Verdict
  | true => [openVerdict cur c.tool, mcpKnownVerdict, mcpArgsVerdict c] ++ permittedVerdicts cur c.tool
  | false => [openVerdict cur c.tool, mcpUnknownVerdict c.tool]

/-- The pre-run checks in the order of docs/rewards.md, and the `ask` pattern when
approval is needed. The gate and the post-hoc verdicts both use this. `sb` is
the header's sandbox record: it is the same for every call of a run. `mcp` is what the
run's MCP servers offer now (name, schema digest); an MCP name takes its own branch first. -/
def preChecks (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String)) (cur : Option Stage)
    (c : ProposedCall) : List Verdict × Option String :=
  bif isMcpName c.tool then (mcpChecks cur c (mcpKnownB mcp c.tool), none)
  else preChecksFor wf sb cur c (Tool.ofName? c.tool)

/-! ## Visits -/

structure Visit where
  stage : Stage
  /-- 0-based ordinal of this visit in the run. -/
  ordinal : Nat
  /-- Line of the event that began it (of the header for the start stage). -/
  startLine : Nat
  steps : Nat := 0
  /-- What the exit conditions need of each step, newest first. -/
  facts : List StepFact := []

def exitReasons (check : Option OutcomeCheck) (cond : ExitCondition) (facts : List StepFact) : String × String :=
  match cond with
  | .toolSucceeded tool n =>
    let k := countSucceeded tool facts
    let times := if k == 1 then "time" else "times"
    let timesN := if n == 1 then "time" else "times"
    (s!"{tool} succeeded at least {n} {timesN}",
     s!"{tool} succeeded {k} {times} in this visit; at least {n} required")
  | .fileChanged (some p) => (s!"a file matching \"{p}\" changed", s!"no file matching \"{p}\" changed in this visit")
  | .fileChanged none => ("a file changed", "no file changed in this visit")
  | .commandSucceeded p alc =>
    let after := if alc then " after the last file change" else ""
    (s!"a command matching \"{p}\" succeeded{after}", s!"no command matching \"{p}\" succeeded in this visit{after}")
  | .commandRan p alc =>
    let after := if alc then " after the last file change" else ""
    (s!"a command matching \"{p}\" ran to an observed end{after}",
     s!"no command matching \"{p}\" ran to an observed end in this visit{after}")
  | .outcomeRan alc =>
    let after := if alc then " after the last file change" else ""
    match check with
    | some k =>
      (s!"the outcome command \"{k.command}\" ran tests{after}",
       s!"the outcome command \"{k.command}\" did not run tests in this visit{after}")
    | none =>
      ("the outcome is judged outside the run: no command of the run is its check",
       "the outcome is judged outside the run: no command of the run is its check")

/-- `stage.closed`, decided by `closedB`. -/
def visitClosedVerdict (src : String) (endedBy : VisitEnd) : Verdict :=
  Verdict.ofBool .stageClosed (closedB endedBy)
    "the visit ended by a transition or a submit, not by the run stopping"
    s!"the run stopped in \"{src}\" without a transition or a submit"

/-- `stage.transition` for a closed visit, decided by `stageTransitionB`; none for an unclosed one. -/
def visitTransitionVerdicts (wf : Workflow) (src : String) (endedBy : VisitEnd) (target : Option String) :
    List Verdict :=
  match endedBy with
  | .runEnd => []
  | .submit =>
    [Verdict.ofBool .stageTransition (stageTransitionB wf src .submit target) s!"submitted from terminal stage \"{src}\""
      s!"the run ended by a submit from \"{src}\", which is not a terminal stage"]
  | .transition =>
    [Verdict.ofBool .stageTransition (stageTransitionB wf src .transition target)
      s!"\"{src}\" → \"{target.getD ""}\" is legal"
      s!"left \"{src}\" for \"{target.getD ""}\", which is not a legal transition"]

/-- `stage.budget`, decided by `withinBudgetB`. -/
def visitBudgetVerdict (v : Visit) : Verdict :=
  Verdict.ofBool .stageBudget (withinBudgetB v.steps v.stage.budget)
    s!"within the budget of {v.stage.budget} steps"
    s!"{v.steps} steps in this visit; the budget of \"{v.stage.id}\" is {v.stage.budget}"

/-- The `stage.exit.*` verdicts, each decided by `exitMetB` over the visit's facts, oldest first. -/
def visitExitVerdicts (wf : Workflow) (v : Visit) : List Verdict :=
  v.stage.exit.map fun cond =>
    let reasons := exitReasons wf.outcome.check? cond v.facts.reverse
    Verdict.ofBool cond.checkId (exitMetB cond v.facts.reverse) reasons.1 reasons.2

/-- The stage-level verdicts of a visit that ends now (toward `target` for a
transition), in the order of docs/rewards.md. -/
def scoreVisit (wf : Workflow) (v : Visit) (endedBy : VisitEnd) (target : Option String) :
    List Verdict :=
  [visitClosedVerdict v.stage.id endedBy] ++ visitTransitionVerdicts wf v.stage.id endedBy target ++
    [visitBudgetVerdict v] ++ visitExitVerdicts wf v

/-! ## The state -/

structure State where
  wf : Workflow
  /-- α and β as doubles (from the workflow's JSON numbers, correctly rounded). -/
  alpha : Float
  beta : Float
  /-- The current visit; `none` once the run has ended. -/
  visit : Option Visit
  visitCount : Nat
  steps : Nat := 0
  toolSum : Int := 0
  /-- Closed visits so far, and the sum of their rewards. -/
  stageCount : Nat := 0
  stageSum : Int := 0
  closed : List StageVisitResult := []
  /-- Number of steps so far that changed a file or entered a stage: the change epoch. -/
  epoch : Nat := 0
  /-- Call key ↦ the change epoch at which it last failed. -/
  failed : Std.HashMap String Nat := {}
  submittedFromTerminal : Bool := false
  ended : Bool := false
  /-- The outcome event that counted, with its line. -/
  outcome : Option (OutcomeEvent × Nat) := none
  /-- The header's record of the sandbox the run's commands had (`none` when it records none). -/
  sandbox : Option SandboxRecord := none
  /-- The MCP tools the servers offer now (name, schema digest), from each server's latest
  `mcp_tools` line (`replaceServerTools`). -/
  mcpTools : List (String × String) := []

def hasDuplicates : List String → Bool
  | [] => false
  | x :: xs => xs.contains x || hasDuplicates xs

/-- Why a stage names no tool (core/workflow/wellformed.ts `workflow.unknown_tool`), for the first
such entry: a `tools` entry is a built-in tool or an MCP pattern (`mcp__github__get_*`); a
`tool_succeeded` exit names a built-in tool or an MCP tool (a pattern would count nothing). -/
def Workflow.unknownTool? (wf : Workflow) : Option String :=
  let hint := "the tools are run_command, read_file, write_file, edit_file, list_files, search, enter_stage and " ++
    "submit, or an MCP tool mcp__SERVER__TOOL (in a stage's tools also a pattern: mcp__github__get_*)"
  wf.stages.findSome? fun s =>
    match s.tools.find? (fun t => !((Tool.ofName? t).isSome || isMcpPattern t)) with
    | some t => some s!"stage \"{s.id}\": \"{t}\" is not a tool; {hint}"
    | none =>
      s.exit.findSome? fun cond =>
        match cond with
        | .toolSucceeded t _ =>
          if (Tool.ofName? t).isSome || isMcpName t then none
          else some s!"stage \"{s.id}\": exit condition tool_succeeded: \"{t}\" is not a tool; {hint}"
        | _ => none

/-- The state before the first event: the first visit, of the start stage, begins
at the header; `sb` is the header's sandbox record. -/
def State.create (wf : Workflow) (headerLine : Nat := 1) (sb : Option SandboxRecord := none) : Except String State :=
  if hasDuplicates (wf.stages.map (·.id)) then
    .error s!"workflow \"{wf.id}\": a stage id is defined twice"
  else if wf.outcome.check?.isNone && wf.stages.any (fun s => s.exit.any ExitCondition.isOutcomeRan) then
    .error s!"workflow \"{wf.id}\": an outcome_ran exit, but the outcome is judged outside the run: nothing can meet it"
  else if let some why := wf.unknownTool? then
    .error s!"workflow \"{wf.id}\": {why}"
  else
    match wf.findStage? wf.start with
    | none => .error s!"workflow \"{wf.id}\": start stage \"{wf.start}\" does not exist"
    | some start => .ok {
        wf := wf
        alpha := Num.jsonNumberToFloat wf.rewards.alpha
        beta := Num.jsonNumberToFloat wf.rewards.beta
        visit := some { stage := start, ordinal := 0, startLine := headerLine }
        visitCount := 1
        steps := 0
        toolSum := 0
        stageCount := 0
        stageSum := 0
        sandbox := sb
      }

def State.currentStage (st : State) : Option Stage := st.visit.map (·.stage)

def meanF (sum : Int) (n : Nat) : Float := if n == 0 then 0 else Float.ofInt sum / Float.ofNat n

/-- α · mean(closed stage rewards) + β · mean(tool rewards); the outcome is not counted. -/
def State.runningReturn (st : State) : Float :=
  st.alpha * meanF st.stageSum st.stageCount + st.beta * meanF st.toolSum st.steps

def State.repeatVerdict (st : State) (key : String) : Verdict :=
  Verdict.ofBool .toolNotRepeated (notRepeatedB st.failed[key]? st.epoch)
    "the call does not repeat a failed call with nothing changed since"
    "the same call failed before and no file has changed since: this is a loop" (some ["tool"])

/-- Scores a visit that ends on `line` and records it. -/
def State.closeVisit (st : State) (v : Visit) (line : Nat) (endedBy : VisitEnd)
    (target : Option String) : State × StageVisitResult :=
  let verdicts := scoreVisit st.wf v endedBy target
  let r := stageReward verdicts
  let res : StageVisitResult := {
    stage := v.stage.id, visit := v.ordinal, startLine := v.startLine, endLine := some line,
    endedBy := endedBy, steps := v.steps, budget := v.stage.budget, verdicts := verdicts, reward := r }
  ({ st with closed := res :: st.closed, stageCount := st.stageCount + 1, stageSum := st.stageSum + r }, res)

def State.openVisit (st : State) (stage : Stage) (line : Nat) : State :=
  { st with
    visit := some { stage := stage, ordinal := st.visitCount, startLine := line }
    visitCount := st.visitCount + 1 }

/-- `tool.approved`, made for a command that matches an `ask` pattern. -/
def approvedVerdicts (ask : Option String) (status : CallStatus) : List Verdict :=
  match ask with
  | some p =>
    [Verdict.ofBool .toolApproved (approvedB status)
      s!"approved (the command matches the approval pattern \"{p}\")"
      s!"the user rejected the command at the approval prompt (it matches \"{p}\")" (some ["args", "command"])]
  | none => []

/-- The call ran (it was not blocked, rejected, or refused before it started). -/
def ranB (c : ToolCall) : Bool :=
  c.status == .ok || c.status == .timeout || c.status == .interrupted

/-- A command that ran outside the sandbox: its result says so, or says nothing
in a run whose header records no confinement; never in a run inside a container
that is its sandbox (the header's `container`). -/
def unconfinedB (sb : Option SandboxRecord) (c : ToolCall) : Bool :=
  if sb.any (·.container) then false
  else
    match c.result.sandboxed with
    | some b => !b
    | none => decide (sb.map (·.confined) = some false)

/-- `tool.sandboxed` (a warning), for a `run_command` that ran. -/
def sandboxedVerdicts (sb : Option SandboxRecord) (c : ToolCall) : List Verdict :=
  if c.tool == "run_command" && ranB c then
    [Verdict.ofBool .toolSandboxed (!unconfinedB sb c)
      (if sb.any (·.container) then "the command ran in the run's container, its sandbox"
        else "the command ran in the OS sandbox")
      s!"the command ran unconfined ({(sb.bind (·.reason)).getD "no sandbox"})" (some ["result"])]
  else []

/-- `tool.succeeded`. -/
def succeededVerdict (c : ToolCall) : Verdict :=
  Verdict.ofBool .toolSucceeded (succeededB c) "the call ran and succeeded" (failureReason c)
    (some (if c.status == .ok then ["result"] else ["status"]))

/-- The verdicts of a `tool_call` event, in the order of docs/rewards.md: the
pre-run checks, then `tool.not_repeated`, `tool.approved`, `tool.sandboxed` and
`tool.succeeded`. -/
def State.callVerdicts (st : State) (c : ToolCall) : List Verdict :=
  let pre := preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed
  pre.1 ++ [st.repeatVerdict (callKey c.tool c.args)] ++ approvedVerdicts pre.2 c.status ++
    sandboxedVerdicts st.sandbox c ++ [succeededVerdict c]

/-- What the exit conditions keep of a call. -/
def stepFact (wf : Workflow) (c : ToolCall) : StepFact :=
  { tool := c.tool
    ok := succeededB c
    ran := ranToEndB c
    checked := ranCheckOfB wf.outcome c
    command := if c.tool == "run_command" then strArg? c.args "command" else none
    changed := changedFiles c }

/-- The stage a successful `enter_stage` moves to: the defined stage its `args.stage` names. -/
def enterTarget (wf : Workflow) (c : ToolCall) : Option Stage :=
  if c.status == .ok && c.tool == "enter_stage" then (strArg? c.args "stage").bind wf.findStage? else none

/-- The call changes state, so the change epoch moves on: it changed a file, or, made while a
visit is open (`inRun`), it entered a stage. Entering a stage starts a new epoch so that a call
blocked in one stage and made again in the next is not a loop. -/
def changesStateB (wf : Workflow) (inRun : Bool) (c : ToolCall) : Bool :=
  !(changedFiles c).isEmpty || (inRun && (enterTarget wf c).isSome)

/-- What a call does to the visits: it is one more step of the open visit; a successful
`enter_stage` to a defined stage closes the visit and opens one of that stage on the same line;
a successful `submit` closes it and ends the run. Nothing once the run has ended. -/
def State.moveVisit (st : State) (c : ToolCall) (line : Nat) : State × Option StageVisitResult :=
  match st.visit with
  | none => (st, none)
  | some v0 =>
    let v : Visit := { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts }
    match enterTarget st.wf c with
    | some target =>
      let closed := st.closeVisit v line .transition (some target.id)
      (closed.1.openVisit target line, some closed.2)
    | none =>
      if c.status == .ok && c.tool == "submit" then
        let closed := st.closeVisit v line .submit none
        ({ closed.1 with visit := none, ended := true, submittedFromTerminal := terminalB st.wf v.stage.id },
          some closed.2)
      else ({ st with visit := some v }, none)

/-- Feeds one `tool_call` event. The counters, the epoch and the failed-call map are set last,
from `st` alone, so each is a plain function of the state the call meets. -/
def State.appendCall (st : State) (c : ToolCall) (line : Nat) : State × StepResult :=
  let verdicts := st.callVerdicts c
  let r := toolReward verdicts
  let steps := st.steps + 1
  let toolSum := st.toolSum + r
  let epoch := if changesStateB st.wf st.visit.isSome c then st.epoch + 1 else st.epoch
  let key := callKey c.tool c.args
  let ok := succeededB c
  let stageHere := st.visit.map (·.stage.id)
  let visitHere := st.visit.map (·.ordinal)
  -- The failed-call map is taken out of the state before it is updated: when the caller holds the
  -- only reference to the state (lar-verify takes it out of its session map first), it is updated in place.
  let failed := st.failed
  let moved := ({ st with failed := {} } : State).moveVisit c line
  let st' : State := { moved.1 with
    steps := steps, toolSum := toolSum, epoch := epoch, failed := if ok then failed else failed.insert key epoch }
  (st', {
    line := line, type := "tool_call", step := some steps, tool := some c.tool, stage := stageHere,
    visit := visitHere, verdicts := verdicts, toolReward := some r, stageVisit := moved.2,
    runningReturn := st'.runningReturn })

/-- Why an outcome check did not pass, and where in the event. -/
def checkFailure (o : OutcomeEvent) (expected : Int) : String × List String :=
  match o.completion, o.exitCode with
  | some .timeout, _ => (s!"the outcome check \"{o.command}\" did not finish (timeout)", ["exitCode"])
  | some .unobserved, _ => (s!"the outcome check \"{o.command}\" did not finish (unobserved)", ["exitCode"])
  | c, none =>
    (s!"the outcome check \"{o.command}\" did not finish ({(c.map Completion.name).getD "no exit code"})", ["exitCode"])
  | _, some code =>
    if code = expected then
      (s!"\"{o.command}\" exited {code} but ran no tests: a check that runs no tests is not a pass", ["testsRan"])
    else (s!"\"{o.command}\" exited {code}; expected {expected}", ["exitCode"])

/-- `outcome.check_passed` for the recorded outcome, decided by `checkPassedB`. -/
def State.outcomeCheckVerdict (st : State) (check : OutcomeCheck) : Verdict :=
  match st.outcome with
  | none => .fail .outcomeCheckPassed "no outcome check result was recorded after the submit"
  | some (o, _) =>
    Verdict.ofBool .outcomeCheckPassed (checkPassedB check.expectExitCode o)
      s!"\"{o.command}\" exited {check.expectExitCode} as expected"
      (checkFailure o check.expectExitCode).1 (some (checkFailure o check.expectExitCode).2)

/-- An `outcome` event counts (it is recorded): the outcome is the workflow's own command's, the run
has ended, and no outcome was recorded yet. -/
def State.outcomeCounts (st : State) : Bool :=
  st.wf.outcome.check?.isSome && st.ended && st.outcome.isNone

/-- The verdicts of an `outcome` event. An outcome judged outside the run fails `outcome.external`
(`judgedInRunB` is false exactly for `.external`, `judgedInRun_iff`) and nothing else is made on the
event; before the end it fails `outcome.after_submit`, after one was recorded `outcome.single`. -/
def State.outcomeVerdicts (st : State) (o : OutcomeEvent) (line : Nat) : List Verdict :=
  match st.wf.outcome with
  | .external judge =>
    [.fail .outcomeExternal
      s!"the outcome is judged outside the run ({judge}): this outcome event is ignored" (some ["type"])]
  | .command check =>
    if !afterSubmitB st.ended then
      [.fail .outcomeAfterSubmit "an outcome check result before any submit is ignored" (some ["type"])]
    else if !singleOutcomeB (st.outcome.map (·.2)) then
      [.fail .outcomeSingle
        s!"the outcome was already recorded on line {(st.outcome.map (·.2)).getD 0}; this one is ignored" (some ["type"])]
    else
      [.pass .outcomeAfterSubmit "the outcome check result follows a submit",
        .pass .outcomeSingle "the outcome check result is recorded once",
        ({ st with outcome := some (o, line) } : State).outcomeCheckVerdict check]

/-- The verdicts of an `outcome` event and the state after it: the event is recorded when it counts
(`outcomeCounts`: exactly when `outcome.external`, `outcome.after_submit` and `outcome.single` pass;
the event is recorded whether or not its check passes). -/
def State.outcomeStep (st : State) (o : OutcomeEvent) (line : Nat) : State × List Verdict :=
  ({ st with outcome := if st.outcomeCounts then some (o, line) else st.outcome }, st.outcomeVerdicts o line)

/-- Feeds one `outcome` event. -/
def State.appendOutcome (st : State) (o : OutcomeEvent) (line : Nat) : State × StepResult :=
  let r := st.outcomeStep o line
  (r.1, { line := line, type := "outcome", stage := r.1.visit.map (·.stage.id),
    visit := r.1.visit.map (·.ordinal), verdicts := r.2, runningReturn := r.1.runningReturn })

/-- A server's `mcp_tools` line: what it offers now replaces what it offered before. -/
def State.withMcpTools (st : State) (server : String) (tools : List (String × String)) : State :=
  { st with mcpTools := replaceServerTools st.mcpTools server tools }

/-- The result of an event that is not a call: no verdict, placed in the current stage. -/
def State.quietResult (st : State) (line : Nat) (e : Event) : StepResult :=
  { line := line, type := e.typeName, stage := st.visit.map (·.stage.id),
    visit := st.visit.map (·.ordinal), verdicts := [], runningReturn := st.runningReturn }

/-- Feeds one event; returns the new state and the event's verdicts and rewards. An
`mcp_tools` line is not scored, but it changes which MCP tools `tool.known` accepts. -/
def State.append (st : State) (line : Nat) : Event → State × StepResult
  | .toolCall c => st.appendCall c line
  | .outcome o => st.appendOutcome o line
  | .mcpTools server tools =>
    let st' := st.withMcpTools server tools
    (st', st'.quietResult line (.mcpTools server tools))
  | e => (st, st.quietResult line e)

/-- The gate's decision, reason and `ask` pattern for the verdicts of a proposed call.
A blocked call keeps the `ask` pattern it matches: with enforcement `warn` a call blocked
for the workflow's structure may still run, and then only once the user approves it
(core/verifier/types.ts `GateResult`); one the command or path policy blocks never runs. -/
def gateDecision (verdicts : List Verdict) (ask : Option String) : GateDecision × String × Option String :=
  match verdicts.find? (fun v => !v.ok && v.check != .toolNotRepeated) with
  | some f => (.block, f.reason, ask)
  | none =>
    (match ask with
     | some p =>
       (.ask, s!"the command matches the approval pattern \"{p}\"; it runs only if the user approves", some p)
     | none =>
       (.allow,
         (match verdicts.find? (fun v => !v.ok) with
          | some loop => loop.reason
          | none => "every check passed"),
         none))

/-- Decides, before it runs, whether a proposed call may run. Does not change the state. -/
def State.gate (st : State) (call : ProposedCall) : GateResult :=
  let pre := preChecks st.wf st.sandbox st.mcpTools st.currentStage call
  let verdicts := pre.1 ++ [st.repeatVerdict (callKey call.tool call.args)]
  let d := gateDecision verdicts pre.2
  { decision := d.1, verdicts := verdicts, reason := d.2.1, askPattern := d.2.2,
    toolReward := toolReward verdicts }

/-- The visit still open, scored as if the run stopped now (`run_end`), with its reward; none
once the run has ended. -/
def State.openScore (st : State) : List StageVisitResult × Int :=
  match st.visit with
  | some v =>
    let vs := scoreVisit st.wf v .runEnd none
    let r := stageReward vs
    ([{ stage := v.stage.id, visit := v.ordinal, startLine := v.startLine, endLine := none,
        endedBy := .runEnd, steps := v.steps, budget := v.stage.budget, verdicts := vs, reward := r }], r)
  | none => ([], 0)

/-- The outcome o: `outcomeReward` of the outcome check's verdict for an outcome command; 0 for an
outcome judged outside the run until the judge's value is joined (core/verifier/external.ts). -/
def State.outcomeValue (st : State) : Int :=
  match st.wf.outcome with
  | .command k => outcomeReward st.ended st.submittedFromTerminal (st.outcomeCheckVerdict k).ok
  | .external _ => 0

/-- What the return is made of (docs/rewards.md, "Return"): the outcome o, the sum S of the stage
rewards of every visit (the open one scored as if the run stopped now) and their number, the sum T
of the tool rewards and the number of steps. -/
structure ReturnParts where
  outcome : Int
  stageSum : Int
  visits : Nat
  toolSum : Int
  steps : Nat

def State.returnParts (st : State) : ReturnParts :=
  { outcome := st.outcomeValue, stageSum := st.stageSum + st.openScore.2,
    visits := st.stageCount + st.openScore.1.length, toolSum := st.toolSum, steps := st.steps }

/-- R = o + α·mean(S) + β·mean(T) in doubles, in the TypeScript code's order of operations, so that
both print the same double. LarProofs.Return bounds the exact value of the same parts. -/
def ReturnParts.toFloat (p : ReturnParts) (alpha beta : Float) : Float :=
  Float.ofInt p.outcome + alpha * meanF p.stageSum p.visits + beta * meanF p.toolSum p.steps

/-- The fields of the trajectory's scores as if it stopped now (core/verifier/types.ts `TrajectorySummary`). -/
def State.summaryFields (st : State) : List (String × Json) :=
  let stages := st.closed.reverse ++ st.openScore.1
  let parts := st.returnParts
  let submitted := Verdict.ofBool .outcomeSubmitted (submittedB st.ended st.submittedFromTerminal)
    "the run submitted from a terminal stage"
    (if st.ended then "the run submitted from a stage that is not terminal" else "the run never submitted")
  -- Judged outside the run: `outcome.submitted` alone, o counted 0 and pending after a submit.
  let judged : List Verdict × List (String × Json) :=
    match st.wf.outcome with
    | .command k => ((if st.ended then [submitted, st.outcomeCheckVerdict k] else [submitted]), [])
    | .external judge =>
      ([submitted], [("external", toJson judge), ("pending", toJson (submittedB st.ended st.submittedFromTerminal))])
  let finalStage := match st.visit with
    | some v => some v.stage.id
    | none => stages.getLast?.map (·.stage)
  [("steps", toJson st.steps),
   ("toolRewards", Json.mkObj [("sum", toJson parts.toolSum), ("count", toJson parts.steps),
      ("mean", Num.floatToJson (meanF parts.toolSum parts.steps))]),
   ("stages", toJson stages),
   ("stageRewards", Json.mkObj [("sum", toJson parts.stageSum), ("count", toJson parts.visits),
      ("mean", Num.floatToJson (meanF parts.stageSum parts.visits))]),
   ("outcome", Json.mkObj <|
      [("reward", toJson parts.outcome), ("verdicts", toJson judged.1)] ++ Json.opt "line" (st.outcome.map (·.2)) ++
        judged.2),
   ("return", Num.floatToJson (parts.toFloat st.alpha st.beta)),
   ("alpha", Json.num st.wf.rewards.alpha),
   ("beta", Json.num st.wf.rewards.beta),
   ("ended", toJson st.ended)] ++
  Json.opt "finalStage" finalStage

def State.summary (st : State) : Json := Json.mkObj st.summaryFields

end Lar
