import LarProofs.Spec
import LarProofs.SpecExits

/-!
# The checker scores visits as the specification does

`Lar.Spec.visitCalls` says which steps make up the visit open after a history and
`Lar.Spec.visitReward` what a visit scores ("Stage-visit level"). This file proves that the checker
keeps exactly those steps (`State.after_visitAgrees`) and that the stage reward it reports for every
visit is the specification's: the visit a move leaves (`State.append_visitReward_move`), the visit a
`submit` ends (`State.append_visitReward_submit`), and the open visit the summary scores as if the
run stopped now (`State.openScore_spec`).
-/

namespace Lar
open Lean Spec

/-! ## A visit's verdicts -/

/-- A stage-level verdict built from a decision fails exactly when the decision is `false`. -/
theorem failedAt_ofBool_stage (check : CheckId) (h : check.level = .stage) (b : Bool) (p f : String)
    (path : Option (List String)) : failedAt .stage (Verdict.ofBool check b p f path) = !b := by
  cases b with
  | true => rfl
  | false =>
    show (!false && decide (check.level = .stage)) = !false
    rw [h] <;> rfl

/-- `stage.closed` is not `stage.transition`, and fails exactly when the visit is unclosed. -/
theorem visitClosed_facts (src : String) (e : VisitEnd) :
    (!(visitClosedVerdict src e).ok && decide ((visitClosedVerdict src e).check = .stageTransition)) = false ∧
      failedAt .stage (visitClosedVerdict src e) = !closedB e := by
  unfold visitClosedVerdict
  refine ⟨?_, failedAt_ofBool_stage .stageClosed rfl _ _ _ _⟩
  rw [Verdict.ofBool_check]
  cases closedB e <;> rfl

/-- `stage.budget` is not `stage.transition`, and fails exactly when the visit is over budget. -/
theorem visitBudget_facts (v : Visit) :
    (!(visitBudgetVerdict v).ok && decide ((visitBudgetVerdict v).check = .stageTransition)) = false ∧
      failedAt .stage (visitBudgetVerdict v) = !withinBudgetB v.steps v.stage.budget := by
  unfold visitBudgetVerdict
  refine ⟨?_, failedAt_ofBool_stage .stageBudget rfl _ _ _ _⟩
  rw [Verdict.ofBool_check]
  cases withinBudgetB v.steps v.stage.budget <;> rfl

/-- `stage.transition` fails exactly when the visit's end is not legal (never for an unclosed one). -/
theorem visitTransition_facts (wf : Workflow) (src : String) (e : VisitEnd) (t : Option String) :
    (visitTransitionVerdicts wf src e t).any (fun x => !x.ok && decide (x.check = .stageTransition)) =
        !stageTransitionB wf src e t ∧
      (visitTransitionVerdicts wf src e t).any (failedAt .stage) = !stageTransitionB wf src e t := by
  unfold visitTransitionVerdicts
  cases e with
  | runEnd => exact ⟨rfl, rfl⟩
  | submit => cases stageTransitionB wf src .submit t <;> exact ⟨rfl, rfl⟩
  | transition => cases stageTransitionB wf src .transition t <;> exact ⟨rfl, rfl⟩

/-- Whether some element of a mapped list passes a test is whether some element passes the composite. -/
theorem any_map_eq {α β : Type} (f : α → β) (p : β → Bool) :
    ∀ l : List α, (l.map f).any p = l.any (fun a => p (f a))
  | [] => rfl
  | a :: l => by
    show (p (f a) || (l.map f).any p) = (p (f a) || l.any (fun a => p (f a)))
    rw [any_map_eq f p l]

