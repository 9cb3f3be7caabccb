import Lar.Verifier
import Lar.Spec.Run
import LarProofs.Rewards

/-!
What the checker reports: the error verdicts of the pre-run checks are exactly the
non-conformance of the call (`preChecks_err`), so a step scores −1 exactly when its call does not
conform in the state it meets; the running sums stay bounded in every state the checker reaches.
-/

namespace Lar
open Lean

/-- `tool.run_open` is an error once the run has ended. -/
theorem openVerdict_none_err (tool : String) : toolErr (openVerdict none tool) = true := rfl

/-- `tool.run_open` is no error while the run is open. -/
theorem openVerdict_some_err (st : Stage) (tool : String) : toolErr (openVerdict (some st) tool) = false :=
  rfl

/-- `tool.known` passing is no error. -/
theorem knownVerdict_err : toolErr knownVerdict = false := rfl

/-- `tool.known` failing is an error. -/
theorem unknownVerdict_err (tool : String) : toolErr (unknownVerdict tool) = true := rfl

/-- `tool.args` is an error exactly when `argsOkFor` is false. -/
theorem argsVerdict_err (t : Tool) (c : ProposedCall) : toolErr (argsVerdict t c) = !argsOkFor t c := by
  unfold argsVerdict
  exact toolErr_ofBool_blocks .toolArgs rfl _ _ _ _

/-- `tool.permitted` is an error exactly when `permittedB` is false. -/
theorem permittedVerdicts_err (st : Stage) (tool : String) :
    (permittedVerdicts (some st) tool).any toolErr = !permittedB st tool := by
  simp only [permittedVerdicts, List.any_cons, List.any_nil, toolErr_ofBool_blocks .toolPermitted rfl,
    Bool.or_false]

/-- `tool.transition` is an error exactly when `transitionOkB` is false. -/
theorem transitionVerdict_err (wf : Workflow) (st : Stage) (args : Json) :
    toolErr (transitionVerdict wf st args) = !transitionOkB wf st args := by
  unfold transitionVerdict
  exact toolErr_ofBool_blocks .toolTransition rfl _ _ _ _

/-- `tool.submit_terminal` is an error exactly when the stage is not terminal. -/
theorem submitVerdict_err (wf : Workflow) (st : Stage) :
    toolErr (submitVerdict wf st) = !terminalB wf st.id := by
  unfold submitVerdict
  exact toolErr_ofBool_blocks .toolSubmitTerminal rfl _ _ _ _

/-- `tool.command_policy` is an error exactly when its decision is false. -/
theorem commandVerdict_err (ok : Bool) (wf : Workflow) (args : Json) :
    toolErr (commandVerdict ok wf args) = !ok := by
  unfold commandVerdict
  exact toolErr_ofBool_blocks .toolCommandPolicy rfl _ _ _ _

/-- `tool.path_policy` is an error exactly when `pathPolicyB` is false. -/
theorem pathVerdict_err (wf : Workflow) (t : Tool) (args : Json) :
    toolErr (pathVerdict wf t args) = !pathPolicyB wf.policy.paths.deny (wf.readOnlyFor t) t args := by
  unfold pathVerdict
  exact toolErr_ofBool_blocks .toolPathPolicy rfl _ _ _ _

/-- `tool.sandbox_required` is an error exactly when `sandboxOkB` is false. -/
theorem sandboxVerdict_err (wf : Workflow) (sb : Option SandboxRecord) :
    toolErr (sandboxVerdict wf sb) = !sandboxOkB wf sb := by
  unfold sandboxVerdict
  exact toolErr_ofBool_blocks .toolSandboxRequired rfl _ _ _ _

/-- The tool-specific pre-run verdicts hold an error exactly when `toolOkB` is false. -/
theorem toolVerdicts_err (wf : Workflow) (sb : Option SandboxRecord) (st : Stage) (args : Json) (t : Tool) :
    (toolVerdicts wf sb (some st) args t).1.any toolErr = !toolOkB wf sb st args t := by
  cases t <;>
    simp only [toolVerdicts, toolOkB, transitionVerdicts, submitVerdicts, List.any_cons, List.any_nil,
      commandVerdict_err, pathVerdict_err, sandboxVerdict_err, transitionVerdict_err, submitVerdict_err,
      Bool.or_false, bool_not_and]

