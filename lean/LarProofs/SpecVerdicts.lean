import LarProofs.SpecOutcome
import Lar.Spec.Verdicts

/-!
The checker's verdicts, one for one, against lists of judgements that follow the checker's own
branching (an MCP name, an unknown name, a built-in tool; then its arguments and the tool) but state
each check with the specification's propositions. `LarProofs.SpecTable` proves these lists the same
as the specification's tables (`Lar.Spec.Verdicts`) and states the headline theorems.

- `preChecks_judges`: the checks made before a call runs, for any call in any stage.
- `State.gate_judges`, `State.callVerdicts_judges`, `State.outcomeVerdicts_judges`: the gate's, a
  step's and an `outcome` event's verdicts after events the checker agrees on.
- `State.visitVerdicts_spec`: the verdicts of the visit a move or a `submit` closes, of the open
  visit the summary scores, and that no other call closes a visit.
-/

namespace Lar
open Lean Spec

/-! ## Lists of verdicts -/

/-- A verdict that renders a judgement, then verdicts that render the rest. -/
theorem Spec.judgesAll_cons {v : Verdict} {vs : List Verdict} {j : Judgement} {js : List Judgement}
    (h1 : Judges v j) (h2 : JudgesAll vs js) : JudgesAll (v :: vs) (j :: js) :=
  ⟨h1, h2⟩

/-- Verdicts that render judgements, followed by verdicts that render more. -/
theorem Spec.judgesAll_append : ∀ (vs ws : List Verdict) (js ks : List Judgement),
    JudgesAll vs js → JudgesAll ws ks → JudgesAll (vs ++ ws) (js ++ ks)
  | [], _, [], _, _, h2 => h2
  | [], _, _ :: _, _, h1, _ => False.elim h1
  | _ :: _, _, [], _, h1, _ => False.elim h1
  | _ :: vs, ws, _ :: js, ks, h1, h2 => by
    obtain ⟨ha, hb⟩ := h1
    exact ⟨ha, Spec.judgesAll_append vs ws js ks hb h2⟩

/-- `judgesAll_append` with the lists left to unification. -/
theorem Spec.JudgesAll.app {vs ws : List Verdict} {js ks : List Judgement} (h1 : JudgesAll vs js)
    (h2 : JudgesAll ws ks) : JudgesAll (vs ++ ws) (js ++ ks) :=
  Spec.judgesAll_append vs ws js ks h1 h2

/-- A verdict made for each element renders the judgement made for it. -/
theorem Spec.judgesAll_map {α : Type} (f : α → Verdict) (g : α → Judgement) :
    ∀ l : List α, (∀ x ∈ l, Judges (f x) (g x)) → JudgesAll (l.map f) (l.map g)
  | [], _ => True.intro
  | x :: xs, h =>
    Spec.judgesAll_cons (h x (List.mem_cons.mpr (Or.inl rfl)))
      (Spec.judgesAll_map f g xs (fun y hy => h y (List.mem_cons.mpr (Or.inr hy))))

/-- A verdict built from a decision renders the judgement of its check whose proposition the
decision decides. -/
theorem Spec.judges_ofBool (k : CheckId) (b : Bool) (P : Prop) (hb : b = true ↔ P) (p f : String)
    (path : Option (List String)) : Judges (Verdict.ofBool k b p f path) ⟨k, P⟩ := by
  refine ⟨Verdict.ofBool_check k b p f path, ?_⟩
  rw [Verdict.ofBool_ok]
  exact hb

/-- A passing verdict renders a judgement of its check whose proposition holds. -/
theorem Spec.judges_pass (k : CheckId) (r : String) (P : Prop) (hP : P) : Judges (Verdict.pass k r) ⟨k, P⟩ :=
  ⟨rfl, ⟨fun _ => hP, fun _ => rfl⟩⟩

/-- A failing verdict renders a judgement of its check whose proposition does not hold. -/
theorem Spec.judges_fail (k : CheckId) (r : String) (path : Option (List String)) (P : Prop) (hP : ¬P) :
    Judges (Verdict.fail k r path) ⟨k, P⟩ :=
  ⟨rfl, ⟨fun hf => (by cases hf), fun hp => absurd hp hP⟩⟩

/-! ## Rows of a table -/

open Classical in
/-- A row that applies is made. -/
theorem Spec.row_pos {P : Prop} (hP : P) (j : Judgement) : row P j = [j] := by
  unfold Spec.row
  rw [if_pos hP]

open Classical in
/-- A row that does not apply is not made. -/
theorem Spec.row_neg {P : Prop} (hP : ¬P) (j : Judgement) : row P j = [] := by
  unfold Spec.row
  rw [if_neg hP]

/-- A row for every call (or every visit) is made. -/
theorem Spec.row_true (j : Judgement) : row True j = [j] :=
  Spec.row_pos trivial j

/-! ## The checker's branching, in the specification's propositions -/

/-- `tool.permitted`, made while the run is open. -/
def Spec.permittedBranch (cur : Option Stage) (tool : String) : List Judgement :=
  match cur with
  | some st => [⟨.toolPermitted, Permitted st tool⟩]
  | none => []

