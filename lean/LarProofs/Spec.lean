import Lar.Spec.Trajectory
import LarProofs.Return
import LarProofs.Gate

/-!
# The checker computes the specification

`Lar.Spec` states docs/rewards.md over a whole trajectory, independently of the checker's `State`.
This file proves that the checker, fed a run's events one at a time with `State.append` from the
state `State.create` makes, keeps exactly the specification's values and reports exactly its tool
rewards:

- the invariants first: the workflow and the header's sandbox record never change
  (`State.append_wf`, `State.append_sandbox`); after a move the current stage is the one moved to,
  after a `submit` there is none, any other call stays (`State.moveVisit_move`,
  `State.moveVisit_submit`, `State.moveVisit_stay`, `State.moveVisit_none`); the change epoch moves on
  by one exactly for a call that changes state, and a call that did not succeed is recorded with the
  epoch after it (`State.appendCall_epoch`, `State.appendCall_failed`);
- `Agrees` (stated in `Lar.Spec.Run`): after a history `h`, the checker's record of the run's end, its current stage, the change
  epoch, the last failure of every call key, the MCP tools offered and the number of steps are the
  specification's (`State.after_agrees`, by induction on the history);
- `repeatsFailure_iff`: the checker's loop test (the last failure of the same call was in the epoch
  of now) is the document's (some earlier failure of the same call in the same epoch);
- `State.append_stepReward`: the tool reward the checker reports for a step made after `h` is
  `Spec.stepReward` (−1, 0 or +1 exactly as "Tool reward" says), and `State.stepRewards_spec` for
  every step of a run.

It also gives a step's number and stage (`State.stepFields_spec`) and conformance in the
specification's own terms (`State.noErrorStep_iff_conforming`). The visits' rewards are proved
against the specification in `LarProofs.SpecVisits`, the outcome in `LarProofs.SpecOutcome`.
-/

namespace Lar
open Lean Spec

/-! ## The specification's definitions, unfolded one event at a time -/

open Classical in
/-- The epoch after a call: one more when it changes state. -/
theorem Spec.epoch_call (wf : Workflow) (l : Nat) (c : ToolCall) (h : History) :
    epoch wf ((l, .toolCall c) :: h) = epoch wf h + (if ChangesState wf h c then 1 else 0) := rfl

open Classical in
/-- The last failure of key `k` after a call: this call's epoch when it has the key and did not succeed, else the one before. -/
theorem Spec.lastFailure_call (wf : Workflow) (l : Nat) (c : ToolCall) (h : History) (k : String) :
    lastFailure wf ((l, .toolCall c) :: h) k =
      if callKey c.tool c.args = k ∧ ¬Succeeded c then some (epoch wf ((l, .toolCall c) :: h)) else lastFailure wf h k :=
  rfl

open Classical in
/-- `stepReward`, unfolded. -/
theorem Spec.stepReward_def (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ToolCall) :
    stepReward wf sb h c =
      if ¬CallConforms wf sb (offered h) (current wf h) c.toProposed then -1
      else if RepeatsFailure wf h (callKey c.tool c.args) ∨ Rejected wf c ∨ RanUnconfined sb c ∨ ¬Succeeded c then 0
      else 1 := rfl

/-- Once the run has ended there is no current stage. -/
theorem Spec.current_of_ended {wf : Workflow} {h : History} (he : Ended wf h) : current wf h = none := by
  unfold current
  rw [if_pos he]

/-- While the run is open, the current stage is that of the latest move, else the start stage. -/
theorem Spec.current_of_open {wf : Workflow} {h : History} (he : ¬Ended wf h) :
    current wf h = (lastMove wf h).or (wf.findStage? wf.start) := by
  unfold current
  rw [if_neg he]

/-- Events other than calls leave every notion of the specification but the MCP tools as it was. -/
theorem Spec.quiet {wf : Workflow} {h : History} {l : Nat} {e : Event} (he : ∀ c, e ≠ .toolCall c) :
    calls ((l, e) :: h) = calls h ∧ lastMove wf ((l, e) :: h) = lastMove wf h ∧
      epoch wf ((l, e) :: h) = epoch wf h ∧ (∀ k, lastFailure wf ((l, e) :: h) k = lastFailure wf h k) := by
  cases e with
  | toolCall c => exact absurd rfl (he c)
  | message => exact ⟨rfl, rfl, rfl, fun _ => rfl⟩
  | outcome _ => exact ⟨rfl, rfl, rfl, fun _ => rfl⟩
  | compaction => exact ⟨rfl, rfl, rfl, fun _ => rfl⟩
  | restore => exact ⟨rfl, rfl, rfl, fun _ => rfl⟩
  | tokens => exact ⟨rfl, rfl, rfl, fun _ => rfl⟩
  | mcpTools _ _ => exact ⟨rfl, rfl, rfl, fun _ => rfl⟩
  | finish => exact ⟨rfl, rfl, rfl, fun _ => rfl⟩

/-! ## How a call moves the visits -/

/-- A call's moves change neither the workflow, nor the sandbox record, nor the MCP tools. -/
theorem State.moveVisit_frame (st : State) (c : ToolCall) (line : Nat) :
    (st.moveVisit c line).1.wf = st.wf ∧ (st.moveVisit c line).1.sandbox = st.sandbox ∧
      (st.moveVisit c line).1.mcpTools = st.mcpTools := by
  unfold State.moveVisit
  cases st.visit with
  | none => exact ⟨rfl, rfl, rfl⟩
  | some v0 =>
    cases enterTarget st.wf c with
    | some target => exact ⟨rfl, rfl, rfl⟩
    | none =>
      cases (c.status == .ok && c.tool == "submit") with
      | true => exact ⟨rfl, rfl, rfl⟩
      | false => exact ⟨rfl, rfl, rfl⟩

/-- Once the run has ended, a call moves nothing. -/
theorem State.moveVisit_none (st : State) (c : ToolCall) (line : Nat) (hv : st.visit = none) :
    (st.moveVisit c line).1 = st := by
  unfold State.moveVisit
  rw [hv] <;> rfl

/-- A move to a defined stage makes it the current stage (the visit of the stage left is closed). -/
theorem State.moveVisit_move (st : State) (c : ToolCall) (line : Nat) (v0 : Visit) (t : Stage)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = some t) :
    (st.moveVisit c line).1.currentStage = some t ∧ (st.moveVisit c line).1.ended = st.ended := by
  unfold State.moveVisit
  rw [hv, ht]
  exact ⟨rfl, rfl⟩

/-- A `submit` with status `ok` (that is no move) ends the run: no current stage after it. -/
theorem State.moveVisit_submit (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = true) :
    (st.moveVisit c line).1.currentStage = none ∧ (st.moveVisit c line).1.ended = true := by
  unfold State.moveVisit
  rw [hv, ht, hs]
  exact ⟨rfl, rfl⟩

/-- Any other call stays in the current stage. -/
theorem State.moveVisit_stay (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = false) :
    (st.moveVisit c line).1.currentStage = some v0.stage ∧ (st.moveVisit c line).1.ended = st.ended := by
  unfold State.moveVisit
  rw [hv, ht, hs]
  exact ⟨rfl, rfl⟩

