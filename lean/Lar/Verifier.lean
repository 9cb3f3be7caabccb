import Std.Data.HashMap
import Lean.Data.Json
import Lar.Num
import Lar.Glob
import Lar.Schema
import Lar.Tools
import Lar.Checks
import Lar.Rewards

/-
The incremental verifier: a state fed one event at a time, mirroring
`VerifierState` in core/verifier/state.ts (same checks, same order, same
rewards, same JSON results), and the trajectory-level specification
`ConformsFrom` with the theorem that the checker's acceptance decides it.
-/
namespace Lar
open Lean

/-! ## Results (the JSON shapes of core/verifier/state.ts) -/

/-- One visit of a stage, scored when it ends. -/
structure StageVisitResult where
  stage : String
  visit : Nat
  startLine : Nat
  endLine : Option Nat
  endedBy : VisitEnd
  steps : Nat
  budget : Nat
  verdicts : List Verdict
  reward : Int

instance : ToJson StageVisitResult where
  toJson r := Json.mkObj <|
    [("stage", toJson r.stage), ("visit", toJson r.visit), ("startLine", toJson r.startLine)] ++
    Json.opt "endLine" r.endLine ++
    [("endedBy", toJson r.endedBy.name), ("steps", toJson r.steps), ("budget", toJson r.budget),
     ("verdicts", toJson r.verdicts), ("reward", toJson r.reward)]

/-- The verdicts and rewards of one event. -/
structure StepResult where
  line : Nat
  type : String
  step : Option Nat := none
  /-- The tool named by a tool call, as written (it may not be a known tool). -/
  tool : Option String := none
  stage : Option String := none
  visit : Option Nat := none
  verdicts : List Verdict
  toolReward : Option Int := none
  stageVisit : Option StageVisitResult := none
  runningReturn : Float

instance : ToJson StepResult where
  toJson r := Json.mkObj <|
    [("line", toJson r.line), ("type", toJson r.type)] ++
    Json.opt "step" r.step ++ Json.opt "tool" r.tool ++ Json.opt "stage" r.stage ++ Json.opt "visit" r.visit ++
    [("verdicts", toJson r.verdicts)] ++
    Json.opt "toolReward" r.toolReward ++ Json.opt "stageVisit" r.stageVisit ++
    [("runningReturn", Num.floatToJson r.runningReturn)]

inductive GateDecision where
  | allow | ask | block
  deriving DecidableEq, Repr

def GateDecision.name : GateDecision → String
  | .allow => "allow" | .ask => "ask" | .block => "block"

/-- What the gate decides about a proposed call, before it runs. -/
structure GateResult where
  decision : GateDecision
  verdicts : List Verdict
  reason : String
  askPattern : Option String := none
  toolReward : Int

instance : ToJson GateResult where
  toJson g := Json.mkObj <|
    [("decision", toJson g.decision.name), ("verdicts", toJson g.verdicts), ("reason", toJson g.reason)] ++
    Json.opt "askPattern" g.askPattern ++ [("toolReward", toJson g.toolReward)]

/-! ## Helpers -/

def joinStr (sep : String) : List String → String
  | [] => ""
  | [s] => s
  | s :: ss => s ++ sep ++ joinStr sep ss

def listOrNone (xs : List String) : String := if xs.isEmpty then "none" else joinStr ", " xs

/-- Files a call changed: as recorded, or the written/edited path of a successful write or edit. -/
def changedFiles (c : ToolCall) : List String :=
  match c.result.filesChanged with
  | some fs => fs
  | none =>
    if c.status == .ok && (c.tool == "write_file" || c.tool == "edit_file") then
      (match strArg? c.args "path" with
       | some p => [p]
       | none => [])
    else []

/-- "The same call" for loop detection: the tool and its arguments with object
keys sorted (`Json.compress` prints the keys of an object in order). -/
def callKey (tool : String) (args : Json) : String := tool ++ "\x00" ++ args.compress

