import Lean.Data.Json
import Lar.Glob
import Lar.Mcp
import Lar.Schema
import Lar.Tools

/-
Every check of core/verifier/checks.ts: its stable id, level and severity, and
for each one the `Bool` decision procedure that the verifier runs, over the pieces
of verifier state the check reads (the current stage, the workflow, the facts of
the current visit). The proposition each one decides is in `Lar.Spec.Checks`,
and the theorem that it does in `LarProofs.Checks`.
-/
namespace Lar
open Lean

/-! ## Ids, levels, severities, verdicts -/

inductive Level where
  | tool | stage | outcome
  deriving DecidableEq, Repr

inductive Severity where
  | error | warning | info
  deriving DecidableEq, Repr

inductive CheckId where
  | toolRunOpen | toolKnown | toolArgs | toolPermitted | toolTransition | toolSubmitTerminal
  | toolCommandPolicy | toolPathPolicy | toolSandboxRequired | toolApproved | toolSucceeded
  | toolNotRepeated | toolSandboxed
  | stageTransition | stageClosed | stageBudget
  | stageExitToolSucceeded | stageExitCommandSucceeded | stageExitCommandRan | stageExitFileChanged
  | stageExitOutcomeRan
  | outcomeExternal | outcomeAfterSubmit | outcomeSingle | outcomeSubmitted | outcomeCheckPassed
  deriving DecidableEq, Repr

/-- The stable id, as in core/verifier/checks.ts. -/
def CheckId.name : CheckId → String
  | .toolRunOpen => "tool.run_open"
  | .toolKnown => "tool.known"
  | .toolArgs => "tool.args"
  | .toolPermitted => "tool.permitted"
  | .toolTransition => "tool.transition"
  | .toolSubmitTerminal => "tool.submit_terminal"
  | .toolCommandPolicy => "tool.command_policy"
  | .toolPathPolicy => "tool.path_policy"
  | .toolSandboxRequired => "tool.sandbox_required"
  | .toolSandboxed => "tool.sandboxed"
  | .toolApproved => "tool.approved"
  | .toolSucceeded => "tool.succeeded"
  | .toolNotRepeated => "tool.not_repeated"
  | .stageTransition => "stage.transition"
  | .stageClosed => "stage.closed"
  | .stageBudget => "stage.budget"
  | .stageExitToolSucceeded => "stage.exit.tool_succeeded"
  | .stageExitCommandSucceeded => "stage.exit.command_succeeded"
  | .stageExitCommandRan => "stage.exit.command_ran"
  | .stageExitFileChanged => "stage.exit.file_changed"
  | .stageExitOutcomeRan => "stage.exit.outcome_ran"
  | .outcomeExternal => "outcome.external"
  | .outcomeAfterSubmit => "outcome.after_submit"
  | .outcomeSingle => "outcome.single"
  | .outcomeSubmitted => "outcome.submitted"
  | .outcomeCheckPassed => "outcome.check_passed"

def CheckId.level : CheckId → Level
  | .toolRunOpen | .toolKnown | .toolArgs | .toolPermitted | .toolTransition | .toolSubmitTerminal
  | .toolCommandPolicy | .toolPathPolicy | .toolSandboxRequired | .toolApproved | .toolSucceeded
  | .toolNotRepeated | .toolSandboxed => .tool
  | .stageTransition | .stageClosed | .stageBudget | .stageExitToolSucceeded
  | .stageExitCommandSucceeded | .stageExitCommandRan | .stageExitFileChanged
  | .stageExitOutcomeRan => .stage
  | .outcomeExternal | .outcomeAfterSubmit | .outcomeSingle | .outcomeSubmitted | .outcomeCheckPassed => .outcome

def CheckId.severity : CheckId → Severity
  | .toolRunOpen | .toolKnown | .toolArgs | .toolPermitted | .toolTransition | .toolSubmitTerminal
  | .toolCommandPolicy | .toolPathPolicy | .toolSandboxRequired => .error
  | .toolApproved | .toolSucceeded | .toolNotRepeated | .toolSandboxed => .warning
  | .stageTransition => .error
  | .stageClosed | .stageBudget | .stageExitToolSucceeded | .stageExitCommandSucceeded
  | .stageExitCommandRan | .stageExitFileChanged | .stageExitOutcomeRan => .warning
  | .outcomeExternal | .outcomeAfterSubmit | .outcomeSingle => .error
  | .outcomeSubmitted | .outcomeCheckPassed => .info