/-- For a built-in tool's call, some verdict of the pre-run checks is a failed error-severity
check exactly when the call does not conform (`builtinConforms_iff`). -/
theorem preChecksFor_err (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall)
    (ot : Option Tool) :
    (preChecksFor wf sb cur c ot).1.any toolErr = !callConformsFor wf sb c cur ot := by
  cases ot with
  | none => cases cur <;> rfl
  | some t =>
    cases cur with
    | none =>
      show (knownChecks wf sb none c t (argsOkFor t c)).1.any toolErr = !false
      cases argsOkFor t c <;> rfl
    | some st =>
      show (knownChecks wf sb (some st) c t (argsOkFor t c)).1.any toolErr =
        !(argsOkFor t c && (permittedB st c.tool && toolOkB wf sb st c.args t))
      cases hA : argsOkFor t c <;>
        simp only [knownChecks, headVerdicts, List.any_append, List.any_cons, List.any_nil,
          openVerdict_some_err, knownVerdict_err, argsVerdict_err, permittedVerdicts_err,
          toolVerdicts_err, hA, Bool.not_true, Bool.not_false, Bool.false_or, Bool.or_false,
          Bool.true_or, Bool.false_and, Bool.true_and, bool_not_and]

/-- `tool.known` passing for an MCP tool is no error. -/
theorem mcpKnownVerdict_err : toolErr mcpKnownVerdict = false := rfl

/-- `tool.known` failing for an MCP name is an error. -/
theorem mcpUnknownVerdict_err (tool : String) : toolErr (mcpUnknownVerdict tool) = true := rfl

/-- `tool.args` for an MCP tool is an error exactly when `mcpArgsOkB` is false. -/
theorem mcpArgsVerdict_err (c : ProposedCall) : toolErr (mcpArgsVerdict c) = !mcpArgsOkB c := by
  unfold mcpArgsVerdict
  exact toolErr_ofBool_blocks .toolArgs rfl _ _ _ _

/-- For an MCP tool's call, the same (`mcpConforms_iff`), whether or not a server offers it. -/
theorem mcpChecks_err (cur : Option Stage) (c : ProposedCall) (known : Bool) :
    (mcpChecks cur c known).any toolErr = !mcpConformsFor c known cur := by
  cases known with
  | false => cases cur <;> rfl
  | true =>
    cases cur with
    | none => rfl
    | some st =>
      simp only [mcpChecks, mcpConformsFor, List.any_append, List.any_cons, List.any_nil,
        openVerdict_some_err, mcpKnownVerdict_err, mcpArgsVerdict_err, permittedVerdicts_err,
        Bool.false_or, Bool.or_false, Bool.true_and, bool_not_and]