def failureReason (c : ToolCall) : String :=
  match c.status with
  | .ok =>
    (match c.result.completion, c.result.exitCode with
     | some .timeout, _ =>
       "the command's end was not observed (timeout), so it does not count as a success"
     | some .unobserved, _ =>
       "the command's end was not observed (unobserved), so it does not count as a success"
     | _, none => "the command has no recorded exit code"
     | _, some code => s!"the command exited with code {code}")
  | .error => "the tool failed"
  | .blocked => "the call was blocked by the verifier and did not run"
  | .denied => "the user rejected the call; it did not run"
  | .timeout => "the call timed out and was stopped"
  | .interrupted => "the call was interrupted before it finished"

/-! ## The checks decidable before a call runs -/

/-- The pre-run checks in the order of docs/rewards.md, and the `ask` pattern when
approval is needed. The gate and the post-hoc verdicts both use this. -/
def preChecks (wf : Workflow) (cur : Option Stage) (c : ProposedCall) : List Verdict × Option String :=
  let vOpen := Verdict.ofBool .toolRunOpen (runOpenB cur) "the run has not ended (no call after a submit)"
    s!"the run already ended with a submit; no {c.tool} call can follow it" (some ["tool"])
  match Tool.ofName? c.tool with
  | none =>
    ([vOpen, .fail .toolKnown (s!"\"{c.tool}\" is not a tool; the tools are run_command, read_file, " ++
      "write_file, edit_file, list_files, search, enter_stage and submit") (some ["tool"])], none)
  | some t =>
    let vKnown := Verdict.pass .toolKnown "the tool is one of the agent tools"
    let vArgs : Verdict :=
      match c.argsError with
      | some e => .fail .toolArgs s!"the arguments are not valid JSON: {e}" (some ["args"])
      | none =>
        if argsValidB t c.args then .pass .toolArgs "the arguments match the tool's schema"
        else
          let issue := (firstArgsIssue t c.args).getD ([], "invalid arguments")
          let at_ := if issue.1.isEmpty then "" else s!"\"{joinStr "." issue.1}\": "
          .fail .toolArgs s!"bad arguments for {c.tool}: {at_}{issue.2}" (some ("args" :: issue.1))
    let vPermitted : List Verdict :=
      match cur with
      | some st => [Verdict.ofBool .toolPermitted (permittedB st c.tool)
          "the tool is permitted in the current stage"
          s!"{c.tool} is not permitted in stage \"{st.id}\" (permitted: {listOrNone st.tools})" (some ["tool"])]
      | none => []
    if !vArgs.ok then ([vOpen, vKnown, vArgs] ++ vPermitted, none) else
    let vTransition : List Verdict :=
      match t, cur with
      | .enterStage, some st =>
        let target := (strArg? c.args "stage").getD ""
        if !stageDefinedB wf target then
          [.fail .toolTransition
            s!"there is no stage \"{target}\" (stages: {joinStr ", " (wf.stages.map (·.id))})"
            (some ["args", "stage"])]
        else if !legalTransitionB wf st.id target then
          [.fail .toolTransition
            s!"\"{st.id}\" → \"{target}\" is not a legal transition (from \"{st.id}\": {listOrNone (wf.succs st.id)})"
            (some ["args", "stage"])]
        else [.pass .toolTransition s!"\"{st.id}\" → \"{target}\" is a legal transition"]
      | _, _ => []
    let vSubmit : List Verdict :=
      match t, cur with
      | .submit, some st =>
        [Verdict.ofBool .toolSubmitTerminal (terminalB wf st.id) "submit is called from a terminal stage"
          s!"submit from \"{st.id}\", which is not a terminal stage (terminal: {joinStr ", " wf.terminal})"
          (some ["tool"])]
      | _, _ => []
    let command : List Verdict × Option String :=
      match t with
      | .runCommand =>
        let cmd := (strArg? c.args "command").getD ""
        (match firstCommandMatch wf.policy.commands.deny cmd with
         | some p =>
           ([.fail .toolCommandPolicy s!"the command matches the deny pattern \"{p}\"" (some ["args", "command"])], none)
         | none =>
           ([.pass .toolCommandPolicy "the command matches no deny pattern"],
             firstCommandMatch wf.policy.commands.ask cmd))
      | _ => ([], none)
    let vPath : List Verdict :=
      if t.pathArgs.isEmpty then [] else
      let bad := t.pathArgs.findSome? fun key =>
        match strArg? c.args key with
        | none => none
        | some p =>
          match npath p with
          | .error reason => some (Verdict.fail .toolPathPolicy reason (some ["args", key]))
          | .ok n =>
            match wf.policy.paths.deny.find? (fun pat => globMatch pat n) with
            | some pat =>
              some (Verdict.fail .toolPathPolicy s!"\"{n}\" matches the path deny pattern \"{pat}\""
                (some ["args", key]))
            | none => none
      [bad.getD (.pass .toolPathPolicy "every path stays inside the workspace and off the deny list")]
    ([vOpen, vKnown, vArgs] ++ vPermitted ++ vTransition ++ vSubmit ++ command.1 ++ vPath, command.2)

