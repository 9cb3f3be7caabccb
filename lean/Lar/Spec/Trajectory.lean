import Lar.Verifier
import Lar.Spec.Checks

/-!
# docs/rewards.md over a whole trajectory

The semantics of a run, stated over the events so far and written from the document, not from the
checker's `State`: each notion below is its own definition (the run has ended, the current stage,
the change epoch, the last failure of a call, the MCP tools offered, the tool reward of a step, the
steps of a visit and its reward, the submit and the outcome event that count, the outcome, and the
parts of the return), by recursion on the history or as a relation over it. `LarProofs.Spec`,
`LarProofs.SpecVisits`, `LarProofs.SpecOutcome` and `LarProofs.SpecReturn` prove that the checker,
fed the same events one at a time with `State.append`, keeps exactly these values and reports
exactly these rewards.

What a single call is, and what a single check says, is read with definitions this file does not
restate: the propositions of `Lar.Spec.Checks` (`CallConforms` and its parts, `AskApplies`,
`FirstMatch`, `Succeeded`, `RanToEnd`, `RanCheck`, `StageTransitionOk`, `Closed`, `WithinBudget`,
`FileMatches`, `CheckPassed`, `Terminal`), which `LarProofs.Checks` and `LarProofs.Gate` prove to be
what the checker decides, and a few of the checker's own per-call definitions, each one sentence of
rewards.md: `changedFiles`, `enterTarget`, `findStage?`, `callKey`, `replaceServerTools`,
`mcpServerPrefix`, `commandArg`, `ToolCall.toProposed`; and
`sumInt` and `ReturnParts` for the parts of the return. The exit conditions are stated here over a
visit's calls (`ExitHolds`), not over the facts the checker keeps of them. This file adds what spans
the run. Like `Lar.Spec.Checks` it holds statements only and imports no proof, so it elaborates, and can
be read, whether or not a proof does (test/lean/import-closure.test.ts).

A `History` is the events after the header with their lines, **the newest first**: `(l, e) :: h` is
`h` followed by the event `e` on line `l`. This file is part of `LarProofs`; `lar-verify` never
imports it.
-/

namespace Lar.Spec
open Lean Lar

/-- The events so far with their lines, the newest first. -/
abbrev History := List (Nat × Event)

/-- The steps (tool calls) among the events, the newest first. -/
def calls : History → List ToolCall
  | [] => []
  | (_, .toolCall c) :: h => c :: calls h
  | _ :: h => calls h

/-- The stage a call moves the run to ("Visit": an `enter_stage` with status `ok` whose `args.stage`
is a string naming a defined stage), if it moves it. -/
def movesTo (wf : Workflow) (c : ToolCall) : Option Stage := enterTarget wf c

/-- A call ends the run ("Visit", "Run ended"): a `submit` with status `ok`. (A call that moves the
run is an `enter_stage`, never a `submit`; the first conjunct says so without comparing the names.) -/
def EndsRun (wf : Workflow) (c : ToolCall) : Prop :=
  movesTo wf c = none ∧ c.tool = "submit" ∧ c.status = .ok

/-- The run has ended: some step so far ended it. -/
def Ended (wf : Workflow) (h : History) : Prop := ∃ c ∈ calls h, EndsRun wf c

/-- The stage the latest move so far went to, if the run was ever moved. -/
def lastMove (wf : Workflow) : History → Option Stage
  | [] => none
  | (_, .toolCall c) :: h => (movesTo wf c).or (lastMove wf h)
  | _ :: h => lastMove wf h

open Classical in
/-- The current stage after `h` ("Visit", "Run ended"): none once the run has ended; otherwise the
stage of the latest move, or the start stage before any move. Every event after `h` is made in it. -/
noncomputable def current (wf : Workflow) (h : History) : Option Stage :=
  if Ended wf h then none else (lastMove wf h).or (wf.findStage? wf.start)

/-- A step changes state ("Changed files"): it changed at least one file, or it is an `enter_stage`
with status `ok`, made while a stage visit is open, whose `args.stage` names a stage. -/
def ChangesState (wf : Workflow) (h : History) (c : ToolCall) : Prop :=
  changedFiles c ≠ [] ∨ (¬Ended wf h ∧ (movesTo wf c).isSome = true)

