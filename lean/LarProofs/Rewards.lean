import Lar.Rewards
import LarProofs.Checks

/-!
Rewards: the cases and bounds of the tool, stage and outcome rewards, when the tool reward is −1
or +1, what `toolErr` makes of the verdicts the checker builds, and sums of rewards.
-/

namespace Lar
open Lean

/-- `toolErr v` holds exactly when `v` failed and its check is tool-level of severity `error`. -/
theorem toolErr_iff (v : Verdict) :
    toolErr v = true ↔ v.ok = false ∧ v.check.level = .tool ∧ v.check.severity = .error := by
  rw [← CheckId.blocks_iff]
  unfold toolErr
  cases v.ok <;> cases v.check.blocks <;> decide

/-- An error verdict is a failed tool-level verdict. -/
theorem failedAt_of_toolErr {v : Verdict} (h : toolErr v = true) : failedAt .tool v = true := by
  obtain ⟨hok, hl, _⟩ := (toolErr_iff v).mp h
  simp [failedAt, hok, hl]

/-- A tool reward is −1, 0 or 1. -/
theorem toolReward_cases (vs : List Verdict) :
    toolReward vs = -1 ∨ toolReward vs = 0 ∨ toolReward vs = 1 := by
  unfold toolReward
  split
  · exact Or.inl rfl
  · split
    · exact Or.inr (Or.inl rfl)
    · exact Or.inr (Or.inr rfl)

/-- A stage reward is −1, 0 or 1. -/
theorem stageReward_cases (vs : List Verdict) :
    stageReward vs = -1 ∨ stageReward vs = 0 ∨ stageReward vs = 1 := by
  unfold stageReward
  split
  · exact Or.inl rfl
  · split
    · exact Or.inr (Or.inl rfl)
    · exact Or.inr (Or.inr rfl)

/-- The outcome is 0 or 1. -/
theorem outcomeReward_cases (e s c : Bool) :
    outcomeReward e s c = 0 ∨ outcomeReward e s c = 1 := by
  unfold outcomeReward
  split
  · exact Or.inr rfl
  · exact Or.inl rfl

/-- The outcome is 1 exactly when `outcome.submitted` and `outcome.check_passed` hold. -/
theorem outcomeReward_eq_one_iff (ended fromTerminal checkPassed : Bool) :
    outcomeReward ended fromTerminal checkPassed = 1 ↔ Submitted ended fromTerminal ∧ checkPassed = true := by
  unfold outcomeReward Submitted
  cases ended <;> cases fromTerminal <;> cases checkPassed <;> decide

/-- A tool reward lies in [−1, 1]. -/
theorem toolReward_bounds (vs : List Verdict) : -1 ≤ toolReward vs ∧ toolReward vs ≤ 1 := by
  rcases toolReward_cases vs with h | h | h <;> constructor <;> omega

/-- A stage reward lies in [−1, 1]. -/
theorem stageReward_bounds (vs : List Verdict) : -1 ≤ stageReward vs ∧ stageReward vs ≤ 1 := by
  rcases stageReward_cases vs with h | h | h <;> constructor <;> omega

/-- The tool reward is +1 exactly when no tool-level check failed. -/
theorem toolReward_eq_one_iff (vs : List Verdict) :
    toolReward vs = 1 ↔ ∀ v ∈ vs, failedAt .tool v = false := by
  unfold toolReward
  by_cases h1 : vs.any toolErr = true
  · have h2 : vs.any (failedAt .tool) = true := by
      rw [List.any_eq_true] at h1 ⊢
      obtain ⟨v, hv, hf⟩ := h1
      exact ⟨v, hv, failedAt_of_toolErr hf⟩
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

/-- The tool reward is −1 exactly when some verdict is a failed tool-level check
of severity `error`. -/
theorem toolReward_eq_neg_one_iff (vs : List Verdict) : toolReward vs = -1 ↔ vs.any toolErr = true := by
  unfold toolReward
  by_cases h1 : vs.any toolErr = true
  · rw [if_pos h1]
    exact ⟨fun _ => h1, fun _ => rfl⟩
  · rw [if_neg h1]
    constructor
    · intro h
      by_cases h2 : vs.any (failedAt .tool) = true
      · rw [if_pos h2] at h
        omega
      · rw [if_neg h2] at h
        omega
    · intro h
      exact absurd h h1

/-- A verdict built from a decision is an error exactly when its check blocks and the decision is `false`. -/
theorem toolErr_ofBool (check : CheckId) (b : Bool) (p f : String) (path : Option (List String)) :
    toolErr (Verdict.ofBool check b p f path) = (check.blocks && !b) := by
  cases b <;> rfl

/-- A verdict of an error-severity tool check is an error exactly when it fails. -/
theorem toolErr_ofBool_blocks (check : CheckId) (h : check.blocks = true) (b : Bool) (p f : String)
    (path : Option (List String)) : toolErr (Verdict.ofBool check b p f path) = !b := by
  simp only [toolErr_ofBool, h, Bool.true_and]

/-- A verdict of any other check is never an error. -/
theorem toolErr_ofBool_warn (check : CheckId) (h : check.blocks = false) (b : Bool) (p f : String)
    (path : Option (List String)) : toolErr (Verdict.ofBool check b p f path) = false := by
  simp only [toolErr_ofBool, h, Bool.false_and]

/-- De Morgan's law for `Bool`. -/
theorem bool_not_and (a b : Bool) : (!(a && b)) = (!a || !b) := by
  cases a <;> cases b <;> rfl

/-- A sum of n rewards, each in [−1, 1], lies in [−n, n]. -/
theorem sum_bounded : ∀ rs : List Int, (∀ r ∈ rs, -1 ≤ r ∧ r ≤ 1) →
    -(rs.length : Int) ≤ sumInt rs ∧ sumInt rs ≤ rs.length
  | [], _ => by simp only [sumInt, List.length_nil]; omega
  | r :: rs, h => by
    obtain ⟨h1, h2⟩ := h r (List.mem_cons.mpr (Or.inl rfl))
    obtain ⟨h3, h4⟩ := sum_bounded rs (fun x hx => h x (List.mem_cons.mpr (Or.inr hx)))
    simp only [sumInt, List.length_cons]
    constructor <;> omega

/-- The tool rewards of n lists of verdicts sum to a value in [−n, n]. -/
theorem toolRewards_bounded (vss : List (List Verdict)) :
    -(vss.length : Int) ≤ sumInt (vss.map toolReward) ∧ sumInt (vss.map toolReward) ≤ vss.length := by
  have h := sum_bounded (vss.map toolReward) (fun r hr => by
    obtain ⟨vs, _, rfl⟩ := List.mem_map.mp hr
    exact toolReward_bounds vs)
  rw [List.length_map] at h
  exact h

/-- The stage rewards of n lists of verdicts sum to a value in [−n, n]. -/
theorem stageRewards_bounded (vss : List (List Verdict)) :
    -(vss.length : Int) ≤ sumInt (vss.map stageReward) ∧ sumInt (vss.map stageReward) ≤ vss.length := by
  have h := sum_bounded (vss.map stageReward) (fun r hr => by
    obtain ⟨vs, _, rfl⟩ := List.mem_map.mp hr
    exact stageReward_bounds vs)
  rw [List.length_map] at h
  exact h

end Lar