/-! ## Visits -/

structure Visit where
  stage : Stage
  /-- 0-based ordinal of this visit in the run. -/
  ordinal : Nat
  /-- Line of the event that began it (of the header for the start stage). -/
  startLine : Nat
  steps : Nat := 0
  /-- What the exit conditions need of each step, newest first. -/
  facts : List StepFact := []

def exitReasons (cond : ExitCondition) (facts : List StepFact) : String × String :=
  match cond with
  | .toolSucceeded tool n =>
    let k := countSucceeded tool facts
    let times := if k == 1 then "time" else "times"
    (s!"{tool} succeeded {k} {times} (at least {n} required)",
     s!"{tool} succeeded {k} {times} in this visit; at least {n} required")
  | .fileChanged (some p) => (s!"a file matching \"{p}\" changed", s!"no file matching \"{p}\" changed in this visit")
  | .fileChanged none => ("a file changed", "no file changed in this visit")
  | .commandSucceeded p alc =>
    let after := if alc then " after the last file change" else ""
    (s!"a command matching \"{p}\" succeeded{after}", s!"no command matching \"{p}\" succeeded in this visit{after}")
  | .commandRan p alc =>
    let after := if alc then " after the last file change" else ""
    (s!"a command matching \"{p}\" ran to an observed end{after}",
     s!"no command matching \"{p}\" ran to an observed end in this visit{after}")

/-- The stage-level verdicts of a visit that ends now. -/
def scoreVisit (v : Visit) (endedBy : VisitEnd) (legal : Bool) (target : Option String) :
    List Verdict :=
  let src := v.stage.id
  let dst := target.getD ""
  let head : List Verdict :=
    match endedBy with
    | .runEnd => [.fail .stageClosed s!"the run stopped in \"{src}\" without a transition or a submit"]
    | .submit =>
      [.pass .stageClosed "the visit ended by a transition or a submit, not by the run stopping",
       Verdict.ofBool .stageTransition legal s!"submitted from terminal stage \"{src}\""
         s!"the run ended by a submit from \"{src}\", which is not a terminal stage"]
    | .transition =>
      [.pass .stageClosed "the visit ended by a transition or a submit, not by the run stopping",
       Verdict.ofBool .stageTransition legal s!"\"{src}\" → \"{dst}\" is legal"
         s!"left \"{src}\" for \"{dst}\", which is not a legal transition"]
  let budget := Verdict.ofBool .stageBudget (withinBudgetB v.steps v.stage.budget)
    s!"{v.steps} of {v.stage.budget} steps used"
    s!"{v.steps} steps in this visit; the budget of \"{src}\" is {v.stage.budget}"
  let facts := v.facts.reverse
  let conds := v.stage.exit.map fun cond =>
    let reasons := exitReasons cond facts
    Verdict.ofBool cond.checkId (exitMetB cond facts) reasons.1 reasons.2
  head ++ [budget] ++ conds

/-! ## The state -/