/-- The checks that depend on the tool, made on a call of the built-in tool `t` whose arguments are
valid: for `run_command` the command policy, the path policy and the sandbox requirement; for the
file tools the path policy; for `enter_stage` the transition and for `submit` a terminal stage,
both while the run is open. -/
def Spec.toolBranch (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (args : Json) :
    Tool → List Judgement
  | .runCommand =>
    [⟨.toolCommandPolicy, CommandOk wf args⟩,
     ⟨.toolPathPolicy, PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .runCommand) .runCommand args⟩,
     ⟨.toolSandboxRequired, SandboxOk wf sb⟩]
  | .enterStage =>
    match cur with
    | some st => [⟨.toolTransition, TransitionOk wf st args⟩]
    | none => []
  | .submit =>
    match cur with
    | some st => [⟨.toolSubmitTerminal, Terminal wf st.id⟩]
    | none => []
  | t => [⟨.toolPathPolicy, PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor t) t args⟩]

open Classical in
/-- The checks made before a call of the built-in tool `t` runs: `tool.run_open`, `tool.known`,
`tool.args`, `tool.permitted` while the run is open, and the checks of the tool only when the
arguments are valid. -/
noncomputable def Spec.knownBranch (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage)
    (c : ProposedCall) (t : Tool) : List Judgement :=
  [⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, Known c.tool⟩, ⟨.toolArgs, ArgsOkFor t c⟩] ++
    Spec.permittedBranch cur c.tool ++ (if ArgsOkFor t c then Spec.toolBranch wf sb cur c.args t else [])

/-- The checks made before a call of a name that is not an MCP name runs, `t` being the tool it
names if it names one: `tool.run_open` and `tool.known` only when it names none. -/
noncomputable def Spec.builtinBranch (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage)
    (c : ProposedCall) : Option Tool → List Judgement
  | none => [⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, Known c.tool⟩]
  | some t => Spec.knownBranch wf sb cur c t

open Classical in
/-- The checks made before an MCP tool's call runs: `tool.run_open`, `tool.known`; only when it is
known, `tool.args` and `tool.permitted` while the run is open. -/
noncomputable def Spec.mcpBranch (mcp : List (String × String)) (cur : Option Stage) (c : ProposedCall) :
    List Judgement :=
  [⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, McpKnown mcp c.tool⟩] ++
    (if McpKnown mcp c.tool then [⟨.toolArgs, McpArgsOk c⟩] ++ Spec.permittedBranch cur c.tool else [])

/-- The checks made before a call runs, branching as `preChecks` does: an MCP name's, any other
name's. -/
noncomputable def Spec.preBranch (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) : List Judgement :=
  bif isMcpName c.tool then Spec.mcpBranch mcp cur c else Spec.builtinBranch wf sb cur c (Tool.ofName? c.tool)

/-- The gate's checks, branching as `State.gate` does. -/
noncomputable def Spec.gateBranch (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ProposedCall) :
    List Judgement :=
  Spec.preBranch wf sb (offered h) (current wf h) c ++
    [⟨.toolNotRepeated, ¬RepeatsFailure wf h (callKey c.tool c.args)⟩]

open Classical in
/-- A step's checks, branching as `State.callVerdicts` does. -/
noncomputable def Spec.stepBranch (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ToolCall) :
    List Judgement :=
  Spec.gateBranch wf sb h c.toProposed ++
    (if AskApplies wf c.toProposed ∧ ∃ p, FirstMatch wf.policy.commands.ask (commandArg c.args) p
     then [⟨.toolApproved, Approved c.status⟩] else []) ++
    (if c.tool = "run_command" ∧ Ran c then [⟨.toolSandboxed, ¬RanUnconfined sb c⟩] else []) ++
    [⟨.toolSucceeded, Succeeded c⟩]

/-! ## The checks made before a call runs -/

/-- `tool.run_open`. -/
theorem openVerdict_judges (cur : Option Stage) (tool : String) :
    Judges (openVerdict cur tool) ⟨.toolRunOpen, RunOpen cur⟩ := by
  unfold openVerdict
  exact Spec.judges_ofBool _ _ _ (runOpen_iff cur) _ _ _

/-- `tool.args` for the tool `t`. -/
theorem argsVerdict_judges (t : Tool) (c : ProposedCall) : Judges (argsVerdict t c) ⟨.toolArgs, ArgsOkFor t c⟩ := by
  unfold argsVerdict
  exact Spec.judges_ofBool _ _ _ (argsOkFor_iff t c) _ _ _

/-- `tool.permitted`, made while the run is open. -/
theorem permittedVerdicts_judges (cur : Option Stage) (tool : String) :
    JudgesAll (permittedVerdicts cur tool) (Spec.permittedBranch cur tool) := by
  cases cur with
  | none => exact True.intro
  | some st => exact Spec.judgesAll_cons (Spec.judges_ofBool _ _ _ (permitted_iff st tool) _ _ _) True.intro

/-- `tool.command_policy`. -/
theorem commandVerdict_judges (wf : Workflow) (args : Json) :
    Judges (commandVerdict (commandOkB wf args) wf args) ⟨.toolCommandPolicy, CommandOk wf args⟩ := by
  unfold commandVerdict
  exact Spec.judges_ofBool _ _ _ (commandOk_iff wf args) _ _ _

