import Lar.Checks

/-
Rewards (docs/rewards.md, "Tool reward", "Stage reward", "Outcome", "Return").
Rewards are integers; the return, which needs the real weights α and β, is
computed as a `Float` for output only (`Lar.Verifier`). What is proved about them,
the return over exact numbers included, is in `LarProofs.Rewards` and `LarProofs.Return`.
-/
namespace Lar

/-- A failed check of the given level. -/
def failedAt (lvl : Level) (v : Verdict) : Bool := !v.ok && decide (v.check.level = lvl)

/-- A failed tool-level check of severity `error` (`toolErr_iff`). -/
def toolErr (v : Verdict) : Bool := v.check.blocks && !v.ok

/-- r_tool: −1 if any tool-level `error` check failed; otherwise 0 if any other
tool-level check failed; otherwise +1. -/
def toolReward (vs : List Verdict) : Int :=
  if vs.any toolErr then -1
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

/-! ## Sums of rewards -/

def sumInt : List Int → Int
  | [] => 0
  | r :: rs => r + sumInt rs

end Lar