/-- Some verdict of `preChecks` is a failed error-severity check exactly when the
call does not conform (`callConforms_iff`). -/
theorem preChecks_err (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    (preChecks wf sb mcp cur c).1.any toolErr = !callConformsB wf sb mcp cur c := by
  unfold preChecks callConformsB
  cases isMcpName c.tool with
  | true => exact mcpChecks_err cur c (mcpKnownB mcp c.tool)
  | false => exact preChecksFor_err wf sb cur c (Tool.ofName? c.tool)

/-- The tool reward a `tool_call` event reports is that of `callVerdicts`. -/
theorem State.appendCall_toolReward (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).2.toolReward = some (toolReward (st.callVerdicts c)) := rfl

/-- The verdicts after the pre-run checks are warnings: they never make the reward −1. -/
theorem State.callVerdicts_err (st : State) (c : ToolCall) :
    (st.callVerdicts c).any toolErr =
      (preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed).1.any toolErr := by
  have h1 : toolErr (st.repeatVerdict (callKey c.tool c.args)) = false := by
    unfold State.repeatVerdict
    exact toolErr_ofBool_warn .toolNotRepeated rfl _ _ _ _
  have h2 : ∀ ask, (approvedVerdicts ask c.status).any toolErr = false := by
    intro ask
    cases ask with
    | none => rfl
    | some p =>
      simp only [approvedVerdicts, List.any_cons, List.any_nil, toolErr_ofBool_warn .toolApproved rfl,
        Bool.or_false]
  have h3 : toolErr (succeededVerdict c) = false := by
    unfold succeededVerdict
    exact toolErr_ofBool_warn .toolSucceeded rfl _ _ _ _
  have h4 : (sandboxedVerdicts st.sandbox c).any toolErr = false := by
    unfold sandboxedVerdicts
    split
    · simp only [List.any_cons, List.any_nil, toolErr_ofBool_warn .toolSandboxed rfl, Bool.or_false]
    · rfl
  simp only [State.callVerdicts, List.any_append, List.any_cons, List.any_nil, h1, h2, h3, h4, Bool.or_false]

/-- A `tool_call` event scores −1 exactly when the call does not conform in the
state it meets. -/
theorem State.callVerdicts_ok_iff (st : State) (c : ToolCall) :
    toolReward (st.callVerdicts c) ≠ -1 ↔ CallConforms st.wf st.sandbox st.mcpTools st.currentStage c.toProposed := by
  rw [← callConforms_iff, ne_eq, toolReward_eq_neg_one_iff, State.callVerdicts_err, preChecks_err]
  cases callConformsB st.wf st.sandbox st.mcpTools st.currentStage c.toProposed <;> decide

/-- An `mcp_tools` line replaces its server's tools in the state (`replaceServerTools`). -/
theorem State.append_mcpTools (st : State) (line : Nat) (server : String) (tools : List (String × String)) :
    (st.append line (.mcpTools server tools)).1.mcpTools = replaceServerTools st.mcpTools server tools := rfl

/-- After a server's `mcp_tools` line, `tool.known` accepts a name of that server exactly when the
line lists it: a tool the server dropped (`list_changed`) or had when it `stopped` is unknown. -/
theorem State.append_mcpTools_known (st : State) (line : Nat) (server : String) (tools : List (String × String))
    (name : String) (h : name.startsWith (mcpServerPrefix server) = true) :
    mcpKnownB (st.append line (.mcpTools server tools)).1.mcpTools name = mcpKnownB tools name := by
  rw [State.append_mcpTools]
  exact mcpKnownB_replace st.mcpTools server tools name h

/-- Whatever the decision, the gate reports exactly the `ask` pattern the call matches:
a call is never let through unasked because it was also blocked. -/
theorem gateDecision_ask (verdicts : List Verdict) (ask : Option String) :
    (gateDecision verdicts ask).2.2 = ask := by
  unfold gateDecision
  split
  · rfl
  · cases ask <;> rfl

/-- The gate asks only for a call that matches an `ask` pattern. -/
theorem gateDecision_ask_decision (verdicts : List Verdict) (ask : Option String)
    (h : (gateDecision verdicts ask).1 = .ask) : ask.isSome := by
  unfold gateDecision at h
  split at h
  · cases h
  · cases ask with
    | none => cases h
    | some _ => rfl

/-- The gate reports the reward −1 exactly when the proposed call does not conform. -/
theorem State.gate_ok_iff (st : State) (call : ProposedCall) :
    (st.gate call).toolReward ≠ -1 ↔ CallConforms st.wf st.sandbox st.mcpTools st.currentStage call := by
  have hrep : toolErr (st.repeatVerdict (callKey call.tool call.args)) = false := by
    unfold State.repeatVerdict
    exact toolErr_ofBool_warn .toolNotRepeated rfl _ _ _ _
  have hr : (st.gate call).toolReward =
      toolReward ((preChecks st.wf st.sandbox st.mcpTools st.currentStage call).1 ++
        [st.repeatVerdict (callKey call.tool call.args)]) :=
    rfl
  rw [hr, ← callConforms_iff, ne_eq, toolReward_eq_neg_one_iff]
  simp only [List.any_append, List.any_cons, List.any_nil, hrep, Bool.or_false, preChecks_err]
  cases callConformsB st.wf st.sandbox st.mcpTools st.currentStage call <;> decide

/-! ## The specification of a conforming trajectory

A call *conforms* (`CallConforms`, in `Lar.Spec.Checks`; `EventConforms`, `ConformsFrom` and
`Conforms` are in `Lar.Spec.Run`) when it is made while the
run is open, names a known tool with valid arguments, is permitted in the
current stage, and passes the checks of its tool: exactly the checks of severity
`error` in the tool-call table of docs/rewards.md. A trajectory conforms when
every call conforms in the state the verifier is in when the call arrives.

The theorems below connect this to what the checker reports: a step's tool
reward is −1 exactly when its call does not conform (`append_toolReward_ne_iff`),
so a trajectory conforms exactly when no step the checker reports scores −1
(`stepResults_ok_iff`, `conforms_iff_no_error_step`). -/

/-- A property holds for every element of `a :: l` exactly when it holds for `a` and for every element of `l`. -/
theorem forall_mem_cons_iff {α : Type} (p : α → Prop) (a : α) (l : List α) :
    (∀ x ∈ a :: l, p x) ↔ p a ∧ ∀ x ∈ l, p x := by
  constructor
  · intro h
    exact ⟨h a (List.mem_cons.mpr (Or.inl rfl)), fun x hx => h x (List.mem_cons.mpr (Or.inr hx))⟩
  · rintro ⟨ha, hl⟩ x hx
    rcases List.mem_cons.mp hx with rfl | hx
    · exact ha
    · exact hl x hx

/-- One event: the checker reports a tool reward of −1 for it exactly when it is a
call that does not conform (events other than calls report no tool reward). -/
theorem State.append_toolReward_ne_iff (st : State) (line : Nat) (e : Event) :
    (st.append line e).2.toolReward ≠ some (-1) ↔ EventConforms st e := by
  cases e with
  | toolCall c =>
    show (st.appendCall c line).2.toolReward ≠ some (-1) ↔
      CallConforms st.wf st.sandbox st.mcpTools st.currentStage c.toProposed
    rw [State.appendCall_toolReward st c line, ← State.callVerdicts_ok_iff st c]
    exact ⟨fun h h' => h (congrArg some h'), fun h h' => h (Option.some.inj h')⟩
  | message =>
    show (none : Option Int) ≠ some (-1) ↔ True
    simp
  | outcome o =>
    show (none : Option Int) ≠ some (-1) ↔ True
    simp
  | compaction =>
    show (none : Option Int) ≠ some (-1) ↔ True
    simp
  | restore =>
    show (none : Option Int) ≠ some (-1) ↔ True
    simp
  | tokens =>
    show (none : Option Int) ≠ some (-1) ↔ True
    simp
  | mcpTools server tools =>
    show (none : Option Int) ≠ some (-1) ↔ True
    simp
  | finish =>
    show (none : Option Int) ≠ some (-1) ↔ True
    simp

