import LarProofs.SpecOutcome

/-!
# The checker's return is the specification's

`Lar.Spec.returnParts` says what the return after a history is made of, from the specification's
own lists of rewards. This file proves that the checker's running sums are the sums of those lists
(`State.after_sumsAgree`) and that the parts its summary reads are exactly the specification's
(`State.returnParts_spec`), so R, the exact number `LarProofs.Return` bounds, is the specification's
return (`State.return_spec`).
-/

namespace Lar
open Lean Spec

/-! ## Sums -/

/-- The sum of `a ++ b` is the sum of `a` plus the sum of `b`. -/
theorem sumInt_append : ∀ (a b : List Int), sumInt (a ++ b) = sumInt a + sumInt b
  | [], b => by
    show sumInt b = 0 + sumInt b
    rw [Int.zero_add]
  | x :: a, b => by
    show x + sumInt (a ++ b) = (x + sumInt a) + sumInt b
    rw [sumInt_append a b, Int.add_assoc]

/-! ## The specification, one event at a time -/

/-- The tool rewards after a call: its `stepReward`, then those before. -/
theorem Spec.toolRewards_call (wf : Workflow) (sb : Option SandboxRecord) (l : Nat) (c : ToolCall) (h : History) :
    toolRewards wf sb ((l, .toolCall c) :: h) = stepReward wf sb h c :: toolRewards wf sb h := rfl

/-- An event that is no call leaves the tool rewards and the closed visits' rewards as they were. -/
theorem Spec.rewards_quiet {wf : Workflow} {sb : Option SandboxRecord} {h : History} {l : Nat} {e : Event}
    (he : ∀ c, e ≠ .toolCall c) :
    toolRewards wf sb ((l, e) :: h) = toolRewards wf sb h ∧ closedRewards wf ((l, e) :: h) = closedRewards wf h := by
  cases e with
  | toolCall c => exact absurd rfl (he c)
  | message => exact ⟨rfl, rfl⟩
  | outcome _ => exact ⟨rfl, rfl⟩
  | compaction => exact ⟨rfl, rfl⟩
  | restore => exact ⟨rfl, rfl⟩
  | tokens => exact ⟨rfl, rfl⟩
  | mcpTools _ _ => exact ⟨rfl, rfl⟩
  | finish => exact ⟨rfl, rfl⟩

/-! ## What a call adds to the closed visits -/

/-- Once the run has ended, a call closes no visit. -/
theorem State.moveVisit_none_sums (st : State) (c : ToolCall) (line : Nat) (hv : st.visit = none) :
    (st.moveVisit c line).1.stageSum = st.stageSum ∧ (st.moveVisit c line).1.stageCount = st.stageCount := by
  rw [State.moveVisit_none st c line hv]
  exact ⟨rfl, rfl⟩

/-- A move closes the visit it leaves: one more visit, with that visit's stage reward. -/
theorem State.moveVisit_move_sums (st : State) (c : ToolCall) (line : Nat) (v0 : Visit) (t : Stage)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = some t) :
    (st.moveVisit c line).1.stageSum = st.stageSum + stageReward (scoreVisit st.wf
        { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts } .transition (some t.id)) ∧
      (st.moveVisit c line).1.stageCount = st.stageCount + 1 := by
  unfold State.moveVisit
  rw [hv, ht]
  exact ⟨rfl, rfl⟩

/-- A successful `submit` closes the open visit: one more visit, with its stage reward. -/
theorem State.moveVisit_submit_sums (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = true) :
    (st.moveVisit c line).1.stageSum = st.stageSum + stageReward (scoreVisit st.wf
        { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts } .submit none) ∧
      (st.moveVisit c line).1.stageCount = st.stageCount + 1 := by
  unfold State.moveVisit
  rw [hv, ht, hs]
  exact ⟨rfl, rfl⟩

