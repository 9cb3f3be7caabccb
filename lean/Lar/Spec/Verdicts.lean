import Lar.Spec.Trajectory

/-!
# Which checks each event gets, in order, and what each one says

`Lar.Spec.Trajectory` gives the rewards; this file gives the verdicts they come from, one by one,
from the tables of docs/rewards.md. For a step, the tool-call table itself: its rows "in this order
(a check is only made where it applies)", each a `row` with the table's "applies to" and "fails
when"; an MCP call gets the same rows, as "MCP tools" says (no row that names a built-in tool
applies to an MCP name). The gate's checks are the rows up to `tool.not_repeated`. Then the rows of
the stage-visit table, and the checks of an `outcome` event. Each check made is a `Judgement`: the
check and the proposition that says it passes. `LarProofs.SpecTable` (an event's and the gate's)
and `LarProofs.SpecVerdicts` (a visit's) prove that the checker's verdict lists are exactly these,
one for one (`JudgesAll`): the same checks in the same order, each passing exactly when its
proposition holds. The wording of a verdict and the `path` it points at
are not specified.

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

/-! ## A step: the tool-call table, row by row -/

open Classical in
/-- A row of a table, made only where it applies: the judgement `j` when `applies` holds, nothing
otherwise. -/
noncomputable def row (applies : Prop) (j : Judgement) : List Judgement := if applies then [j] else []

/-- The call is of the built-in tool `t`. An MCP name never is (an MCP call gets the MCP checks
instead, "MCP tools"); the first conjunct says so rather than compare the names. -/
def OfTool (c : ProposedCall) (t : Tool) : Prop := isMcpName c.tool = false ∧ Tool.ofName? c.tool = some t

/-- "`t` with valid args": a call of the built-in tool `t` whose arguments pass `tool.args`. -/
def ValidCallOf (c : ProposedCall) (t : Tool) : Prop := OfTool c t ∧ ArgsOkFor t c

/-- `tool.known` passes: the name is an MCP name some server offers now (`mcp`), or one of the eight
tools. -/
def KnownNow (mcp : List (String × String)) (name : String) : Prop :=
  (isMcpName name = true ∧ McpKnown mcp name) ∨ (isMcpName name = false ∧ Known name)

/-- `tool.args` passes: an MCP call's arguments are an object; a built-in call's fit its tool's
strict schema. Either way the argument text was JSON. -/
def CallArgsOk (c : ProposedCall) : Prop :=
  (isMcpName c.tool = true ∧ McpArgsOk c) ∨ (isMcpName c.tool = false ∧ ArgsOk c)

/-- `tool.permitted` passes: the run is open in a stage that permits the tool. -/
def PermittedNow (cur : Option Stage) (tool : String) : Prop := ∃ st, cur = some st ∧ Permitted st tool

/-- `tool.transition` passes: the stage the call names is defined and a legal move from the current
stage. -/
def TransitionNow (wf : Workflow) (cur : Option Stage) (args : Json) : Prop :=
  ∀ st, cur = some st → TransitionOk wf st args

/-- `tool.submit_terminal` passes: the current stage is terminal. -/
def TerminalNow (wf : Workflow) (cur : Option Stage) : Prop := ∀ st, cur = some st → Terminal wf st.id

/-- `tool.path_policy` passes: every present path argument of the call's tool normalizes, matches
no deny pattern and, for the write tools, lies under no read-only path. -/
def PathsOk (wf : Workflow) (c : ProposedCall) : Prop :=
  ∀ t, OfTool c t → PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor t) t c.args

/-- The call's command matches a `policy.commands.ask` pattern, whole or one of its parts. -/
def AskMatches (wf : Workflow) (args : Json) : Prop :=
  ∃ cmd, strArg? args "command" = some cmd ∧ ∃ p ∈ wf.policy.commands.ask, CommandMatches p.toList cmd.toList

