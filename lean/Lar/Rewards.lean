import Lar.Checks

/-
Rewards (docs/rewards.md, "Tool reward", "Stage reward", "Outcome", "Return").
Rewards are integers; the return, which needs the real weights α and β, is
computed as a `Float` for output only (`Lar.Verifier`), and nothing is proved
about floats.
-/
namespace Lar

/-- A failed check of the given level. -/
def failedAt (lvl : Level) (v : Verdict) : Bool := !v.ok && decide (v.check.level = lvl)

/-- r_tool: −1 if any tool-level `error` check failed; otherwise 0 if any other
tool-level check failed; otherwise +1. -/
def toolReward (vs : List Verdict) : Int :=
  if vs.any (fun v => failedAt .tool v && decide (v.check.severity = .error)) then -1
  else if vs.any (failedAt .tool) then 0
  else 1

/-- r_stage: −1 if `stage.transition` failed; otherwise 0 if any other stage-level
check failed; otherwise +1. -/
def stageReward (vs : List Verdict) : Int :=
  if vs.any (fun v => !v.ok && decide (v.check = .stageTransition)) then -1
  else if vs.any (failedAt .stage) then 0
  else 1

/-- o: 1 iff the run ended by a submit from a terminal stage and the outcome check passed. -/
def outcomeReward (ended submittedFromTerminal checkPassed : Bool) : Int :=
  if ended && submittedFromTerminal && checkPassed then 1 else 0

theorem toolReward_cases (vs : List Verdict) :
    toolReward vs = -1 ∨ toolReward vs = 0 ∨ toolReward vs = 1 := by
  unfold toolReward
  split
  · exact Or.inl rfl
  · split
    · exact Or.inr (Or.inl rfl)
    · exact Or.inr (Or.inr rfl)

theorem stageReward_cases (vs : List Verdict) :
    stageReward vs = -1 ∨ stageReward vs = 0 ∨ stageReward vs = 1 := by
  unfold stageReward
  split
  · exact Or.inl rfl
  · split
    · exact Or.inr (Or.inl rfl)
    · exact Or.inr (Or.inr rfl)

theorem outcomeReward_cases (e s c : Bool) :
    outcomeReward e s c = 0 ∨ outcomeReward e s c = 1 := by
  unfold outcomeReward
  split
  · exact Or.inr rfl
  · exact Or.inl rfl

theorem toolReward_bounds (vs : List Verdict) : -1 ≤ toolReward vs ∧ toolReward vs ≤ 1 := by
  rcases toolReward_cases vs with h | h | h <;> constructor <;> omega

theorem stageReward_bounds (vs : List Verdict) : -1 ≤ stageReward vs ∧ stageReward vs ≤ 1 := by
  rcases stageReward_cases vs with h | h | h <;> constructor <;> omega

/-- The tool reward is +1 exactly when no tool-level check failed. -/
theorem toolReward_eq_one_iff (vs : List Verdict) :
    toolReward vs = 1 ↔ ∀ v ∈ vs, failedAt .tool v = false := by
  unfold toolReward
  by_cases h1 : vs.any (fun v => failedAt .tool v && decide (v.check.severity = .error)) = true
  · have h2 : vs.any (failedAt .tool) = true := by
      rw [List.any_eq_true] at h1 ⊢
      obtain ⟨v, hv, hf⟩ := h1
      rw [Bool.and_eq_true] at hf
      exact ⟨v, hv, hf.1⟩
    rw [if_pos h1]
    constructor
    · intro h; omega
    · intro h
      obtain ⟨v, hv, hf⟩ := List.any_eq_true.mp h2
      rw [h v hv] at hf
      cases hf
  · rw [if_neg h1]
    by_cases h2 : vs.any (failedAt .tool) = true
    · rw [if_pos h2]
      constructor
      · intro h; omega
      · intro h
        obtain ⟨v, hv, hf⟩ := List.any_eq_true.mp h2
        rw [h v hv] at hf
        cases hf
    · rw [if_neg h2]
      constructor
      · intro _ v hv
        cases hf : failedAt .tool v
        · rfl
        · exact absurd (List.any_eq_true.mpr ⟨v, hv, hf⟩) h2
      · intro _; rfl

/-! ## Sums of rewards -/

def sumInt : List Int → Int
  | [] => 0
  | r :: rs => r + sumInt rs

/-- A sum of n rewards, each in [−1, 1], lies in [−n, n]. -/
theorem sum_bounded : ∀ rs : List Int, (∀ r ∈ rs, -1 ≤ r ∧ r ≤ 1) →
    -(rs.length : Int) ≤ sumInt rs ∧ sumInt rs ≤ rs.length
  | [], _ => by simp only [sumInt, List.length_nil]; omega
  | r :: rs, h => by
    obtain ⟨h1, h2⟩ := h r (List.mem_cons.mpr (Or.inl rfl))
    obtain ⟨h3, h4⟩ := sum_bounded rs (fun x hx => h x (List.mem_cons.mpr (Or.inr hx)))
    simp only [sumInt, List.length_cons]
    constructor <;> omega

theorem toolRewards_bounded (vss : List (List Verdict)) :
    -(vss.length : Int) ≤ sumInt (vss.map toolReward) ∧ sumInt (vss.map toolReward) ≤ vss.length := by
  have h := sum_bounded (vss.map toolReward) (fun r hr => by
    obtain ⟨vs, _, rfl⟩ := List.mem_map.mp hr
    exact toolReward_bounds vs)
  rw [List.length_map] at h
  exact h

theorem stageRewards_bounded (vss : List (List Verdict)) :
    -(vss.length : Int) ≤ sumInt (vss.map stageReward) ∧ sumInt (vss.map stageReward) ≤ vss.length := by
  have h := sum_bounded (vss.map stageReward) (fun r hr => by
    obtain ⟨vs, _, rfl⟩ := List.mem_map.mp hr
    exact stageReward_bounds vs)
  rw [List.length_map] at h
  exact h

end Lar