open Classical in
/-- The change epoch after `h`: the number of its steps that changed state. -/
noncomputable def epoch (wf : Workflow) : History → Nat
  | [] => 0
  | (_, .toolCall c) :: h => epoch wf h + (if ChangesState wf h c then 1 else 0)
  | _ :: h => epoch wf h

open Classical in
/-- The change epoch right after the latest step so far with the key `k` that did not succeed (after
that step's own changes); none when there is no such step. Keys: `callKey` (the tool and the
arguments in a canonical form). -/
noncomputable def lastFailure (wf : Workflow) : History → String → Option Nat
  | [], _ => none
  | (l, .toolCall c) :: h, k =>
    if callKey c.tool c.args = k ∧ ¬Succeeded c then some (epoch wf ((l, .toolCall c) :: h)) else lastFailure wf h k
  | _ :: h, k => lastFailure wf h k

/-- A call with key `k` made after `h` repeats a failure (`tool.not_repeated`): an earlier step with
the same key did not succeed, and the change epoch then (after that step's own changes) is the
epoch now. -/
def RepeatsFailure (wf : Workflow) (h : History) (k : String) : Prop :=
  ∃ newer l c older, h = newer ++ (l, .toolCall c) :: older ∧ callKey c.tool c.args = k ∧ ¬Succeeded c ∧
    epoch wf ((l, .toolCall c) :: older) = epoch wf h

/-- The MCP tools the servers offer after `h` (name, schema digest) ("MCP tools"): each `mcp_tools`
line replaces what its server offered (`replaceServerTools`: the names with its prefix are dropped,
then its tools are added). `Offered` below says which names that makes known, in the words of
rewards.md; `Spec.offered_iff` (LarProofs.Spec) proves the two agree. -/
def offered : History → List (String × String)
  | [] => []
  | (_, .mcpTools server tools) :: h => replaceServerTools (offered h) server tools
  | _ :: h => offered h

/-- The name is offered after `h`, as rewards.md says it: the latest `mcp_tools` line that lists it
is not followed by a line of a server whose prefix it has. -/
def Offered : History → String → Prop
  | [], _ => False
  | (_, .mcpTools server tools) :: h, name =>
    (∃ p ∈ tools, p.1 = name) ∨ (name.startsWith (mcpServerPrefix server) = false ∧ Offered h name)
  | _ :: h, name => Offered h name

/-- A `run_command` that ran (status `ok`, `timeout` or `interrupted`) and ran unconfined
(`tool.sandboxed`): the header does not say the run's container was its sandbox, and the call's
result says it was not sandboxed, or says nothing in a run whose header says it was not confined. -/
def RanUnconfined (sb : Option SandboxRecord) (c : ToolCall) : Prop :=
  c.tool = "run_command" ∧ (c.status = .ok ∨ c.status = .timeout ∨ c.status = .interrupted) ∧
    (∀ r, sb = some r → r.container = false) ∧
    (c.result.sandboxed = some false ∨ (c.result.sandboxed = none ∧ ∃ r, sb = some r ∧ r.confined = false))

/-- The user rejected a command the ask policy sent to them (`tool.approved`): the call has an ask
pattern (`AskApplies` and some ask pattern matches its command) and its status is `denied`. -/
def Rejected (wf : Workflow) (c : ToolCall) : Prop :=
  AskApplies wf c.toProposed ∧ (∃ p, FirstMatch wf.policy.commands.ask (commandArg c.args) p) ∧ c.status = .denied

open Classical in
/-- The tool reward of a step made after `h` ("Tool reward"): −1 when an error check fails, that is
when the call does not conform in the current stage with the MCP tools offered now; otherwise 0 when
a warning check fails (it repeats a failure, the user rejected it at the ask prompt, it ran
unconfined, or it did not succeed); otherwise +1. -/
noncomputable def stepReward (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ToolCall) : Int :=
  if ¬CallConforms wf sb (offered h) (current wf h) c.toProposed then -1
  else if RepeatsFailure wf h (callKey c.tool c.args) ∨ Rejected wf c ∨ RanUnconfined sb c ∨ ¬Succeeded c then 0
  else 1

/-- The trajectory conforms to the workflow: every call of `h` passes the checks of severity `error`
(`CallConforms`: the run is open, a known tool, valid arguments, permitted, and the tool's own
checks) in the stage, and with the MCP tools, the specification says it meets. So no step's tool
reward is −1. -/
def Conforming (wf : Workflow) (sb : Option SandboxRecord) : History → Prop
  | [] => True
  | (_, .toolCall c) :: h => CallConforms wf sb (offered h) (current wf h) c.toProposed ∧ Conforming wf sb h
  | _ :: h => Conforming wf sb h

/-! ## Stage visits -/

/-- The steps of the visit open after `h`, the newest first ("Visit"): the calls since the latest move
(the call that moves the run is the last step of the visit it leaves; the next visit begins with no
step). Read while the run is open. -/
def visitCalls (wf : Workflow) : History → List ToolCall
  | [] => []
  | (_, .toolCall c) :: h => if (movesTo wf c).isSome then [] else c :: visitCalls wf h
  | _ :: h => visitCalls wf h

/-- A call the document counts for a command exit: a `run_command` whose `args.command`, after
`norm`, the pattern matches, and that succeeded (`command_succeeded`, `useRan` false) or ran to an
observed end (`command_ran`, `useRan` true). -/
def CommandGood (useRan : Bool) (pattern : String) (c : ToolCall) : Prop :=
  ((useRan = true ∧ RanToEnd c) ∨ (useRan = false ∧ Succeeded c)) ∧ c.tool = "run_command" ∧
    ∃ cmd, strArg? c.args "command" = some cmd ∧ Matches pattern.toList (normL cmd.toList)

/-- Some call of a visit's `calls` (oldest first) is good and, with `afterLastChange`, no later call
of the visit changed a file (a good call that changed a file counts as after its own change). -/
def GoodSinceChange (good : ToolCall → Prop) (afterLastChange : Bool) : List ToolCall → Prop
  | [] => False
  | c :: rest =>
    (good c ∧ (afterLastChange = true → ∀ d ∈ rest, changedFiles d = [])) ∨ GoodSinceChange good afterLastChange rest

open Classical in
/-- How many of the calls are calls of `tool` that succeeded. -/
noncomputable def succeededCalls (tool : String) : List ToolCall → Nat
  | [] => 0
  | c :: rest => succeededCalls tool rest + (if c.tool = tool ∧ Succeeded c then 1 else 0)

/-- An exit condition holds over the calls of a visit, oldest first, in the words of the stage-visit
table: at least `atLeast` calls of `tool` succeeded; a `run_command` matching the pattern succeeded
(or ran to an observed end) with no file changed after it when `afterLastChange`; a call changed a
file that counts; a call ran the workflow's outcome command itself, tests and all (`RanCheck`), with
no file changed after it when `afterLastChange`. `LarProofs.SpecExits` proves it is the checker's
`ExitMet` over the facts `stepFact` keeps of the steps. -/
noncomputable def ExitHolds (wf : Workflow) : ExitCondition → List ToolCall → Prop
  | .toolSucceeded tool n, calls => n ≤ succeededCalls tool calls
  | .commandSucceeded p alc, calls => GoodSinceChange (CommandGood false p) alc calls
  | .commandRan p alc, calls => GoodSinceChange (CommandGood true p) alc calls
  | .fileChanged p, calls => ∃ c ∈ calls, ∃ x ∈ changedFiles c, FileMatches p x
  | .outcomeRan alc, calls => GoodSinceChange (fun c => ∃ k, wf.outcome = .command k ∧ RanCheck k c) alc calls

open Classical in
/-- The reward of a visit of stage `s` whose steps are `calls` (the newest first) and which ended as
`e`, toward `target` for a transition ("Stage-visit level", "Stage reward"): −1 when the transition
it ended by is not legal or the submit was not from a terminal stage (`stage.transition`);
otherwise 0 when it is unclosed, has more steps than the budget, or an exit condition of the stage
does not hold over its steps (oldest first); otherwise +1. -/
noncomputable def visitReward (wf : Workflow) (s : Stage) (calls : List ToolCall) (e : VisitEnd)
    (target : Option String) : Int :=
  if ¬StageTransitionOk wf s.id e target then -1
  else if ¬Closed e ∨ ¬WithinBudget calls.length s.budget ∨
      ∃ cond ∈ s.exit, ¬ExitHolds wf cond calls.reverse then 0
  else 1

/-! ## The outcome -/

/-- The run ended by a submit made from a terminal stage (`outcome.submitted`): some step ended the
run while the run was in a terminal stage. -/
def SubmittedFromTerminal (wf : Workflow) (h : History) : Prop :=
  ∃ (newer : History) (l : Nat) (c : ToolCall) (older : History), h = newer ++ (l, Event.toolCall c) :: older ∧
    EndsRun wf c ∧ ∃ s, current wf older = some s ∧ Terminal wf s.id

open Classical in
/-- The `outcome` event that counts, with its line (`outcome.after_submit`, `outcome.single`,
`outcome.external`): the first one after the run ended, in a run whose outcome is its own command's;
none before that, and none in a run judged outside it. -/
noncomputable def recordedOutcome (wf : Workflow) : History → Option (OutcomeEvent × Nat)
  | [] => none
  | (l, .outcome o) :: h =>
    (recordedOutcome wf h).or (if wf.outcome.check?.isSome = true ∧ Ended wf h then some (o, l) else none)
  | _ :: h => recordedOutcome wf h

open Classical in
/-- The outcome o ("Outcome"): for an outcome command, 1 when the run ended by a submit from a
terminal stage and the outcome event that counts passed the check (`CheckPassed`), otherwise 0; for
an outcome judged outside the run, 0 until the judge's value is joined. -/
noncomputable def outcome (wf : Workflow) (h : History) : Int :=
  match wf.outcome with
  | .command k =>
    if SubmittedFromTerminal wf h ∧ ∃ o l, recordedOutcome wf h = some (o, l) ∧ CheckPassed k.expectExitCode o
    then 1 else 0
  | .external _ => 0

/-! ## The return -/

/-- The tool rewards of the steps of `h`, the newest first. -/
noncomputable def toolRewards (wf : Workflow) (sb : Option SandboxRecord) : History → List Int
  | [] => []
  | (_, .toolCall c) :: h => stepReward wf sb h c :: toolRewards wf sb h
  | _ :: h => toolRewards wf sb h

/-- The stage rewards of the visits the steps of `h` closed, the newest first: a step made in stage
`s` that moves the run to `t` closes its visit by a transition; one that ends the run closes it by a
submit. -/
noncomputable def closedRewards (wf : Workflow) : History → List Int
  | [] => []
  | (_, .toolCall c) :: h =>
    (match current wf h, movesTo wf c with
     | some s, some t => [visitReward wf s (c :: visitCalls wf h) .transition (some t.id)]
     | some s, none =>
       if c.tool = "submit" ∧ c.status = .ok then [visitReward wf s (c :: visitCalls wf h) .submit none] else []
     | none, _ => []) ++ closedRewards wf h
  | _ :: h => closedRewards wf h

/-- The stage reward of the visit still open after `h`, scored as if the run stopped now; none once
the run has ended. -/
noncomputable def openRewards (wf : Workflow) (h : History) : List Int :=
  match current wf h with
  | some s => [visitReward wf s (visitCalls wf h) .runEnd none]
  | none => []

/-- What the return after `h` is made of ("Return"): the outcome o, the stage rewards of every visit
(the open one included) and their number, the tool rewards of every step and their number. R is
o + α·mean(S) + β·mean(T) of these, with mean(∅) = 0. -/
noncomputable def returnParts (wf : Workflow) (sb : Option SandboxRecord) (h : History) : ReturnParts :=
  { outcome := outcome wf h
    stageSum := sumInt (closedRewards wf h ++ openRewards wf h)
    visits := (closedRewards wf h ++ openRewards wf h).length
    toolSum := sumInt (toolRewards wf sb h)
    steps := (toolRewards wf sb h).length }

end Lar.Spec
