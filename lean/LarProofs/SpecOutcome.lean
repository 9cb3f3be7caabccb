import LarProofs.SpecVisits

/-!
# The checker's outcome is the specification's

`Lar.Spec.SubmittedFromTerminal`, `Lar.Spec.recordedOutcome` and `Lar.Spec.outcome` state
rewards.md's outcome over a whole run ("Outcome"). This file proves that the checker keeps exactly
the record of the submit and of the outcome event that counts (`State.after_outcomeAgrees`) and that
the outcome o its summary counts is the specification's (`State.outcome_spec`).
-/

namespace Lar
open Lean Spec

/-! ## The specification, one event at a time -/

/-- The steps of `a ++ b` are those of `a`, then those of `b` (both newest first). -/
theorem Spec.calls_append : ∀ (a b : History), calls (a ++ b) = calls a ++ calls b
  | [], _ => rfl
  | (l, e) :: a, b => by
    by_cases hc : ∃ c, e = .toolCall c
    · obtain ⟨c, rfl⟩ := hc
      show c :: calls (a ++ b) = c :: calls a ++ calls b
      rw [Spec.calls_append a b] <;> rfl
    · have hq : ∀ c, e ≠ .toolCall c := fun c hc' => hc ⟨c, hc'⟩
      have h1 := (Spec.quiet (wf := default) (h := a ++ b) (l := l) hq).1
      have h2 := (Spec.quiet (wf := default) (h := a) (l := l) hq).1
      show calls ((l, e) :: (a ++ b)) = calls ((l, e) :: a) ++ calls b
      rw [h1, h2, Spec.calls_append a b]

/-- A run that submitted from a terminal stage has ended. -/
theorem Spec.submitted_ended {wf : Workflow} {h : History} (hs : SubmittedFromTerminal wf h) : Ended wf h := by
  obtain ⟨newer, l, c, older, he, hr, _⟩ := hs
  refine ⟨c, ?_, hr⟩
  rw [he, Spec.calls_append]
  exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inl rfl)))

/-- An event that is no call does not change whether the run submitted from a terminal stage. -/
theorem Spec.submitted_quiet {wf : Workflow} {h : History} {l : Nat} {e : Event} (he : ∀ c, e ≠ .toolCall c) :
    SubmittedFromTerminal wf ((l, e) :: h) ↔ SubmittedFromTerminal wf h := by
  constructor
  · rintro ⟨newer, l', c, older, hh, hr, hs⟩
    cases newer with
    | nil =>
      obtain ⟨hx, _⟩ := List.cons_eq_cons.mp hh
      exact absurd (Prod.mk.inj hx).2 (he c)
    | cons x newer =>
      obtain ⟨_, hh'⟩ := List.cons_eq_cons.mp hh
      exact ⟨newer, l', c, older, hh', hr, hs⟩
  · rintro ⟨newer, l', c, older, hh, hr, hs⟩
    exact ⟨(l, e) :: newer, l', c, older, congrArg (List.cons (l, e)) hh, hr, hs⟩

/-- After a call, the run submitted from a terminal stage exactly when it had, or this call ended
it while the run was in a terminal stage. -/
theorem Spec.submitted_call (wf : Workflow) (h : History) (l : Nat) (c : ToolCall) :
    SubmittedFromTerminal wf ((l, .toolCall c) :: h) ↔
      SubmittedFromTerminal wf h ∨ (EndsRun wf c ∧ ∃ s, current wf h = some s ∧ Terminal wf s.id) := by
  constructor
  · rintro ⟨newer, l', c', older, hh, hr, hs⟩
    cases newer with
    | nil =>
      obtain ⟨hx, ho⟩ := List.cons_eq_cons.mp hh
      have hc : c = c' := Event.toolCall.inj (Prod.mk.inj hx).2
      subst hc
      subst ho
      exact Or.inr ⟨hr, hs⟩
    | cons x newer =>
      obtain ⟨_, hh'⟩ := List.cons_eq_cons.mp hh
      exact Or.inl ⟨newer, l', c', older, hh', hr, hs⟩
  · rintro (⟨newer, l', c', older, hh, hr, hs⟩ | ⟨hr, hs⟩)
    · exact ⟨(l, .toolCall c) :: newer, l', c', older, congrArg (List.cons (l, .toolCall c)) hh, hr, hs⟩
    · exact ⟨[], l, c, h, rfl, hr, hs⟩