/-- The rows of the tool-call table that are made before a call runs, in the table's order, each
with its "applies to" and its "fails when", for a call in the current stage `cur` (`none` once the
run has ended) with the MCP tools `mcp` offered now. The notes need no condition of their own: no
row after `tool.known` applies to a name that fails it, and of the rows after `tool.args` only
`tool.permitted` applies to a call whose arguments fail it. -/
noncomputable def callTable (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) : List Judgement :=
  row True ⟨.toolRunOpen, RunOpen cur⟩ ++
  row True ⟨.toolKnown, KnownNow mcp c.tool⟩ ++
  row (KnownNow mcp c.tool) ⟨.toolArgs, CallArgsOk c⟩ ++
  row (KnownNow mcp c.tool ∧ RunOpen cur) ⟨.toolPermitted, PermittedNow cur c.tool⟩ ++
  row (ValidCallOf c .enterStage ∧ RunOpen cur) ⟨.toolTransition, TransitionNow wf cur c.args⟩ ++
  row (ValidCallOf c .submit ∧ RunOpen cur) ⟨.toolSubmitTerminal, TerminalNow wf cur⟩ ++
  row (ValidCallOf c .runCommand) ⟨.toolCommandPolicy, CommandOk wf c.args⟩ ++
  row (∃ t : Tool, ValidCallOf c t ∧ t.pathArgs ≠ []) ⟨.toolPathPolicy, PathsOk wf c⟩ ++
  row (ValidCallOf c .runCommand) ⟨.toolSandboxRequired, SandboxOk wf sb⟩

/-- The checks the gate makes on a call proposed after `h` ("The gate"): the table's rows up to
`tool.not_repeated`, in the current stage with the MCP tools offered now. -/
noncomputable def gateJudgements (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ProposedCall) :
    List Judgement :=
  callTable wf sb (offered h) (current wf h) c ++
  row True ⟨.toolNotRepeated, ¬RepeatsFailure wf h (callKey c.tool c.args)⟩

/-- The call ran: it was not blocked, rejected or refused before it started (status `ok`, `timeout`
or `interrupted`). -/
def Ran (c : ToolCall) : Prop := c.status = .ok ∨ c.status = .timeout ∨ c.status = .interrupted

/-- The checks of a step made after `h`: every row of the tool-call table, in its order: the gate's,
then `tool.approved` (a `run_command` with valid args whose command matches no deny pattern but an
ask pattern), `tool.sandboxed` (a `run_command` that ran) and `tool.succeeded`. -/
noncomputable def stepJudgements (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ToolCall) :
    List Judgement :=
  gateJudgements wf sb h c.toProposed ++
  row (ValidCallOf c.toProposed .runCommand ∧ CommandOk wf c.args ∧ AskMatches wf c.args)
    ⟨.toolApproved, Approved c.status⟩ ++
  row (c.tool = "run_command" ∧ Ran c) ⟨.toolSandboxed, ¬RanUnconfined sb c⟩ ++
  row True ⟨.toolSucceeded, Succeeded c⟩

/-! ## A stage visit -/

/-- The checks of a visit of stage `s` whose steps are `calls` (the newest first) and which ended as
`e`, toward `target` for a transition ("Stage-visit level"), in the table's order: `stage.closed`;
`stage.transition` for a closed visit only; `stage.budget`; one check per exit condition of the
stage, in the order the stage lists them, over the visit's steps oldest first. -/
noncomputable def visitJudgements (wf : Workflow) (s : Stage) (calls : List ToolCall) (e : VisitEnd)
    (target : Option String) : List Judgement :=
  row True ⟨.stageClosed, Closed e⟩ ++
  row (Closed e) ⟨.stageTransition, StageTransitionOk wf s.id e target⟩ ++
  row True ⟨.stageBudget, WithinBudget calls.length s.budget⟩ ++
  s.exit.map (fun cond => ⟨cond.checkId, ExitHolds wf cond calls.reverse⟩)

/-- The record of a visit (`StageVisitResult`: what `lar verify` prints of a visit as it closes, and
as the summary scores the open one) describes the visit of stage `s` that ended as `e` after `n`
steps: the stage's id, how the visit ended, its step count, and the stage's budget. -/
def VisitRecord (r : StageVisitResult) (s : Stage) (e : VisitEnd) (n : Nat) : Prop :=
  r.stage = s.id ∧ r.endedBy = e ∧ r.steps = n ∧ r.budget = s.budget

/-! ## An outcome event -/

open Classical in
/-- The checks of an `outcome` event recorded after `h` in a run whose outcome is the command `k`'s
("Outcome level": "an event one of the first two ignores gets that check alone"):
`outcome.after_submit` alone while the run has not ended; `outcome.single` alone once an outcome
was recorded; else both, and `outcome.check_passed` for this event. -/
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