/-- A trajectory fed from `st` conforms exactly when no step the checker reports
for it has tool reward −1. -/
theorem stepResults_ok_iff : ∀ (evs : List (Nat × Event)) (st : State),
    (∀ r ∈ st.stepResults evs, r.toolReward ≠ some (-1)) ↔ ConformsFrom st evs
  | [], st => by simp [State.stepResults, ConformsFrom]
  | (line, e) :: rest, st => by
    have ih := stepResults_ok_iff rest (st.append line e).1
    have hs := State.append_toolReward_ne_iff st line e
    show (∀ r ∈ (st.append line e).2 :: (st.append line e).1.stepResults rest, r.toolReward ≠ some (-1)) ↔
      (EventConforms st e ∧ ConformsFrom (st.append line e).1 rest)
    exact (forall_mem_cons_iff (fun r : StepResult => r.toolReward ≠ some (-1)) _ _).trans
      ⟨fun ⟨a, b⟩ => ⟨hs.mp a, ih.mp b⟩, fun ⟨a, b⟩ => ⟨hs.mpr a, ih.mpr b⟩⟩

/-- The checker accepts a trajectory (no step scores −1) exactly when it conforms (`ConformsFrom`). -/
theorem acceptsFrom_iff (st : State) (evs : List (Nat × Event)) :
    acceptsFrom st evs = true ↔ ConformsFrom st evs := by
  rw [← stepResults_ok_iff]
  simp only [acceptsFrom, List.all_eq_true, decide_eq_true_eq]