/-- `tool.path_policy`. -/
theorem pathVerdict_judges (wf : Workflow) (t : Tool) (args : Json) :
    Judges (pathVerdict wf t args) ⟨.toolPathPolicy, PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor t) t args⟩ := by
  unfold pathVerdict
  exact Spec.judges_ofBool _ _ _ (pathPolicy_iff _ _ _ _) _ _ _

/-- `tool.sandbox_required`. -/
theorem sandboxVerdict_judges (wf : Workflow) (sb : Option SandboxRecord) :
    Judges (sandboxVerdict wf sb) ⟨.toolSandboxRequired, SandboxOk wf sb⟩ := by
  unfold sandboxVerdict
  exact Spec.judges_ofBool _ _ _ (sandboxOk_iff wf sb) _ _ _

/-- `tool.transition`, made in stage `st`. -/
theorem transitionVerdict_judges (wf : Workflow) (st : Stage) (args : Json) :
    Judges (transitionVerdict wf st args) ⟨.toolTransition, TransitionOk wf st args⟩ := by
  unfold transitionVerdict
  exact Spec.judges_ofBool _ _ _ (transitionOk_iff wf st args) _ _ _

/-- `tool.submit_terminal`, made in stage `st`. -/
theorem submitVerdict_judges (wf : Workflow) (st : Stage) :
    Judges (submitVerdict wf st) ⟨.toolSubmitTerminal, Terminal wf st.id⟩ := by
  unfold submitVerdict
  exact Spec.judges_ofBool _ _ _ (terminal_iff wf st.id) _ _ _

