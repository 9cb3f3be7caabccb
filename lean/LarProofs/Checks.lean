import Lar.Checks
import LarProofs.Glob
import LarProofs.Tools

/-!
For every check of core/verifier/checks.ts, the theorem that the checker's `Bool` procedure
(`Lar.Checks`) decides the proposition saying what passing means (`Lar.Spec.Checks`); `CallConforms`,
the error-severity checks of one call together, likewise.
-/

namespace Lar
open Lean

/-- `blocks` holds exactly for the tool-level checks of severity `error`. -/
theorem CheckId.blocks_iff (c : CheckId) : c.blocks = true ↔ c.level = .tool ∧ c.severity = .error := by
  cases c <;> decide

/-- A verdict built from a decision passes exactly when the decision is `true`. -/
theorem Verdict.ofBool_ok (check : CheckId) (b : Bool) (p f : String) (path : Option (List String)) :
    (Verdict.ofBool check b p f path).ok = b := by
  cases b <;> rfl

/-- A verdict built from a decision is of the check it was built for. -/
theorem Verdict.ofBool_check (check : CheckId) (b : Bool) (p f : String) (path : Option (List String)) :
    (Verdict.ofBool check b p f path).check = check := by
  cases b <;> rfl

/-- `tool.run_open`: `runOpenB` decides `RunOpen` (there is a current stage). -/
theorem runOpen_iff (cur : Option Stage) : runOpenB cur = true ↔ RunOpen cur := by
  cases cur <;> simp [runOpenB, RunOpen]

/-- `tool.known`: `knownB` decides `Known` (the name is one of the eight tools). -/
theorem known_iff (name : String) : knownB name = true ↔ Known name :=
  findTool_isSome name Tool.all

/-- `tool.args`: `argsOkB` decides `ArgsOk` (no `argsError`, a known tool, and arguments that fit its strict schema). -/
theorem argsOk_iff (c : ProposedCall) : argsOkB c = true ↔ ArgsOk c := by
  unfold argsOkB ArgsOk
  cases hE : c.argsError <;> cases hT : Tool.ofName? c.tool <;> simp [argsValid_iff]

/-- `tool.args` for the known tool `t`: `argsOkFor` decides `ArgsOkFor`. -/
theorem argsOkFor_iff (t : Tool) (c : ProposedCall) : argsOkFor t c = true ↔ ArgsOkFor t c := by
  unfold argsOkFor ArgsOkFor
  cases c.argsError <;> simp [argsValid_iff]

