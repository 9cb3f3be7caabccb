/-
Lean4 Agentic: the definitions of docs/rewards.md in Lean 4, with theorems
about them, and the protocol of the `lar-verify` checker (Main.lean).
-/
import Lar.Glob
import Lar.Num
import Lar.Mcp
import Lar.Schema
import Lar.Tools
import Lar.Checks
import Lar.Rewards
import Lar.Verifier
import Lar.Protocol
