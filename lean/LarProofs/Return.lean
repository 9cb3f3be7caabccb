import Lar.Verifier
import LarProofs.Verifier

/-!
The return (docs/rewards.md, "Return"): R = o + α·mean(S) + β·mean(T), with S the stage rewards of
all visits (the open one included), T the tool rewards of all steps, and mean(∅) = 0.

The checker prints R as a double (`ReturnParts.toFloat`, in the TypeScript code's order of
operations); nothing is proved about floats. What is proved is about the exact number, over the
integers with a common denominator (core Lean has `Rat`, but its order lemmas would carry this proof
and integer `omega` does not need them): for weights α = a/d and β = b/d (a, b ≥ 0, d > 0, as every
decimal weight can be written), with P = max(#visits, 1) and Q = max(#steps, 1),

    D·R = N,  D = d·P·Q > 0,  N = o·d·P·Q + a·Q·S + b·P·T

(a mean over nothing is 0 and so is a sum over nothing, so S/P and T/Q are the means in every case).
`return_num_bounds` proves −(a+b)·P·Q ≤ N ≤ (d+a+b)·P·Q whenever o ∈ {0, 1}, S ∈ [−#visits,
#visits] and T ∈ [−#steps, #steps]; dividing by D > 0 this is exactly −(α+β) ≤ R ≤ 1+α+β.
`State.return_bounds` applies it to what the summary of any state the checker reaches reads
(`State.returnParts`, whose double is the summary's `return`: `State.summary_return`).
-/

namespace Lar
open Lean

/-- A count is at most its divisor. -/
theorem le_divisor (n : Nat) : n ≤ divisor n := by
  unfold divisor
  split <;> omega

/-- A divisor is positive. -/
theorem divisor_pos (n : Nat) : 0 < divisor n := by
  unfold divisor
  split <;> omega

/-- The common denominator of the return is positive when d is. -/
theorem ReturnParts.den_pos (p : ReturnParts) (d : Nat) (hd : 0 < d) : 0 < p.den d := by
  unfold ReturnParts.den
  have hP := divisor_pos p.visits
  have hQ := divisor_pos p.steps
  exact Int.mul_pos (Int.mul_pos (by omega) (by omega)) (by omega)

/-- A weight `w ≥ 0` times a sum `S ∈ [−n, n]` lies in `[−w·n, w·n]`. -/
theorem weighted_sum_bounds (w S : Int) (n : Nat) (hw : 0 ≤ w) (h : -(n : Int) ≤ S ∧ S ≤ n) :
    -(w * n) ≤ w * S ∧ w * S ≤ w * n := by
  have h1 : w * -(n : Int) ≤ w * S := Int.mul_le_mul_of_nonneg_left h.1 hw
  have h2 : w * S ≤ w * (n : Int) := Int.mul_le_mul_of_nonneg_left h.2 hw
  rw [Int.mul_neg] at h1
  exact ⟨h1, h2⟩

/-- The bound on R, multiplied out: for o ∈ {0, 1}, a, b ≥ 0, S ∈ [−n, n] and T ∈ [−m, m], with
P = `divisor n` and Q = `divisor m`, N = o·d·P·Q + a·Q·S + b·P·T lies in [−(a+b)·P·Q, (d+a+b)·P·Q]. -/
theorem return_num_bounds (o a b S T : Int) (d n m : Nat) (ho : o = 0 ∨ o = 1) (ha : 0 ≤ a) (hb : 0 ≤ b)
    (hS : -(n : Int) ≤ S ∧ S ≤ n) (hT : -(m : Int) ≤ T ∧ T ≤ m) :
    -((a + b) * ((divisor n : Int) * (divisor m : Int))) ≤
        o * ((d : Int) * (divisor n : Int) * (divisor m : Int)) + a * (divisor m : Int) * S +
          b * (divisor n : Int) * T ∧
      o * ((d : Int) * (divisor n : Int) * (divisor m : Int)) + a * (divisor m : Int) * S +
          b * (divisor n : Int) * T ≤ ((d : Int) + a + b) * ((divisor n : Int) * (divisor m : Int)) := by
  have hn := le_divisor n
  have hm := le_divisor m
  have hS' : -((divisor n : Nat) : Int) ≤ S ∧ S ≤ ((divisor n : Nat) : Int) := ⟨by omega, by omega⟩
  have hT' : -((divisor m : Nat) : Int) ≤ T ∧ T ≤ ((divisor m : Nat) : Int) := ⟨by omega, by omega⟩
  have h1 := weighted_sum_bounds (a * (divisor m : Int)) S (divisor n) (Int.mul_nonneg ha (by omega)) hS'
  have h2 := weighted_sum_bounds (b * (divisor n : Int)) T (divisor m) (Int.mul_nonneg hb (by omega)) hT'
  have hD : 0 ≤ (d : Int) * ((divisor n : Int) * (divisor m : Int)) :=
    Int.mul_nonneg (by omega) (Int.mul_nonneg (by omega) (by omega))
  have e1 : a * (divisor m : Int) * (divisor n : Int) = a * ((divisor n : Int) * (divisor m : Int)) := by
    rw [Int.mul_assoc, Int.mul_comm (divisor m : Int)]
  have e2 : b * (divisor n : Int) * (divisor m : Int) = b * ((divisor n : Int) * (divisor m : Int)) :=
    Int.mul_assoc _ _ _
  have e3 : (d : Int) * (divisor n : Int) * (divisor m : Int) = (d : Int) * ((divisor n : Int) * (divisor m : Int)) :=
    Int.mul_assoc _ _ _
  have e4 : ((d : Int) + a + b) * ((divisor n : Int) * (divisor m : Int)) =
      (d : Int) * ((divisor n : Int) * (divisor m : Int)) + a * ((divisor n : Int) * (divisor m : Int)) +
        b * ((divisor n : Int) * (divisor m : Int)) := by
    rw [Int.add_mul, Int.add_mul]
  have e5 : (a + b) * ((divisor n : Int) * (divisor m : Int)) =
      a * ((divisor n : Int) * (divisor m : Int)) + b * ((divisor n : Int) * (divisor m : Int)) :=
    Int.add_mul _ _ _
  obtain ⟨h1a, h1b⟩ := h1
  obtain ⟨h2a, h2b⟩ := h2
  rcases ho with rfl | rfl
  · rw [Int.zero_mul]
    constructor <;> omega
  · rw [Int.one_mul]
    constructor <;> omega

/-- The outcome the summary counts is 0 or 1. -/
theorem State.outcomeValue_cases (st : State) : st.outcomeValue = 0 ∨ st.outcomeValue = 1 := by
  unfold State.outcomeValue
  cases st.wf.outcome with
  | command k => exact outcomeReward_cases _ _ _
  | external _ => exact Or.inl rfl

/-- The open visit adds one visit with a reward in [−1, 1], or nothing once the run has ended. -/
theorem State.openScore_cases (st : State) :
    (st.openScore.1.length = 1 ∧ -1 ≤ st.openScore.2 ∧ st.openScore.2 ≤ 1) ∨
      (st.openScore.1.length = 0 ∧ st.openScore.2 = 0) := by
  unfold State.openScore
  cases st.visit with
  | none => exact Or.inr ⟨rfl, rfl⟩
  | some v => exact Or.inl ⟨rfl, stageReward_bounds _⟩

/-- In a state whose running sums are bounded (every state the checker reaches: `State.feed_bounded`),
the parts of the return are in range: S ∈ [−#visits, #visits] and T ∈ [−#steps, #steps]. -/
theorem State.returnParts_bounded (st : State) (h : st.Bounded) :
    (-(st.returnParts.visits : Int) ≤ st.returnParts.stageSum ∧ st.returnParts.stageSum ≤ st.returnParts.visits) ∧
      (-(st.returnParts.steps : Int) ≤ st.returnParts.toolSum ∧ st.returnParts.toolSum ≤ st.returnParts.steps) := by
  obtain ⟨⟨h1, h2⟩, ⟨h3, h4⟩⟩ := h
  show (-((st.stageCount + st.openScore.1.length : Nat) : Int) ≤ st.stageSum + st.openScore.2 ∧
      st.stageSum + st.openScore.2 ≤ ((st.stageCount + st.openScore.1.length : Nat) : Int)) ∧
    (-(st.steps : Int) ≤ st.toolSum ∧ st.toolSum ≤ st.steps)
  rcases State.openScore_cases st with ⟨hl, hr1, hr2⟩ | ⟨hl, hr⟩
  · exact ⟨⟨by omega, by omega⟩, h1, h2⟩
  · exact ⟨⟨by omega, by omega⟩, h1, h2⟩

/-- The headline on R: in every state the checker reaches from a loaded workflow, for weights
α = a/d and β = b/d with a, b ≥ 0, the numerator N of the return over its common denominator
D = `den` > 0 (for d > 0) lies in [−(a+b)·P·Q, (d+a+b)·P·Q], D = d·P·Q: that is,
−(α+β) ≤ R ≤ 1+α+β for R = N/D = o + α·mean(S) + β·mean(T). -/
theorem State.return_bounds {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (evs : List (Nat × Event)) (a b : Int) (d : Nat)
    (ha : 0 ≤ a) (hb : 0 ≤ b) :
    let p := (st0.feed evs).returnParts
    -((a + b) * ((divisor p.visits : Int) * (divisor p.steps : Int))) ≤ p.num a b d ∧
      p.num a b d ≤ ((d : Int) + a + b) * ((divisor p.visits : Int) * (divisor p.steps : Int)) := by
  intro p
  obtain ⟨hS, hT⟩ := State.returnParts_bounded (st0.feed evs) (State.feed_bounded hc evs)
  exact return_num_bounds p.outcome a b p.stageSum p.toolSum d p.visits p.steps
    (State.outcomeValue_cases (st0.feed evs)) ha hb hS hT

/-- The summary's `return` is the double of those same parts (`ReturnParts.toFloat`, with the
state's α and β as doubles). That the parts are the specification's is `State.return_spec`; that the
exact return they make with the workflow's own weights is in [−(α+β), 1+α+β] is `Spec.return_bounds`.
Nothing is proved about the double. -/
theorem State.summary_return (st : State) :
    ("return", Num.floatToJson (st.returnParts.toFloat st.alpha st.beta)) ∈ st.summaryFields := by
  unfold State.summaryFields
  exact List.mem_append_left _
    (List.Mem.tail _ (List.Mem.tail _ (List.Mem.tail _ (List.Mem.tail _ (List.Mem.tail _ (List.Mem.head _))))))

end Lar
