/-
What is proved about the checker in `Lar`: for each check the proposition it decides and the
theorem that it does, the rewards, the gate, the return, and the independent specification of
docs/rewards.md (`Lar/Spec/`) with the theorem that the checker computes it. docs/lean.md lists
what a reader may trust. `lar-verify` does not import any of this.
-/
import Lar.Spec.Checks
import LarProofs.Glob
import LarProofs.Tools
import LarProofs.Checks
import LarProofs.Rewards
import LarProofs.Verifier
import LarProofs.Gate
import LarProofs.Return
import Lar.Spec.Trajectory
import Lar.Spec.Run
import Lar.Spec.Verdicts
import LarProofs.Spec
import LarProofs.SpecExits
import LarProofs.SpecVisits
import LarProofs.SpecOutcome
import LarProofs.SpecReturn
import LarProofs.SpecVerdicts
import LarProofs.SpecTable
import LarProofs.Guards