/-- The exit verdicts are not `stage.transition`; one fails exactly when its condition does not hold
over the visit's facts, oldest first. -/
theorem visitExits_facts (wf : Workflow) (v : Visit) :
    (visitExitVerdicts wf v).any (fun x => !x.ok && decide (x.check = .stageTransition)) = false ∧
      (visitExitVerdicts wf v).any (failedAt .stage) = v.stage.exit.any (fun cond => !exitMetB cond v.facts.reverse) := by
  unfold visitExitVerdicts
  rw [any_map_eq, any_map_eq]
  constructor
  · rw [List.any_eq_false]
    intro cond _
    show ¬((!(Verdict.ofBool cond.checkId (exitMetB cond v.facts.reverse) _ _).ok &&
      decide ((Verdict.ofBool cond.checkId (exitMetB cond v.facts.reverse) _ _).check = .stageTransition)) = true)
    rw [Verdict.ofBool_check]
    cases exitMetB cond v.facts.reverse <;> cases cond <;> exact fun hx => by cases hx
  · apply any_congr_mem
    intro cond _
    show failedAt .stage (Verdict.ofBool cond.checkId (exitMetB cond v.facts.reverse) _ _) = !exitMetB cond v.facts.reverse
    exact failedAt_ofBool_stage cond.checkId (by cases cond <;> rfl) _ _ _ _

/-- `stage.transition` fails in a visit's verdicts exactly when its end is not legal. -/
theorem scoreVisit_transFail (wf : Workflow) (v : Visit) (e : VisitEnd) (t : Option String) :
    (scoreVisit wf v e t).any (fun x => !x.ok && decide (x.check = .stageTransition)) =
      !stageTransitionB wf v.stage.id e t := by
  unfold scoreVisit
  simp only [List.any_append, List.any_cons, List.any_nil, (visitClosed_facts v.stage.id e).1,
    (visitBudget_facts v).1, (visitTransition_facts wf v.stage.id e t).1, (visitExits_facts wf v).1,
    Bool.or_false, Bool.false_or] <;> rfl

/-- Some verdict of a visit fails exactly when it is unclosed, its end is not legal, it is over budget
or an exit condition does not hold. -/
theorem scoreVisit_failedAt (wf : Workflow) (v : Visit) (e : VisitEnd) (t : Option String) :
    (scoreVisit wf v e t).any (failedAt .stage) =
      (!closedB e || !stageTransitionB wf v.stage.id e t || !withinBudgetB v.steps v.stage.budget ||
        v.stage.exit.any (fun cond => !exitMetB cond v.facts.reverse)) := by
  unfold scoreVisit
  simp only [List.any_append, List.any_cons, List.any_nil, (visitClosed_facts v.stage.id e).2,
    (visitBudget_facts v).2, (visitTransition_facts wf v.stage.id e t).2, (visitExits_facts wf v).2,
    Bool.or_false] <;> rfl

