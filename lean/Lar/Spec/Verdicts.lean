import Lar.Spec.Trajectory

/-!
# Which checks each event gets, in order, and what each one says

`Lar.Spec.Trajectory` gives the rewards; this file gives the verdicts they come from, one by one,
from the tables of docs/rewards.md: for a step, the checks of the tool-call table "in this order (a
check is only made where it applies)", with the notes on what follows a failed `tool.known` or
`tool.args`, and the checks of an MCP call; the checks the gate makes; the checks of a stage visit;
the checks of an `outcome` event. Each is a `Judgement`: a check and the proposition that says it
passes. `LarProofs.SpecVerdicts` proves that the checker's verdict lists are exactly these, one for
one (`JudgesAll`): the same checks in the same order, each passing exactly when its proposition
holds. The wording of a verdict and the `path` it points at are not specified.

Statements only, like the rest of `Lar/Spec/`.
-/

namespace Lar.Spec
open Lean Lar

/-- A check the specification says is made, and the proposition that says it passes. -/
structure Judgement where
  check : CheckId
  passes : Prop

/-- A verdict renders a judgement: it is of the judgement's check, and it passes exactly when the
judgement's proposition holds. -/
def Judges (v : Verdict) (j : Judgement) : Prop := v.check = j.check ∧ (v.ok = true ↔ j.passes)

/-- The verdicts render the judgements one for one, in order: as many verdicts as judgements, the
i-th verdict rendering the i-th judgement. -/
def JudgesAll : List Verdict → List Judgement → Prop
  | [], [] => True
  | v :: vs, j :: js => Judges v j ∧ JudgesAll vs js
  | _, _ => False

/-! ## A step -/

/-- `tool.permitted`, made while the run is open ("known tools, run not ended"). -/
def permittedJudgements (cur : Option Stage) (tool : String) : List Judgement :=
  match cur with
  | some st => [⟨.toolPermitted, Permitted st tool⟩]
  | none => []

/-- The checks that depend on the tool, made on a call of the built-in tool `t` whose arguments are
valid, in the table's order: for `run_command` the command policy, the path policy (its `cwd`) and
the sandbox requirement; for the file tools the path policy (the write tools also stay off the
read-only paths: `Workflow.readOnlyFor`); for `enter_stage` the transition and for `submit` a
terminal stage, both while the run is open. -/
def toolJudgements (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (args : Json) :
    Tool → List Judgement
  | .runCommand =>
    [⟨.toolCommandPolicy, CommandOk wf args⟩,
     ⟨.toolPathPolicy, PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .runCommand) .runCommand args⟩,
     ⟨.toolSandboxRequired, SandboxOk wf sb⟩]
  | .enterStage =>
    match cur with
    | some st => [⟨.toolTransition, TransitionOk wf st args⟩]
    | none => []
  | .submit =>
    match cur with
    | some st => [⟨.toolSubmitTerminal, Terminal wf st.id⟩]
    | none => []
  | t => [⟨.toolPathPolicy, PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor t) t args⟩]

open Classical in
/-- The checks made before a call of the built-in tool `t` runs: `tool.run_open`, `tool.known`,
`tool.args`, `tool.permitted` while the run is open, and, only when the arguments are valid, the
checks of the tool (when `tool.args` fails only `tool.permitted` follows it). -/
noncomputable def knownJudgements (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage)
    (c : ProposedCall) (t : Tool) : List Judgement :=
  [⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, Known c.tool⟩, ⟨.toolArgs, ArgsOkFor t c⟩] ++
    permittedJudgements cur c.tool ++ (if ArgsOkFor t c then toolJudgements wf sb cur c.args t else [])

/-- The checks made before a call of a name that is not an MCP name runs, `t` being the tool it
names if it names one: when it names none, `tool.run_open` and `tool.known` only (nothing follows a
failed `tool.known`). -/
noncomputable def builtinJudgements (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage)
    (c : ProposedCall) : Option Tool → List Judgement
  | none => [⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, Known c.tool⟩]
  | some t => knownJudgements wf sb cur c t

open Classical in
/-- The checks made before an MCP tool's call runs ("MCP tools"), `mcp` being what the servers offer
now: `tool.run_open`, `tool.known` (a server offers it now); only when it is known, `tool.args` (an
object) and `tool.permitted` while the run is open. No command, path, transition, submit or sandbox
check. -/
noncomputable def mcpJudgements (mcp : List (String × String)) (cur : Option Stage) (c : ProposedCall) :
    List Judgement :=
  [⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, McpKnown mcp c.tool⟩] ++
    (if McpKnown mcp c.tool then [⟨.toolArgs, McpArgsOk c⟩] ++ permittedJudgements cur c.tool else [])