/-- The checks whose failure makes a tool reward −1: the tool-level checks of
severity `error` (`blocks_iff`). Spelled out case by case so that it reduces
by `rfl` on every constructor. -/
def CheckId.blocks : CheckId → Bool
  | .toolRunOpen => true
  | .toolKnown => true
  | .toolArgs => true
  | .toolPermitted => true
  | .toolTransition => true
  | .toolSubmitTerminal => true
  | .toolCommandPolicy => true
  | .toolPathPolicy => true
  | .toolSandboxRequired => true
  | .toolSandboxed => false
  | .toolApproved => false
  | .toolSucceeded => false
  | .toolNotRepeated => false
  | .stageTransition => false
  | .stageClosed => false
  | .stageBudget => false
  | .stageExitToolSucceeded => false
  | .stageExitCommandSucceeded => false
  | .stageExitCommandRan => false
  | .stageExitFileChanged => false
  | .stageExitOutcomeRan => false
  | .outcomeExternal => false
  | .outcomeAfterSubmit => false
  | .outcomeSingle => false
  | .outcomeSubmitted => false
  | .outcomeCheckPassed => false

/-- The verdict of one check on one event. `path` locates the fault in the event's JSON. -/
structure Verdict where
  check : CheckId
  ok : Bool
  reason : String
  path : Option (List String) := none
  deriving Repr

def Verdict.pass (check : CheckId) (reason : String) : Verdict :=
  { check := check, ok := true, reason := reason }

def Verdict.fail (check : CheckId) (reason : String) (path : Option (List String) := none) : Verdict :=
  { check := check, ok := false, reason := reason, path := path }

/-- A verdict from a decision: pass or fail with the given reasons. Every verdict
whose outcome a theorem talks about is built this way from the `Bool` decision
procedure of its check, so `ok` is that procedure (`Verdict.ofBool_ok`); the
reasons are only wording. Inlined so that a failure reason is only built on
failure. -/
@[inline] def Verdict.ofBool (check : CheckId) (b : Bool) (passReason failReason : String)
    (path : Option (List String) := none) : Verdict :=
  if b then .pass check passReason else .fail check failReason path

instance : ToJson Verdict where
  toJson v := Json.mkObj <|
    [("check", toJson v.check.name), ("ok", toJson v.ok), ("reason", toJson v.reason)] ++
    Json.opt "path" v.path

/-! ## Tool-call level

Each check below is its `Bool` procedure; its `Prop` is in `Lar.Spec.Checks`, its `…_iff` in `LarProofs.Checks`. -/

/-- `tool.run_open`: the run has not ended (there is a current stage). -/
def runOpenB (cur : Option Stage) : Bool := cur.isSome

/-- `tool.known`: the name is one of the eight tools. -/
def knownB (name : String) : Bool := (Tool.ofName? name).isSome

/-- `tool.args`: the argument text was JSON, and the arguments fit the tool's strict schema. -/
def argsOkB (c : ProposedCall) : Bool :=
  c.argsError.isNone &&
    match Tool.ofName? c.tool with
    | some t => argsValidB t c.args
    | none => false

/-- `tool.args` for a call of the known tool `t`: no `argsError`, and the arguments
fit `t`'s strict schema. -/
def argsOkFor (t : Tool) (c : ProposedCall) : Bool := c.argsError.isNone && argsValidB t c.args

/-- `tool.permitted` (`stagePermits` in core/verifier/pre-checks.ts): the tool is in the current
stage's `tools`, or it is an MCP tool that an MCP pattern of the stage matches (`mcp__github__get_*`).
A built-in tool is never an MCP name, so it is permitted by its exact name only. -/
def permittedB (stage : Stage) (tool : String) : Bool :=
  stage.tools.any (fun t => decide (t = tool)) ||
    (isMcpName tool && stage.tools.any (fun p => isMcpPattern p && globMatch p tool))

/-! ### MCP tools