/-- Any other call closes no visit. -/
theorem State.moveVisit_stay_sums (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = false) :
    (st.moveVisit c line).1.stageSum = st.stageSum ∧ (st.moveVisit c line).1.stageCount = st.stageCount := by
  unfold State.moveVisit
  rw [hv, ht, hs]
  exact ⟨rfl, rfl⟩

/-! ## The running sums -/

/-- The state `State.create` makes has no reward yet. -/
theorem SumsAgree.init {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st : State}
    (hc : State.create wf headerLine sb = .ok st) : SumsAgree wf sb [] st := by
  obtain ⟨_, _, rfl⟩ := State.create_state hc
  exact ⟨rfl, rfl, rfl, rfl⟩

/-- The closed visits' rewards after a call: the visit it closes, if any, then those before. -/
theorem Spec.closedRewards_call (wf : Workflow) (l : Nat) (c : ToolCall) (h : History) :
    closedRewards wf ((l, .toolCall c) :: h) =
      (match current wf h, movesTo wf c with
       | some s, some t => [visitReward wf s (c :: visitCalls wf h) .transition (some t.id)]
       | some s, none =>
         if c.tool = "submit" ∧ c.status = .ok then [visitReward wf s (c :: visitCalls wf h) .submit none] else []
       | none, _ => []) ++ closedRewards wf h := rfl

