import Lar.Verifier
import LarProofs.Verifier

/-!
The gate (docs/rewards.md, "The gate"): what it decides about a proposed call before the call runs.

- `State.gate_block_iff`: it blocks exactly when the call's tool reward is −1, that is exactly when
  some error-severity check failed (`toolReward_eq_neg_one_iff`), that is exactly when the call does
  not conform (`State.gate_ok_iff`).
- `State.gate_ask_iff`, `State.gate_allow_iff`: otherwise it asks exactly when the call has an ask
  pattern, and allows it exactly when it has none.
- `State.gate_askPattern_eq_some`: the ask pattern, reported with every decision, is `p` exactly for a
  `run_command` (named by its built-in name) with valid arguments whose command no deny pattern
  matches, and `p` is the first pattern of `policy.commands.ask` that matches its command (`FirstMatch`).
-/

namespace Lar
open Lean

/-! ## Every pre-run verdict is of a check whose failure blocks -/

/-- A verdict built for a check that blocks is of a check that blocks. -/
theorem ofBool_blocks (check : CheckId) (h : check.blocks = true) (b : Bool) (p f : String)
    (path : Option (List String)) : (Verdict.ofBool check b p f path).check.blocks = true := by
  rw [Verdict.ofBool_check]
  exact h

/-- `tool.run_open` blocks. -/
theorem openVerdict_blocks (cur : Option Stage) (tool : String) : (openVerdict cur tool).check.blocks = true := by
  unfold openVerdict
  exact ofBool_blocks .toolRunOpen rfl _ _ _ _

/-- `tool.args` blocks. -/
theorem argsVerdict_blocks (t : Tool) (c : ProposedCall) : (argsVerdict t c).check.blocks = true := by
  unfold argsVerdict
  exact ofBool_blocks .toolArgs rfl _ _ _ _

/-- `tool.args` for an MCP tool blocks. -/
theorem mcpArgsVerdict_blocks (c : ProposedCall) : (mcpArgsVerdict c).check.blocks = true := by
  unfold mcpArgsVerdict
  exact ofBool_blocks .toolArgs rfl _ _ _ _

/-- `tool.command_policy` blocks. -/
theorem commandVerdict_blocks (ok : Bool) (wf : Workflow) (args : Json) :
    (commandVerdict ok wf args).check.blocks = true := by
  unfold commandVerdict
  exact ofBool_blocks .toolCommandPolicy rfl _ _ _ _

/-- `tool.path_policy` blocks. -/
theorem pathVerdict_blocks (wf : Workflow) (t : Tool) (args : Json) : (pathVerdict wf t args).check.blocks = true := by
  unfold pathVerdict
  exact ofBool_blocks .toolPathPolicy rfl _ _ _ _

/-- `tool.sandbox_required` blocks. -/
theorem sandboxVerdict_blocks (wf : Workflow) (sb : Option SandboxRecord) :
    (sandboxVerdict wf sb).check.blocks = true := by
  unfold sandboxVerdict
  exact ofBool_blocks .toolSandboxRequired rfl _ _ _ _

/-- `tool.permitted` blocks. -/
theorem permittedVerdicts_blocks (cur : Option Stage) (tool : String) :
    (permittedVerdicts cur tool).all (fun v => v.check.blocks) = true := by
  cases cur with
  | none => rfl
  | some st =>
    show ((Verdict.ofBool .toolPermitted (permittedB st tool) _ _ _).check.blocks && true) = true
    rw [ofBool_blocks .toolPermitted rfl]
    rfl

/-- `tool.transition` blocks. -/
theorem transitionVerdicts_blocks (wf : Workflow) (cur : Option Stage) (args : Json) :
    (transitionVerdicts wf cur args).all (fun v => v.check.blocks) = true := by
  cases cur with
  | none => rfl
  | some st =>
    show ((transitionVerdict wf st args).check.blocks && true) = true
    unfold transitionVerdict
    rw [ofBool_blocks .toolTransition rfl]
    rfl

/-- `tool.submit_terminal` blocks. -/
theorem submitVerdicts_blocks (wf : Workflow) (cur : Option Stage) :
    (submitVerdicts wf cur).all (fun v => v.check.blocks) = true := by
  cases cur with
  | none => rfl
  | some st =>
    show ((submitVerdict wf st).check.blocks && true) = true
    unfold submitVerdict
    rw [ofBool_blocks .toolSubmitTerminal rfl]
    rfl