An MCP tool's call (core/verifier/pre-checks.ts `mcpVerdicts`) is known while its server's latest
`mcp_tools` line lists it; its arguments need only be a JSON object (the server judges them against
its own schema, and a refusal fails the call); it is permitted by `Permitted`. No command, path,
transition, submit or sandbox check applies: the server's process is confined by the sandbox. -/

/-- `tool.known` for an MCP name: some tool the servers offer now (name, schema digest) has it. -/
def mcpKnownB (mcp : List (String × String)) (name : String) : Bool := mcp.any (fun p => decide (p.1 = name))

/-- `tool.args` for an MCP tool: the argument text was JSON, and the arguments are an object. -/
def mcpArgsOkB (c : ProposedCall) : Bool := c.argsError.isNone && isObject c.args

/-- A server's `mcp_tools` line replaces what it offered before: the names with its prefix are
dropped, then the line's tools are added (core/verifier/state.ts, `mcp_tools`). -/
def replaceServerTools (known : List (String × String)) (server : String) (tools : List (String × String)) :
    List (String × String) :=
  known.filter (fun p => !p.1.startsWith (mcpServerPrefix server)) ++ tools

/-- A stage of this id is defined. -/
def stageDefinedB (wf : Workflow) (id : String) : Bool := wf.stages.any (fun s => decide (s.id = id))

/-- `tool.transition` (and `stage.transition` for a transition): `dst` is a defined
stage and `src → dst` is in `transitions`. -/
def legalTransitionB (wf : Workflow) (src dst : String) : Bool :=
  stageDefinedB wf dst && (wf.succs src).any (fun t => decide (t = dst))

/-- `tool.submit_terminal` (and `stage.transition` for a submit): the stage is terminal. -/
def terminalB (wf : Workflow) (id : String) : Bool := wf.terminal.any (fun t => decide (t = id))

/-- `tool.command_policy`: no deny pattern matches the command (whole or any part). -/
def commandAllowedB (deny : List String) (cmd : String) : Bool :=
  !(deny.any (fun p => commandMatchesB p.toList cmd.toList))

/-- A read-only path without its trailing `/`s (core/schema/workflow.ts `readOnlyPathOf`:
`p.replace(/\/+$/, '')`), so that `src/` protects what `src` does. -/
def dropTrailingSlashes (cs : List Char) : List Char :=
  (cs.reverse.dropWhile (fun c => c == '/')).reverse

/-- The read-only path as the checker compares it and names it in a message: without its trailing `/`s. -/
def readOnlyPathText (r : String) : String := String.ofList (dropTrailingSlashes r.toList)

/-- The normalized path `n` is `q` or lies below it (`q/…`), over characters. -/
def underL (q n : List Char) : Bool := decide (n = q) || (q ++ ['/']).isPrefixOf n

/-- The normalized path `n` is the read-only path `r` or lies below it (`r/…`), `r` taken without
its trailing `/`s. Read-only paths are otherwise normalized workspace paths (a well-formedness
rule), so plain comparison of the characters decides it. -/
def underB (r n : String) : Bool := underL (dropTrailingSlashes r.toList) n.toList

/-- One path argument: it normalizes (`npath`), the normal form matches no deny
pattern and lies under none of the read-only paths `ro` (given only for the
write tools, `Workflow.readOnlyFor`). -/
def pathOkB (deny ro : List String) (path : String) : Bool :=
  match npath path with
  | .ok n => !(deny.any (fun p => globMatch p n)) && !(ro.any (fun r => underB r n))
  | .error _ => false

/-- The read-only paths a call of tool `t` must stay off: all of them for the write tools, none for the others. -/
def Workflow.readOnlyFor (wf : Workflow) (t : Tool) : List String :=
  if t.writes then wf.readOnlyPaths else []

/-- `tool.path_policy`: every present path argument of the tool passes `PathOk`. -/
def pathPolicyB (deny ro : List String) (t : Tool) (args : Json) : Bool :=
  t.pathArgs.all fun key =>
    match strArg? args key with
    | some s => pathOkB deny ro s
    | none => true

/-- `tool.not_repeated`: the same call did not fail in the current change epoch.
`lastFail` is the epoch at which the same call last failed. -/
def notRepeatedB (lastFail : Option Nat) (epoch : Nat) : Bool := !decide (lastFail = some epoch)