open Classical in
/-- The recorded outcome after an `outcome` event: the one before, or this one when it counts. -/
theorem Spec.recordedOutcome_outcome (wf : Workflow) (l : Nat) (o : OutcomeEvent) (h : History) :
    recordedOutcome wf ((l, .outcome o) :: h) =
      (recordedOutcome wf h).or (if wf.outcome.check?.isSome = true ∧ Ended wf h then some (o, l) else none) :=
  rfl

/-- Any other event leaves the recorded outcome as it was. -/
theorem Spec.recordedOutcome_other (wf : Workflow) (l : Nat) (e : Event) (h : History) (he : ∀ o, e ≠ .outcome o) :
    recordedOutcome wf ((l, e) :: h) = recordedOutcome wf h := by
  cases e with
  | outcome o => exact absurd rfl (he o)
  | toolCall _ => rfl
  | message => rfl
  | compaction => rfl
  | restore => rfl
  | tokens => rfl
  | mcpTools _ _ => rfl
  | finish => rfl

/-! ## What the checker keeps -/

/-- A call's moves leave the recorded outcome alone. -/
theorem State.moveVisit_outcome (st : State) (c : ToolCall) (line : Nat) :
    (st.moveVisit c line).1.outcome = st.outcome := by
  unfold State.moveVisit
  cases st.visit with
  | none => rfl
  | some v0 =>
    cases enterTarget st.wf c with
    | some target => rfl
    | none => cases (c.status == .ok && c.tool == "submit") <;> rfl

/-- Once the run has ended, a call changes no record of the submit. -/
theorem State.moveVisit_none_sft (st : State) (c : ToolCall) (line : Nat) (hv : st.visit = none) :
    (st.moveVisit c line).1.submittedFromTerminal = st.submittedFromTerminal := by
  rw [State.moveVisit_none st c line hv]

/-- A move changes no record of the submit. -/
theorem State.moveVisit_move_sft (st : State) (c : ToolCall) (line : Nat) (v0 : Visit) (t : Stage)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = some t) :
    (st.moveVisit c line).1.submittedFromTerminal = st.submittedFromTerminal := by
  unfold State.moveVisit
  rw [hv, ht] <;> rfl

/-- A successful `submit` records whether the stage it was made from is terminal. -/
theorem State.moveVisit_submit_sft (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = true) :
    (st.moveVisit c line).1.submittedFromTerminal = terminalB st.wf v0.stage.id := by
  unfold State.moveVisit
  rw [hv, ht, hs] <;> rfl

/-- Any other call changes no record of the submit. -/
theorem State.moveVisit_stay_sft (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = false) :
    (st.moveVisit c line).1.submittedFromTerminal = st.submittedFromTerminal := by
  unfold State.moveVisit
  rw [hv, ht, hs] <;> rfl

/-- The state `State.create` makes records no submit and no outcome. -/
theorem State.create_outcome {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) : st.submittedFromTerminal = false ∧ st.outcome = none := by
  obtain ⟨_, _, rfl⟩ := State.create_state hc
  exact ⟨rfl, rfl⟩

/-- The state `State.create` makes agrees on the outcome with the empty history. -/
theorem OutcomeAgrees.init {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) : OutcomeAgrees wf [] st := by
  obtain ⟨hsft, hout⟩ := State.create_outcome hc
  refine ⟨?_, hout⟩
  rw [hsft]
  constructor
  · intro hf
    cases hf
  · rintro ⟨newer, _, _, _, hh, _⟩
    cases newer with
    | nil => cases hh
    | cons _ _ => cases hh