/-- A trajectory the checker accepts conforms to the workflow. -/
theorem accepted_conforms (st : State) (evs : List (Nat × Event)) (h : acceptsFrom st evs = true) :
    ConformsFrom st evs :=
  (acceptsFrom_iff st evs).mp h

/-- The headline: for a workflow that loads (`State.create … = .ok st`, what
`load` does), a trajectory conforms exactly when no step the checker reports
for it has tool reward −1. -/
theorem conforms_iff_no_error_step (wf : Workflow) (headerLine : Nat) (sb : Option SandboxRecord) (st : State)
    (evs : List (Nat × Event)) (hc : State.create wf headerLine sb = .ok st) :
    (∀ r ∈ st.stepResults evs, r.toolReward ≠ some (-1)) ↔ Conforms wf headerLine sb evs := by
  constructor
  · intro h
    unfold Conforms
    exact ⟨st, hc, (stepResults_ok_iff evs st).mp h⟩
  · intro h
    unfold Conforms at h
    obtain ⟨st', hc', hconf⟩ := h
    rw [hc] at hc'
    cases hc'
    exact (stepResults_ok_iff evs _).mpr hconf

/-- A trajectory accepted from the start of a run (no step scored −1) conforms. -/
theorem accepts_sound (wf : Workflow) (headerLine : Nat) (sb : Option SandboxRecord) (evs : List (Nat × Event))
    (h : accepts wf headerLine sb evs = true) : Conforms wf headerLine sb evs := by
  unfold accepts at h
  -- `cases hc :` generalizes the goal only; `h` still names `State.create`, hence the `rw`.
  cases hc : State.create wf headerLine sb with
  | error e => rw [hc] at h; simp at h
  | ok st =>
    rw [hc] at h
    unfold Conforms
    exact ⟨st, hc, accepted_conforms st evs h⟩

/-! ## The running sums stay bounded

n rewards in [−1, 1] sum to a value in [−n, n] (`sum_bounded`). The checker keeps the sums of the
tool rewards and of the closed visits' stage rewards as it goes; `State.feed_bounded` proves that
every state it reaches from a loaded workflow keeps them in these bounds. -/

/-- Closing a visit counts one more closed visit. -/
theorem State.closeVisit_stageCount (st : State) (v : Visit) (line : Nat) (e : VisitEnd) (t : Option String) :
    (st.closeVisit v line e t).1.stageCount = st.stageCount + 1 := rfl

/-- Closing a visit adds its stage reward to the sum. -/
theorem State.closeVisit_stageSum (st : State) (v : Visit) (line : Nat) (e : VisitEnd) (t : Option String) :
    (st.closeVisit v line e t).1.stageSum = st.stageSum + stageReward (scoreVisit st.wf v e t) := rfl

/-- Closing a visit keeps the running sums bounded. -/
theorem State.closeVisit_bounded (st : State) (v : Visit) (line : Nat) (e : VisitEnd) (t : Option String)
    (h : st.Bounded) : (st.closeVisit v line e t).1.Bounded := by
  obtain ⟨⟨h1, h2⟩, ⟨h3, h4⟩⟩ := h
  obtain ⟨h5, h6⟩ := stageReward_bounds (scoreVisit st.wf v e t)
  unfold State.Bounded
  rw [State.closeVisit_stageCount, State.closeVisit_stageSum]
  exact ⟨⟨h1, h2⟩, by omega, by omega⟩

/-- Opening a visit, or replacing the state's visit or end flags, leaves the sums alone. -/
theorem State.openVisit_bounded (st : State) (s : Stage) (line : Nat) (h : st.Bounded) :
    (st.openVisit s line).Bounded := h