/-- `tool.approved` (made only for a command that matches an `ask` pattern): not rejected. -/
def approvedB (status : CallStatus) : Bool := !decide (status = .denied)

/- The `Bool` chains below are bracketed to the right, like the `∧`/`∨` chains of
their propositions: `&&` and `||` associate to the left and core `simp` does not
reassociate, so `simp [.., Bool.and_eq_true]` on a left-nested chain stops at
`(A ∧ B) ∧ C ↔ A ∧ B ∧ C`. -/

def succeededB (c : ToolCall) : Bool :=
  decide (c.status = .ok) &&
    (!decide (c.tool = "run_command") ||
      (decide (c.result.exitCode = some 0) &&
        (decide (c.result.completion = none) || (decide (c.result.completion = some .marker) ||
          decide (c.result.completion = some .exit)))))

/-- A command whose end was observed, whatever its exit code (`command_ran`). -/
def ranToEndB (c : ToolCall) : Bool :=
  decide (c.status = .ok) && (decide (c.tool = "run_command") && (c.result.exitCode.isSome &&
    (!decide (c.result.completion = some .timeout) && !decide (c.result.completion = some .unobserved))))

/-- `outcome_ran`: the call ran the workflow's outcome command itself (the same
command line after `norm`, and no `cwd`: only such a call does the host run as
the check runs it) to an observed end, and its tests ran: the count its
output gives is positive or, when the host recognised no test runner, the exit
code is the one the check expects. -/
def ranCheckB (check : OutcomeCheck) (c : ToolCall) : Bool :=
  ranToEndB c && ((field? c.args "cwd").isNone &&
    (decide ((strArg? c.args "command").map (fun s => normL s.toList) = some (normL check.command.toList)) &&
    match c.result.testsRan with
    | some n => decide (0 < n)
    | none => decide (c.result.exitCode = some check.expectExitCode)))

/-- `outcome_ran` against the workflow's outcome: never met when the outcome is judged
outside the run (no call of the run is its check). -/
def ranCheckOfB (o : WorkflowOutcome) (c : ToolCall) : Bool :=
  match o with
  | .command k => ranCheckB k c
  | .external _ => false

/-! ## Tool-call level: the call as a whole

The checks above combined as the verifier makes them for one call (rewards.md,
tool-call table): which ones apply depends on the tool. `CallConforms` is the
specification of a call that scores no −1; `callConformsB` decides it. -/

/-- `args.stage`, or `""` when it is not a string (never, once the arguments are valid). -/
def stageArg (args : Json) : String := (strArg? args "stage").getD ""

/-- `args.command`, or `""` when it is not a string (never, once the arguments are valid). -/
def commandArg (args : Json) : String := (strArg? args "command").getD ""

/-- `tool.transition` for an `enter_stage` call made in stage `st`: the stage it
names is defined and `st.id → stage` is a transition. -/
def transitionOkB (wf : Workflow) (st : Stage) (args : Json) : Bool :=
  match strArg? args "stage" with
  | some tg => legalTransitionB wf st.id tg
  | none => true

/-- `tool.command_policy` for a `run_command` call: no deny pattern matches the command. -/
def commandOkB (wf : Workflow) (args : Json) : Bool :=
  match strArg? args "command" with
  | some cmd => commandAllowedB wf.policy.commands.deny cmd
  | none => true