structure State where
  wf : Workflow
  /-- α and β as doubles (from the workflow's JSON numbers, correctly rounded). -/
  alpha : Float
  beta : Float
  /-- The current visit; `none` once the run has ended. -/
  visit : Option Visit
  visitCount : Nat
  steps : Nat := 0
  toolSum : Int := 0
  /-- Closed visits so far, and the sum of their rewards. -/
  stageCount : Nat := 0
  stageSum : Int := 0
  closed : List StageVisitResult := []
  /-- Number of steps so far that changed a file: the change epoch. -/
  epoch : Nat := 0
  /-- Call key ↦ the change epoch at which it last failed. -/
  failed : Std.HashMap String Nat := {}
  submittedFromTerminal : Bool := false
  ended : Bool := false
  /-- The outcome event that counted, with its line. -/
  outcome : Option (OutcomeEvent × Nat) := none
  /-- n tool rewards, each in [−1, 1], sum to a number in [−n, n]. -/
  toolInv : -(steps : Int) ≤ toolSum ∧ toolSum ≤ steps
  /-- The same for the rewards of the closed visits. -/
  stageInv : -(stageCount : Int) ≤ stageSum ∧ stageSum ≤ stageCount

def hasDuplicates : List String → Bool
  | [] => false
  | x :: xs => xs.contains x || hasDuplicates xs

/-- The state before the first event: the first visit, of the start stage, begins at the header. -/
def State.create (wf : Workflow) (headerLine : Nat := 1) : Except String State :=
  if hasDuplicates (wf.stages.map (·.id)) then
    .error s!"workflow \"{wf.id}\": a stage id is defined twice"
  else
    match wf.findStage? wf.start with
    | none => .error s!"workflow \"{wf.id}\": start stage \"{wf.start}\" does not exist"
    | some start => .ok {
        wf := wf
        alpha := Num.jsonNumberToFloat wf.rewards.alpha
        beta := Num.jsonNumberToFloat wf.rewards.beta
        visit := some { stage := start, ordinal := 0, startLine := headerLine }
        visitCount := 1
        steps := 0
        toolSum := 0
        stageCount := 0
        stageSum := 0
        toolInv := ⟨by omega, by omega⟩
        stageInv := ⟨by omega, by omega⟩
      }

def State.currentStage (st : State) : Option Stage := st.visit.map (·.stage)

def meanF (sum : Int) (n : Nat) : Float := if n == 0 then 0 else Float.ofInt sum / Float.ofNat n

/-- α · mean(closed stage rewards) + β · mean(tool rewards); the outcome is not counted. -/
def State.runningReturn (st : State) : Float :=
  st.alpha * meanF st.stageSum st.stageCount + st.beta * meanF st.toolSum st.steps

def State.repeatVerdict (st : State) (key : String) : Verdict :=
  Verdict.ofBool .toolNotRepeated (notRepeatedB st.failed[key]? st.epoch)
    "the call does not repeat a failed call with nothing changed since"
    "the same call failed before and no file has changed since: this is a loop" (some ["tool"])

/-- Counts one more step with tool reward `r`. -/
def State.addTool (st : State) (r : Int) (hr : -1 ≤ r ∧ r ≤ 1) : State :=
  { st with
    steps := st.steps + 1
    toolSum := st.toolSum + r
    toolInv := by
      obtain ⟨h1, h2⟩ := hr
      obtain ⟨h3, h4⟩ := st.toolInv
      constructor <;> omega }

/-- Scores a visit that ends on `line` and records it. -/
def State.closeVisit (st : State) (v : Visit) (line : Nat) (endedBy : VisitEnd) (legal : Bool)
    (target : Option String) : State × StageVisitResult :=
  let verdicts := scoreVisit v endedBy legal target
  let r := stageReward verdicts
  have hr : -1 ≤ r ∧ r ≤ 1 := stageReward_bounds verdicts
  let res : StageVisitResult := {
    stage := v.stage.id, visit := v.ordinal, startLine := v.startLine, endLine := some line,
    endedBy := endedBy, steps := v.steps, budget := v.stage.budget, verdicts := verdicts, reward := r }
  ({ st with
      closed := res :: st.closed
      stageCount := st.stageCount + 1
      stageSum := st.stageSum + r
      stageInv := by
        obtain ⟨h1, h2⟩ := hr
        obtain ⟨h3, h4⟩ := st.stageInv
        constructor <;> omega }, res)

def State.openVisit (st : State) (stage : Stage) (line : Nat) : State :=
  { st with
    visit := some { stage := stage, ordinal := st.visitCount, startLine := line }
    visitCount := st.visitCount + 1 }

/-- Feeds one `tool_call` event. -/
def State.appendCall (st : State) (c : ToolCall) (line : Nat) : State × StepResult :=
  let stageHere := st.visit.map (·.stage.id)
  let visitHere := st.visit.map (·.ordinal)
  let pre := preChecks st.wf st.currentStage c.toProposed
  let key := callKey c.tool c.args
  let vApproved : List Verdict :=
    match pre.2 with
    | some p =>
      [Verdict.ofBool .toolApproved (approvedB c.status)
        s!"approved (the command matches the approval pattern \"{p}\")"
        s!"the user rejected the command at the approval prompt (it matches \"{p}\")" (some ["args", "command"])]
    | none => []
  let ok := succeededB c
  let vSucceeded := Verdict.ofBool .toolSucceeded ok "the call ran and succeeded" (failureReason c)
    (some (if c.status == .ok then ["result"] else ["status"]))
  let verdicts := pre.1 ++ [st.repeatVerdict key] ++ vApproved ++ [vSucceeded]
  let r := toolReward verdicts
  let changed := changedFiles c
  let epoch := if changed.isEmpty then st.epoch else st.epoch + 1
  let st1 : State := { st.addTool r (toolReward_bounds verdicts) with
    epoch := epoch
    failed := if ok then st.failed else st.failed.insert key epoch }
  let after : State × Option StageVisitResult :=
    match st.visit with
    | none => (st1, none)
    | some v0 =>
      let fact : StepFact := {
        tool := c.tool
        ok := ok
        ran := ranToEndB c
        command := if c.tool == "run_command" then strArg? c.args "command" else none
        changed := changed }
      let v : Visit := { v0 with steps := v0.steps + 1, facts := fact :: v0.facts }
      if c.status == .ok && c.tool == "enter_stage" then
        (match (strArg? c.args "stage").bind st.wf.findStage? with
         | some target =>
           let legal := (st.wf.succs v.stage.id).contains target.id
           let closed := st1.closeVisit v line .transition legal (some target.id)
           (closed.1.openVisit target line, some closed.2)
         | none => ({ st1 with visit := some v }, none))
      else if c.status == .ok && c.tool == "submit" then
        let term := terminalB st.wf v.stage.id
        let closed := st1.closeVisit v line .submit term none
        ({ closed.1 with visit := none, ended := true, submittedFromTerminal := term }, some closed.2)
      else ({ st1 with visit := some v }, none)
  (after.1, {
    line := line, type := "tool_call", step := some after.1.steps, tool := some c.tool, stage := stageHere, visit := visitHere,
    verdicts := verdicts, toolReward := some r, stageVisit := after.2,
    runningReturn := after.1.runningReturn })

def State.outcomeCheckVerdict (st : State) : Verdict :=
  let expected := st.wf.outcome.expectExitCode
  match st.outcome with
  | none => .fail .outcomeCheckPassed "no outcome check result was recorded after the submit"
  | some (o, _) =>
    if checkPassedB expected o then
      .pass .outcomeCheckPassed s!"\"{o.command}\" exited {expected} as expected"
    else
      match o.completion, o.exitCode with
      | some .timeout, _ =>
        .fail .outcomeCheckPassed s!"the outcome check \"{o.command}\" did not finish (timeout)" (some ["exitCode"])
      | some .unobserved, _ =>
        .fail .outcomeCheckPassed s!"the outcome check \"{o.command}\" did not finish (unobserved)" (some ["exitCode"])
      | _, none =>
        .fail .outcomeCheckPassed s!"the outcome check \"{o.command}\" did not finish (no exit code)" (some ["exitCode"])
      | _, some code =>
        .fail .outcomeCheckPassed s!"\"{o.command}\" exited {code}; expected {expected}" (some ["exitCode"])

/-- Feeds one `outcome` event. -/
def State.appendOutcome (st : State) (o : OutcomeEvent) (line : Nat) : State × StepResult :=
  let result (s : State) (verdicts : List Verdict) : StepResult :=
    { line := line, type := "outcome", stage := s.visit.map (·.stage.id), visit := s.visit.map (·.ordinal),
      verdicts := verdicts, runningReturn := s.runningReturn }
  if !st.ended then
    (st, result st [.fail .outcomeAfterSubmit "an outcome check result before any submit is ignored" (some ["type"])])
  else
    match st.outcome with
    | some (_, l) =>
      (st, result st [.fail .outcomeSingle s!"the outcome was already recorded on line {l}; this one is ignored"
        (some ["type"])])
    | none =>
      let st' := { st with outcome := some (o, line) }
      (st', result st' [.pass .outcomeAfterSubmit "the outcome check result follows a submit",
        .pass .outcomeSingle "the outcome check result is recorded once", st'.outcomeCheckVerdict])

/-- Feeds one event; returns the new state and the event's verdicts and rewards. -/
def State.append (st : State) (line : Nat) : Event → State × StepResult
  | .toolCall c => st.appendCall c line
  | .outcome o => st.appendOutcome o line
  | e => (st, { line := line, type := e.typeName, stage := st.visit.map (·.stage.id),
      visit := st.visit.map (·.ordinal), verdicts := [], runningReturn := st.runningReturn })

/-- Decides, before it runs, whether a proposed call may run. Does not change the state. -/
def State.gate (st : State) (call : ProposedCall) : GateResult :=
  let pre := preChecks st.wf st.currentStage call
  let verdicts := pre.1 ++ [st.repeatVerdict (callKey call.tool call.args)]
  let r := toolReward verdicts
  match verdicts.find? (fun v => !v.ok && v.check != .toolNotRepeated) with
  | some f => { decision := .block, verdicts := verdicts, reason := f.reason, toolReward := r }
  | none =>
    match pre.2 with
    | some p =>
      { decision := .ask, verdicts := verdicts, askPattern := some p, toolReward := r,
        reason := s!"the command matches the approval pattern \"{p}\"; it runs only if the user approves" }
    | none =>
      let reason := match verdicts.find? (fun v => !v.ok) with
        | some loop => loop.reason
        | none => "every check passed"
      { decision := .allow, verdicts := verdicts, reason := reason, toolReward := r }

/-- The trajectory's scores as if it stopped now (core/verifier/state.ts `TrajectorySummary`). -/
def State.summary (st : State) : Json :=
  let open_ : List StageVisitResult × Int :=
    match st.visit with
    | some v =>
      let vs := scoreVisit v .runEnd false none
      let r := stageReward vs
      ([{ stage := v.stage.id, visit := v.ordinal, startLine := v.startLine, endLine := none,
          endedBy := .runEnd, steps := v.steps, budget := v.stage.budget, verdicts := vs, reward := r }],
        r)
    | none => ([], 0)
  let stages := st.closed.reverse ++ open_.1
  let stageSum := st.stageSum + open_.2
  let submitted := Verdict.ofBool .outcomeSubmitted st.submittedFromTerminal
    "the run submitted from a terminal stage"
    (if st.ended then "the run submitted from a stage that is not terminal" else "the run never submitted")
  let check := st.outcomeCheckVerdict
  let outcomeVerdicts := if st.ended then [submitted, check] else [submitted]
  let o := outcomeReward st.ended st.submittedFromTerminal check.ok
  let stageMean := meanF stageSum stages.length
  let toolMean := meanF st.toolSum st.steps
  let finalStage := match st.visit with
    | some v => some v.stage.id
    | none => stages.getLast?.map (·.stage)
  Json.mkObj <|
    [("steps", toJson st.steps),
     ("toolRewards", Json.mkObj [("sum", toJson st.toolSum), ("count", toJson st.steps),
        ("mean", Num.floatToJson toolMean)]),
     ("stages", toJson stages),
     ("stageRewards", Json.mkObj [("sum", toJson stageSum), ("count", toJson stages.length),
        ("mean", Num.floatToJson stageMean)]),
     ("outcome", Json.mkObj <|
        [("reward", toJson o), ("verdicts", toJson outcomeVerdicts)] ++ Json.opt "line" (st.outcome.map (·.2))),
     ("return", Num.floatToJson (Float.ofInt o + st.alpha * stageMean + st.beta * toolMean)),
     ("alpha", Json.num st.wf.rewards.alpha),
     ("beta", Json.num st.wf.rewards.beta),
     ("ended", toJson st.ended)] ++
    Json.opt "finalStage" finalStage

/-! ## The specification of a conforming trajectory

A call *conforms* when it is made while the run is open, names a known tool
with valid arguments, is permitted in the current stage, names a legal
transition (`enter_stage`), is made from a terminal stage (`submit`), and obeys
the command and path policies: exactly the checks of severity `error` in the
tool-call table of docs/rewards.md. A trajectory conforms when every call
conforms in the state the verifier is in when the call arrives. -/

def TransitionOk (wf : Workflow) (st : Stage) (c : ProposedCall) : Prop :=
  c.tool = "enter_stage" → ∀ tg, strArg? c.args "stage" = some tg → LegalTransition wf st.id tg

def transitionOkB (wf : Workflow) (st : Stage) (c : ProposedCall) : Bool :=
  !decide (c.tool = "enter_stage") ||
    match strArg? c.args "stage" with
    | some tg => legalTransitionB wf st.id tg
    | none => true

theorem transitionOk_iff (wf : Workflow) (st : Stage) (c : ProposedCall) :
    transitionOkB wf st c = true ↔ TransitionOk wf st c := by
  unfold transitionOkB TransitionOk
  by_cases h : c.tool = "enter_stage"
  · cases strArg? c.args "stage" with
    | none => simp [h]
    | some tg => simp [h, legalTransition_iff]
  · simp [h]

def SubmitOk (wf : Workflow) (st : Stage) (c : ProposedCall) : Prop :=
  c.tool = "submit" → Terminal wf st.id

def submitOkB (wf : Workflow) (st : Stage) (c : ProposedCall) : Bool :=
  !decide (c.tool = "submit") || terminalB wf st.id

theorem submitOk_iff (wf : Workflow) (st : Stage) (c : ProposedCall) :
    submitOkB wf st c = true ↔ SubmitOk wf st c := by
  unfold submitOkB SubmitOk
  by_cases h : c.tool = "submit" <;> simp [h, terminal_iff]

def CommandOk (wf : Workflow) (c : ProposedCall) : Prop :=
  c.tool = "run_command" → ∀ cmd, strArg? c.args "command" = some cmd →
    CommandAllowed wf.policy.commands.deny cmd

def commandOkB (wf : Workflow) (c : ProposedCall) : Bool :=
  !decide (c.tool = "run_command") ||
    match strArg? c.args "command" with
    | some cmd => commandAllowedB wf.policy.commands.deny cmd
    | none => true

theorem commandOk_iff (wf : Workflow) (c : ProposedCall) : commandOkB wf c = true ↔ CommandOk wf c := by
  unfold commandOkB CommandOk
  by_cases h : c.tool = "run_command"
  · cases strArg? c.args "command" with
    | none => simp [h]
    | some cmd => simp [h, commandAllowed_iff]
  · simp [h]

def PathsOk (wf : Workflow) (c : ProposedCall) : Prop :=
  ∀ t, Tool.ofName? c.tool = some t → PathPolicyOk wf.policy.paths.deny t c.args

def pathsOkB (wf : Workflow) (c : ProposedCall) : Bool :=
  match Tool.ofName? c.tool with
  | some t => pathPolicyB wf.policy.paths.deny t c.args
  | none => true

theorem pathsOk_iff (wf : Workflow) (c : ProposedCall) : pathsOkB wf c = true ↔ PathsOk wf c := by
  unfold pathsOkB PathsOk
  cases Tool.ofName? c.tool with
  | none => simp
  | some t => simp [pathPolicy_iff]

/-- One call conforms in the current stage `cur` (`none` once the run has ended). -/
def CallConforms (wf : Workflow) (cur : Option Stage) (c : ProposedCall) : Prop :=
  ∃ st, cur = some st ∧ Known c.tool ∧ ArgsOk c ∧ Permitted st c.tool ∧
    TransitionOk wf st c ∧ SubmitOk wf st c ∧ CommandOk wf c ∧ PathsOk wf c

/-- The checker's decision for one call: every error-severity tool check passes. -/
def callConformsB (wf : Workflow) (cur : Option Stage) (c : ProposedCall) : Bool :=
  match cur with
  | none => false
  | some st =>
    knownB c.tool && argsOkB c && permittedB st c.tool && transitionOkB wf st c &&
      submitOkB wf st c && commandOkB wf c && pathsOkB wf c

theorem callConforms_iff (wf : Workflow) (cur : Option Stage) (c : ProposedCall) :
    callConformsB wf cur c = true ↔ CallConforms wf cur c := by
  cases cur with
  | none => simp [callConformsB, CallConforms]
  | some st =>
    simp only [callConformsB, CallConforms, Bool.and_eq_true, known_iff, argsOk_iff, permitted_iff,
      transitionOk_iff, submitOk_iff, commandOk_iff, pathsOk_iff]
    constructor
    · rintro ⟨⟨⟨⟨⟨⟨h1, h2⟩, h3⟩, h4⟩, h5⟩, h6⟩, h7⟩
      exact ⟨st, rfl, h1, h2, h3, h4, h5, h6, h7⟩
    · rintro ⟨st', hst, h1, h2, h3, h4, h5, h6, h7⟩
      cases hst
      exact ⟨⟨⟨⟨⟨⟨h1, h2⟩, h3⟩, h4⟩, h5⟩, h6⟩, h7⟩

/-- The trajectory from state `st` on: every call conforms in the state it meets. -/
def ConformsFrom : State → List (Nat × Event) → Prop
  | _, [] => True
  | st, (line, e) :: rest =>
    (match e with
     | .toolCall c => CallConforms st.wf st.currentStage c.toProposed
     | _ => True) ∧
    ConformsFrom (st.append line e).1 rest

/-- The checker's acceptance: run the verifier and check every call as it comes. -/
def acceptsFrom : State → List (Nat × Event) → Bool
  | _, [] => true
  | st, (line, e) :: rest =>
    (match e with
     | .toolCall c => callConformsB st.wf st.currentStage c.toProposed
     | _ => true) &&
    acceptsFrom (st.append line e).1 rest

theorem acceptsFrom_iff : ∀ (evs : List (Nat × Event)) (st : State),
    acceptsFrom st evs = true ↔ ConformsFrom st evs
  | [], st => by simp [acceptsFrom, ConformsFrom]
  | (line, e) :: rest, st => by
    have ih := acceptsFrom_iff rest (st.append line e).1
    cases e with
    | toolCall c => simp [acceptsFrom, ConformsFrom, callConforms_iff, ih]
    | message => simp [acceptsFrom, ConformsFrom, ih]
    | outcome o => simp [acceptsFrom, ConformsFrom, ih]
    | finish => simp [acceptsFrom, ConformsFrom, ih]

/-- A trajectory the checker accepts conforms to the workflow. -/
theorem accepted_conforms (st : State) (evs : List (Nat × Event)) (h : acceptsFrom st evs = true) :
    ConformsFrom st evs :=
  (acceptsFrom_iff evs st).mp h

/-- The same from the start of a run. -/
def Conforms (wf : Workflow) (headerLine : Nat) (evs : List (Nat × Event)) : Prop :=
  ∃ st, State.create wf headerLine = .ok st ∧ ConformsFrom st evs

def accepts (wf : Workflow) (headerLine : Nat) (evs : List (Nat × Event)) : Bool :=
  match State.create wf headerLine with
  | .ok st => acceptsFrom st evs
  | .error _ => false

theorem accepts_sound (wf : Workflow) (headerLine : Nat) (evs : List (Nat × Event))
    (h : accepts wf headerLine evs = true) : Conforms wf headerLine evs := by
  unfold accepts at h
  -- `cases hc :` generalizes the goal only; `h` still names `State.create`, hence the `rw`.
  cases hc : State.create wf headerLine with
  | error e => rw [hc] at h; simp at h
  | ok st =>
    rw [hc] at h
    unfold Conforms
    exact ⟨st, hc, accepted_conforms st evs h⟩

/-- The running counters stay within the bounds of `sum_bounded` in every state. -/
theorem State.toolSum_bounded (st : State) : -(st.steps : Int) ≤ st.toolSum ∧ st.toolSum ≤ st.steps :=
  st.toolInv

theorem State.stageSum_bounded (st : State) :
    -(st.stageCount : Int) ≤ st.stageSum ∧ st.stageSum ≤ st.stageCount :=
  st.stageInv

end Lar
