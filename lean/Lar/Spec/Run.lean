import Lar.Spec.Trajectory

/-!
# The checker over a whole run, and what the headline theorems measure

The definitions the headline theorems of `LarProofs` are stated with, beyond the specification
itself: the checker fed a whole history (`State.after`, `State.feed`, `State.stepResults`), what it
means for a trajectory to conform (`Conforms`: every call passes the checks of severity `error` in
the state it meets) and the checker's acceptance, the agreement of the checker's state with the
specification (`Agrees`, and for the open visit, the outcome and the running sums `VisitAgrees`,
`OutcomeAgrees`, `SumsAgree`), the bounds of the running sums, and the exact return over a common
denominator (`divisor`, `ReturnParts.num`/`den`, `weightsOver`).

Statements only, like the rest of `Lar/Spec/` (test/lean/import-closure.test.ts): with this file
and the specification, every headline statement can be elaborated, in a file that imports only
`Lar/Spec/`, before any proof does.
-/

namespace Lar
open Lean Spec

/-! ## The checker over a history -/

/-- The state after the events of `h` (newest first), fed to `st` one at a time, oldest first. -/
def State.after (st : State) : History → State
  | [] => st
  | (line, e) :: h => ((st.after h).append line e).1

/-- The state after the events `evs`, fed one at a time from `st`. -/
def State.feed (st : State) (evs : List (Nat × Event)) : State :=
  evs.foldl (fun s le => (s.append le.1 le.2).1) st

/-- The step results the checker reports for `evs` (line, event), fed one at a
time from `st`: what `lar-verify` answers to a session's `append` requests. -/
def State.stepResults : State → List (Nat × Event) → List StepResult
  | _, [] => []
  | st, (line, e) :: rest => (st.append line e).2 :: State.stepResults (st.append line e).1 rest

/-! ## Conformance and acceptance -/

/-- What an event asks of the state it meets: a tool call must conform; the other
events ask nothing (an `mcp_tools` line changes what later calls may name, not itself). -/
def EventConforms (st : State) : Event → Prop
  | .toolCall c => CallConforms st.wf st.sandbox st.mcpTools st.currentStage c.toProposed
  | .message => True
  | .outcome _ => True
  | .compaction => True
  | .restore => True
  | .tokens => True
  | .mcpTools _ _ => True
  | .finish => True

/-- The trajectory from state `st` on: every event conforms in the state it meets. -/
def ConformsFrom : State → List (Nat × Event) → Prop
  | _, [] => True
  | st, (line, e) :: rest => EventConforms st e ∧ ConformsFrom (st.append line e).1 rest

/-- The same from the start of a run. -/
def Conforms (wf : Workflow) (headerLine : Nat) (sb : Option SandboxRecord) (evs : List (Nat × Event)) : Prop :=
  ∃ st, State.create wf headerLine sb = .ok st ∧ ConformsFrom st evs

/-- The checker's acceptance: no step it reports scores −1. -/
def acceptsFrom (st : State) (evs : List (Nat × Event)) : Bool :=
  (st.stepResults evs).all fun r => decide (r.toolReward ≠ some (-1))

/-- The checker accepts a trajectory from the start of a run: the workflow loads and no step it
reports scores −1. -/
def accepts (wf : Workflow) (headerLine : Nat) (sb : Option SandboxRecord) (evs : List (Nat × Event)) : Bool :=
  match State.create wf headerLine sb with
  | .ok st => acceptsFrom st evs
  | .error _ => false

/-! ## The checker agrees with the specification -/

/-- The checker's state agrees with the specification after the history `h`: the same record of the
run's end, the same current stage, change epoch, last failure of every call key, MCP tools and
number of steps; and the workflow and sandbox record it was made with. -/
structure Agrees (wf : Workflow) (sb : Option SandboxRecord) (h : History) (st : State) : Prop where
  start_ok : (wf.findStage? wf.start).isSome = true
  wf_eq : st.wf = wf
  sandbox_eq : st.sandbox = sb
  ended_iff : st.ended = true ↔ Ended wf h
  current_eq : st.currentStage = current wf h
  epoch_eq : st.epoch = epoch wf h
  failed_eq : ∀ k, st.failed[k]? = lastFailure wf h k
  mcp_eq : st.mcpTools = offered h
  steps_eq : st.steps = (calls h).length

/-- The open visit's count and facts are those of the specification's steps of the visit. -/
def VisitAgrees (wf : Workflow) (h : History) (st : State) : Prop :=
  ∀ v, st.visit = some v → v.steps = (visitCalls wf h).length ∧ v.facts = (visitCalls wf h).map (stepFact wf)

/-- The checker's record of the submit and of the outcome event that counts are the
specification's. -/
def OutcomeAgrees (wf : Workflow) (h : History) (st : State) : Prop :=
  (st.submittedFromTerminal = true ↔ SubmittedFromTerminal wf h) ∧ st.outcome = recordedOutcome wf h

/-- The checker's running sums and counts are those of the specification's lists of rewards. -/
def SumsAgree (wf : Workflow) (sb : Option SandboxRecord) (h : History) (st : State) : Prop :=
  st.toolSum = sumInt (toolRewards wf sb h) ∧ st.steps = (toolRewards wf sb h).length ∧
    st.stageSum = sumInt (closedRewards wf h) ∧ st.stageCount = (closedRewards wf h).length

/-! ## Bounds and the exact return -/

/-- The running sums are within [−n, n] for their n. -/
def State.Bounded (st : State) : Prop :=
  (-(st.steps : Int) ≤ st.toolSum ∧ st.toolSum ≤ st.steps) ∧
    (-(st.stageCount : Int) ≤ st.stageSum ∧ st.stageSum ≤ st.stageCount)

/-- The count a mean divides by: `max n 1` (mean(∅) = 0, and a sum over nothing is 0). -/
def divisor (n : Nat) : Nat := if n = 0 then 1 else n

/-- N, the numerator of R over the common denominator `ReturnParts.den` (α = a/d, β = b/d). -/
def ReturnParts.num (p : ReturnParts) (a b : Int) (d : Nat) : Int :=
  p.outcome * ((d : Int) * (divisor p.visits : Int) * (divisor p.steps : Int)) +
    a * (divisor p.steps : Int) * p.stageSum + b * (divisor p.visits : Int) * p.toolSum

/-- D = d·P·Q, the common denominator of R: R = N / D. -/
def ReturnParts.den (p : ReturnParts) (d : Nat) : Int :=
  (d : Int) * (divisor p.visits : Int) * (divisor p.steps : Int)

/-- The workflow's weights α and β over one denominator 10^E, E the larger of their decimal
exponents: α = a/10^E and β = b/10^E exactly, for (a, b, 10^E). -/
def weightsOver (wf : Workflow) : Int × Int × Nat :=
  let ea := wf.rewards.alpha.exponent
  let eb := wf.rewards.beta.exponent
  let e := max ea eb
  (wf.rewards.alpha.mantissa * ((10 ^ (e - ea) : Nat) : Int), wf.rewards.beta.mantissa * ((10 ^ (e - eb) : Nat) : Int),
    10 ^ e)

end Lar