/-- The sandbox is required: by the workflow, or by the user for this run (the
header's record `sb`; `none` in a trajectory that records none). -/
def sandboxRequiredB (wf : Workflow) (sb : Option SandboxRecord) : Bool :=
  wf.sandbox.required || sb.any (·.required)

/-- `tool.sandbox_required`: where the sandbox is required, commands run only in
a run whose header records that its commands were held: confined by the OS sandbox,
or inside a container that is the run's sandbox (`SandboxRecord.held`). -/
def sandboxOkB (wf : Workflow) (sb : Option SandboxRecord) : Bool :=
  !sandboxRequiredB wf sb || decide (sb.map (·.held) = some true)

/-- The checks that depend on the tool, for a call made in stage `st` of a run
whose header records the sandbox `sb`: `run_command` obeys the command policy,
the path policy (its `cwd`) and the sandbox requirement; the file tools obey
the path policy (the write tools also stay off the read-only paths);
`enter_stage` names a legal transition; `submit` is made from a terminal stage. -/
def toolOkB (wf : Workflow) (sb : Option SandboxRecord) (st : Stage) (args : Json) : Tool → Bool
  | .runCommand => commandOkB wf args &&
      (pathPolicyB wf.policy.paths.deny (wf.readOnlyFor .runCommand) .runCommand args && sandboxOkB wf sb)
  | .readFile => pathPolicyB wf.policy.paths.deny (wf.readOnlyFor .readFile) .readFile args
  | .writeFile => pathPolicyB wf.policy.paths.deny (wf.readOnlyFor .writeFile) .writeFile args
  | .editFile => pathPolicyB wf.policy.paths.deny (wf.readOnlyFor .editFile) .editFile args
  | .listFiles => pathPolicyB wf.policy.paths.deny (wf.readOnlyFor .listFiles) .listFiles args
  | .search => pathPolicyB wf.policy.paths.deny (wf.readOnlyFor .search) .search args
  | .enterStage => transitionOkB wf st args
  | .submit => terminalB wf st.id

/-- `builtinConformsB` with the tool looked up. -/
def callConformsFor (wf : Workflow) (sb : Option SandboxRecord) (c : ProposedCall) : Option Stage → Option Tool → Bool
  | some st, some t => argsOkFor t c && (permittedB st c.tool && toolOkB wf sb st c.args t)
  | some _, none => false
  | none, _ => false

def builtinConformsB (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall) : Bool :=
  callConformsFor wf sb c cur (Tool.ofName? c.tool)

/-- `mcpConformsB` with whether the tool is known. -/
def mcpConformsFor (c : ProposedCall) (known : Bool) : Option Stage → Bool
  | some st => known && (mcpArgsOkB c && permittedB st c.tool)
  | none => false

def mcpConformsB (mcp : List (String × String)) (cur : Option Stage) (c : ProposedCall) : Bool :=
  mcpConformsFor c (mcpKnownB mcp c.tool) cur

/-- A call conforms in the current stage `cur`, the MCP tools `mcp` the servers offer now and the
header's sandbox record `sb`: an MCP name's call as `McpConforms`, any other as `BuiltinConforms`
(the pre-checks take the MCP branch first, as core/verifier/pre-checks.ts does). These are exactly
the checks of severity `error` in the tool-call table. -/
def callConformsB (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String)) (cur : Option Stage)
    (c : ProposedCall) : Bool :=
  bif isMcpName c.tool then mcpConformsB mcp cur c else builtinConformsB wf sb cur c

/-! ## Stage-visit level

A visit is judged from the facts of its steps, oldest first. -/

/-- What the exit conditions need to know of one step. -/
structure StepFact where
  tool : String
  /-- the call succeeded -/
  ok : Bool
  /-- a `run_command` that ran to an observed end -/
  ran : Bool
  /-- `args.command` of a `run_command` call, when a string -/
  command : Option String
  /-- the files the call changed -/
  changed : List String
  /-- a `run_command` that ran the workflow's outcome command, tests and all (`RanCheck`) -/
  checked : Bool := false
  deriving Repr

/-- `stage.closed`: how a visit ended. -/
inductive VisitEnd where
  | transition | submit | runEnd
  deriving DecidableEq, Repr

def VisitEnd.name : VisitEnd → String
  | .transition => "transition" | .submit => "submit" | .runEnd => "run_end"

def closedB (e : VisitEnd) : Bool := !decide (e = .runEnd)

/-- `stage.transition` for a visit of stage `src` that ended as `e` (toward `dst`
for a transition): a transition went to a defined stage that `src` may move to; a
submit was made from a terminal stage. An unclosed visit gets no such verdict
(and a transition always has a target, so the `none` case does not occur). -/
def stageTransitionB (wf : Workflow) (src : String) : VisitEnd → Option String → Bool
  | .transition, some dst => legalTransitionB wf src dst
  | .transition, none => true
  | .submit, _ => terminalB wf src
  | .runEnd, _ => true

/-- `stage.budget`: at most `budget` steps (the step that ends the visit counts). -/
def withinBudgetB (steps budget : Nat) : Bool := decide (steps ≤ budget)