/-- What a call adds to the closed visits: the specification's new entries `X` (the visit it closes,
if any), whose sum and number the checker adds to its running sum and count. -/
theorem SumsAgree.call_closed {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (line : Nat) (c : ToolCall) :
    ∃ X : List Int, closedRewards wf ((line, .toolCall c) :: h) = X ++ closedRewards wf h ∧
      (({ st with failed := {} } : State).moveVisit c line).1.stageSum = st.stageSum + sumInt X ∧
      (({ st with failed := {} } : State).moveVisit c line).1.stageCount = st.stageCount + X.length := by
  have hmv := A.movesTo_eq c
  rcases option_none_or_some st.visit with hv0 | ⟨v0, hv0⟩
  · have hx : Ended wf h := A.ended_of_visit_none hv0
    obtain ⟨e1, e2⟩ := State.moveVisit_none_sums { st with failed := {} } c line hv0
    refine ⟨[], ?_, ?_, ?_⟩
    · rw [Spec.closedRewards_call, current_of_ended hx] <;> rfl
    · rw [e1]
      show st.stageSum = st.stageSum + 0
      rw [Int.add_zero]
    · rw [e2] <;> rfl
  · have hx : ¬Ended wf h := (A.current_of_visit_some hv0).1
    have hcur : current wf h = some v0.stage := (A.current_of_visit_some hv0).2
    obtain ⟨h1, h2⟩ := V v0 hv0
    have hsteps : ({ v0 with steps := v0.steps + 1, facts := stepFact wf c :: v0.facts } : Visit).steps =
        (c :: visitCalls wf h).length := by
      show v0.steps + 1 = (c :: visitCalls wf h).length
      rw [h1] <;> rfl
    have hfacts : ({ v0 with steps := v0.steps + 1, facts := stepFact wf c :: v0.facts } : Visit).facts =
        (c :: visitCalls wf h).map (stepFact wf) := by
      show stepFact wf c :: v0.facts = (c :: visitCalls wf h).map (stepFact wf)
      rw [h2] <;> rfl
    cases ht : enterTarget st.wf c with
    | some t =>
      obtain ⟨e1, e2⟩ := State.moveVisit_move_sums { st with failed := {} } c line v0 t hv0 ht
      refine ⟨[visitReward wf v0.stage (c :: visitCalls wf h) .transition (some t.id)], ?_, ?_, ?_⟩
      · rw [Spec.closedRewards_call, hcur, hmv, ht] <;> rfl
      · rw [e1]
        show st.stageSum + stageReward (scoreVisit st.wf
            { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts } .transition (some t.id)) =
          st.stageSum + (visitReward wf v0.stage (c :: visitCalls wf h) .transition (some t.id) + 0)
        rw [A.wf_eq, stageReward_spec wf { v0 with steps := v0.steps + 1, facts := stepFact wf c :: v0.facts } .transition (some t.id)
            (c :: visitCalls wf h) hsteps hfacts, Int.add_zero] <;> rfl
      · rw [e2] <;> rfl
    | none =>
      cases hs : (c.status == .ok && c.tool == "submit") with
      | true =>
        obtain ⟨e1, e2⟩ := State.moveVisit_submit_sums { st with failed := {} } c line v0 hv0 ht hs
        refine ⟨[visitReward wf v0.stage (c :: visitCalls wf h) .submit none], ?_, ?_, ?_⟩
        · rw [Spec.closedRewards_call, hcur, hmv, ht]
          show (if c.tool = "submit" ∧ c.status = .ok then [visitReward wf v0.stage (c :: visitCalls wf h) .submit none]
            else []) ++ closedRewards wf h = _
          rw [if_pos ((submitB_iff c).mp hs)] <;> rfl
        · rw [e1]
          show st.stageSum + stageReward (scoreVisit st.wf
              { v0 with steps := v0.steps + 1, facts := stepFact st.wf c :: v0.facts } .submit none) =
            st.stageSum + (visitReward wf v0.stage (c :: visitCalls wf h) .submit none + 0)
          rw [A.wf_eq, stageReward_spec wf { v0 with steps := v0.steps + 1, facts := stepFact wf c :: v0.facts } .submit none
              (c :: visitCalls wf h) hsteps hfacts, Int.add_zero] <;> rfl
        · rw [e2] <;> rfl
      | false =>
        obtain ⟨e1, e2⟩ := State.moveVisit_stay_sums { st with failed := {} } c line v0 hv0 ht hs
        have hnot : ¬(c.tool = "submit" ∧ c.status = .ok) := fun hx' => by
          rw [(submitB_iff c).mpr hx'] at hs
          cases hs
        refine ⟨[], ?_, ?_, ?_⟩
        · rw [Spec.closedRewards_call, hcur, hmv, ht]
          show (if c.tool = "submit" ∧ c.status = .ok then [visitReward wf v0.stage (c :: visitCalls wf h) .submit none]
            else []) ++ closedRewards wf h = _
          rw [if_neg hnot] <;> rfl
        · rw [e1]
          show st.stageSum = st.stageSum + 0
          rw [Int.add_zero]
        · rw [e2] <;> rfl

/-- A call keeps the running sums those of the specification's lists. -/
theorem SumsAgree.call {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (S : SumsAgree wf sb h st) (line : Nat) (c : ToolCall) :
    SumsAgree wf sb ((line, .toolCall c) :: h) (st.appendCall c line).1 := by
  obtain ⟨ht1, ht2, hs1, hs2⟩ := S
  obtain ⟨X, hX, e1, e2⟩ := SumsAgree.call_closed A V line c
  have hsum : (st.appendCall c line).1.stageSum = (({ st with failed := {} } : State).moveVisit c line).1.stageSum := rfl
  have hcnt : (st.appendCall c line).1.stageCount =
      (({ st with failed := {} } : State).moveVisit c line).1.stageCount := rfl
  refine ⟨?_, ?_, ?_, ?_⟩
  · show st.toolSum + Lar.toolReward (st.callVerdicts c) = _
    rw [Spec.toolRewards_call, State.callReward_spec A c, ht1]
    show sumInt (toolRewards wf sb h) + stepReward wf sb h c = stepReward wf sb h c + sumInt (toolRewards wf sb h)
    rw [Int.add_comm (sumInt (toolRewards wf sb h))]
  · show st.steps + 1 = _
    rw [Spec.toolRewards_call, ht2] <;> rfl
  · rw [hsum, e1, hX, sumInt_append, hs1, Int.add_comm (sumInt (closedRewards wf h))]
  · rw [hcnt, e2, hX, List.length_append, hs2, Nat.add_comm (closedRewards wf h).length]

/-- One event of any kind keeps the running sums those of the specification's lists. -/
theorem SumsAgree.step {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (S : SumsAgree wf sb h st) (line : Nat) (e : Event) :
    SumsAgree wf sb ((line, e) :: h) (st.append line e).1 := by
  by_cases hcall : ∃ c, e = .toolCall c
  · obtain ⟨c, rfl⟩ := hcall
    exact SumsAgree.call A V S line c
  · have hq : ∀ c, e ≠ .toolCall c := fun c hc' => hcall ⟨c, hc'⟩
    have hsame : (st.append line e).1.toolSum = st.toolSum ∧ (st.append line e).1.steps = st.steps ∧
        (st.append line e).1.stageSum = st.stageSum ∧ (st.append line e).1.stageCount = st.stageCount := by
      cases e with
      | toolCall c => exact absurd rfl (hq c)
      | outcome _ => exact ⟨rfl, rfl, rfl, rfl⟩
      | mcpTools _ _ => exact ⟨rfl, rfl, rfl, rfl⟩
      | message => exact ⟨rfl, rfl, rfl, rfl⟩
      | compaction => exact ⟨rfl, rfl, rfl, rfl⟩
      | restore => exact ⟨rfl, rfl, rfl, rfl⟩
      | tokens => exact ⟨rfl, rfl, rfl, rfl⟩
      | finish => exact ⟨rfl, rfl, rfl, rfl⟩
    obtain ⟨q1, q2⟩ := Spec.rewards_quiet (wf := wf) (sb := sb) (h := h) (l := line) hq
    obtain ⟨ht1, ht2, hs1, hs2⟩ := S
    exact ⟨hsame.1.trans (ht1.trans (congrArg sumInt q1.symm)), hsame.2.1.trans (ht2.trans (congrArg List.length q1.symm)),
      hsame.2.2.1.trans (hs1.trans (congrArg sumInt q2.symm)),
      hsame.2.2.2.trans (hs2.trans (congrArg List.length q2.symm))⟩

/-- For a workflow that loads, after any events the checker's running sums and counts are those of
the specification's lists of rewards. -/
theorem State.after_sumsAgree {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) : ∀ h : History, SumsAgree wf sb h (st0.after h)
  | [] => SumsAgree.init hc
  | (line, e) :: h =>
    SumsAgree.step (State.after_agrees hc h) (State.after_visitAgrees hc h) (State.after_sumsAgree hc h) line e

/-! ## The return -/

/-- The parts of the return the checker's summary reads are the specification's. -/
theorem State.returnParts_spec {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (V : VisitAgrees wf h st) (O : OutcomeAgrees wf h st) (S : SumsAgree wf sb h st) :
    st.returnParts = Spec.returnParts wf sb h := by
  obtain ⟨ht1, ht2, hs1, hs2⟩ := S
  have hopen : st.openScore.2 = sumInt (openRewards wf h) ∧ st.openScore.1.length = (openRewards wf h).length := by
    by_cases hx : Ended wf h
    · have hv : st.visit = none := by
        cases hv : st.visit with
        | none => rfl
        | some v => exact absurd (A.visit_isSome.mp (by rw [hv] <;> rfl)) (not_not_intro hx)
      have hoe : openRewards wf h = [] := by
        unfold openRewards
        rw [current_of_ended hx] <;> rfl
      rw [hoe]
      unfold State.openScore
      rw [hv]
      exact ⟨rfl, rfl⟩
    · have hsome : (current wf h).isSome = true := (Spec.current_isSome A.start_ok).mpr hx
      obtain ⟨s, hs⟩ : ∃ s, current wf h = some s := by
        cases hcs : current wf h with
        | none =>
          rw [hcs] at hsome
          cases hsome
        | some s => exact ⟨s, rfl⟩
      have hoe : openRewards wf h = [visitReward wf s (visitCalls wf h) .runEnd none] := by
        unfold openRewards
        rw [hs] <;> rfl
      obtain ⟨v0, hv0, _⟩ := A.visit_stage s hs
      refine ⟨?_, ?_⟩
      · rw [State.openScore_spec A V s hs, hoe]
        show _ = visitReward wf s (visitCalls wf h) .runEnd none + 0
        rw [Int.add_zero]
      · rw [hoe]
        unfold State.openScore
        rw [hv0] <;> rfl
  show ({ outcome := st.outcomeValue, stageSum := st.stageSum + st.openScore.2,
      visits := st.stageCount + st.openScore.1.length, toolSum := st.toolSum, steps := st.steps } : ReturnParts) =
    { outcome := Spec.outcome wf h, stageSum := sumInt (closedRewards wf h ++ openRewards wf h),
      visits := (closedRewards wf h ++ openRewards wf h).length, toolSum := sumInt (toolRewards wf sb h),
      steps := (toolRewards wf sb h).length }
  rw [State.outcome_spec A O, hopen.1, hopen.2, hs1, hs2, ht1, ht2, sumInt_append, List.length_append]

/-- For a workflow that loads and any events, the parts of the return the checker's summary reads
(whose double is its `return`, `State.summary_return`) are the specification's `Spec.returnParts`:
o, the stage rewards of every visit and the tool rewards of every step, with their numbers. -/
theorem State.return_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) :
    (st0.after h).returnParts = Spec.returnParts wf sb h :=
  State.returnParts_spec (State.after_agrees hc h) (State.after_visitAgrees hc h) (State.after_outcomeAgrees hc h)
    (State.after_sumsAgree hc h)

/-! ## R with the workflow's own weights -/

/-- A power of ten is positive. -/
theorem ten_pow_pos : ∀ n : Nat, 0 < 10 ^ n
  | 0 => by decide
  | n + 1 => by
    rw [Nat.pow_succ]
    exact Nat.mul_pos (ten_pow_pos n) (by decide)

/-- The headline on R: for a workflow that loads, whose weights are not negative (`Workflow.fromJson?`
refuses negative ones), and any events `h`, the specification's return R after `h`, with the
workflow's α = a/10^E and β = b/10^E (`weightsOver`), is N / D with D > 0 and
−(a+b)·P·Q ≤ N ≤ (10^E+a+b)·P·Q, D = 10^E·P·Q: that is, −(α+β) ≤ R ≤ 1+α+β. It is the return
whose double the checker's summary prints (`State.return_spec`, `State.summary_return`). -/
theorem Spec.return_bounds {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) (ha : 0 ≤ wf.rewards.alpha.mantissa)
    (hb : 0 ≤ wf.rewards.beta.mantissa) :
    let w := weightsOver wf
    let p := Spec.returnParts wf sb h
    0 < p.den w.2.2 ∧
      -((w.1 + w.2.1) * ((divisor p.visits : Int) * (divisor p.steps : Int))) ≤ p.num w.1 w.2.1 w.2.2 ∧
      p.num w.1 w.2.1 w.2.2 ≤ ((w.2.2 : Int) + w.1 + w.2.1) * ((divisor p.visits : Int) * (divisor p.steps : Int)) := by
  intro w p
  have hp : p = (st0.feed h.reverse).returnParts := by
    show Spec.returnParts wf sb h = _
    rw [State.feed_reverse, State.return_spec hc h]
  -- Not `by omega`: omega rewrites `↑(10 ^ k)` to `(10 : Int) ^ k`, an atom it knows nothing about.
  have hw1 : 0 ≤ w.1 := Int.mul_nonneg ha (Int.ofNat_nonneg _)
  have hw2 : 0 ≤ w.2.1 := Int.mul_nonneg hb (Int.ofNat_nonneg _)
  have hd : 0 < w.2.2 := ten_pow_pos _
  rw [hp]
  exact ⟨ReturnParts.den_pos _ _ hd, State.return_bounds hc h.reverse w.1 w.2.1 w.2.2 hw1 hw2⟩

end Lar