/-- The checks made before a call runs, in the current stage `cur` with the MCP tools `mcp` offered
now: an MCP name's as an MCP call's, any other name's as a built-in call's. -/
noncomputable def preJudgements (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) : List Judgement :=
  bif isMcpName c.tool then mcpJudgements mcp cur c else builtinJudgements wf sb cur c (Tool.ofName? c.tool)

/-- The checks the gate makes on a call proposed after `h` ("The gate"): those made before a call
runs, in the current stage with the MCP tools offered now, and `tool.not_repeated`. -/
noncomputable def gateJudgements (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ProposedCall) :
    List Judgement :=
  preJudgements wf sb (offered h) (current wf h) c ++
    [⟨.toolNotRepeated, ¬RepeatsFailure wf h (callKey c.tool c.args)⟩]

/-- The call ran: it was not blocked, rejected or refused before it started (status `ok`, `timeout`
or `interrupted`). -/
def Ran (c : ToolCall) : Prop := c.status = .ok ∨ c.status = .timeout ∨ c.status = .interrupted

open Classical in
/-- The checks of a step made after `h`, in the table's order: the gate's; `tool.approved` for a
`run_command` the ask policy applies to whose command an ask pattern matches; `tool.sandboxed` for a
`run_command` that ran (it passes unless the command ran unconfined); `tool.succeeded`. -/
noncomputable def stepJudgements (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ToolCall) :
    List Judgement :=
  gateJudgements wf sb h c.toProposed ++
    (if AskApplies wf c.toProposed ∧ ∃ p, FirstMatch wf.policy.commands.ask (commandArg c.args) p
     then [⟨.toolApproved, Approved c.status⟩] else []) ++
    (if c.tool = "run_command" ∧ Ran c then [⟨.toolSandboxed, ¬RanUnconfined sb c⟩] else []) ++
    [⟨.toolSucceeded, Succeeded c⟩]

/-! ## A stage visit -/

/-- The checks of a visit of stage `s` whose steps are `calls` (the newest first) and which ended as
`e`, toward `target` for a transition ("Stage-visit level"), in the table's order: `stage.closed`;
`stage.transition` for a closed visit only; `stage.budget`; one check per exit condition of the
stage, in the order the stage lists them, over the visit's steps oldest first. -/
def visitJudgements (wf : Workflow) (s : Stage) (calls : List ToolCall) (e : VisitEnd) (target : Option String) :
    List Judgement :=
  [⟨.stageClosed, Closed e⟩] ++
    (match e with
     | .runEnd => []
     | e => [⟨.stageTransition, StageTransitionOk wf s.id e target⟩]) ++
    [⟨.stageBudget, WithinBudget calls.length s.budget⟩] ++
    s.exit.map (fun cond => ⟨cond.checkId, ExitMet cond (calls.map (stepFact wf)).reverse⟩)

/-! ## An outcome event -/

open Classical in
/-- The checks of an `outcome` event recorded after `h` in a run whose outcome is the command `k`'s
("Outcome level"): `outcome.after_submit` alone while the run has not ended; `outcome.single` alone
once an outcome was recorded; else both, and `outcome.check_passed` for this event. -/
noncomputable def commandOutcomeJudgements (wf : Workflow) (h : History) (k : OutcomeCheck) (o : OutcomeEvent) :
    List Judgement :=
  if ¬Ended wf h then [⟨.outcomeAfterSubmit, Ended wf h⟩]
  else if recordedOutcome wf h ≠ none then [⟨.outcomeSingle, recordedOutcome wf h = none⟩]
  else
    [⟨.outcomeAfterSubmit, Ended wf h⟩, ⟨.outcomeSingle, recordedOutcome wf h = none⟩,
     ⟨.outcomeCheckPassed, CheckPassed k.expectExitCode o⟩]

/-- The checks of an `outcome` event recorded after `h`: in a run judged outside it,
`outcome.external` alone, which fails (the outcome is not judged in the run); otherwise those of
`commandOutcomeJudgements`. -/
noncomputable def outcomeJudgements (wf : Workflow) (h : History) (o : OutcomeEvent) : List Judgement :=
  match wf.outcome with
  | .external j => [⟨.outcomeExternal, JudgedInRun (.external j)⟩]
  | .command k => commandOutcomeJudgements wf h k o

/-! ## Any event -/

/-- The checks of the event `e` made after `h`: a step's, an `outcome` event's; none for any other
event (a message, a compaction, an `mcp_tools` line, a restore, a token count, the end). -/
noncomputable def eventJudgements (wf : Workflow) (sb : Option SandboxRecord) (h : History) :
    Event → List Judgement
  | .toolCall c => stepJudgements wf sb h c
  | .outcome o => outcomeJudgements wf h o
  | _ => []

end Lar.Spec