/-- The checks of the tool `t`, made once the arguments are valid. -/
theorem toolVerdicts_judges (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (args : Json) (t : Tool) :
    JudgesAll (toolVerdicts wf sb cur args t).1 (Spec.toolBranch wf sb cur args t) := by
  cases t with
  | runCommand =>
    exact Spec.judgesAll_cons (commandVerdict_judges wf args)
      (Spec.judgesAll_cons (pathVerdict_judges wf .runCommand args)
        (Spec.judgesAll_cons (sandboxVerdict_judges wf sb) True.intro))
  | readFile => exact Spec.judgesAll_cons (pathVerdict_judges wf .readFile args) True.intro
  | writeFile => exact Spec.judgesAll_cons (pathVerdict_judges wf .writeFile args) True.intro
  | editFile => exact Spec.judgesAll_cons (pathVerdict_judges wf .editFile args) True.intro
  | listFiles => exact Spec.judgesAll_cons (pathVerdict_judges wf .listFiles args) True.intro
  | search => exact Spec.judgesAll_cons (pathVerdict_judges wf .search args) True.intro
  | enterStage =>
    cases cur with
    | none => exact True.intro
    | some st => exact Spec.judgesAll_cons (transitionVerdict_judges wf st args) True.intro
  | submit =>
    cases cur with
    | none => exact True.intro
    | some st => exact Spec.judgesAll_cons (submitVerdict_judges wf st) True.intro

/-- The checks made before a call of a built-in name runs, `ot` being the tool the name names. -/
theorem preChecksFor_judges (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall)
    (ot : Option Tool) (hot : Tool.ofName? c.tool = ot) :
    JudgesAll (preChecksFor wf sb cur c ot).1 (Spec.builtinBranch wf sb cur c ot) := by
  cases ot with
  | none =>
    have hk : ¬Known c.tool := fun hk => by
      have h1 := (known_iff c.tool).mpr hk
      unfold knownB at h1
      rw [hot] at h1
      cases h1
    exact Spec.judgesAll_cons (openVerdict_judges cur c.tool)
      (Spec.judgesAll_cons (Spec.judges_fail _ _ _ _ hk) True.intro)
  | some t =>
    have hk : Known c.tool := (known_iff c.tool).mp (by unfold knownB; rw [hot] <;> rfl)
    have hhead : JudgesAll [openVerdict cur c.tool, knownVerdict, argsVerdict t c]
        [⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, Known c.tool⟩, ⟨.toolArgs, ArgsOkFor t c⟩] :=
      Spec.judgesAll_cons (openVerdict_judges cur c.tool)
        (Spec.judgesAll_cons (Spec.judges_pass _ _ _ hk) (Spec.judgesAll_cons (argsVerdict_judges t c) True.intro))
    show JudgesAll (knownChecks wf sb cur c t (argsOkFor t c)).1 (Spec.knownBranch wf sb cur c t)
    unfold Spec.knownBranch
    cases ha : argsOkFor t c with
    | true =>
      rw [if_pos ((argsOkFor_iff t c).mp ha)]
      show JudgesAll (([openVerdict cur c.tool, knownVerdict, argsVerdict t c] ++ permittedVerdicts cur c.tool) ++
        (toolVerdicts wf sb cur c.args t).1) _
      exact Spec.JudgesAll.app (Spec.JudgesAll.app hhead (permittedVerdicts_judges cur c.tool))
        (toolVerdicts_judges wf sb cur c.args t)
    | false =>
      have hA : ¬ArgsOkFor t c := fun hA => by
        rw [(argsOkFor_iff t c).mpr hA] at ha
        cases ha
      rw [if_neg hA, List.append_nil]
      show JudgesAll ([openVerdict cur c.tool, knownVerdict, argsVerdict t c] ++ permittedVerdicts cur c.tool) _
      exact Spec.JudgesAll.app hhead (permittedVerdicts_judges cur c.tool)

/-- The checks made before an MCP tool's call runs. -/
theorem mcpChecks_judges (mcp : List (String × String)) (cur : Option Stage) (c : ProposedCall) :
    JudgesAll (mcpChecks cur c (mcpKnownB mcp c.tool)) (Spec.mcpBranch mcp cur c) := by
  unfold Spec.mcpBranch
  cases hk : mcpKnownB mcp c.tool with
  | true =>
    rw [if_pos ((mcpKnown_iff mcp c.tool).mp hk)]
    show JudgesAll ([openVerdict cur c.tool, mcpKnownVerdict, mcpArgsVerdict c] ++ permittedVerdicts cur c.tool) _
    refine Spec.judgesAll_cons (openVerdict_judges cur c.tool)
      (Spec.judgesAll_cons (Spec.judges_pass _ _ _ ((mcpKnown_iff mcp c.tool).mp hk))
        (Spec.judgesAll_cons ?_ (permittedVerdicts_judges cur c.tool)))
    unfold mcpArgsVerdict
    exact Spec.judges_ofBool _ _ _ (mcpArgsOk_iff c) _ _ _
  | false =>
    have hK : ¬McpKnown mcp c.tool := fun hK => by
      rw [(mcpKnown_iff mcp c.tool).mpr hK] at hk
      cases hk
    rw [if_neg hK, List.append_nil]
    show JudgesAll [openVerdict cur c.tool, mcpUnknownVerdict c.tool] _
    exact Spec.judgesAll_cons (openVerdict_judges cur c.tool)
      (Spec.judgesAll_cons (Spec.judges_fail _ _ _ _ hK) True.intro)

/-- Any call in any stage: the checks made before it runs are `Spec.preBranch`, one for one. -/
theorem preChecks_judges (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    JudgesAll (preChecks wf sb mcp cur c).1 (Spec.preBranch wf sb mcp cur c) := by
  unfold preChecks Spec.preBranch
  cases isMcpName c.tool with
  | true => exact mcpChecks_judges mcp cur c
  | false => exact preChecksFor_judges wf sb cur c (Tool.ofName? c.tool) rfl

/-! ## The gate and a step -/

/-- `tool.not_repeated`, after `h`: it passes exactly when the call does not repeat a failure. -/
theorem State.repeatVerdict_judges {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (key : String) :
    Judges (st.repeatVerdict key) ⟨.toolNotRepeated, ¬RepeatsFailure wf h key⟩ := by
  unfold State.repeatVerdict
  refine Spec.judges_ofBool _ _ _ ?_ _ _ _
  rw [A.failed_eq, A.epoch_eq, notRepeated_iff, ← Spec.repeatsFailure_iff]
  exact Iff.rfl

/-- The gate's verdicts on a call proposed after `h` are `Spec.gateBranch`, one for one. -/
theorem State.gate_judges {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (call : ProposedCall) :
    JudgesAll (st.gate call).verdicts (Spec.gateBranch wf sb h call) := by
  rw [State.gate_verdicts]
  unfold Spec.gateBranch
  refine Spec.JudgesAll.app ?_ (Spec.judgesAll_cons (State.repeatVerdict_judges A _) True.intro)
  rw [A.wf_eq, A.sandbox_eq, A.mcp_eq, A.current_eq]
  exact preChecks_judges wf sb (offered h) (current wf h) call

/-- `tool.approved` is made exactly when there is an ask pattern (`P`), and passes unless the user
rejected the call. Any decision procedure for `P` will do. -/
theorem approvedVerdicts_judges (ask : Option String) (status : CallStatus) (P : Prop) {inst : Decidable P}
    (hP : ask.isSome = true ↔ P) :
    JudgesAll (approvedVerdicts ask status) (@ite _ P inst [⟨.toolApproved, Approved status⟩] []) := by
  cases ask with
  | none =>
    have hn : ¬P := fun hp => by
      have h1 := hP.mpr hp
      cases h1
    rw [if_neg hn]
    exact True.intro
  | some p =>
    rw [if_pos (hP.mp rfl)]
    exact Spec.judgesAll_cons (Spec.judges_ofBool _ _ _ (approved_iff status) _ _ _) True.intro

/-- `tool.sandboxed` is made exactly for a `run_command` that ran, and passes unless it ran
unconfined. Any decision procedure for the condition will do. -/
theorem sandboxedVerdicts_judges (sb : Option SandboxRecord) (c : ToolCall)
    {inst : Decidable (c.tool = "run_command" ∧ Ran c)} :
    JudgesAll (sandboxedVerdicts sb c)
      (@ite _ (c.tool = "run_command" ∧ Ran c) inst [⟨.toolSandboxed, ¬RanUnconfined sb c⟩] []) := by
  have hP : (c.tool == "run_command" && ranB c) = true ↔ (c.tool = "run_command" ∧ Ran c) := by
    rw [Bool.and_eq_true, beq_iff_eq, ranB_iff]
    exact Iff.rfl
  unfold sandboxedVerdicts
  by_cases hr : (c.tool == "run_command" && ranB c) = true
  · obtain ⟨ht, hran⟩ := hP.mp hr
    rw [if_pos hr, if_pos (hP.mp hr)]
    refine Spec.judgesAll_cons (Spec.judges_ofBool _ _ _ ?_ _ _ _) True.intro
    cases hu : unconfinedB sb c with
    | true => exact ⟨fun hf => (by cases hf), fun hn => absurd ⟨ht, hran, (unconfined_iff sb c).mp hu⟩ hn⟩
    | false =>
      refine ⟨fun _ hR => ?_, fun _ => rfl⟩
      obtain ⟨_, _, hx⟩ := hR
      have hu' := (unconfined_iff sb c).mpr hx
      rw [hu] at hu'
      cases hu'
  · rw [if_neg hr, if_neg (fun hx => hr (hP.mpr hx))]
    exact True.intro

/-- The verdicts of a call recorded after `h` are `Spec.stepBranch`, one for one. -/
theorem State.callVerdicts_judges {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (c : ToolCall) : JudgesAll (st.callVerdicts c) (Spec.stepBranch wf sb h c) := by
  show JudgesAll ((preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed).1 ++
      [st.repeatVerdict (callKey c.tool c.args)] ++
      approvedVerdicts (preChecks st.wf st.sandbox st.mcpTools st.currentStage c.toProposed).2 c.status ++
      sandboxedVerdicts st.sandbox c ++ [succeededVerdict c]) _
  unfold Spec.stepBranch
  refine Spec.JudgesAll.app (Spec.JudgesAll.app (Spec.JudgesAll.app ?_ ?_) ?_) ?_
  · exact State.gate_judges A c.toProposed
  · rw [preChecks_ask, A.wf_eq]
    exact approvedVerdicts_judges _ c.status _ (ask_isSome_iff wf c.toProposed _ _)
  · rw [A.sandbox_eq]
    exact sandboxedVerdicts_judges sb c
  · refine Spec.judgesAll_cons ?_ True.intro
    unfold succeededVerdict
    exact Spec.judges_ofBool _ _ _ (succeeded_iff c) _ _ _

/-! ## An outcome event -/

/-- In a run judged outside it, an `outcome` event fails `outcome.external` and nothing else. -/
theorem State.outcomeVerdicts_external (st : State) (o : OutcomeEvent) (line : Nat) (j : String)
    (hk : st.wf.outcome = .external j) : ∃ r p, st.outcomeVerdicts o line = [.fail .outcomeExternal r p] := by
  unfold State.outcomeVerdicts
  rw [hk]
  exact ⟨_, _, rfl⟩

/-- Before the run ends, an `outcome` event fails `outcome.after_submit` and nothing else. -/
theorem State.outcomeVerdicts_open (st : State) (o : OutcomeEvent) (line : Nat) (k : OutcomeCheck)
    (hk : st.wf.outcome = .command k) (he : st.ended = false) :
    ∃ r p, st.outcomeVerdicts o line = [.fail .outcomeAfterSubmit r p] := by
  unfold State.outcomeVerdicts
  rw [hk, he]
  exact ⟨_, _, rfl⟩

/-- Once an outcome was recorded, an `outcome` event fails `outcome.single` and nothing else. -/
theorem State.outcomeVerdicts_recorded (st : State) (o : OutcomeEvent) (line : Nat) (k : OutcomeCheck)
    (r : OutcomeEvent × Nat) (hk : st.wf.outcome = .command k) (he : st.ended = true) (hr : st.outcome = some r) :
    ∃ x p, st.outcomeVerdicts o line = [.fail .outcomeSingle x p] := by
  unfold State.outcomeVerdicts
  rw [hk, he, hr]
  exact ⟨_, _, rfl⟩

/-- The `outcome` event that counts passes `outcome.after_submit` and `outcome.single`, and its own
`outcome.check_passed` is decided by `checkPassedB`. -/
theorem State.outcomeVerdicts_counts (st : State) (o : OutcomeEvent) (line : Nat) (k : OutcomeCheck)
    (hk : st.wf.outcome = .command k) (he : st.ended = true) (hr : st.outcome = none) :
    ∃ a b x y p, st.outcomeVerdicts o line =
      [.pass .outcomeAfterSubmit a, .pass .outcomeSingle b,
       Verdict.ofBool .outcomeCheckPassed (checkPassedB k.expectExitCode o) x y p] := by
  unfold State.outcomeVerdicts
  rw [hk, he, hr]
  exact ⟨_, _, _, _, _, rfl⟩

/-- The specification's checks of an `outcome` event in a run whose outcome is the command `k`. -/
theorem Spec.outcomeJudgements_command (wf : Workflow) (h : History) (o : OutcomeEvent) (k : OutcomeCheck)
    (hk : wf.outcome = .command k) : outcomeJudgements wf h o = commandOutcomeJudgements wf h k o := by
  unfold outcomeJudgements
  rw [hk] <;> rfl

/-- The specification's checks of an `outcome` event in a run judged outside it. -/
theorem Spec.outcomeJudgements_external (wf : Workflow) (h : History) (o : OutcomeEvent) (j : String)
    (hk : wf.outcome = .external j) :
    outcomeJudgements wf h o = [⟨.outcomeExternal, JudgedInRun (.external j)⟩] := by
  unfold outcomeJudgements
  rw [hk] <;> rfl

/-- The verdicts of an `outcome` event recorded after `h` are `outcomeJudgements`, one for one. -/
theorem State.outcomeVerdicts_judges {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (O : OutcomeAgrees wf h st) (o : OutcomeEvent) (line : Nat) :
    JudgesAll (st.outcomeVerdicts o line) (outcomeJudgements wf h o) := by
  obtain ⟨_, hout⟩ := O
  have hw : st.wf.outcome = wf.outcome := by rw [A.wf_eq]
  cases hk : wf.outcome with
  | external j =>
    obtain ⟨r, p, hv⟩ := State.outcomeVerdicts_external st o line j (hw.trans hk)
    rw [hv, Spec.outcomeJudgements_external wf h o j hk]
    exact Spec.judgesAll_cons (Spec.judges_fail _ _ _ _ (fun hj => by cases hj)) True.intro
  | command k =>
    have hwk : st.wf.outcome = .command k := hw.trans hk
    rw [Spec.outcomeJudgements_command wf h o k hk]
    unfold commandOutcomeJudgements
    by_cases he : Ended wf h
    · have hse : st.ended = true := A.ended_iff.mpr he
      rw [if_neg (not_not_intro he)]
      rcases option_none_or_some (recordedOutcome wf h) with hr | ⟨r, hr⟩
      · have hso : st.outcome = none := hout.trans hr
        have hne : ¬(recordedOutcome wf h ≠ none) := fun hx => hx hr
        obtain ⟨a, b, x, y, p, hv⟩ := State.outcomeVerdicts_counts st o line k hwk hse hso
        rw [if_neg hne, hv]
        exact Spec.judgesAll_cons (Spec.judges_pass _ _ _ he)
          (Spec.judgesAll_cons (Spec.judges_pass _ _ _ hr)
            (Spec.judgesAll_cons (Spec.judges_ofBool _ _ _ (checkPassed_iff _ _) _ _ _) True.intro))
      · have hso : st.outcome = some r := hout.trans hr
        have hne : recordedOutcome wf h ≠ none := fun hx => by
          rw [hr] at hx
          cases hx
        obtain ⟨x, p, hv⟩ := State.outcomeVerdicts_recorded st o line k r hwk hse hso
        rw [if_pos hne, hv]
        exact Spec.judgesAll_cons (Spec.judges_fail _ _ _ _ hne) True.intro
    · have hse : st.ended = false := by
        cases hx : st.ended with
        | false => rfl
        | true => exact absurd (A.ended_iff.mp hx) he
      obtain ⟨x, p, hv⟩ := State.outcomeVerdicts_open st o line k hwk hse
      rw [if_pos he, hv]
      exact Spec.judgesAll_cons (Spec.judges_fail _ _ _ _ he) True.intro

/-! ## Stage visits -/

/-- A visit of stage `s` with the steps `calls` (its count and facts) gets `visitJudgements`, one for one. -/
theorem scoreVisit_judges (wf : Workflow) (v : Visit) (e : VisitEnd) (t : Option String) (calls : List ToolCall)
    (s : Stage) (hs : v.stage = s) (hsteps : v.steps = calls.length) (hfacts : v.facts = calls.map (stepFact wf)) :
    JudgesAll (scoreVisit wf v e t) (visitJudgements wf s calls e t) := by
  subst hs
  unfold scoreVisit visitJudgements
  rw [Spec.row_true, Spec.row_true]
  refine Spec.JudgesAll.app (Spec.JudgesAll.app (Spec.JudgesAll.app ?_ ?_) ?_) ?_
  · refine Spec.judgesAll_cons ?_ True.intro
    unfold visitClosedVerdict
    exact Spec.judges_ofBool _ _ _ (closed_iff e) _ _ _
  · cases e with
    | runEnd =>
      have hn : ¬Closed VisitEnd.runEnd := fun hc => hc rfl
      rw [Spec.row_neg hn]
      exact True.intro
    | submit =>
      have hc : Closed VisitEnd.submit := fun he => by cases he
      rw [Spec.row_pos hc]
      exact Spec.judgesAll_cons (Spec.judges_ofBool _ _ _ (stageTransition_iff _ _ _ _) _ _ _) True.intro
    | transition =>
      have hc : Closed VisitEnd.transition := fun he => by cases he
      rw [Spec.row_pos hc]
      exact Spec.judgesAll_cons (Spec.judges_ofBool _ _ _ (stageTransition_iff _ _ _ _) _ _ _) True.intro
  · refine Spec.judgesAll_cons ?_ True.intro
    unfold visitBudgetVerdict
    refine Spec.judges_ofBool _ _ _ ?_ _ _ _
    rw [hsteps]
    exact withinBudget_iff _ _
  · unfold visitExitVerdicts
    refine Spec.judgesAll_map _ _ _ (fun cond _ => Spec.judges_ofBool _ _ _ ?_ _ _ _)
    rw [hfacts]
    exact (exitMet_iff _ _).trans (Spec.exitMet_visit wf cond calls)

/-- Once the run has ended, a call closes no visit. -/
theorem State.moveVisit_none_result (st : State) (c : ToolCall) (line : Nat) (hv : st.visit = none) :
    (st.moveVisit c line).2 = none := by
  unfold State.moveVisit
  rw [hv] <;> rfl

/-- A call of an open run that neither moves it nor is a `submit` with status `ok` closes no visit. -/
theorem State.moveVisit_stay_result (st : State) (c : ToolCall) (line : Nat) (v0 : Visit)
    (hv : st.visit = some v0) (ht : enterTarget st.wf c = none)
    (hs : (c.status == .ok && c.tool == "submit") = false) : (st.moveVisit c line).2 = none := by
  unfold State.moveVisit
  rw [hv, ht, hs] <;> rfl

/-- Once the run has ended, or for a call that neither moves the run nor is a `submit` with status
`ok`, no visit closes. -/
theorem State.append_closes_none {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (line : Nat) (c : ToolCall)
    (hs : (movesTo wf c = none ∧ ¬(c.tool = "submit" ∧ c.status = .ok)) ∨ current wf h = none) :
    (st.append line (.toolCall c)).2.stageVisit = none := by
  show (({ st with failed := {} } : State).moveVisit c line).2 = none
  rcases option_none_or_some st.visit with hv0 | ⟨v0, hv0⟩
  · exact State.moveVisit_none_result { st with failed := {} } c line hv0
  · have hopen : current wf h ≠ none := fun hn => by
      rw [(A.current_of_visit_some hv0).2] at hn
      cases hn
    obtain ⟨hm, hns⟩ := hs.resolve_right hopen
    have ht' : enterTarget st.wf c = none := by
      rw [A.wf_eq]
      exact hm
    have hsb : (c.status == .ok && c.tool == "submit") = false := by
      cases hx : (c.status == .ok && c.tool == "submit") with
      | false => rfl
      | true => exact absurd ((submitB_iff c).mp hx) hns
    exact State.moveVisit_stay_result { st with failed := {} } c line v0 hv0 ht' hsb

/-- A call adds to the summary's list of closed visits exactly the visit it reports closed. -/
theorem State.moveVisit_closed (st : State) (c : ToolCall) (line : Nat) :
    (st.moveVisit c line).1.closed = (st.moveVisit c line).2.toList ++ st.closed := by
  unfold State.moveVisit
  cases st.visit with
  | none => rfl
  | some v0 =>
    cases enterTarget st.wf c with
    | some target => rfl
    | none =>
      cases (c.status == .ok && c.tool == "submit") with
      | true => rfl
      | false => rfl

/-- One event at a time: the list of closed visits the summary reads (newest first) grows by exactly
the visit the event reports closed, and by nothing else. -/
theorem State.append_closed (st : State) (line : Nat) : ∀ e : Event,
    (st.append line e).1.closed = (st.append line e).2.stageVisit.toList ++ st.closed
  | .toolCall c => State.moveVisit_closed { st with failed := {} } c line
  | .outcome _ => rfl
  | .mcpTools _ _ => rfl
  | .message => rfl
  | .compaction => rfl
  | .restore => rfl
  | .tokens => rfl
  | .finish => rfl

/-- A whole run of events fed one at a time: the closed visits are the records the steps reported
closed, the oldest last, followed by those before. -/
theorem State.feed_closed (st : State) : ∀ evs : List (Nat × Event),
    (st.feed evs).closed = ((st.stepResults evs).filterMap (·.stageVisit)).reverse ++ st.closed
  | [] => rfl
  | (l, e) :: evs => by
    have ih := State.feed_closed (st.append l e).1 evs
    have hf : st.feed ((l, e) :: evs) = (st.append l e).1.feed evs := rfl
    have hs : st.stepResults ((l, e) :: evs) = (st.append l e).2 :: (st.append l e).1.stepResults evs := rfl
    rw [hf, hs, ih, State.append_closed st l e]
    cases hx : (st.append l e).2.stageVisit <;> simp [hx]

/-- From the start of a run: the list of closed visits the summary reads (its `stages`, reversed,
before the open visit's) is exactly the visit records the steps reported closed, newest first. -/
theorem State.feed_closed_run {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (evs : List (Nat × Event)) :
    (st0.feed evs).closed = ((st0.stepResults evs).filterMap (·.stageVisit)).reverse := by
  rw [State.feed_closed st0 evs]
  obtain ⟨_, _, rfl⟩ := State.create_state hc
  exact List.append_nil _

/-- The visit a call closes is the one it was made in: the record's ordinal is the call's visit. -/
theorem State.moveVisit_ordinal (st : State) (c : ToolCall) (line : Nat) :
    ∀ r, (st.moveVisit c line).2 = some r → st.visit.map (·.ordinal) = some r.visit := by
  unfold State.moveVisit
  cases st.visit with
  | none =>
    intro r hr
    cases hr
  | some v0 =>
    cases enterTarget st.wf c with
    | some target =>
      intro r hr
      cases hr
      rfl
    | none =>
      cases (c.status == .ok && c.tool == "submit") with
      | true =>
        intro r hr
        cases hr
        rfl
      | false =>
        intro r hr
        cases hr

/-- A step that closes a visit reports it under its own visit ordinal, the one `lar advantages`
joins a step's stage term by. -/
theorem State.append_closes_ordinal (st : State) (line : Nat) (c : ToolCall) :
    ∀ r, (st.append line (.toolCall c)).2.stageVisit = some r → (st.append line (.toolCall c)).2.visit = some r.visit :=
  State.moveVisit_ordinal { st with failed := {} } c line

/-- A visit's record describes the visit of stage `s` with `n` steps when it copies the checker's
visit's stage, step count and budget, and that visit is of `s` with `n` steps. -/
theorem Spec.visitRecord_of (r : StageVisitResult) (v : Visit) (s : Stage) (e : VisitEnd) (n : Nat)
    (h1 : r.stage = v.stage.id) (h2 : r.endedBy = e) (h3 : r.steps = v.steps) (h4 : r.budget = v.stage.budget)
    (hs : v.stage = s) (hn : v.steps = n) : VisitRecord r s e n := by
  rw [← hs, ← hn]
  exact ⟨h1, h2, h3, h4⟩

/-- Every visit of a run: for a workflow that loads and any events `h` before a call, the verdicts of
the visit the call closes, if it moves the run or ends it, are the specification's
`visitJudgements` of that visit, one for one, and its record names the visit (`VisitRecord`: the
stage it was of, how it ended, its steps, this call included, and the stage's budget); no other
call closes a visit; and the open visit the summary scores as if the run stopped gets the
judgements and the record of an unclosed visit (none once the run has ended). -/
theorem State.visitVerdicts_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) (line : Nat) (c : ToolCall) :
    (∀ s t, current wf h = some s → movesTo wf c = some t →
        ∃ r, ((st0.after h).append line (.toolCall c)).2.stageVisit = some r ∧
          VisitRecord r s .transition (c :: visitCalls wf h).length ∧
          JudgesAll r.verdicts (visitJudgements wf s (c :: visitCalls wf h) .transition (some t.id))) ∧
      (∀ s, current wf h = some s → EndsRun wf c →
        ∃ r, ((st0.after h).append line (.toolCall c)).2.stageVisit = some r ∧
          VisitRecord r s .submit (c :: visitCalls wf h).length ∧
          JudgesAll r.verdicts (visitJudgements wf s (c :: visitCalls wf h) .submit none)) ∧
      ((movesTo wf c = none ∧ ¬(c.tool = "submit" ∧ c.status = .ok)) ∨ current wf h = none →
        ((st0.after h).append line (.toolCall c)).2.stageVisit = none) ∧
      (∀ s, current wf h = some s →
        ∃ r, (st0.after h).openScore.1 = [r] ∧ VisitRecord r s .runEnd (visitCalls wf h).length ∧
          JudgesAll r.verdicts (visitJudgements wf s (visitCalls wf h) .runEnd none)) ∧
      (current wf h = none → (st0.after h).openScore.1 = []) := by
  have A := State.after_agrees hc h
  have V := State.after_visitAgrees hc h
  refine ⟨fun s t hs ht => ?_, fun s hs he => ?_, State.append_closes_none A line c, fun s hs => ?_, fun hn => ?_⟩
  · obtain ⟨v, hsv, hvs, hsteps, hfacts⟩ := State.append_closes_move A V line c s t hs ht
    refine ⟨_, hsv, Spec.visitRecord_of _ v s .transition _ rfl rfl rfl rfl hvs hsteps, ?_⟩
    show JudgesAll (scoreVisit (st0.after h).wf v .transition (some t.id)) _
    rw [A.wf_eq]
    exact scoreVisit_judges wf v .transition (some t.id) (c :: visitCalls wf h) s hvs hsteps hfacts
  · obtain ⟨v, hsv, hvs, hsteps, hfacts⟩ := State.append_closes_submit A V line c s hs he
    refine ⟨_, hsv, Spec.visitRecord_of _ v s .submit _ rfl rfl rfl rfl hvs hsteps, ?_⟩
    show JudgesAll (scoreVisit (st0.after h).wf v .submit none) _
    rw [A.wf_eq]
    exact scoreVisit_judges wf v .submit none (c :: visitCalls wf h) s hvs hsteps hfacts
  · obtain ⟨v0, hv0, hst⟩ := A.visit_stage s hs
    obtain ⟨h1, h2⟩ := V v0 hv0
    unfold State.openScore
    rw [hv0]
    refine ⟨_, rfl, Spec.visitRecord_of _ v0 s .runEnd _ rfl rfl rfl rfl hst h1, ?_⟩
    show JudgesAll (scoreVisit (st0.after h).wf v0 .runEnd none) _
    rw [A.wf_eq]
    exact scoreVisit_judges wf v0 .runEnd none (visitCalls wf h) s hst h1 h2
  · have hv : (st0.after h).visit = none := by
      cases hv0 : (st0.after h).visit with
      | none => rfl
      | some v0 =>
        rw [(A.current_of_visit_some hv0).2] at hn
        cases hn
    unfold State.openScore
    rw [hv] <;> rfl

end Lar