open Classical in
/-- The stage reward of a visit whose steps are `calls` (the visit's count and facts, newest first)
is the specification's `visitReward`. -/
theorem stageReward_spec (wf : Workflow) (v : Visit) (e : VisitEnd) (t : Option String) (calls : List ToolCall)
    (hs : v.steps = calls.length) (hf : v.facts = calls.map (stepFact wf)) :
    stageReward (scoreVisit wf v e t) = visitReward wf v.stage calls e t := by
  have hex : (∃ cond ∈ v.stage.exit, ¬ExitHolds wf cond calls.reverse) ↔
      ∃ cond ∈ v.stage.exit, ¬ExitMet cond (calls.map (stepFact wf)).reverse :=
    ⟨fun ⟨cond, hc, hn⟩ => ⟨cond, hc, fun hm => hn ((Spec.exitMet_visit wf cond calls).mp hm)⟩,
      fun ⟨cond, hc, hn⟩ => ⟨cond, hc, fun hm => hn ((Spec.exitMet_visit wf cond calls).mpr hm)⟩⟩
  have hvr : visitReward wf v.stage calls e t =
      if ¬StageTransitionOk wf v.stage.id e t then -1
      else if ¬Closed e ∨ ¬WithinBudget calls.length v.stage.budget ∨
          ∃ cond ∈ v.stage.exit, ¬ExitMet cond (calls.map (stepFact wf)).reverse then 0
      else 1 := by
    unfold visitReward
    by_cases hT : StageTransitionOk wf v.stage.id e t
    · rw [if_neg (not_not_intro hT), if_neg (not_not_intro hT)]
      by_cases hW : ¬Closed e ∨ ¬WithinBudget calls.length v.stage.budget ∨
          ∃ cond ∈ v.stage.exit, ¬ExitMet cond (calls.map (stepFact wf)).reverse
      · have hW' : ¬Closed e ∨ ¬WithinBudget calls.length v.stage.budget ∨
            ∃ cond ∈ v.stage.exit, ¬ExitHolds wf cond calls.reverse :=
          hW.imp_right (Or.imp_right hex.mpr)
        rw [if_pos hW', if_pos hW]
      · have hW' : ¬(¬Closed e ∨ ¬WithinBudget calls.length v.stage.budget ∨
            ∃ cond ∈ v.stage.exit, ¬ExitHolds wf cond calls.reverse) :=
          fun hx => hW (hx.imp_right (Or.imp_right hex.mp))
        rw [if_neg hW', if_neg hW]
    · rw [if_pos hT, if_pos hT]
  rw [hvr]
  unfold stageReward
  rw [scoreVisit_transFail, scoreVisit_failedAt, ← hs, ← hf]
  by_cases hT : StageTransitionOk wf v.stage.id e t
  · have hb : stageTransitionB wf v.stage.id e t = true := (stageTransition_iff _ _ _ _).mpr hT
    rw [hb, if_neg (by decide : ¬((!true) = true)), if_neg (not_not_intro hT)]
    have hw : (!closedB e || !true || !withinBudgetB v.steps v.stage.budget ||
          v.stage.exit.any (fun cond => !exitMetB cond v.facts.reverse)) = true ↔
        (¬Closed e ∨ ¬WithinBudget v.steps v.stage.budget ∨ ∃ cond ∈ v.stage.exit, ¬ExitMet cond v.facts.reverse) := by
      rw [Bool.or_eq_true, Bool.or_eq_true, Bool.or_eq_true, List.any_eq_true]
      constructor
      · rintro (((hc | hf') | hb') | ⟨cond, hcond, hx⟩)
        · exact Or.inl (fun hcl => by rw [(closed_iff e).mpr hcl] at hc; cases hc)
        · cases hf'
        · exact Or.inr (Or.inl (fun hw => by rw [(withinBudget_iff _ _).mpr hw] at hb'; cases hb'))
        · exact Or.inr (Or.inr ⟨cond, hcond, fun hm => by rw [(exitMet_iff _ _).mpr hm] at hx; cases hx⟩)
      · rintro (hc | hb' | ⟨cond, hcond, hx⟩)
        · refine Or.inl (Or.inl (Or.inl ?_))
          cases hcb : closedB e with
          | false => rfl
          | true => exact absurd ((closed_iff e).mp hcb) hc
        · refine Or.inl (Or.inr ?_)
          cases hwb : withinBudgetB v.steps v.stage.budget with
          | false => rfl
          | true => exact absurd ((withinBudget_iff _ _).mp hwb) hb'
        · refine Or.inr ⟨cond, hcond, ?_⟩
          show (!exitMetB cond v.facts.reverse) = true
          cases hmb : exitMetB cond v.facts.reverse with
          | false => rfl
          | true => exact absurd ((exitMet_iff _ _).mp hmb) hx
    by_cases hW : ¬Closed e ∨ ¬WithinBudget v.steps v.stage.budget ∨ ∃ cond ∈ v.stage.exit, ¬ExitMet cond v.facts.reverse
    · rw [if_pos (hw.mpr hW), if_pos hW]
    · rw [if_neg (fun hx => hW (hw.mp hx)), if_neg hW]
  · have hb : stageTransitionB wf v.stage.id e t = false := by
      cases hsb : stageTransitionB wf v.stage.id e t with
      | false => rfl
      | true => exact absurd ((stageTransition_iff _ _ _ _).mp hsb) hT
    rw [hb, if_pos (rfl : (!false) = true), if_pos hT]

/-! ## The steps of the open visit -/

/-- The steps of the visit after a call: none after a move, else this call and those before. -/
theorem Spec.visitCalls_call (wf : Workflow) (l : Nat) (c : ToolCall) (h : History) :
    visitCalls wf ((l, .toolCall c) :: h) = if (movesTo wf c).isSome then [] else c :: visitCalls wf h := rfl

/-- The open visit with one more call, as the checker records it (one more step, the call's fact
first), has the count and facts of the specification's steps of the visit with that call first. -/
theorem VisitAgrees.stepped {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) {v0 : Visit} (hv0 : st.visit = some v0) (c : ToolCall) :
    v0.steps + 1 = (c :: visitCalls wf h).length ∧
      stepFact st.wf c :: v0.facts = (c :: visitCalls wf h).map (stepFact wf) := by
  obtain ⟨h1, h2⟩ := V v0 hv0
  refine ⟨?_, ?_⟩
  · rw [h1] <;> rfl
  · rw [h2, A.wf_eq] <;> rfl

/-- A move opens a visit with no step. -/
theorem State.moveVisit_move_visit (st : State) (c : ToolCall) (line : Nat) (v0 : Visit) (t : Stage)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = some t) :
    ∀ v, (st.moveVisit c line).1.visit = some v → v.steps = 0 ∧ v.facts = [] := by
  unfold State.moveVisit
  rw [hv, ht]
  intro v hv'
  cases hv'
  exact ⟨rfl, rfl⟩

/-- Any other call of an open run that does not end it is one more step of the open visit. -/
theorem State.moveVisit_stay_visit (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = false) :
    (st.moveVisit c line).1.visit = some { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts } := by
  unfold State.moveVisit
  rw [hv, ht, hs] <;> rfl

/-- A successful `submit` leaves no open visit. -/
theorem State.moveVisit_submit_visit (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = true) :
    (st.moveVisit c line).1.visit = none := by
  unfold State.moveVisit
  rw [hv, ht, hs] <;> rfl

/-- A move closes the open visit, with this call as its last step, ended by a transition. -/
theorem State.moveVisit_move_result (st : State) (c : ToolCall) (line : Nat) (v0 : Visit) (t : Stage)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = some t) :
    (st.moveVisit c line).2 = some (st.closeVisit { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts }
      line .transition (some t.id)).2 := by
  unfold State.moveVisit
  rw [hv, ht] <;> rfl

/-- A successful `submit` closes the open visit, with this call as its last step, ended by a submit. -/
theorem State.moveVisit_submit_result (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = true) :
    (st.moveVisit c line).2 = some (st.closeVisit { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts }
      line .submit none).2 := by
  unfold State.moveVisit
  rw [hv, ht, hs] <;> rfl

/-- The state `State.create` makes opens the start stage's visit with no step. -/
theorem VisitAgrees.init {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) : VisitAgrees wf [] st := by
  obtain ⟨start, _, _, _, _, hv, _⟩ := State.create_eq hc
  intro v hv'
  rw [hv] at hv'
  cases hv'
  exact ⟨rfl, rfl⟩

/-- One event of any kind keeps the open visit's count and facts those of the specification. -/
theorem VisitAgrees.step {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (line : Nat) (e : Event) :
    VisitAgrees wf ((line, e) :: h) (st.append line e).1 := by
  by_cases hcall : ∃ c, e = .toolCall c
  · obtain ⟨c, rfl⟩ := hcall
    have hmv := A.movesTo_eq c
    show VisitAgrees wf ((line, .toolCall c) :: h) (st.appendCall c line).1
    intro v hv
    have hv2 : (({ st with failed := {} } : State).moveVisit c line).1.visit = some v := hv
    rw [Spec.visitCalls_call, hmv]
    rcases option_none_or_some st.visit with hv0 | ⟨v0, hv0⟩
    · rw [State.moveVisit_none { st with failed := {} } c line hv0] at hv2
      rw [show ({ st with failed := {} } : State).visit = none from hv0] at hv2
      cases hv2
    · cases ht : enterTarget st.wf c with
      | some t =>
        obtain ⟨h1, h2⟩ := State.moveVisit_move_visit { st with failed := {} } c line v0 t hv0 ht v hv2
        rw [h1, h2]
        exact ⟨rfl, rfl⟩
      | none =>
        cases hs : (c.status == .ok && c.tool == "submit") with
        | true =>
          rw [State.moveVisit_submit_visit { st with failed := {} } c line v0 hv0 ht hs] at hv2
          cases hv2
        | false =>
          rw [State.moveVisit_stay_visit { st with failed := {} } c line v0 hv0 ht hs] at hv2
          cases hv2
          exact VisitAgrees.stepped A V hv0 c
  · have hq : ∀ c, e ≠ .toolCall c := fun c hc' => hcall ⟨c, hc'⟩
    have hvis : (st.append line e).1.visit = st.visit := by
      cases e with
      | toolCall c => exact absurd rfl (hq c)
      | outcome o =>
        rcases State.outcomeStep_cases st o line with hx | hx
        · exact congrArg State.visit hx
        · exact congrArg State.visit hx
      | mcpTools _ _ => rfl
      | message => rfl
      | compaction => rfl
      | restore => rfl
      | tokens => rfl
      | finish => rfl
    have hcalls : visitCalls wf ((line, e) :: h) = visitCalls wf h := by
      cases e with
      | toolCall c => exact absurd rfl (hq c)
      | _ => rfl
    intro v hv
    rw [hvis] at hv
    rw [hcalls]
    exact V v hv

/-- For a workflow that loads, after any events the open visit's count and facts are those of the
specification's steps of the visit. -/
theorem State.after_visitAgrees {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) : ∀ h : History, VisitAgrees wf h (st0.after h)
  | [] => VisitAgrees.init hc
  | (line, e) :: h => VisitAgrees.step (State.after_agrees hc h) (State.after_visitAgrees hc h) line e

/-! ## The reward of every visit -/

/-- The open visit is of the current stage. -/
theorem Agrees.visit_stage {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (s : Stage) (hs : current wf h = some s) : ∃ v, st.visit = some v ∧ v.stage = s := by
  have hc : st.currentStage = some s := A.current_eq.trans hs
  unfold State.currentStage at hc
  cases hv : st.visit with
  | none =>
    rw [hv] at hc
    cases hc
  | some v =>
    rw [hv] at hc
    cases hc
    exact ⟨v, rfl, rfl⟩

/-- A call that moves the run to `t` closes the open visit, which is of the current stage `s` and has
the specification's steps of the visit, this call included. -/
theorem State.append_closes_move {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (line : Nat) (c : ToolCall) (s t : Stage)
    (hs : current wf h = some s) (ht : movesTo wf c = some t) :
    ∃ v : Visit, (st.append line (.toolCall c)).2.stageVisit =
        some (({ st with failed := {} } : State).closeVisit v line .transition (some t.id)).2 ∧
      v.stage = s ∧ v.steps = (c :: visitCalls wf h).length ∧ v.facts = (c :: visitCalls wf h).map (stepFact wf) := by
  obtain ⟨v0, hv0, hst⟩ := A.visit_stage s hs
  obtain ⟨h1, h2⟩ := VisitAgrees.stepped A V hv0 c
  have ht' : enterTarget st.wf c = some t := by
    rw [A.wf_eq]
    exact ht
  refine ⟨{ v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts },
    State.moveVisit_move_result { st with failed := {} } c line v0 t hv0 ht', hst, h1, h2⟩

/-- A `submit` with status `ok` in an open run closes the open visit, which is of the current stage
`s` and has the specification's steps of the visit, this call included. -/
theorem State.append_closes_submit {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (line : Nat) (c : ToolCall) (s : Stage)
    (hs : current wf h = some s) (he : EndsRun wf c) :
    ∃ v : Visit, (st.append line (.toolCall c)).2.stageVisit =
        some (({ st with failed := {} } : State).closeVisit v line .submit none).2 ∧
      v.stage = s ∧ v.steps = (c :: visitCalls wf h).length ∧ v.facts = (c :: visitCalls wf h).map (stepFact wf) := by
  obtain ⟨v0, hv0, hst⟩ := A.visit_stage s hs
  obtain ⟨h1, h2⟩ := VisitAgrees.stepped A V hv0 c
  obtain ⟨hm, hsub⟩ := he
  have ht' : enterTarget st.wf c = none := by
    rw [A.wf_eq]
    exact hm
  have hsb : (c.status == .ok && c.tool == "submit") = true := (submitB_iff c).mpr hsub
  refine ⟨{ v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts },
    State.moveVisit_submit_result { st with failed := {} } c line v0 hv0 ht' hsb, hst, h1, h2⟩

/-- A call that moves the run to `t` closes the visit of the current stage `s` it leaves, with the
stage reward `visitReward` of that visit's steps, this call included, ended by a transition to `t`. -/
theorem State.append_visitReward_move {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (line : Nat) (c : ToolCall) (s t : Stage)
    (hs : current wf h = some s) (ht : movesTo wf c = some t) :
    (st.append line (.toolCall c)).2.stageVisit.map (·.reward) =
      some (visitReward wf s (c :: visitCalls wf h) .transition (some t.id)) := by
  obtain ⟨v, hsv, hvs, hsteps, hfacts⟩ := State.append_closes_move A V line c s t hs ht
  rw [hsv]
  show some (stageReward (scoreVisit st.wf v .transition (some t.id))) = _
  rw [A.wf_eq, stageReward_spec wf v .transition (some t.id) (c :: visitCalls wf h) hsteps hfacts, hvs]

/-- A `submit` with status `ok` in an open run closes the visit of the current stage `s` with the
stage reward `visitReward` of that visit's steps, this call included, ended by a submit. -/
theorem State.append_visitReward_submit {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (line : Nat) (c : ToolCall) (s : Stage)
    (hs : current wf h = some s) (he : EndsRun wf c) :
    (st.append line (.toolCall c)).2.stageVisit.map (·.reward) =
      some (visitReward wf s (c :: visitCalls wf h) .submit none) := by
  obtain ⟨v, hsv, hvs, hsteps, hfacts⟩ := State.append_closes_submit A V line c s hs he
  rw [hsv]
  show some (stageReward (scoreVisit st.wf v .submit none)) = _
  rw [A.wf_eq, stageReward_spec wf v .submit none (c :: visitCalls wf h) hsteps hfacts, hvs]

/-- The open visit the summary scores as if the run stopped now has the stage reward `visitReward`
of its steps, unclosed. -/
theorem State.openScore_spec {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (s : Stage) (hs : current wf h = some s) :
    st.openScore.2 = visitReward wf s (visitCalls wf h) .runEnd none := by
  obtain ⟨v0, hv0, hst⟩ := A.visit_stage s hs
  obtain ⟨h1, h2⟩ := V v0 hv0
  unfold State.openScore
  rw [hv0]
  show stageReward (scoreVisit st.wf v0 .runEnd none) = _
  rw [stageReward_spec st.wf v0 .runEnd none (visitCalls wf h) h1 (by rw [h2, A.wf_eq]), A.wf_eq, hst]

/-- Every visit of a run: for a workflow that loads and any events `h` before a call that moves the
run to `t` or ends it, the stage reward the checker reports for the visit it closes is the
specification's; and the open visit's reward in the summary is too. -/
theorem State.visitRewards_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) (line : Nat) (c : ToolCall) (s : Stage)
    (hs : current wf h = some s) :
    (∀ t, movesTo wf c = some t → ((st0.after h).append line (.toolCall c)).2.stageVisit.map (·.reward) =
        some (visitReward wf s (c :: visitCalls wf h) .transition (some t.id))) ∧
      (EndsRun wf c → ((st0.after h).append line (.toolCall c)).2.stageVisit.map (·.reward) =
        some (visitReward wf s (c :: visitCalls wf h) .submit none)) ∧
      (st0.after h).openScore.2 = visitReward wf s (visitCalls wf h) .runEnd none :=
  ⟨fun t ht => State.append_visitReward_move (State.after_agrees hc h) (State.after_visitAgrees hc h) line c s t hs ht,
    fun he => State.append_visitReward_submit (State.after_agrees hc h) (State.after_visitAgrees hc h) line c s hs he,
    State.openScore_spec (State.after_agrees hc h) (State.after_visitAgrees hc h) s hs⟩

end Lar