/-- A call keeps the checker's record of the submit and of the outcome the specification's. -/
theorem OutcomeAgrees.call {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (O : OutcomeAgrees wf h st) (line : Nat) (c : ToolCall) :
    OutcomeAgrees wf ((line, .toolCall c) :: h) (st.appendCall c line).1 := by
  obtain ⟨hsft, hout⟩ := O
  have hmv := A.movesTo_eq c
  refine ⟨?_, ?_⟩
  · have hs' : (st.appendCall c line).1.submittedFromTerminal =
        (({ st with failed := {} } : State).moveVisit c line).1.submittedFromTerminal := rfl
    rw [hs', Spec.submitted_call]
    rcases option_none_or_some st.visit with hv0 | ⟨v0, hv0⟩
    · have hx : Ended wf h := A.ended_of_visit_none hv0
      rw [State.moveVisit_none_sft { st with failed := {} } c line hv0]
      exact ⟨fun hx' => Or.inl (hsft.mp hx'), fun hx' => hx'.elim (fun hy => hsft.mpr hy)
        (fun ⟨_, s, hcs, _⟩ => by rw [current_of_ended hx] at hcs; cases hcs)⟩
    · have hx : ¬Ended wf h := (A.current_of_visit_some hv0).1
      have hnot : ¬SubmittedFromTerminal wf h := fun hy => hx (Spec.submitted_ended hy)
      have hcur : current wf h = some v0.stage := (A.current_of_visit_some hv0).2
      cases ht : enterTarget st.wf c with
      | some t =>
        rw [State.moveVisit_move_sft { st with failed := {} } c line v0 t hv0 ht]
        have hnr : ¬EndsRun wf c := fun ⟨hm, _⟩ => by
          rw [hmv, ht] at hm
          cases hm
        exact ⟨fun hy => absurd (hsft.mp hy) hnot, fun hy => hy.elim (fun hz => absurd hz hnot)
          (fun ⟨hr, _⟩ => absurd hr hnr)⟩
      | none =>
        cases hs : (c.status == .ok && c.tool == "submit") with
        | true =>
          rw [State.moveVisit_submit_sft { st with failed := {} } c line v0 hv0 ht hs]
          have hr : EndsRun wf c := by
            refine ⟨?_, (submitB_iff c).mp hs⟩
            rw [hmv, ht]
          show terminalB st.wf v0.stage.id = true ↔ _
          rw [A.wf_eq, terminal_iff]
          exact ⟨fun hy => Or.inr ⟨hr, v0.stage, hcur, hy⟩, fun hy => hy.elim (fun hz => absurd hz hnot)
            (fun ⟨_, s, hcs, hts⟩ => by rw [hcur] at hcs; cases hcs; exact hts)⟩
        | false =>
          rw [State.moveVisit_stay_sft { st with failed := {} } c line v0 hv0 ht hs]
          have hnr : ¬EndsRun wf c := fun ⟨_, hsub⟩ => by
            rw [(submitB_iff c).mpr hsub] at hs
            cases hs
          exact ⟨fun hy => absurd (hsft.mp hy) hnot, fun hy => hy.elim (fun hz => absurd hz hnot)
            (fun ⟨hr, _⟩ => absurd hr hnr)⟩
  · have ho : (st.appendCall c line).1.outcome = (({ st with failed := {} } : State).moveVisit c line).1.outcome := rfl
    rw [ho, State.moveVisit_outcome, Spec.recordedOutcome_other wf line (.toolCall c) h (fun _ h' => by cases h')]
    exact hout

/-- An `outcome` event keeps the checker's record of the submit and of the outcome the
specification's: it is recorded exactly when it counts. -/
theorem OutcomeAgrees.outcome {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (O : OutcomeAgrees wf h st) (line : Nat) (o : OutcomeEvent) :
    OutcomeAgrees wf ((line, .outcome o) :: h) (st.append line (.outcome o)).1 := by
  obtain ⟨hsft, hout⟩ := O
  have hst : (st.append line (.outcome o)).1 =
      { st with outcome := if st.outcomeCounts then some (o, line) else st.outcome } := rfl
  rw [hst]
  refine ⟨?_, ?_⟩
  · show st.submittedFromTerminal = true ↔ _
    rw [Spec.submitted_quiet (wf := wf) (h := h) (l := line) (e := .outcome o) (fun _ h' => by cases h')]
    exact hsft
  · show (if st.outcomeCounts = true then some (o, line) else st.outcome) = _
    rw [Spec.recordedOutcome_outcome, ← hout]
    unfold State.outcomeCounts
    rw [A.wf_eq]
    cases hr : st.outcome with
    | some r =>
      show (if (wf.outcome.check?.isSome && st.ended && false) = true then some (o, line) else some r) =
        (some r).or _
      rw [Bool.and_false, if_neg (by decide : ¬(false = true))] <;> rfl
    | none =>
      show (if (wf.outcome.check?.isSome && st.ended && true) = true then some (o, line) else none) =
        (none : Option (OutcomeEvent × Nat)).or _
      rw [Bool.and_true]
      by_cases hc : (wf.outcome.check?.isSome && st.ended) = true
      · have hc' : wf.outcome.check?.isSome = true ∧ Ended wf h := by
          rw [Bool.and_eq_true] at hc
          exact ⟨hc.1, A.ended_iff.mp hc.2⟩
        rw [if_pos hc, if_pos hc'] <;> rfl
      · have hc' : ¬(wf.outcome.check?.isSome = true ∧ Ended wf h) := fun ⟨h1, h2⟩ =>
          hc (by rw [Bool.and_eq_true]; exact ⟨h1, A.ended_iff.mpr h2⟩)
        rw [if_neg hc, if_neg hc'] <;> rfl

/-- One event of any kind keeps the checker's record of the submit and of the outcome the
specification's. -/
theorem OutcomeAgrees.step {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (O : OutcomeAgrees wf h st) (line : Nat) (e : Event) :
    OutcomeAgrees wf ((line, e) :: h) (st.append line e).1 := by
  by_cases hcall : ∃ c, e = .toolCall c
  · obtain ⟨c, rfl⟩ := hcall
    exact OutcomeAgrees.call A O line c
  · by_cases hout : ∃ o, e = .outcome o
    · obtain ⟨o, rfl⟩ := hout
      exact OutcomeAgrees.outcome A O line o
    · have hq : ∀ c, e ≠ .toolCall c := fun c hc' => hcall ⟨c, hc'⟩
      have hq' : ∀ o, e ≠ .outcome o := fun o ho => hout ⟨o, ho⟩
      have hsame : (st.append line e).1.submittedFromTerminal = st.submittedFromTerminal ∧
          (st.append line e).1.outcome = st.outcome := by
        cases e with
        | toolCall c => exact absurd rfl (hq c)
        | outcome o => exact absurd rfl (hq' o)
        | mcpTools _ _ => exact ⟨rfl, rfl⟩
        | message => exact ⟨rfl, rfl⟩
        | compaction => exact ⟨rfl, rfl⟩
        | restore => exact ⟨rfl, rfl⟩
        | tokens => exact ⟨rfl, rfl⟩
        | finish => exact ⟨rfl, rfl⟩
      obtain ⟨hsft, hrec⟩ := O
      refine ⟨?_, ?_⟩
      · rw [hsame.1, Spec.submitted_quiet hq]
        exact hsft
      · rw [hsame.2, Spec.recordedOutcome_other wf line e h hq']
        exact hrec

/-- For a workflow that loads, after any events the checker's record of the submit and of the
outcome event that counts are the specification's. -/
theorem State.after_outcomeAgrees {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) : ∀ h : History, OutcomeAgrees wf h (st0.after h)
  | [] => OutcomeAgrees.init hc
  | (line, e) :: h => OutcomeAgrees.step (State.after_agrees hc h) (State.after_outcomeAgrees hc h) line e

/-! ## The outcome -/

/-- The outcome check's verdict passes exactly when an outcome was recorded and it passes
`checkPassedB`. -/
theorem State.outcomeCheckVerdict_ok (st : State) (k : OutcomeCheck) :
    (st.outcomeCheckVerdict k).ok = true ↔ ∃ o l, st.outcome = some (o, l) ∧ checkPassedB k.expectExitCode o = true := by
  unfold State.outcomeCheckVerdict
  cases hr : st.outcome with
  | none =>
    exact ⟨fun hf => (by cases hf), fun ⟨_, _, hn, _⟩ => by cases hn⟩
  | some r =>
    obtain ⟨o, l⟩ := r
    show (Verdict.ofBool .outcomeCheckPassed (checkPassedB k.expectExitCode o) _ _ _).ok = true ↔ _
    rw [Verdict.ofBool_ok]
    exact ⟨fun hp => ⟨o, l, rfl, hp⟩, fun ⟨o', l', he, hp⟩ => by cases he; exact hp⟩

open Classical in
/-- The outcome o the summary counts (`State.outcomeValue`) is the specification's `Spec.outcome`. -/
theorem State.outcome_spec {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (O : OutcomeAgrees wf h st) : st.outcomeValue = Spec.outcome wf h := by
  obtain ⟨hsft, hout⟩ := O
  have hspec : Spec.outcome wf h = match wf.outcome with
      | .command k =>
        if SubmittedFromTerminal wf h ∧ ∃ o l, recordedOutcome wf h = some (o, l) ∧ CheckPassed k.expectExitCode o
        then 1 else 0
      | .external _ => 0 := rfl
  rw [hspec]
  unfold State.outcomeValue
  rw [A.wf_eq]
  cases wf.outcome with
  | external _ => rfl
  | command k =>
    -- The right side is given, not `_`: it would stay `match .command k with …`, whose `if` sits under
    -- the bound `k` of the match alternative, where `rw [if_pos hc]` below cannot reach it.
    show outcomeReward st.ended st.submittedFromTerminal (st.outcomeCheckVerdict k).ok =
      if SubmittedFromTerminal wf h ∧ ∃ o l, recordedOutcome wf h = some (o, l) ∧ CheckPassed k.expectExitCode o
      then 1 else 0
    unfold outcomeReward
    have hiff : (st.ended && st.submittedFromTerminal && (st.outcomeCheckVerdict k).ok) = true ↔
        (SubmittedFromTerminal wf h ∧ ∃ o l, recordedOutcome wf h = some (o, l) ∧ CheckPassed k.expectExitCode o) := by
      rw [Bool.and_eq_true, Bool.and_eq_true, State.outcomeCheckVerdict_ok, hout]
      constructor
      · rintro ⟨⟨_, hs⟩, o, l, hr, hp⟩
        exact ⟨hsft.mp hs, o, l, hr, (checkPassed_iff _ _).mp hp⟩
      · rintro ⟨hs, o, l, hr, hp⟩
        exact ⟨⟨A.ended_iff.mpr (Spec.submitted_ended hs), hsft.mpr hs⟩, o, l, hr, (checkPassed_iff _ _).mpr hp⟩
    by_cases hc : SubmittedFromTerminal wf h ∧ ∃ o l, recordedOutcome wf h = some (o, l) ∧ CheckPassed k.expectExitCode o
    · rw [if_pos (hiff.mpr hc), if_pos hc]
    · rw [if_neg (fun hx => hc (hiff.mp hx)), if_neg hc]

/-- For a workflow that loads and any events, the outcome the checker's summary counts is the
specification's. -/
theorem State.outcomes_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) : (st0.after h).outcomeValue = Spec.outcome wf h :=
  State.outcome_spec (State.after_agrees hc h) (State.after_outcomeAgrees hc h)

end Lar