/-- Every tool-specific pre-run verdict blocks. -/
theorem toolVerdicts_blocks (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (args : Json)
    (t : Tool) : (toolVerdicts wf sb cur args t).1.all (fun v => v.check.blocks) = true := by
  cases t with
  | runCommand =>
    show [commandVerdict (commandOkB wf args) wf args, pathVerdict wf .runCommand args, sandboxVerdict wf sb].all
      (fun v => v.check.blocks) = true
    simp only [List.all_cons, List.all_nil, commandVerdict_blocks, pathVerdict_blocks, sandboxVerdict_blocks,
      Bool.and_true]
  | readFile =>
    show [pathVerdict wf .readFile args].all (fun v => v.check.blocks) = true
    simp only [List.all_cons, List.all_nil, pathVerdict_blocks, Bool.and_true]
  | writeFile =>
    show [pathVerdict wf .writeFile args].all (fun v => v.check.blocks) = true
    simp only [List.all_cons, List.all_nil, pathVerdict_blocks, Bool.and_true]
  | editFile =>
    show [pathVerdict wf .editFile args].all (fun v => v.check.blocks) = true
    simp only [List.all_cons, List.all_nil, pathVerdict_blocks, Bool.and_true]
  | listFiles =>
    show [pathVerdict wf .listFiles args].all (fun v => v.check.blocks) = true
    simp only [List.all_cons, List.all_nil, pathVerdict_blocks, Bool.and_true]
  | search =>
    show [pathVerdict wf .search args].all (fun v => v.check.blocks) = true
    simp only [List.all_cons, List.all_nil, pathVerdict_blocks, Bool.and_true]
  | enterStage => exact transitionVerdicts_blocks wf cur args
  | submit => exact submitVerdicts_blocks wf cur

/-- Every verdict every known tool's call gets blocks. -/
theorem headVerdicts_blocks (cur : Option Stage) (t : Tool) (c : ProposedCall) :
    (headVerdicts cur t c).all (fun v => v.check.blocks) = true := by
  unfold headVerdicts
  rw [List.all_append, permittedVerdicts_blocks]
  simp only [List.all_cons, List.all_nil, openVerdict_blocks, argsVerdict_blocks, Bool.and_true] <;> rfl

/-- Every verdict of the pre-run checks is of a check whose failure makes the reward −1
(`CheckId.blocks`): the pre-run checks are the error-severity checks of the tool-call table. -/
theorem preChecks_blocks (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    (preChecks wf sb mcp cur c).1.all (fun v => v.check.blocks) = true := by
  unfold preChecks
  cases isMcpName c.tool with
  | true =>
    show (mcpChecks cur c (mcpKnownB mcp c.tool)).all (fun v => v.check.blocks) = true
    cases mcpKnownB mcp c.tool with
    | true =>
      show ([openVerdict cur c.tool, mcpKnownVerdict, mcpArgsVerdict c] ++ permittedVerdicts cur c.tool).all
        (fun v => v.check.blocks) = true
      rw [List.all_append, permittedVerdicts_blocks]
      simp only [List.all_cons, List.all_nil, openVerdict_blocks, mcpArgsVerdict_blocks, Bool.and_true] <;> rfl
    | false =>
      show [openVerdict cur c.tool, mcpUnknownVerdict c.tool].all (fun v => v.check.blocks) = true
      simp only [List.all_cons, List.all_nil, openVerdict_blocks, Bool.and_true] <;> rfl
  | false =>
    show (preChecksFor wf sb cur c (Tool.ofName? c.tool)).1.all (fun v => v.check.blocks) = true
    cases Tool.ofName? c.tool with
    | none =>
      show [openVerdict cur c.tool, unknownVerdict c.tool].all (fun v => v.check.blocks) = true
      simp only [List.all_cons, List.all_nil, openVerdict_blocks, Bool.and_true] <;> rfl
    | some t =>
      show (knownChecks wf sb cur c t (argsOkFor t c)).1.all (fun v => v.check.blocks) = true
      cases argsOkFor t c with
      | true =>
        show (headVerdicts cur t c ++ (toolVerdicts wf sb cur c.args t).1).all (fun v => v.check.blocks) = true
        rw [List.all_append, headVerdicts_blocks, toolVerdicts_blocks] <;> rfl
      | false => exact headVerdicts_blocks cur t c

/-! ## Block exactly when the reward is −1 -/

/-- The gate's test for a blocking failure and `toolErr` (the test of a −1) agree on a verdict whose
check blocks, and on `tool.not_repeated`, the only other check the gate makes. -/
theorem blockTest_eq_toolErr (v : Verdict) (h : v.check.blocks = true ∨ v.check = .toolNotRepeated) :
    (!v.ok && v.check != .toolNotRepeated) = toolErr v := by
  obtain ⟨check, ok, reason, path⟩ := v
  unfold toolErr
  cases check <;> cases ok <;> first
    | rfl
    | (exfalso; rcases h with h | h <;> cases h)

/-- `gateDecision` blocks exactly when some verdict failed that is not `tool.not_repeated`. -/
theorem gateDecision_block_iff (vs : List Verdict) (ask : Option String) :
    (gateDecision vs ask).1 = .block ↔ ∃ v ∈ vs, (!v.ok && v.check != .toolNotRepeated) = true := by
  unfold gateDecision
  cases hf : vs.find? (fun v => !v.ok && v.check != .toolNotRepeated) with
  | some f =>
    exact ⟨fun _ => ⟨f, List.mem_of_find?_eq_some hf, List.find?_some hf⟩, fun _ => rfl⟩
  | none =>
    have hn := List.find?_eq_none.mp hf
    constructor
    · intro h
      cases ask with
      | none => cases h
      | some _ => cases h
    · rintro ⟨v, hv, hp⟩
      exact absurd hp (hn v hv)

/-- The verdicts the gate judges: those of the pre-run checks, then `tool.not_repeated`. -/
theorem State.gate_verdicts (st : State) (call : ProposedCall) :
    (st.gate call).verdicts =
      (preChecks st.wf st.sandbox st.mcpTools st.currentStage call).1 ++ [st.repeatVerdict (callKey call.tool call.args)] :=
  rfl

/-- The gate's verdicts are of checks that block, and `tool.not_repeated`. -/
theorem State.gate_checks (st : State) (call : ProposedCall) :
    ∀ v ∈ (st.gate call).verdicts, v.check.blocks = true ∨ v.check = .toolNotRepeated := by
  intro v hv
  rw [State.gate_verdicts] at hv
  rcases List.mem_append.mp hv with hv | hv
  · exact Or.inl (List.all_eq_true.mp (preChecks_blocks _ _ _ _ _) v hv)
  · rw [List.mem_singleton.mp hv]
    right
    unfold State.repeatVerdict
    exact Verdict.ofBool_check _ _ _ _ _

/-- The gate blocks a proposed call exactly when the reward it reports for it is −1. -/
theorem State.gate_block_iff (st : State) (call : ProposedCall) :
    (st.gate call).decision = .block ↔ (st.gate call).toolReward = -1 := by
  have hc := State.gate_checks st call
  show (gateDecision (st.gate call).verdicts _).1 = .block ↔ toolReward (st.gate call).verdicts = -1
  rw [gateDecision_block_iff, toolReward_eq_neg_one_iff, List.any_eq_true]
  constructor
  · rintro ⟨v, hv, hp⟩
    refine ⟨v, hv, ?_⟩
    rw [← blockTest_eq_toolErr v (hc v hv)]
    exact hp
  · rintro ⟨v, hv, hp⟩
    refine ⟨v, hv, ?_⟩
    rw [blockTest_eq_toolErr v (hc v hv)]
    exact hp

/-- The gate blocks a proposed call exactly when it does not conform. -/
theorem State.gate_block_iff_not_conforms (st : State) (call : ProposedCall) :
    (st.gate call).decision = .block ↔ ¬CallConforms st.wf st.sandbox st.mcpTools st.currentStage call := by
  rw [State.gate_block_iff, ← State.gate_ok_iff]
  exact ⟨fun h h' => h' h, fun h => Decidable.byContradiction h⟩

/-! ## Ask or allow -/

/-- The gate reports the ask pattern of the pre-run checks, whatever it decides. -/
theorem State.gate_askPattern (st : State) (call : ProposedCall) :
    (st.gate call).askPattern = (preChecks st.wf st.sandbox st.mcpTools st.currentStage call).2 :=
  gateDecision_ask _ _

/-- When it does not block, the gate asks exactly when there is an ask pattern. -/
theorem gateDecision_ask_iff (vs : List Verdict) (ask : Option String) :
    (gateDecision vs ask).1 = .ask ↔ (gateDecision vs ask).1 ≠ .block ∧ ask.isSome = true := by
  unfold gateDecision
  cases vs.find? (fun v => !v.ok && v.check != .toolNotRepeated) with
  | some f => exact ⟨fun h => (by cases h), fun ⟨h, _⟩ => (h rfl).elim⟩
  | none =>
    cases ask with
    | none => exact ⟨fun h => (by cases h), fun ⟨_, h⟩ => by cases h⟩
    | some p => exact ⟨fun _ => ⟨fun h => (by cases h), rfl⟩, fun _ => rfl⟩

/-- `gateDecision` allows exactly when it does not block and there is no ask pattern. -/
theorem gateDecision_allow_iff (vs : List Verdict) (ask : Option String) :
    (gateDecision vs ask).1 = .allow ↔ (gateDecision vs ask).1 ≠ .block ∧ ask = none := by
  unfold gateDecision
  cases vs.find? (fun v => !v.ok && v.check != .toolNotRepeated) with
  | some f => exact ⟨fun h => (by cases h), fun ⟨h, _⟩ => (h rfl).elim⟩
  | none =>
    cases ask with
    | none => exact ⟨fun _ => ⟨fun h => (by cases h), rfl⟩, fun _ => rfl⟩
    | some p => exact ⟨fun h => (by cases h), fun ⟨_, h⟩ => by cases h⟩

/-- The gate asks the user exactly when the call's reward is not −1 and it has an ask pattern. -/
theorem State.gate_ask_iff (st : State) (call : ProposedCall) :
    (st.gate call).decision = .ask ↔ (st.gate call).toolReward ≠ -1 ∧ (st.gate call).askPattern.isSome = true := by
  rw [ne_eq, ← State.gate_block_iff, State.gate_askPattern]
  exact gateDecision_ask_iff _ _

/-- The gate lets the call run unasked exactly when its reward is not −1 and it has no ask pattern. -/
theorem State.gate_allow_iff (st : State) (call : ProposedCall) :
    (st.gate call).decision = .allow ↔ (st.gate call).toolReward ≠ -1 ∧ (st.gate call).askPattern = none := by
  rw [ne_eq, ← State.gate_block_iff, State.gate_askPattern]
  exact gateDecision_allow_iff _ _

/-! ## The ask pattern -/

/-- `firstCommandMatch` finds `p` exactly when `p` is the first pattern that matches the command (`FirstMatch`). -/
theorem firstCommandMatch_iff (patterns : List String) (cmd p : String) :
    firstCommandMatch patterns cmd = some p ↔ FirstMatch patterns cmd p := by
  unfold firstCommandMatch FirstMatch
  rw [List.find?_eq_some_iff_append]
  constructor
  · rintro ⟨hp, before, after, he, hb⟩
    refine ⟨before, after, he, (commandMatches_iff _ _).mp hp, fun q hq hm => ?_⟩
    have h2 : commandMatchesB q.toList cmd.toList = true := (commandMatches_iff _ _).mpr hm
    have h3 : (!commandMatchesB q.toList cmd.toList) = true := hb q hq
    rw [h2] at h3
    exact absurd h3 (by decide)
  · rintro ⟨before, after, he, hm, hb⟩
    refine ⟨(commandMatches_iff _ _).mpr hm, before, after, he, fun q hq => ?_⟩
    show (!commandMatchesB q.toList cmd.toList) = true
    cases h : commandMatchesB q.toList cmd.toList with
    | false => rfl
    | true => exact absurd ((commandMatches_iff _ _).mp h) (hb q hq)

/-- The pre-run checks of a call `AskApplies` to report the first ask pattern that matches its command. -/
theorem preChecks_ask_some (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) (h : AskApplies wf c) :
    (preChecks wf sb mcp cur c).2 = firstCommandMatch wf.policy.commands.ask (commandArg c.args) := by
  obtain ⟨h1, h2, h3, h4⟩ := h
  unfold preChecks
  rw [h1]
  show (preChecksFor wf sb cur c (Tool.ofName? c.tool)).2 = _
  rw [h2]
  show (knownChecks wf sb cur c .runCommand (argsOkFor .runCommand c)).2 = _
  rw [(argsOkFor_iff _ _).mpr h3]
  show (if commandOkB wf c.args then firstCommandMatch wf.policy.commands.ask (commandArg c.args) else none) = _
  rw [(commandOk_iff _ _).mpr h4] <;> rfl

/-- The pre-run checks of any other call report no ask pattern. -/
theorem preChecks_ask_none (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) (h : ¬AskApplies wf c) : (preChecks wf sb mcp cur c).2 = none := by
  unfold preChecks
  cases hm : isMcpName c.tool with
  | true => rfl
  | false =>
    show (preChecksFor wf sb cur c (Tool.ofName? c.tool)).2 = none
    cases ht : Tool.ofName? c.tool with
    | none => rfl
    | some t =>
      show (knownChecks wf sb cur c t (argsOkFor t c)).2 = none
      cases t with
      | runCommand =>
        cases ha : argsOkFor .runCommand c with
        | false => rfl
        | true =>
          show (if commandOkB wf c.args then firstCommandMatch wf.policy.commands.ask (commandArg c.args)
            else none) = none
          cases hk : commandOkB wf c.args with
          | false => rfl
          | true => exact absurd ⟨hm, ht, (argsOkFor_iff _ _).mp ha, (commandOk_iff _ _).mp hk⟩ h
      | readFile => cases argsOkFor .readFile c <;> rfl
      | writeFile => cases argsOkFor .writeFile c <;> rfl
      | editFile => cases argsOkFor .editFile c <;> rfl
      | listFiles => cases argsOkFor .listFiles c <;> rfl
      | search => cases argsOkFor .search c <;> rfl
      | enterStage => cases argsOkFor .enterStage c <;> rfl
      | submit => cases argsOkFor .submit c <;> rfl

open Classical in
/-- The ask pattern of the pre-run checks (the one the gate reports whatever it decides, and the one
`tool.approved` is made for): for a call `AskApplies` to, the first ask pattern that matches its
command; for any other call, none. -/
theorem preChecks_ask (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    (preChecks wf sb mcp cur c).2 =
      if AskApplies wf c then firstCommandMatch wf.policy.commands.ask (commandArg c.args) else none := by
  by_cases h : AskApplies wf c
  · rw [if_pos h]
    exact preChecks_ask_some wf sb mcp cur c h
  · rw [if_neg h]
    exact preChecks_ask_none wf sb mcp cur c h

/-- The ask pattern the gate reports (with whatever decision) is `p` exactly when the call is a
`run_command` (its built-in name, so no MCP name) with valid arguments (`ArgsOkFor`), no deny pattern
matches its command (`CommandOk`), and `p` is the first pattern of `policy.commands.ask` that matches
the command (`FirstMatch`). -/
theorem State.gate_askPattern_eq_some (st : State) (call : ProposedCall) (p : String) :
    (st.gate call).askPattern = some p ↔
      isMcpName call.tool = false ∧ Tool.ofName? call.tool = some .runCommand ∧ ArgsOkFor .runCommand call ∧
        CommandOk st.wf call.args ∧ FirstMatch st.wf.policy.commands.ask (commandArg call.args) p := by
  rw [State.gate_askPattern, preChecks_ask]
  by_cases h : AskApplies st.wf call
  · rw [if_pos h, firstCommandMatch_iff]
    obtain ⟨h1, h2, h3, h4⟩ := h
    exact ⟨fun hf => ⟨h1, h2, h3, h4, hf⟩, fun ⟨_, _, _, _, hf⟩ => hf⟩
  · rw [if_neg h]
    constructor
    · intro hn
      cases hn
    · rintro ⟨h1, h2, h3, h4, _⟩
      exact absurd ⟨h1, h2, h3, h4⟩ h

end Lar