/-- `tool.permitted`: `permittedB` decides `Permitted` (listed in the stage's `tools`, or an MCP name an MCP pattern there matches). -/
theorem permitted_iff (stage : Stage) (tool : String) :
    permittedB stage tool = true ↔ Permitted stage tool := by
  have h1 : stage.tools.any (fun t => decide (t = tool)) = true ↔ tool ∈ stage.tools := by
    simp [List.any_eq_true]
  have h2 : stage.tools.any (fun p => isMcpPattern p && globMatch p tool) = true ↔
      ∃ p ∈ stage.tools, isMcpPattern p = true ∧ Matches p.toList tool.toList := by
    simp only [List.any_eq_true, Bool.and_eq_true, globMatch_iff]
  simp only [permittedB, Permitted, Bool.or_eq_true, Bool.and_eq_true, h1, h2]

/-- `tool.known` for an MCP name: `mcpKnownB` decides `McpKnown` (some tool offered now has the name). -/
theorem mcpKnown_iff (mcp : List (String × String)) (name : String) :
    mcpKnownB mcp name = true ↔ McpKnown mcp name := by
  simp only [mcpKnownB, McpKnown, List.any_eq_true, decide_eq_true_eq]

/-- `tool.args` for an MCP tool: `mcpArgsOkB` decides `McpArgsOk` (no `argsError`, and the arguments are an object). -/
theorem mcpArgsOk_iff (c : ProposedCall) : mcpArgsOkB c = true ↔ McpArgsOk c := by
  unfold mcpArgsOkB McpArgsOk
  cases c.argsError <;> simp

/-- After a server's line, a name of that server is known exactly when the line lists it: a tool
it no longer lists (or any, once it stopped) is unknown, whatever it offered before. -/
theorem mcpKnownB_replace (known : List (String × String)) (server : String) (tools : List (String × String))
    (name : String) (h : name.startsWith (mcpServerPrefix server) = true) :
    mcpKnownB (replaceServerTools known server tools) name = mcpKnownB tools name := by
  unfold replaceServerTools mcpKnownB
  rw [List.any_append]
  have hk : (known.filter (fun p => !p.1.startsWith (mcpServerPrefix server))).any
      (fun p => decide (p.1 = name)) = false := by
    rw [List.any_eq_false]
    intro x hx hdec
    simp only [decide_eq_true_eq] at hdec
    have hf : (!x.1.startsWith (mcpServerPrefix server)) = true := (List.mem_filter.mp hx).2
    rw [hdec, h] at hf
    exact absurd hf (by decide)
  rw [hk, Bool.false_or]

/-- `stageDefinedB` decides `StageDefined` (some stage has the id). -/
theorem stageDefined_iff (wf : Workflow) (id : String) :
    stageDefinedB wf id = true ↔ StageDefined wf id := by
  simp [stageDefinedB, StageDefined, List.any_eq_true]

/-- `legalTransitionB` decides `LegalTransition` (a defined stage that `src` may move to). -/
theorem legalTransition_iff (wf : Workflow) (src dst : String) :
    legalTransitionB wf src dst = true ↔ LegalTransition wf src dst := by
  simp [legalTransitionB, LegalTransition, stageDefined_iff, List.any_eq_true]

/-- `tool.submit_terminal`: `terminalB` decides `Terminal` (the stage id is among `terminal`). -/
theorem terminal_iff (wf : Workflow) (id : String) : terminalB wf id = true ↔ Terminal wf id := by
  simp [terminalB, Terminal, List.any_eq_true]

/-- `tool.command_policy`: `commandAllowedB` decides `CommandAllowed` (no deny pattern matches the command, whole or any part). -/
theorem commandAllowed_iff (deny : List String) (cmd : String) :
    commandAllowedB deny cmd = true ↔ CommandAllowed deny cmd := by
  simp [commandAllowedB, CommandAllowed, commandMatches_iff, List.any_eq_true]

/-- `underB` decides `UnderPath` (the path is the read-only path, trailing `/`s dropped, or lies below it). -/
theorem underB_iff (r n : String) : underB r n = true ↔ UnderPath r.toList n.toList := by
  unfold underB underL UnderPath
  rw [Bool.or_eq_true, decide_eq_true_eq, List.isPrefixOf_iff_prefix]

/-- `!(l.any p)` holds exactly when `p` holds for no element. -/
theorem notAny_iff {α : Type} (l : List α) (p : α → Bool) :
    (!(l.any p)) = true ↔ ∀ x ∈ l, ¬p x = true := by
  cases h : l.any p with
  | true =>
    constructor
    · intro hf
      exact absurd hf (by decide)
    · intro hall
      obtain ⟨x, hx, hpx⟩ := List.any_eq_true.mp h
      exact absurd hpx (hall x hx)
  | false =>
    constructor
    · intro _ x hx hpx
      have hany : l.any p = true := List.any_eq_true.mpr ⟨x, hx, hpx⟩
      rw [h] at hany
      exact absurd hany (by decide)
    · intro _
      rfl

/-- One path argument: `pathOkB` decides `PathOk` (it normalizes, its normal form matches no deny pattern and lies under no read-only path of `ro`). -/
theorem pathOk_iff (deny ro : List String) (path : String) :
    pathOkB deny ro path = true ↔ PathOk deny ro path := by
  unfold pathOkB PathOk
  cases npath path with
  | error e => simp
  | ok n =>
    show (!(deny.any (fun p => globMatch p n)) && !(ro.any (fun r => underB r n))) = true ↔ _
    rw [Bool.and_eq_true, notAny_iff, notAny_iff]
    constructor
    · rintro ⟨hd, hr⟩
      exact ⟨n, rfl, fun p hp hm => hd p hp ((globMatch_iff _ _).mpr hm),
        fun r hr' hu => hr r hr' ((underB_iff _ _).mpr hu)⟩
    · rintro ⟨n', hn, hd, hr⟩
      cases hn
      exact ⟨fun p hp hm => hd p hp ((globMatch_iff _ _).mp hm),
        fun r hr' hu => hr r hr' ((underB_iff _ _).mp hu)⟩

/-- `tool.path_policy`: `pathPolicyB` decides `PathPolicyOk` (every present path argument of the tool is `PathOk`). -/
theorem pathPolicy_iff (deny ro : List String) (t : Tool) (args : Json) :
    pathPolicyB deny ro t args = true ↔ PathPolicyOk deny ro t args := by
  unfold pathPolicyB PathPolicyOk
  simp only [List.all_eq_true]
  apply forall_congr'
  intro key
  apply imp_congr_right
  intro _
  cases strArg? args key with
  | none => simp
  | some s => simp [pathOk_iff]

/-- `tool.not_repeated`: `notRepeatedB` decides `NotRepeated` (the call's last failure was not in the epoch of now). -/
theorem notRepeated_iff (lastFail : Option Nat) (epoch : Nat) :
    notRepeatedB lastFail epoch = true ↔ NotRepeated lastFail epoch := by
  simp [notRepeatedB, NotRepeated]

/-- `tool.approved`: `approvedB` decides `Approved` (the status is not `denied`). -/
theorem approved_iff (status : CallStatus) : approvedB status = true ↔ Approved status := by
  simp [approvedB, Approved]

/-- `tool.succeeded`: `succeededB` decides `Succeeded` (status `ok` and, for `run_command`, exit code 0 with an observed end). -/
theorem succeeded_iff (c : ToolCall) : succeededB c = true ↔ Succeeded c := by
  simp [succeededB, Succeeded]

/-- `ranToEndB` decides `RanToEnd` (a `run_command` with status `ok`, an exit code and an observed end). -/
theorem ranToEnd_iff (c : ToolCall) : ranToEndB c = true ↔ RanToEnd c := by
  cases h : c.result.exitCode <;> simp [ranToEndB, RanToEnd, h]

/-- `ranCheckB` decides `RanCheck` (the call ran the outcome command itself to an observed end, and its tests ran). -/
theorem ranCheck_iff (check : OutcomeCheck) (c : ToolCall) : ranCheckB check c = true ↔ RanCheck check c := by
  cases h : c.result.testsRan <;> simp [ranCheckB, RanCheck, ranToEnd_iff, h, Option.isNone_iff_eq_none]

/-- `outcome_ran` against the workflow's outcome: met only for an outcome command `k`, and then exactly when `RanCheck k`. -/
theorem ranCheckOf_iff (o : WorkflowOutcome) (c : ToolCall) :
    ranCheckOfB o c = true ↔ ∃ k, o = .command k ∧ RanCheck k c := by
  cases o with
  | command k => simp [ranCheckOfB, ranCheck_iff]
  | external _ => simp [ranCheckOfB]

/-- `tool.transition`: `transitionOkB` decides `TransitionOk` (the stage the call names is a legal transition from `st`). -/
theorem transitionOk_iff (wf : Workflow) (st : Stage) (args : Json) :
    transitionOkB wf st args = true ↔ TransitionOk wf st args := by
  unfold transitionOkB TransitionOk
  cases strArg? args "stage" with
  | none => simp
  | some tg => simp [legalTransition_iff]

/-- `tool.command_policy` on a call's arguments: `commandOkB` decides `CommandOk`. -/
theorem commandOk_iff (wf : Workflow) (args : Json) : commandOkB wf args = true ↔ CommandOk wf args := by
  unfold commandOkB CommandOk
  cases strArg? args "command" with
  | none => simp
  | some cmd => simp [commandAllowed_iff]

/-- `sandboxRequiredB` decides `SandboxRequired` (the workflow's or the header's `required`). -/
theorem sandboxRequired_iff (wf : Workflow) (sb : Option SandboxRecord) :
    sandboxRequiredB wf sb = true ↔ SandboxRequired wf sb := by
  unfold sandboxRequiredB SandboxRequired
  cases sb with
  | none =>
    show (wf.sandbox.required || false) = true ↔ _
    rw [Bool.or_false]
    constructor
    · exact Or.inl
    · rintro (h | ⟨r, hr, _⟩)
      · exact h
      · cases hr
  | some r =>
    show (wf.sandbox.required || r.required) = true ↔ _
    rw [Bool.or_eq_true]
    constructor
    · rintro (h | h)
      · exact Or.inl h
      · exact Or.inr ⟨r, rfl, h⟩
    · rintro (h | ⟨r', hr, h⟩)
      · exact Or.inl h
      · cases hr
        exact Or.inr h

/-- A sandbox record says the commands were held exactly when it says `confined` or `container`. -/
theorem sandboxHeld_iff (r : SandboxRecord) : r.held = true ↔ r.confined = true ∨ r.container = true := by
  unfold SandboxRecord.held
  cases r.confined <;> cases r.container <;> decide

/-- The checker's test of the header's record decides `CommandsHeld`. -/
theorem commandsHeld_iff (sb : Option SandboxRecord) :
    decide (sb.map (·.held) = some true) = true ↔ CommandsHeld sb := by
  rw [decide_eq_true_eq]
  unfold CommandsHeld
  cases sb with
  | none =>
    show (none : Option Bool) = some true ↔ _
    constructor
    · intro h
      cases h
    · rintro ⟨r, hr, _⟩
      cases hr
  | some r =>
    show some r.held = some true ↔ _
    constructor
    · intro h
      exact ⟨r, rfl, (sandboxHeld_iff r).mp (Option.some.inj h)⟩
    · rintro ⟨r', hr, h⟩
      cases hr
      exact congrArg some ((sandboxHeld_iff _).mpr h)

/-- `tool.sandbox_required`: `sandboxOkB` decides `SandboxOk` (where the sandbox is required, the header records that the commands were held). -/
theorem sandboxOk_iff (wf : Workflow) (sb : Option SandboxRecord) :
    sandboxOkB wf sb = true ↔ SandboxOk wf sb := by
  unfold sandboxOkB SandboxOk
  rw [Bool.or_eq_true, ← sandboxRequired_iff, commandsHeld_iff]
  cases sandboxRequiredB wf sb with
  | false =>
    constructor
    · intro _ hf
      exact absurd hf (by decide)
    · intro _
      exact Or.inl rfl
  | true =>
    constructor
    · rintro (h | h) _
      · exact absurd h (by decide)
      · exact h
    · intro h
      exact Or.inr (h rfl)

/-- The checks of each tool: `toolOkB` decides `ToolOk`. -/
theorem toolOk_iff (wf : Workflow) (sb : Option SandboxRecord) (st : Stage) (args : Json) (t : Tool) :
    toolOkB wf sb st args t = true ↔ ToolOk wf sb st args t := by
  cases t <;> simp only [toolOkB, ToolOk, Bool.and_eq_true, commandOk_iff, pathPolicy_iff,
    sandboxOk_iff, transitionOk_iff, terminal_iff]

/-- A built-in tool's call: `builtinConformsB` decides `BuiltinConforms`. -/
theorem builtinConforms_iff (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall) :
    builtinConformsB wf sb cur c = true ↔ BuiltinConforms wf sb cur c := by
  unfold builtinConformsB BuiltinConforms
  cases cur with
  | none => simp [callConformsFor]
  | some st =>
    cases Tool.ofName? c.tool with
    | none => simp [callConformsFor]
    | some t =>
      simp only [callConformsFor, Bool.and_eq_true, argsOkFor_iff, permitted_iff, toolOk_iff]
      constructor
      · rintro ⟨h1, h2, h3⟩
        exact ⟨st, t, rfl, rfl, h1, h2, h3⟩
      · rintro ⟨st', t', hst, htt, h1, h2, h3⟩
        cases hst
        cases htt
        exact ⟨h1, h2, h3⟩

/-- An MCP tool's call: `mcpConformsB` decides `McpConforms`. -/
theorem mcpConforms_iff (mcp : List (String × String)) (cur : Option Stage) (c : ProposedCall) :
    mcpConformsB mcp cur c = true ↔ McpConforms mcp cur c := by
  unfold mcpConformsB McpConforms
  cases cur with
  | none => simp [mcpConformsFor]
  | some st =>
    show (mcpKnownB mcp c.tool && (mcpArgsOkB c && permittedB st c.tool)) = true ↔ _
    rw [Bool.and_eq_true, Bool.and_eq_true, mcpKnown_iff, mcpArgsOk_iff, permitted_iff]
    constructor
    · rintro ⟨h1, h2, h3⟩
      exact ⟨st, rfl, h1, h2, h3⟩
    · rintro ⟨st', hst, h1, h2, h3⟩
      cases hst
      exact ⟨h1, h2, h3⟩

/-- Any call: `callConformsB` decides `CallConforms`, the error-severity checks of the tool-call table. -/
theorem callConforms_iff (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    callConformsB wf sb mcp cur c = true ↔ CallConforms wf sb mcp cur c := by
  unfold callConformsB CallConforms
  cases isMcpName c.tool with
  | true =>
    show mcpConformsB mcp cur c = true ↔ _
    rw [mcpConforms_iff]
    constructor
    · intro h
      exact Or.inl ⟨rfl, h⟩
    · rintro (⟨_, h⟩ | ⟨hf, _⟩)
      · exact h
      · cases hf
  | false =>
    show builtinConformsB wf sb cur c = true ↔ _
    rw [builtinConforms_iff]
    constructor
    · intro h
      exact Or.inr ⟨rfl, h⟩
    · rintro (⟨ht, _⟩ | ⟨_, h⟩)
      · cases ht
      · exact h

/-- `stage.closed`: `closedB` decides `Closed` (the visit did not end by the run stopping). -/
theorem closed_iff (e : VisitEnd) : closedB e = true ↔ Closed e := by
  simp [closedB, Closed]

/-- `stage.transition`: `stageTransitionB` decides `StageTransitionOk`. -/
theorem stageTransition_iff (wf : Workflow) (src : String) (e : VisitEnd) (dst : Option String) :
    stageTransitionB wf src e dst = true ↔ StageTransitionOk wf src e dst := by
  cases e <;> cases dst <;>
    simp [stageTransitionB, StageTransitionOk, legalTransition_iff, terminal_iff]

/-- `stage.budget`: `withinBudgetB` decides `WithinBudget` (at most `budget` steps). -/
theorem withinBudget_iff (steps budget : Nat) :
    withinBudgetB steps budget = true ↔ WithinBudget steps budget := by
  simp [withinBudgetB, WithinBudget]

/-- `stage.exit.tool_succeeded`: `toolSucceededB` decides `ToolSucceededMet`. -/
theorem toolSucceeded_iff (tool : String) (atLeast : Nat) (facts : List StepFact) :
    toolSucceededB tool atLeast facts = true ↔ ToolSucceededMet tool atLeast facts := by
  simp [toolSucceededB, ToolSucceededMet]

/-- `noChangeAfter alc rest` holds exactly when, with `afterLastChange`, no step of `rest` changed a file. -/
theorem noChangeAfter_iff (alc : Bool) (rest : List StepFact) :
    noChangeAfter alc rest = true ↔ (alc = true → ∀ g ∈ rest, g.changed = []) := by
  cases alc <;> simp [noChangeAfter, List.all_eq_true, List.isEmpty_iff]

/-- `stage.exit.command_succeeded` / `command_ran` / `outcome_ran`: `cmdMetB` decides `CmdMet`. -/
theorem cmdMet_iff (good : StepFact → Bool) (alc : Bool) :
    ∀ facts : List StepFact, cmdMetB good alc facts = true ↔ CmdMet good alc facts
  | [] => by simp [cmdMetB, CmdMet]
  | f :: rest => by
    simp only [cmdMetB, CmdMet, Bool.or_eq_true, Bool.and_eq_true, noChangeAfter_iff,
      cmdMet_iff good alc rest]

/-- `fileMatchesB` decides `FileMatches` (no pattern, or the file's `npath` form matches it). -/
theorem fileMatches_iff (pattern : Option String) (file : String) :
    fileMatchesB pattern file = true ↔ FileMatches pattern file := by
  cases pattern <;> simp [fileMatchesB, FileMatches, globMatch_iff]

/-- `stage.exit.file_changed`: `fileChangedB` decides `FileChangedMet`. -/
theorem fileChanged_iff (pattern : Option String) (facts : List StepFact) :
    fileChangedB pattern facts = true ↔ FileChangedMet pattern facts := by
  simp only [fileChangedB, FileChangedMet, List.any_eq_true, fileMatches_iff]

/-- Every exit condition: `exitMetB` decides `ExitMet`. -/
theorem exitMet_iff (c : ExitCondition) (facts : List StepFact) :
    exitMetB c facts = true ↔ ExitMet c facts := by
  cases c with
  | toolSucceeded tool n => exact toolSucceeded_iff tool n facts
  | commandSucceeded p alc => exact cmdMet_iff _ alc facts
  | commandRan p alc => exact cmdMet_iff _ alc facts
  | fileChanged p => exact fileChanged_iff p facts
  | outcomeRan alc => exact cmdMet_iff _ alc facts

/-- `outcome.external`: `judgedInRunB` decides `JudgedInRun` (the outcome is the workflow's own command's). -/
theorem judgedInRun_iff (o : WorkflowOutcome) : judgedInRunB o = true ↔ JudgedInRun o := by
  cases o <;> simp [judgedInRunB, JudgedInRun, WorkflowOutcome.judge?]

/-- `outcome.after_submit`: `afterSubmitB` decides `AfterSubmit` (the run has ended). -/
theorem afterSubmit_iff (ended : Bool) : afterSubmitB ended = true ↔ AfterSubmit ended := Iff.rfl

/-- `outcome.single`: `singleOutcomeB` decides `SingleOutcome` (no outcome was recorded yet). -/
theorem singleOutcome_iff (recorded : Option Nat) :
    singleOutcomeB recorded = true ↔ SingleOutcome recorded := by
  cases recorded <;> simp [singleOutcomeB, SingleOutcome]

/-- `outcome.submitted`: `submittedB` decides `Submitted` (the run ended by a submit from a terminal stage). -/
theorem submitted_iff (ended fromTerminal : Bool) :
    submittedB ended fromTerminal = true ↔ Submitted ended fromTerminal := by
  simp [submittedB, Submitted]

/-- `outcome.check_passed`: `checkPassedB` decides `CheckPassed`. -/
theorem checkPassed_iff (expect : Int) (o : OutcomeEvent) :
    checkPassedB expect o = true ↔ CheckPassed expect o := by
  simp [checkPassedB, CheckPassed]

end Lar
