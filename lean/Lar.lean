/-
Lean4 Agentic: the definitions of docs/rewards.md in Lean 4 and the protocol of the `lar-verify`
checker (Main.lean). Definitions only: what is proved about them is in `LarProofs`, which imports
this library and is never imported by it.
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