/-- The checker's test for a successful submit is `tool = "submit"` and status `ok`. -/
theorem submitB_iff (c : ToolCall) :
    (c.status == .ok && c.tool == "submit") = true ↔ c.tool = "submit" ∧ c.status = .ok := by
  rw [Bool.and_eq_true, beq_iff_eq, beq_iff_eq]
  exact And.comm

/-! ## What a call does to the state -/

/-- A call does not change the workflow. -/
theorem State.appendCall_wf (st : State) (c : ToolCall) (line : Nat) : (st.appendCall c line).1.wf = st.wf :=
  (State.moveVisit_frame { st with failed := {} } c line).1

/-- A call does not change the sandbox record. -/
theorem State.appendCall_sandbox (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).1.sandbox = st.sandbox :=
  (State.moveVisit_frame { st with failed := {} } c line).2.1

/-- A call does not change the MCP tools offered. -/
theorem State.appendCall_mcpTools (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).1.mcpTools = st.mcpTools :=
  (State.moveVisit_frame { st with failed := {} } c line).2.2

/-- A call is one more step. -/
theorem State.appendCall_steps (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).1.steps = st.steps + 1 := rfl

/-- The change epoch moves on by one exactly for a call that changes state. -/
theorem State.appendCall_epoch (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).1.epoch = if changesStateB st.wf st.visit.isSome c then st.epoch + 1 else st.epoch :=
  rfl

/-- A call that did not succeed is recorded with the epoch after it; a success changes nothing. -/
theorem State.appendCall_failed (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).1.failed =
      if succeededB c then st.failed else st.failed.insert (callKey c.tool c.args) (st.appendCall c line).1.epoch :=
  rfl

/-- The moves of a call are made on the state with its failed-call map taken out (for the in-place
update); the counters, the epoch and the map are then set from the state the call meets. -/
theorem State.appendCall_ended (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).1.ended = (({ st with failed := {} } : State).moveVisit c line).1.ended := rfl

/-- The current stage after a call is the one its moves leave. -/
theorem State.appendCall_currentStage (st : State) (c : ToolCall) (line : Nat) :
    (st.appendCall c line).1.currentStage = (({ st with failed := {} } : State).moveVisit c line).1.currentStage :=
  rfl

/-- An `outcome` event changes nothing but the recorded outcome: it records itself exactly when it
counts (`State.outcomeCounts`). -/
theorem State.outcomeStep_state (st : State) (o : OutcomeEvent) (line : Nat) :
    (st.outcomeStep o line).1 = { st with outcome := if st.outcomeCounts then some (o, line) else st.outcome } :=
  rfl

/-- An `outcome` event leaves the state as it was, or records itself. -/
theorem State.outcomeStep_cases (st : State) (o : OutcomeEvent) (line : Nat) :
    (st.outcomeStep o line).1 = st ∨ (st.outcomeStep o line).1 = { st with outcome := some (o, line) } := by
  rw [State.outcomeStep_state]
  cases st.outcomeCounts with
  | true => exact Or.inr rfl
  | false => exact Or.inl rfl

/-- The workflow never changes. -/
theorem State.append_wf (st : State) (line : Nat) (e : Event) : (st.append line e).1.wf = st.wf := by
  cases e with
  | toolCall c => exact State.appendCall_wf st c line
  | outcome o =>
    rcases State.outcomeStep_cases st o line with hx | hx
    · exact congrArg State.wf hx
    · exact (congrArg State.wf hx).trans rfl
  | mcpTools _ _ => rfl
  | message => rfl
  | compaction => rfl
  | restore => rfl
  | tokens => rfl
  | finish => rfl

/-- The header's sandbox record never changes. -/
theorem State.append_sandbox (st : State) (line : Nat) (e : Event) : (st.append line e).1.sandbox = st.sandbox := by
  cases e with
  | toolCall c => exact State.appendCall_sandbox st c line
  | outcome o =>
    rcases State.outcomeStep_cases st o line with hx | hx
    · exact congrArg State.sandbox hx
    · exact (congrArg State.sandbox hx).trans rfl
  | mcpTools _ _ => rfl
  | message => rfl
  | compaction => rfl
  | restore => rfl
  | tokens => rfl
  | finish => rfl

/-! ## The checker after a history -/

/-- `State.feed` (the events oldest first) is the same. -/
theorem State.feed_reverse (st : State) : ∀ h : History, st.feed h.reverse = st.after h
  | [] => rfl
  | (line, e) :: h => by
    have ih := State.feed_reverse st h
    unfold State.feed at ih ⊢
    rw [List.reverse_cons, List.foldl_append, ih] <;> rfl