/-- Successful calls of a tool in the visit. -/
def countSucceeded (tool : String) (facts : List StepFact) : Nat :=
  (facts.filter (fun f => f.ok && decide (f.tool = tool))).length

/-- `stage.exit.tool_succeeded`: at least `atLeast` calls of `tool` succeeded. -/
def toolSucceededB (tool : String) (atLeast : Nat) (facts : List StepFact) : Bool :=
  decide (atLeast ≤ countSucceeded tool facts)

/-- The step is a `run_command` whose normalized command line matches, and that
succeeded (`useRan = false`) or ran to an observed end (`useRan = true`). -/
def cmdGood (useRan : Bool) (pattern : String) (f : StepFact) : Bool :=
  (if useRan then f.ran else f.ok) &&
    match f.command with
    | some c => globMatchL pattern.toList (normL c.toList)
    | none => false

/-- No step in `rest` changed a file, when `afterLastChange` is on. -/
def noChangeAfter (afterLastChange : Bool) (rest : List StepFact) : Bool :=
  !afterLastChange || rest.all (fun g => g.changed.isEmpty)

/-- `stage.exit.command_succeeded` / `command_ran`: some step of the visit is good
and, with `afterLastChange`, no later step of the visit changed a file (a step
that changes files and is good counts as after its own change). -/
def cmdMetB (good : StepFact → Bool) (alc : Bool) : List StepFact → Bool
  | [] => false
  | f :: rest => (good f && noChangeAfter alc rest) || cmdMetB good alc rest

/-- A changed file counts for `file_changed`: any file without a pattern, else one
whose `npath` form (or the path as recorded, when `npath` rejects it) matches. -/
def fileMatchesB (pattern : Option String) (file : String) : Bool :=
  match pattern with
  | some p => globMatch p (npathOrSelf file)
  | none => true

/-- `stage.exit.file_changed`: some step of the visit changed a file that counts. -/
def fileChangedB (pattern : Option String) (facts : List StepFact) : Bool :=
  facts.any fun f => f.changed.any fun x => fileMatchesB pattern x

/-- Whether an exit condition holds over the facts of a visit (oldest first). -/
def exitMetB : ExitCondition → List StepFact → Bool
  | .toolSucceeded tool n, facts => toolSucceededB tool n facts
  | .commandSucceeded p alc, facts => cmdMetB (cmdGood false p) alc facts
  | .commandRan p alc, facts => cmdMetB (cmdGood true p) alc facts
  | .fileChanged p, facts => fileChangedB p facts
  | .outcomeRan alc, facts => cmdMetB (fun f => f.checked) alc facts

def ExitCondition.checkId : ExitCondition → CheckId
  | .toolSucceeded .. => .stageExitToolSucceeded
  | .commandSucceeded .. => .stageExitCommandSucceeded
  | .commandRan .. => .stageExitCommandRan
  | .fileChanged .. => .stageExitFileChanged
  | .outcomeRan .. => .stageExitOutcomeRan

/-! ## Outcome level -/

/-- `outcome.external`: an `outcome` event may be recorded only when the workflow's outcome
is its own command's; in a run judged outside it the event is an error and is ignored. -/
def judgedInRunB (o : WorkflowOutcome) : Bool := o.judge?.isNone

/-- `outcome.after_submit`: the run has ended. -/
def afterSubmitB (ended : Bool) : Bool := ended

/-- `outcome.single`: no outcome was recorded yet. -/
def singleOutcomeB (recorded : Option Nat) : Bool := recorded.isNone

/-- `outcome.submitted`: the run ended by a submit made from a terminal stage
(`fromTerminal` is whether the stage of the submit was terminal). -/
def submittedB (ended fromTerminal : Bool) : Bool := ended && fromTerminal

/-- `outcome.check_passed`: the end was observed, the exit code is the expected one,
and the check did not report running no tests. -/
def checkPassedB (expect : Int) (o : OutcomeEvent) : Bool :=
  !decide (o.completion = some .timeout) && (!decide (o.completion = some .unobserved) &&
    (decide (o.exitCode = some expect) && !decide (o.testsRan = some 0)))

end Lar