/-- A call's moves keep the running sums bounded. -/
theorem State.moveVisit_bounded (st : State) (c : ToolCall) (line : Nat) (h : st.Bounded) :
    (st.moveVisit c line).1.Bounded := by
  unfold State.moveVisit
  cases st.visit with
  | none => exact h
  | some v0 =>
    cases enterTarget st.wf c with
    | some target =>
      exact State.openVisit_bounded _ target line (st.closeVisit_bounded _ line .transition _ h)
    | none =>
      cases (c.status == .ok && c.tool == "submit") with
      | true => exact st.closeVisit_bounded _ line .submit none h
      | false => exact h

/-- A call keeps the running sums bounded. -/
theorem State.appendCall_bounded (st : State) (c : ToolCall) (line : Nat) (h : st.Bounded) :
    (st.appendCall c line).1.Bounded := by
  have hm := State.moveVisit_bounded { st with failed := {} } c line h
  obtain ⟨⟨h1, h2⟩, _⟩ := h
  obtain ⟨h5, h6⟩ := toolReward_bounds (st.callVerdicts c)
  refine ⟨⟨?_, ?_⟩, hm.2.1, hm.2.2⟩
  · show -((st.steps + 1 : Nat) : Int) ≤ st.toolSum + toolReward (st.callVerdicts c)
    omega
  · show st.toolSum + toolReward (st.callVerdicts c) ≤ ((st.steps + 1 : Nat) : Int)
    omega

/-- An `outcome` event changes no sum. -/
theorem State.outcomeStep_bounded (st : State) (o : OutcomeEvent) (line : Nat) (h : st.Bounded) :
    (st.outcomeStep o line).1.Bounded :=
  h

/-- Any event keeps the running sums bounded. -/
theorem State.append_bounded (st : State) (line : Nat) (e : Event) (h : st.Bounded) :
    (st.append line e).1.Bounded := by
  cases e with
  | toolCall c => exact st.appendCall_bounded c line h
  | outcome o => exact st.outcomeStep_bounded o line h
  | mcpTools _ _ => exact h
  | message => exact h
  | compaction => exact h
  | restore => exact h
  | tokens => exact h
  | finish => exact h

/-- The state `State.create` makes for a workflow that loads: the start stage's visit begins at the
header, and every counter, record and map is empty. (The one place that walks `State.create`'s
refusals; every other fact about the first state is read from this one.) -/
theorem State.create_state {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) :
    ∃ start, wf.findStage? wf.start = some start ∧
      st = { wf := wf, alpha := Num.jsonNumberToFloat wf.rewards.alpha, beta := Num.jsonNumberToFloat wf.rewards.beta,
             visit := some { stage := start, ordinal := 0, startLine := headerLine }, visitCount := 1, sandbox := sb } := by
  unfold State.create at hc
  split at hc
  · cases hc
  · split at hc
    · cases hc
    · split at hc
      · cases hc
      · split at hc
        · cases hc
        · rename_i start hs
          cases hc
          exact ⟨start, hs, rfl⟩

/-- The state `State.create` makes has bounded running sums (both 0). -/
theorem State.create_bounded {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) : st.Bounded := by
  obtain ⟨_, _, rfl⟩ := State.create_state hc
  -- Not `decide`: the goal names `wf`, `sb`, `start` and `headerLine` (free variables). Each side
  -- reduces to `0` by the fields `State.create` sets.
  exact ⟨⟨Int.le_refl 0, Int.le_refl 0⟩, Int.le_refl 0, Int.le_refl 0⟩

/-- Feeding events to a state with bounded running sums keeps them bounded. -/
theorem State.feed_bounded_from : ∀ (evs : List (Nat × Event)) (st : State), st.Bounded → (st.feed evs).Bounded
  | [], _, h => h
  | (line, e) :: rest, st, h => State.feed_bounded_from rest _ (st.append_bounded line e h)

/-- In every state the checker reaches from a loaded workflow, the sum of the tool rewards
lies in [−steps, steps] and the sum of the closed visits' stage rewards in [−visits, visits]. -/
theorem State.feed_bounded {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) (evs : List (Nat × Event)) : (st.feed evs).Bounded :=
  State.feed_bounded_from evs st (State.create_bounded hc)

end Lar