/-- The state `State.create` makes. -/
theorem State.create_eq {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) :
    ∃ start, wf.findStage? wf.start = some start ∧ st.wf = wf ∧ st.sandbox = sb ∧ st.ended = false ∧
      st.visit = some { stage := start, ordinal := 0, startLine := headerLine } ∧ st.epoch = 0 ∧
      st.failed = {} ∧ st.mcpTools = [] ∧ st.steps = 0 := by
  obtain ⟨start, hs, rfl⟩ := State.create_state hc
  exact ⟨start, hs, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- While the run is open there is a current stage (the workflow's start stage exists). -/
theorem Spec.current_isSome {wf : Workflow} {h : History} (hs : (wf.findStage? wf.start).isSome = true) :
    (current wf h).isSome = true ↔ ¬Ended wf h := by
  by_cases he : Ended wf h
  · rw [current_of_ended he]
    exact ⟨fun hf => (by cases hf), fun hn => absurd he hn⟩
  · rw [current_of_open he]
    refine ⟨fun _ => he, fun _ => ?_⟩
    cases lastMove wf h with
    | some s => rfl
    | none => exact hs

/-- A state that agrees with the specification has an open visit exactly while the run has not ended. -/
theorem Agrees.visit_isSome {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) : st.visit.isSome = true ↔ ¬Ended wf h := by
  rw [← Spec.current_isSome A.start_ok, ← A.current_eq]
  unfold State.currentStage
  cases st.visit with
  | none => exact Iff.rfl
  | some _ => exact Iff.rfl

/-- An option is none or some value (a case split that, unlike `cases`, leaves the goal's other
occurrences of the option alone). -/
theorem option_none_or_some {α : Type} (o : Option α) : o = none ∨ ∃ x, o = some x := by
  cases o with
  | none => exact Or.inl rfl
  | some x => exact Or.inr ⟨x, rfl⟩

/-- With no open visit, the run has ended. -/
theorem Agrees.ended_of_visit_none {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (hv : st.visit = none) : Ended wf h :=
  Classical.byContradiction fun hn => by
    have hs := A.visit_isSome.mpr hn
    rw [hv] at hs
    cases hs

/-- With an open visit, the run has not ended and is in that visit's stage. -/
theorem Agrees.current_of_visit_some {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) {v0 : Visit} (hv : st.visit = some v0) : ¬Ended wf h ∧ current wf h = some v0.stage := by
  refine ⟨A.visit_isSome.mp (by rw [hv] <;> rfl), ?_⟩
  rw [← A.current_eq]
  exact congrArg (Option.map (·.stage)) hv

/-- The stage a call moves the run to, read with the workflow the checker holds. -/
theorem Agrees.movesTo_eq {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (c : ToolCall) : movesTo wf c = enterTarget st.wf c := by
  unfold movesTo
  rw [A.wf_eq]

/-- The state `State.create` makes agrees with the specification of the empty history. -/
theorem Agrees.init {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) : Agrees wf sb [] st := by
  obtain ⟨start, hs, hwf, hsb, hend, hv, hep, hf, hm, hst⟩ := State.create_eq hc
  have hne : ¬Ended wf [] := fun ⟨_, hmem, _⟩ => nomatch hmem
  refine ⟨by rw [hs] <;> rfl, hwf, hsb, ?_, ?_, hep, ?_, hm, hst⟩
  · rw [hend]
    exact ⟨fun hf => (by cases hf), fun he => absurd he hne⟩
  · rw [current_of_open hne]
    unfold State.currentStage
    rw [hv]
    exact hs.symm
  · intro k
    rw [hf]
    exact Std.HashMap.getElem?_empty

/-! ## Events other than calls -/

/-- An event that is no call, given a state that differs from the one before at most in the MCP
tools, which are the specification's after it. -/
theorem Agrees.quiet {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (e : Event) (he : ∀ c, e ≠ .toolCall c) (st' : State)
    (h1 : st'.wf = st.wf) (h2 : st'.sandbox = st.sandbox) (h3 : st'.ended = st.ended) (h4 : st'.visit = st.visit)
    (h5 : st'.epoch = st.epoch) (h6 : st'.failed = st.failed) (h7 : st'.mcpTools = offered ((line, e) :: h))
    (h8 : st'.steps = st.steps) : Agrees wf sb ((line, e) :: h) st' := by
  obtain ⟨hc, hlm, hep, hlf⟩ := Spec.quiet (wf := wf) (h := h) (l := line) he
  have hend : Ended wf ((line, e) :: h) ↔ Ended wf h := by
    unfold Ended
    rw [hc]
  have hcur : current wf ((line, e) :: h) = current wf h := by
    by_cases hx : Ended wf h
    · rw [current_of_ended hx, current_of_ended (hend.mpr hx)]
    · rw [current_of_open hx, current_of_open (fun hy => hx (hend.mp hy)), hlm]
  have hcs : st'.currentStage = st.currentStage := by
    unfold State.currentStage
    rw [h4]
  refine ⟨A.start_ok, h1.trans A.wf_eq, h2.trans A.sandbox_eq, ?_, ?_, ?_, ?_, h7, ?_⟩
  · rw [h3]
    exact A.ended_iff.trans hend.symm
  · rw [hcs, hcur]
    exact A.current_eq
  · rw [h5, hep]
    exact A.epoch_eq
  · intro k
    rw [h6, hlf k]
    exact A.failed_eq k
  · rw [h8, hc]
    exact A.steps_eq

/-- An `outcome` event keeps the checker in agreement with the specification. -/
theorem Agrees.outcome {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (o : OutcomeEvent) :
    Agrees wf sb ((line, .outcome o) :: h) (st.append line (.outcome o)).1 := by
  rcases State.outcomeStep_cases st o line with hx | hx
  · have hx' : (st.append line (.outcome o)).1 = st := hx
    rw [hx']
    exact A.quiet line (.outcome o) (fun _ h' => by cases h') st rfl rfl rfl rfl rfl rfl A.mcp_eq rfl
  · have hx' : (st.append line (.outcome o)).1 = { st with outcome := some (o, line) } := hx
    rw [hx']
    -- The new state is given, not `_`: the first `rfl` would otherwise solve it as `st`.
    exact A.quiet line (.outcome o) (fun _ h' => by cases h') { st with outcome := some (o, line) }
      rfl rfl rfl rfl rfl rfl A.mcp_eq rfl

/-- An `mcp_tools` event keeps the checker in agreement with the specification. -/
theorem Agrees.mcpTools {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (server : String) (tools : List (String × String)) :
    Agrees wf sb ((line, .mcpTools server tools) :: h) (st.append line (.mcpTools server tools)).1 := by
  refine A.quiet line (.mcpTools server tools) (fun _ h' => by cases h')
    (st.append line (.mcpTools server tools)).1 rfl rfl rfl rfl rfl rfl ?_ rfl
  show replaceServerTools st.mcpTools server tools = replaceServerTools (offered h) server tools
  rw [A.mcp_eq]

/-! ## A call -/

/-- The checker's test for a change of state: a changed file, or a move made while a visit is open. -/
theorem changesStateB_iff (wf : Workflow) (b : Bool) (c : ToolCall) :
    changesStateB wf b c = true ↔ (changedFiles c ≠ [] ∨ (b = true ∧ (enterTarget wf c).isSome = true)) := by
  unfold changesStateB
  cases changedFiles c with
  | nil => cases b <;> cases (enterTarget wf c).isSome <;> simp
  | cons x xs => simp

/-- After a call the run has ended exactly when it had, or this call ended it. -/
theorem Spec.ended_call (wf : Workflow) (l : Nat) (c : ToolCall) (h : History) :
    Ended wf ((l, .toolCall c) :: h) ↔ Ended wf h ∨ EndsRun wf c := by
  show (∃ d ∈ c :: calls h, EndsRun wf d) ↔ (∃ d ∈ calls h, EndsRun wf d) ∨ EndsRun wf c
  constructor
  · rintro ⟨d, hd, hx⟩
    rcases List.mem_cons.mp hd with rfl | hd
    · exact Or.inr hx
    · exact Or.inl ⟨d, hd, hx⟩
  · rintro (⟨d, hd, hx⟩ | hx)
    · exact ⟨d, List.mem_cons.mpr (Or.inr hd), hx⟩
    · exact ⟨c, List.mem_cons.mpr (Or.inl rfl), hx⟩

/-- After a call: whether the run has ended, and the current stage. -/
theorem Agrees.call_stage {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (c : ToolCall) :
    ((st.appendCall c line).1.ended = true ↔ Ended wf ((line, .toolCall c) :: h)) ∧
      (st.appendCall c line).1.currentStage = current wf ((line, .toolCall c) :: h) := by
  have hend := Spec.ended_call wf line c h
  have hmv := A.movesTo_eq c
  rw [State.appendCall_ended, State.appendCall_currentStage]
  -- Split on the visit without `cases hv : st.visit`, which would also replace the `st.visit` inside
  -- `{ st with failed := {} }` in the goal, so that `State.moveVisit_*` below would no longer match it.
  rcases option_none_or_some st.visit with hv | ⟨v0, hv⟩
  · have hx : Ended wf h := A.ended_of_visit_none hv
    have hm := State.moveVisit_none { st with failed := {} } c line hv
    rw [hm]
    refine ⟨⟨fun _ => hend.mpr (Or.inl hx), fun _ => A.ended_iff.mpr hx⟩, ?_⟩
    rw [current_of_ended (hend.mpr (Or.inl hx))]
    exact congrArg (Option.map (·.stage)) hv
  · have hx : ¬Ended wf h := (A.current_of_visit_some hv).1
    have hcur0 : some v0.stage = (lastMove wf h).or (wf.findStage? wf.start) := by
      rw [← current_of_open hx, ← A.current_eq]
      exact (congrArg (Option.map (·.stage)) hv).symm
    cases ht : enterTarget st.wf c with
    | some t =>
      obtain ⟨h1, h2⟩ := State.moveVisit_move { st with failed := {} } c line v0 t hv ht
      have hnr : ¬EndsRun wf c := fun ⟨hm, _⟩ => by
        rw [hmv, ht] at hm
        cases hm
      have hno : ¬Ended wf ((line, .toolCall c) :: h) := fun he => hx ((hend.mp he).resolve_right hnr)
      refine ⟨?_, ?_⟩
      · rw [h2]
        exact ⟨fun he => absurd (A.ended_iff.mp he) hx, fun he => absurd he hno⟩
      · rw [h1, current_of_open hno]
        show some t = ((movesTo wf c).or (lastMove wf h)).or (wf.findStage? wf.start)
        rw [hmv, ht] <;> rfl
    | none =>
      cases hs : (c.status == .ok && c.tool == "submit") with
      | true =>
        obtain ⟨h1, h2⟩ := State.moveVisit_submit { st with failed := {} } c line v0 hv ht hs
        have hr : EndsRun wf c := by
          refine ⟨?_, (submitB_iff c).mp hs⟩
          rw [hmv, ht]
        refine ⟨⟨fun _ => hend.mpr (Or.inr hr), fun _ => h2⟩, ?_⟩
        rw [h1, current_of_ended (hend.mpr (Or.inr hr))]
      | false =>
        obtain ⟨h1, h2⟩ := State.moveVisit_stay { st with failed := {} } c line v0 hv ht hs
        have hnr : ¬EndsRun wf c := fun ⟨_, hsub⟩ => by
          rw [(submitB_iff c).mpr hsub] at hs
          cases hs
        have hno : ¬Ended wf ((line, .toolCall c) :: h) := fun he => hx ((hend.mp he).resolve_right hnr)
        refine ⟨?_, ?_⟩
        · rw [h2]
          exact ⟨fun he => absurd (A.ended_iff.mp he) hx, fun he => absurd he hno⟩
        · rw [h1, current_of_open hno, hcur0]
          show ((lastMove wf h).or (wf.findStage? wf.start)) =
            ((movesTo wf c).or (lastMove wf h)).or (wf.findStage? wf.start)
          rw [hmv, ht] <;> rfl

/-- A call keeps the checker in agreement with the specification. -/
theorem Agrees.call {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (c : ToolCall) :
    Agrees wf sb ((line, .toolCall c) :: h) (st.appendCall c line).1 := by
  have hchg : changesStateB st.wf st.visit.isSome c = true ↔ ChangesState wf h c := by
    rw [changesStateB_iff, A.wf_eq, A.visit_isSome] <;> exact Iff.rfl
  have hep : (st.appendCall c line).1.epoch = epoch wf ((line, .toolCall c) :: h) := by
    rw [State.appendCall_epoch, Spec.epoch_call]
    by_cases hx : ChangesState wf h c
    · rw [if_pos (hchg.mpr hx), if_pos hx, A.epoch_eq]
    · rw [if_neg (fun hy => hx (hchg.mp hy)), if_neg hx, A.epoch_eq, Nat.add_zero]
  obtain ⟨hend, hcur⟩ := A.call_stage line c
  refine ⟨A.start_ok, (State.appendCall_wf st c line).trans A.wf_eq,
    (State.appendCall_sandbox st c line).trans A.sandbox_eq, hend, hcur, hep, ?_,
    (State.appendCall_mcpTools st c line).trans A.mcp_eq, ?_⟩
  · intro k
    rw [State.appendCall_failed, Spec.lastFailure_call]
    cases hs : succeededB c with
    | true =>
      have hsc : Succeeded c := (succeeded_iff c).mp hs
      rw [if_pos rfl, if_neg (fun hx : callKey c.tool c.args = k ∧ ¬Succeeded c => hx.2 hsc)]
      exact A.failed_eq k
    | false =>
      have hsc : ¬Succeeded c := fun hx => by
        rw [(succeeded_iff c).mpr hx] at hs
        cases hs
      rw [if_neg (by decide : ¬(false = true)), Std.HashMap.getElem?_insert, hep]
      by_cases hk : callKey c.tool c.args = k
      · rw [if_pos (beq_iff_eq.mpr hk), if_pos (⟨hk, hsc⟩ : callKey c.tool c.args = k ∧ ¬Succeeded c)]
      · rw [if_neg (fun hb : (callKey c.tool c.args == k) = true => hk (beq_iff_eq.mp hb)),
          if_neg (fun hx : callKey c.tool c.args = k ∧ ¬Succeeded c => hk hx.1)]
        exact A.failed_eq k
  · rw [State.appendCall_steps, A.steps_eq] <;> rfl

/-- One event of any kind keeps the checker in agreement with the specification. -/
theorem Agrees.step {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (e : Event) : Agrees wf sb ((line, e) :: h) (st.append line e).1 := by
  cases e with
  | toolCall c => exact A.call line c
  | outcome o => exact A.outcome line o
  | mcpTools server tools => exact A.mcpTools line server tools
  | message => exact A.quiet line .message (fun _ h' => by cases h') st rfl rfl rfl rfl rfl rfl A.mcp_eq rfl
  | compaction => exact A.quiet line .compaction (fun _ h' => by cases h') st rfl rfl rfl rfl rfl rfl A.mcp_eq rfl
  | restore => exact A.quiet line .restore (fun _ h' => by cases h') st rfl rfl rfl rfl rfl rfl A.mcp_eq rfl
  | tokens => exact A.quiet line .tokens (fun _ h' => by cases h') st rfl rfl rfl rfl rfl rfl A.mcp_eq rfl
  | finish => exact A.quiet line .finish (fun _ h' => by cases h') st rfl rfl rfl rfl rfl rfl A.mcp_eq rfl

/-- The checker agrees with the specification after every history, from the state `State.create`
makes for a workflow that loads. -/
theorem State.after_agrees {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) : ∀ h : History, Agrees wf sb h (st0.after h)
  | [] => Agrees.init hc
  | (line, e) :: h => (State.after_agrees hc h).step line e

/-! ## The MCP tools offered: the list and the words of rewards.md -/

/-- After a server's line, a name is known exactly when the line lists it, or it is not that
server's and it was known before. -/
theorem mcpKnownB_replace_iff (known : List (String × String)) (server : String) (tools : List (String × String))
    (name : String) :
    mcpKnownB (replaceServerTools known server tools) name = true ↔
      (∃ p ∈ tools, p.1 = name) ∨ (name.startsWith (mcpServerPrefix server) = false ∧ mcpKnownB known name = true) := by
  unfold replaceServerTools
  rw [mcpKnown_iff, mcpKnown_iff]
  unfold McpKnown
  constructor
  · rintro ⟨p, hp, he⟩
    rcases List.mem_append.mp hp with hp | hp
    · have hf : (!p.1.startsWith (mcpServerPrefix server)) = true := (List.mem_filter.mp hp).2
      refine Or.inr ⟨?_, p, (List.mem_filter.mp hp).1, he⟩
      rw [← he]
      cases hs : p.1.startsWith (mcpServerPrefix server) with
      | false => rfl
      | true =>
        rw [hs] at hf
        cases hf
    · exact Or.inl ⟨p, hp, he⟩
  · rintro (⟨p, hp, he⟩ | ⟨hn, p, hp, he⟩)
    · exact ⟨p, List.mem_append.mpr (Or.inr hp), he⟩
    · refine ⟨p, List.mem_append.mpr (Or.inl (List.mem_filter.mpr ⟨hp, ?_⟩)), he⟩
      show (!p.1.startsWith (mcpServerPrefix server)) = true
      rw [he, hn] <;> rfl

/-- The checker's list of offered tools makes known exactly the names rewards.md says are offered
(`Offered`: the latest `mcp_tools` line that lists the name is not followed by a line of a server
whose prefix it has). -/
theorem Spec.offered_iff : ∀ (h : History) (name : String), mcpKnownB (offered h) name = true ↔ Offered h name
  | [], name => ⟨fun hf => (by cases hf), fun hf => False.elim hf⟩
  | (l, e) :: h, name => by
    by_cases hm : ∃ s ts, e = .mcpTools s ts
    · obtain ⟨server, tools, rfl⟩ := hm
      show mcpKnownB (replaceServerTools (offered h) server tools) name = true ↔
        ((∃ p ∈ tools, p.1 = name) ∨ (name.startsWith (mcpServerPrefix server) = false ∧ Offered h name))
      rw [mcpKnownB_replace_iff, Spec.offered_iff h name]
    · have hof : offered ((l, e) :: h) = offered h := by
        cases e with
        | mcpTools s ts => exact (hm ⟨s, ts, rfl⟩).elim
        | _ => rfl
      have hOf : Offered ((l, e) :: h) name ↔ Offered h name := by
        cases e with
        | mcpTools s ts => exact (hm ⟨s, ts, rfl⟩).elim
        | _ => exact Iff.rfl
      rw [hof, hOf]
      exact Spec.offered_iff h name

/-! ## A repeated failure: the checker's test is the document's -/

/-- One more event never lowers the epoch. -/
theorem Spec.epoch_cons_ge (wf : Workflow) (l : Nat) (e : Event) (h : History) : epoch wf h ≤ epoch wf ((l, e) :: h) := by
  by_cases hc : ∃ c, e = .toolCall c
  · obtain ⟨c, rfl⟩ := hc
    rw [Spec.epoch_call]
    exact Nat.le_add_right _ _
  · exact Nat.le_of_eq (Spec.quiet (wf := wf) (h := h) (l := l) (fun c hc' => hc ⟨c, hc'⟩)).2.2.1.symm

/-- The change epoch never goes down. -/
theorem Spec.epoch_append_ge (wf : Workflow) : ∀ (newer h : History), epoch wf h ≤ epoch wf (newer ++ h)
  | [], _ => Nat.le_refl _
  | (l, e) :: newer, h => Nat.le_trans (Spec.epoch_append_ge wf newer h) (Spec.epoch_cons_ge wf l e (newer ++ h))

/-- An event that is no call leaves every last failure as it was. -/
theorem Spec.lastFailure_quiet {wf : Workflow} {h : History} {l : Nat} {e : Event} (he : ∀ c, e ≠ .toolCall c)
    (k : String) : lastFailure wf ((l, e) :: h) k = lastFailure wf h k :=
  (Spec.quiet (wf := wf) (h := h) (l := l) he).2.2.2 k

/-- The epoch of the last failure of a key is at most the epoch now. -/
theorem Spec.lastFailure_le (wf : Workflow) (k : String) :
    ∀ (h : History) (n : Nat), lastFailure wf h k = some n → n ≤ epoch wf h
  | [], _, hn => by cases hn
  | (l, e) :: h, n, hn => by
    by_cases hc : ∃ c, e = .toolCall c
    · obtain ⟨c, rfl⟩ := hc
      rw [Spec.lastFailure_call] at hn
      by_cases hx : callKey c.tool c.args = k ∧ ¬Succeeded c
      · rw [if_pos hx] at hn
        cases hn
        exact Nat.le_refl _
      · rw [if_neg hx] at hn
        exact Nat.le_trans (Spec.lastFailure_le wf k h n hn) (Spec.epoch_cons_ge wf l _ h)
    · have hq : ∀ c, e ≠ .toolCall c := fun c hc' => hc ⟨c, hc'⟩
      rw [Spec.lastFailure_quiet hq] at hn
      exact Nat.le_trans (Spec.lastFailure_le wf k h n hn) (Spec.epoch_cons_ge wf l e h)

/-- The last failure of a key is the epoch right after some earlier failed call with that key. -/
theorem Spec.lastFailure_some (wf : Workflow) (k : String) :
    ∀ (h : History) (n : Nat), lastFailure wf h k = some n →
      ∃ newer l c older, h = newer ++ (l, Event.toolCall c) :: older ∧ callKey c.tool c.args = k ∧ ¬Succeeded c ∧
        epoch wf ((l, .toolCall c) :: older) = n
  | [], _, hn => by cases hn
  | (l, e) :: h, n, hn => by
    by_cases hc : ∃ c, e = .toolCall c
    · obtain ⟨c, rfl⟩ := hc
      rw [Spec.lastFailure_call] at hn
      by_cases hx : callKey c.tool c.args = k ∧ ¬Succeeded c
      · rw [if_pos hx] at hn
        cases hn
        exact ⟨[], l, c, h, rfl, hx.1, hx.2, rfl⟩
      · rw [if_neg hx] at hn
        obtain ⟨newer, l', c', older, he, h1, h2, h3⟩ := Spec.lastFailure_some wf k h n hn
        exact ⟨(l, .toolCall c) :: newer, l', c', older, congrArg (List.cons (l, .toolCall c)) he, h1, h2, h3⟩
    · have hq : ∀ c, e ≠ .toolCall c := fun c hc' => hc ⟨c, hc'⟩
      rw [Spec.lastFailure_quiet hq] at hn
      obtain ⟨newer, l', c', older, he, h1, h2, h3⟩ := Spec.lastFailure_some wf k h n hn
      exact ⟨(l, e) :: newer, l', c', older, congrArg (List.cons (l, e)) he, h1, h2, h3⟩

/-- After a failed call with key `k`, the last failure of `k` is at least that call's epoch. -/
theorem Spec.lastFailure_of (wf : Workflow) (k : String) (l : Nat) (c : ToolCall) (older : History)
    (hk : callKey c.tool c.args = k) (hs : ¬Succeeded c) :
    ∀ newer : History, ∃ n, lastFailure wf (newer ++ (l, .toolCall c) :: older) k = some n ∧
      epoch wf ((l, .toolCall c) :: older) ≤ n
  | [] => ⟨epoch wf ((l, .toolCall c) :: older),
      by rw [List.nil_append, Spec.lastFailure_call, if_pos (⟨hk, hs⟩ : callKey c.tool c.args = k ∧ ¬Succeeded c)],
      Nat.le_refl _⟩
  | (l', e) :: newer => by
    obtain ⟨n, hn, hle⟩ := Spec.lastFailure_of wf k l c older hk hs newer
    by_cases hc : ∃ d, e = .toolCall d
    · obtain ⟨d, rfl⟩ := hc
      show ∃ n', lastFailure wf ((l', .toolCall d) :: (newer ++ (l, .toolCall c) :: older)) k = some n' ∧ _
      rw [Spec.lastFailure_call]
      by_cases hx : callKey d.tool d.args = k ∧ ¬Succeeded d
      · rw [if_pos hx]
        exact ⟨_, rfl, Nat.le_trans hle (Nat.le_trans (Spec.lastFailure_le wf k _ n hn)
          (Spec.epoch_cons_ge wf l' (.toolCall d) (newer ++ (l, .toolCall c) :: older)))⟩
      · rw [if_neg hx]
        exact ⟨n, hn, hle⟩
    · have hq : ∀ d, e ≠ .toolCall d := fun d hd => hc ⟨d, hd⟩
      show ∃ n', lastFailure wf ((l', e) :: (newer ++ (l, .toolCall c) :: older)) k = some n' ∧ _
      rw [Spec.lastFailure_quiet hq]
      exact ⟨n, hn, hle⟩

/-- The checker's loop test is the document's: the last failure of the call's key was in the current
change epoch exactly when some earlier failure of the same call was (the epoch never goes down, so
every failure after that one is in the same epoch too). -/
theorem Spec.repeatsFailure_iff (wf : Workflow) (h : History) (k : String) :
    lastFailure wf h k = some (epoch wf h) ↔ RepeatsFailure wf h k := by
  constructor
  · intro hl
    exact Spec.lastFailure_some wf k h _ hl
  · rintro ⟨newer, l, c, older, he, h1, h2, h3⟩
    obtain ⟨n, hn, hle⟩ := Spec.lastFailure_of wf k l c older h1 h2 newer
    rw [← he] at hn
    have hle2 := Spec.lastFailure_le wf k h n hn
    rw [h3] at hle
    rw [hn, Nat.le_antisymm hle2 hle]

/-! ## The warnings of a call: when each fails -/

/-- A tool-level verdict built from a decision fails exactly when the decision is `false`. -/
theorem failedAt_ofBool (check : CheckId) (h : check.level = .tool) (b : Bool) (p f : String)
    (path : Option (List String)) : failedAt .tool (Verdict.ofBool check b p f path) = !b := by
  cases b with
  | true => rfl
  | false =>
    show (!false && decide (check.level = .tool)) = !false
    rw [h] <;> rfl

/-- A check whose failure blocks is tool-level, so it fails exactly when it is an error. -/
theorem failedAt_eq_toolErr (v : Verdict) (h : v.check.blocks = true) : failedAt .tool v = toolErr v := by
  obtain ⟨check, ok, reason, path⟩ := v
  unfold failedAt toolErr
  cases check <;> cases ok <;> first
    | rfl
    | (exfalso; cases h)

/-- Two tests that agree on every element of a list agree on whether some element passes. -/
theorem any_congr_mem {α : Type} (f g : α → Bool) : ∀ (l : List α), (∀ x ∈ l, f x = g x) → l.any f = l.any g
  | [], _ => rfl
  | x :: xs, h => by
    rw [List.any_cons, List.any_cons, h x (List.mem_cons.mpr (Or.inl rfl)),
      any_congr_mem f g xs (fun y hy => h y (List.mem_cons.mpr (Or.inr hy)))]

/-- A pre-run verdict fails exactly when it is an error (all of them are of checks that block). -/
theorem preChecks_failedAt (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    (preChecks wf sb mcp cur c).1.any (failedAt .tool) = (preChecks wf sb mcp cur c).1.any toolErr :=
  any_congr_mem _ _ _ (fun v hv => failedAt_eq_toolErr v (List.all_eq_true.mp (preChecks_blocks wf sb mcp cur c) v hv))

/-- `tool.not_repeated` fails exactly when the last failure of the key was in the epoch of now. -/
theorem repeatVerdict_failed (st : State) (key : String) :
    failedAt .tool (st.repeatVerdict key) = !notRepeatedB st.failed[key]? st.epoch := by
  unfold State.repeatVerdict
  exact failedAt_ofBool .toolNotRepeated rfl _ _ _ _

/-- `notRepeatedB` is false exactly when the last failure was in the epoch given. -/
theorem notRepeated_false_iff (lf : Option Nat) (e : Nat) : (!notRepeatedB lf e) = true ↔ lf = some e := by
  unfold notRepeatedB
  rw [Bool.not_not, decide_eq_true_iff]

/-- `tool.approved` fails exactly when there is an ask pattern and the status is `denied`. -/
theorem approvedVerdicts_failed (ask : Option String) (status : CallStatus) :
    (approvedVerdicts ask status).any (failedAt .tool) = true ↔ ask.isSome = true ∧ status = .denied := by
  cases ask with
  | none => exact ⟨fun h => (by cases h), fun ⟨h, _⟩ => by cases h⟩
  | some p =>
    show [Verdict.ofBool .toolApproved (approvedB status) _ _ _].any (failedAt .tool) = true ↔ _
    rw [List.any_cons, List.any_nil, Bool.or_false, failedAt_ofBool .toolApproved rfl]
    unfold approvedB
    rw [Bool.not_not, decide_eq_true_iff]
    exact ⟨fun h => ⟨rfl, h⟩, fun ⟨_, h⟩ => h⟩

open Classical in
/-- There is an ask pattern exactly when `AskApplies` and some ask pattern matches the command first. -/
theorem ask_isSome_iff (wf : Workflow) (c : ProposedCall) (ask : List String) (cmd : String) :
    (if AskApplies wf c then firstCommandMatch ask cmd else none).isSome = true ↔
      AskApplies wf c ∧ ∃ p, FirstMatch ask cmd p := by
  by_cases ha : AskApplies wf c
  · rw [if_pos ha, Option.isSome_iff_exists]
    constructor
    · rintro ⟨p, hp⟩
      exact ⟨ha, p, (firstCommandMatch_iff ask cmd p).mp hp⟩
    · rintro ⟨_, p, hp⟩
      exact ⟨p, (firstCommandMatch_iff ask cmd p).mpr hp⟩
  · rw [if_neg ha]
    exact ⟨fun hf => (by cases hf), fun ⟨hx, _⟩ => absurd hx ha⟩

/-- A call ran exactly when its status is `ok`, `timeout` or `interrupted`. -/
theorem ranB_iff (c : ToolCall) :
    ranB c = true ↔ (c.status = .ok ∨ c.status = .timeout ∨ c.status = .interrupted) := by
  unfold ranB
  cases c.status <;> decide

/-- `tool.sandboxed` decides `RanUnconfined`'s last two clauses: unconfined, as the header and the
result record it. -/
theorem unconfined_iff (sb : Option SandboxRecord) (c : ToolCall) :
    unconfinedB sb c = true ↔ ((∀ r, sb = some r → r.container = false) ∧
      (c.result.sandboxed = some false ∨ (c.result.sandboxed = none ∧ ∃ r, sb = some r ∧ r.confined = false))) := by
  unfold unconfinedB
  cases sb with
  | none =>
    cases c.result.sandboxed with
    | none => simp
    | some b => cases b <;> simp
  | some r =>
    obtain ⟨confined, required, reason, container⟩ := r
    cases container <;> cases confined <;> cases c.result.sandboxed with
    | none => simp
    | some b => cases b <;> simp

/-- `tool.sandboxed` fails exactly for a `run_command` that ran unconfined (`RanUnconfined`). -/
theorem sandboxedVerdicts_failed (sb : Option SandboxRecord) (c : ToolCall) :
    (sandboxedVerdicts sb c).any (failedAt .tool) = true ↔ RanUnconfined sb c := by
  unfold sandboxedVerdicts
  by_cases hr : (c.tool == "run_command" && ranB c) = true
  · rw [if_pos hr, List.any_cons, List.any_nil, Bool.or_false, failedAt_ofBool .toolSandboxed rfl, Bool.not_not,
      unconfined_iff]
    rw [Bool.and_eq_true, beq_iff_eq, ranB_iff] at hr
    exact ⟨fun hu => ⟨hr.1, hr.2, hu⟩, fun ⟨_, _, hu⟩ => hu⟩
  · rw [if_neg hr]
    refine ⟨fun hf => (by cases hf), fun ⟨ht, hs, _⟩ => absurd ?_ hr⟩
    rw [Bool.and_eq_true, beq_iff_eq, ranB_iff]
    exact ⟨ht, hs⟩

/-- `tool.succeeded` fails exactly when the call did not succeed (`Succeeded`). -/
theorem succeededVerdict_failed (c : ToolCall) : failedAt .tool (succeededVerdict c) = true ↔ ¬Succeeded c := by
  unfold succeededVerdict
  rw [failedAt_ofBool .toolSucceeded rfl]
  cases hs : succeededB c with
  | true => exact ⟨fun hf => (by cases hf), fun hn => absurd ((succeeded_iff c).mp hs) hn⟩
  | false =>
    refine ⟨fun _ hx => ?_, fun _ => rfl⟩
    rw [(succeeded_iff c).mpr hx] at hs
    cases hs

/-- Some verdict of a recorded call failed: a pre-run check, or one of the warnings after it. -/
theorem State.callVerdicts_failedAt (st : State) (c : ToolCall) :
    (st.callVerdicts c).any (failedAt .tool) = true ↔
      (preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed).1.any toolErr = true ∨
        (!notRepeatedB st.failed[callKey c.tool c.args]? st.epoch) = true ∨
        (approvedVerdicts (preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed).2 c.status).any
            (failedAt .tool) = true ∨
        (sandboxedVerdicts st.sandbox c).any (failedAt .tool) = true ∨ failedAt .tool (succeededVerdict c) = true := by
  show ((preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed).1 ++
      [st.repeatVerdict (callKey c.tool c.args)] ++
      approvedVerdicts (preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed).2 c.status ++
      sandboxedVerdicts st.sandbox c ++ [succeededVerdict c]).any (failedAt .tool) = true ↔ _
  rw [List.any_append, List.any_append, List.any_append, List.any_append, List.any_cons, List.any_nil,
    List.any_cons, List.any_nil, Bool.or_false, Bool.or_false, preChecks_failedAt, repeatVerdict_failed]
  simp only [Bool.or_eq_true, or_assoc]

/-! ## The tool reward of every step -/

/-- The tool reward the checker reports for a call made after the history `h` is the
specification's `stepReward`: −1 when the call does not conform in the current stage with the MCP
tools offered now, 0 when it conforms but repeats a failure, was rejected at the ask prompt, ran
unconfined or did not succeed, +1 otherwise. -/
theorem State.callReward_spec {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (c : ToolCall) : Lar.toolReward (st.callVerdicts c) = stepReward wf sb h c := by
  have hconf : CallConforms st.wf st.sandbox st.mcpTools st.currentStage c.toProposed ↔
      CallConforms wf sb (offered h) (current wf h) c.toProposed := by
    rw [A.wf_eq, A.sandbox_eq, A.mcp_eq, A.current_eq]
  have herr : (st.callVerdicts c).any toolErr =
      !callConformsB st.wf st.sandbox st.mcpTools st.currentStage c.toProposed := by
    rw [State.callVerdicts_err, preChecks_err]
  rw [Spec.stepReward_def]
  unfold Lar.toolReward
  rw [herr]
  by_cases hc : CallConforms wf sb (offered h) (current wf h) c.toProposed
  · have hb : callConformsB st.wf st.sandbox st.mcpTools st.currentStage c.toProposed = true :=
      (callConforms_iff _ _ _ _ _).mpr (hconf.mpr hc)
    rw [hb, if_neg (by decide : ¬((!true) = true)), if_neg (not_not_intro hc)]
    have hw : (st.callVerdicts c).any (failedAt .tool) = true ↔
        (RepeatsFailure wf h (callKey c.tool c.args) ∨ Rejected wf c ∨ RanUnconfined sb c ∨ ¬Succeeded c) := by
      rw [State.callVerdicts_failedAt, preChecks_err, hb, approvedVerdicts_failed, preChecks_ask, A.failed_eq,
        A.epoch_eq, notRepeated_false_iff, Spec.repeatsFailure_iff, sandboxedVerdicts_failed, A.sandbox_eq,
        succeededVerdict_failed, A.wf_eq, ask_isSome_iff]
      constructor
      · rintro (hf | hr | ⟨⟨ha, hp⟩, hd⟩ | hu | hs)
        · exact absurd hf (by decide)
        · exact Or.inl hr
        · exact Or.inr (Or.inl ⟨ha, hp, hd⟩)
        · exact Or.inr (Or.inr (Or.inl hu))
        · exact Or.inr (Or.inr (Or.inr hs))
      · rintro (hr | ⟨ha, hp, hd⟩ | hu | hs)
        · exact Or.inr (Or.inl hr)
        · exact Or.inr (Or.inr (Or.inl ⟨⟨ha, hp⟩, hd⟩))
        · exact Or.inr (Or.inr (Or.inr (Or.inl hu)))
        · exact Or.inr (Or.inr (Or.inr (Or.inr hs)))
    by_cases hW : RepeatsFailure wf h (callKey c.tool c.args) ∨ Rejected wf c ∨ RanUnconfined sb c ∨ ¬Succeeded c
    · rw [if_pos (hw.mpr hW), if_pos hW]
    · rw [if_neg (fun hx => hW (hw.mp hx)), if_neg hW]
  · have hb : callConformsB st.wf st.sandbox st.mcpTools st.currentStage c.toProposed = false := by
      cases hcb : callConformsB st.wf st.sandbox st.mcpTools st.currentStage c.toProposed with
      | false => rfl
      | true => exact absurd (hconf.mp ((callConforms_iff _ _ _ _ _).mp hcb)) hc
    rw [hb, if_pos (rfl : (!false) = true), if_pos hc]

/-- One step: the tool reward `State.append` reports for a call made after `h` is `stepReward`. -/
theorem State.append_stepReward {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (c : ToolCall) :
    (st.append line (.toolCall c)).2.toolReward = some (stepReward wf sb h c) := by
  show (st.appendCall c line).2.toolReward = _
  rw [State.appendCall_toolReward, State.callReward_spec A c]

/-- Every step of a run: for a workflow that loads and any events `h` (newest first) before it, the
tool reward the checker reports for the next call is the specification's. -/
theorem State.stepRewards_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) (line : Nat) (c : ToolCall) :
    ((st0.after h).append line (.toolCall c)).2.toolReward = some (stepReward wf sb h c) :=
  State.append_stepReward (State.after_agrees hc h) line c

/-- A step's bookkeeping, as a state that agrees with the specification after `h` records it: the
step's number ("Steps are numbered 1, 2, … in file order"), the tool as written, and the id of the
stage the step was made in (`none` once the run has ended), by which `lar advantages` pools its
tool reward. -/
theorem State.append_stepFields {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (c : ToolCall) :
    (st.append line (.toolCall c)).2.step = some ((calls h).length + 1) ∧
      (st.append line (.toolCall c)).2.tool = some c.tool ∧
      (st.append line (.toolCall c)).2.stage = (current wf h).map (·.id) := by
  refine ⟨?_, rfl, ?_⟩
  · show some (st.steps + 1) = _
    rw [A.steps_eq]
  · show st.visit.map (·.stage.id) = _
    rw [← A.current_eq]
    unfold State.currentStage
    cases st.visit with
    | none => rfl
    | some _ => rfl

/-- Every step of a run: for a workflow that loads and any events `h` before it, the checker numbers
the next call as the specification does, names its tool as written, and places it in the stage the
specification says it is made in. -/
theorem State.stepFields_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) (line : Nat) (c : ToolCall) :
    ((st0.after h).append line (.toolCall c)).2.step = some ((calls h).length + 1) ∧
      ((st0.after h).append line (.toolCall c)).2.tool = some c.tool ∧
      ((st0.after h).append line (.toolCall c)).2.stage = (current wf h).map (·.id) :=
  State.append_stepFields (State.after_agrees hc h) line c

/-! ## A conforming trajectory, in the specification's terms -/

/-- Conformance of events fed one at a time, with one more event at the end: the events before it
conform, and it conforms in the state they lead to. -/
theorem conformsFrom_append (st : State) : ∀ (evs : List (Nat × Event)) (l : Nat) (e : Event),
    ConformsFrom st (evs ++ [(l, e)]) ↔ ConformsFrom st evs ∧ EventConforms (st.feed evs) e
  | [], l, e => by
    show (EventConforms st e ∧ True) ↔ (True ∧ EventConforms st e)
    exact ⟨fun hx => ⟨trivial, hx.1⟩, fun hx => ⟨hx.2, trivial⟩⟩
  | (l', e') :: evs, l, e => by
    have ih := conformsFrom_append (st.append l' e').1 evs l e
    have hf : st.feed ((l', e') :: evs) = (st.append l' e').1.feed evs := rfl
    show (EventConforms st e' ∧ ConformsFrom (st.append l' e').1 (evs ++ [(l, e)])) ↔
      ((EventConforms st e' ∧ ConformsFrom (st.append l' e').1 evs) ∧ EventConforms (st.feed ((l', e') :: evs)) e)
    rw [ih, hf]
    exact ⟨fun hx => ⟨⟨hx.1, hx.2.1⟩, hx.2.2⟩, fun hx => ⟨hx.1.1, hx.1.2, hx.2⟩⟩

/-- The checker's conformance over the events of `h` (oldest first, each in the state the checker is
in when it arrives) is the specification's `Conforming`: every call conforms in the stage, and with
the MCP tools, the specification says it meets. -/
theorem State.conformsFrom_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) : ∀ h : History, ConformsFrom st0 h.reverse ↔ Conforming wf sb h
  | [] => ⟨fun _ => trivial, fun _ => trivial⟩
  | (l, e) :: h => by
    have ih := State.conformsFrom_spec hc h
    have A := State.after_agrees hc h
    rw [List.reverse_cons, conformsFrom_append, ih, State.feed_reverse]
    cases e with
    | toolCall c =>
      show (Conforming wf sb h ∧ CallConforms (st0.after h).wf (st0.after h).sandbox (st0.after h).mcpTools
          (st0.after h).currentStage c.toProposed) ↔
        (CallConforms wf sb (offered h) (current wf h) c.toProposed ∧ Conforming wf sb h)
      rw [A.wf_eq, A.sandbox_eq, A.mcp_eq, A.current_eq]
      exact ⟨fun hx => ⟨hx.2, hx.1⟩, fun hx => ⟨hx.2, hx.1⟩⟩
    | message => exact ⟨fun hx => hx.1, fun hx => ⟨hx, trivial⟩⟩
    | outcome _ => exact ⟨fun hx => hx.1, fun hx => ⟨hx, trivial⟩⟩
    | compaction => exact ⟨fun hx => hx.1, fun hx => ⟨hx, trivial⟩⟩
    | restore => exact ⟨fun hx => hx.1, fun hx => ⟨hx, trivial⟩⟩
    | tokens => exact ⟨fun hx => hx.1, fun hx => ⟨hx, trivial⟩⟩
    | mcpTools _ _ => exact ⟨fun hx => hx.1, fun hx => ⟨hx, trivial⟩⟩
    | finish => exact ⟨fun hx => hx.1, fun hx => ⟨hx, trivial⟩⟩

/-- The headline without the checker's step function on its right: for a workflow that loads, no
step the checker reports for the events of `h` scores −1 exactly when the trajectory conforms as the
specification says (`Conforming`: every call passes the checks of severity `error` in the stage, and
with the MCP tools, the specification says it meets). -/
theorem State.noErrorStep_iff_conforming {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord}
    {st0 : State} (hc : State.create wf headerLine sb = .ok st0) (h : History) :
    (∀ r ∈ st0.stepResults h.reverse, r.toolReward ≠ some (-1)) ↔ Conforming wf sb h :=
  (stepResults_ok_iff h.reverse st0).trans (State.conformsFrom_spec hc h)

end Lar
