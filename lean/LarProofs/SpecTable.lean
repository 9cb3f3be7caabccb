import LarProofs.SpecVerdicts

/-!
The tables of `Lar.Spec.Verdicts` are the checker's verdicts, one for one.

`LarProofs.SpecVerdicts` proves the checker's verdicts against lists that branch as the checker
does; here those lists are proved the same as the table's rows (`Spec.SameAs`: the same checks in
the same order, each proposition equivalent), row by row, and the headline theorems are stated
against the tables:

- `State.verdicts_spec`: the verdicts `State.append` reports for any event after any events.
- `State.gate_spec`: the gate's verdicts on a call proposed after any events.
-/

namespace Lar
open Lean Spec

/-! ## Lists of judgements that say the same -/

/-- Two lists of judgements say the same: the same checks in the same order, each proposition
equivalent to its counterpart's. -/
def Spec.SameAs : List Judgement → List Judgement → Prop
  | [], [] => True
  | j :: js, k :: ks => (j.check = k.check ∧ (j.passes ↔ k.passes)) ∧ Spec.SameAs js ks
  | _, _ => False

/-- A judgement that says what another says, then lists that say the same. -/
theorem Spec.sameAs_cons {j k : Judgement} {js ks : List Judgement} (hc : j.check = k.check)
    (hp : j.passes ↔ k.passes) (h : Spec.SameAs js ks) : Spec.SameAs (j :: js) (k :: ks) :=
  ⟨⟨hc, hp⟩, h⟩

/-- Every list says what it says. -/
theorem Spec.sameAs_refl : ∀ js : List Judgement, Spec.SameAs js js
  | [] => True.intro
  | _ :: js => ⟨⟨rfl, Iff.rfl⟩, Spec.sameAs_refl js⟩

/-- Lists that say the same, followed by lists that say the same. -/
theorem Spec.sameAs_append : ∀ (as bs cs ds : List Judgement),
    Spec.SameAs as bs → Spec.SameAs cs ds → Spec.SameAs (as ++ cs) (bs ++ ds)
  | [], [], _, _, _, h2 => h2
  | [], _ :: _, _, _, h1, _ => False.elim h1
  | _ :: _, [], _, _, h1, _ => False.elim h1
  | _ :: as, _ :: bs, cs, ds, h1, h2 => by
    obtain ⟨hab, h1'⟩ := h1
    exact ⟨hab, Spec.sameAs_append as bs cs ds h1' h2⟩

/-- `sameAs_append` with the lists left to unification. -/
theorem Spec.SameAs.app {as bs cs ds : List Judgement} (h1 : Spec.SameAs as bs) (h2 : Spec.SameAs cs ds) :
    Spec.SameAs (as ++ cs) (bs ++ ds) :=
  Spec.sameAs_append as bs cs ds h1 h2

/-- Verdicts that render judgements render any judgements that say the same. -/
theorem Spec.judgesAll_of_sameAs : ∀ (vs : List Verdict) (js ks : List Judgement),
    JudgesAll vs js → Spec.SameAs ks js → JudgesAll vs ks
  | [], [], [], _, _ => True.intro
  | [], [], _ :: _, _, h2 => False.elim h2
  | [], _ :: _, _, h1, _ => False.elim h1
  | _ :: _, [], _, h1, _ => False.elim h1
  | _ :: _, _ :: _, [], _, h2 => False.elim h2
  | _ :: vs, _ :: js, _ :: ks, h1, h2 => by
    obtain ⟨⟨hc, hp⟩, h1'⟩ := h1
    obtain ⟨⟨hc', hp'⟩, h2'⟩ := h2
    exact ⟨⟨hc.trans hc'.symm, hp.trans hp'.symm⟩, Spec.judgesAll_of_sameAs vs js ks h1' h2'⟩

/-- `judgesAll_of_sameAs` with the lists left to unification. -/
theorem Spec.JudgesAll.same {vs : List Verdict} {js ks : List Judgement} (h1 : JudgesAll vs js)
    (h2 : Spec.SameAs ks js) : JudgesAll vs ks :=
  Spec.judgesAll_of_sameAs vs js ks h1 h2

/-- A row made for every call is the one judgement. -/
theorem Spec.row_true_sameAs (j : Judgement) : Spec.SameAs (row True j) [j] := by
  rw [Spec.row_true]
  exact Spec.sameAs_refl [j]

/-- A row says what a conditional judgement says when their conditions are equivalent. Any decision
procedure for the condition will do. -/
theorem Spec.row_sameAs_ite {P Q : Prop} {inst : Decidable Q} (h : P ↔ Q) (j : Judgement) :
    Spec.SameAs (row P j) (@ite _ Q inst [j] []) := by
  by_cases hq : Q
  · rw [Spec.row_pos (h.mpr hq), if_pos hq]
    exact Spec.sameAs_refl [j]
  · have hp : ¬P := fun hp => hq (h.mp hp)
    rw [Spec.row_neg hp, if_neg hq]
    exact True.intro

/-! ## What the rows read of a call -/

/-- A call of the built-in tool `t` is a call of no other tool. -/
theorem Spec.ofTool_eq {c : ProposedCall} {t t' : Tool} (ht : Tool.ofName? c.tool = some t) (h : OfTool c t') :
    t' = t := by
  obtain ⟨_, h2⟩ := h
  exact Option.some.inj (h2.symm.trans ht)

/-- `tool.permitted` in a stage `st`. -/
theorem Spec.permittedNow_some (st : Stage) (tool : String) : PermittedNow (some st) tool ↔ Permitted st tool := by
  constructor
  · intro hx
    obtain ⟨st', e, hp⟩ := hx
    cases e
    exact hp
  · intro hp
    exact ⟨st, rfl, hp⟩

/-- `tool.transition` in a stage `st`. -/
theorem Spec.transitionNow_some (wf : Workflow) (st : Stage) (args : Json) :
    TransitionNow wf (some st) args ↔ TransitionOk wf st args := by
  constructor
  · intro hx
    exact hx st rfl
  · intro hx st' e
    cases e
    exact hx

/-- `tool.submit_terminal` in a stage `st`. -/
theorem Spec.terminalNow_some (wf : Workflow) (st : Stage) : TerminalNow wf (some st) ↔ Terminal wf st.id := by
  constructor
  · intro hx
    exact hx st rfl
  · intro hx st' e
    cases e
    exact hx

/-- The command of a call whose `command` argument is a string is `commandArg`'s. -/
theorem Spec.commandArg_of {args : Json} {cmd : String} (h : strArg? args "command" = some cmd) :
    commandArg args = cmd := by
  unfold commandArg
  rw [h] <;> rfl

/-- A `run_command` call whose arguments are valid has a `command` argument, a string. -/
theorem Spec.command_of_argsOk (c : ProposedCall) (h : ArgsOkFor .runCommand c) :
    strArg? c.args "command" = some (commandArg c.args) := by
  obtain ⟨_, _, hall, _⟩ := h
  have hf : fieldOk c.args ⟨"command", .nonEmptyStr, true⟩ = true := hall _ (List.mem_cons.mpr (Or.inl rfl))
  simp only [fieldOk] at hf
  unfold commandArg strArg?
  revert hf
  cases field? c.args "command" with
  | none =>
    intro hf
    cases hf
  | some v =>
    cases v <;> intro hf <;> first | rfl | cases hf

/-- A pattern of the list that matches the command is found first, by the first one that does. -/
theorem Spec.exists_firstMatch (cmd : String) : ∀ ps : List String,
    (∃ p ∈ ps, CommandMatches p.toList cmd.toList) → ∃ p, FirstMatch ps cmd p
  | [], hx => by
    obtain ⟨_, hp, _⟩ := hx
    cases hp
  | q :: qs, hx => by
    by_cases hq : CommandMatches q.toList cmd.toList
    · exact ⟨q, [], qs, rfl, hq, fun r hr => by cases hr⟩
    · have hx' : ∃ p ∈ qs, CommandMatches p.toList cmd.toList := by
        obtain ⟨p, hp, hm⟩ := hx
        rcases List.mem_cons.mp hp with he | hin
        · subst he
          exact absurd hm hq
        · exact ⟨p, hin, hm⟩
      obtain ⟨r, before, after, he, hr, hb⟩ := Spec.exists_firstMatch cmd qs hx'
      refine ⟨r, q :: before, after, ?_, hr, ?_⟩
      · rw [he] <;> rfl
      · intro x hx
        rcases List.mem_cons.mp hx with hxq | hxb
        · rw [hxq]
          exact hq
        · exact hb x hxb

/-- The first matching pattern is a pattern of the list, and it matches. -/
theorem Spec.mem_of_firstMatch {ps : List String} {cmd p : String} (h : FirstMatch ps cmd p) :
    p ∈ ps ∧ CommandMatches p.toList cmd.toList := by
  obtain ⟨before, after, he, hm, _⟩ := h
  refine ⟨?_, hm⟩
  rw [he]
  exact List.mem_append.mpr (Or.inr (List.mem_cons.mpr (Or.inl rfl)))

/-- `tool.approved`'s row applies exactly where the checker looks for an ask pattern and finds one. -/
theorem Spec.approvedRow_iff (wf : Workflow) (c : ToolCall) :
    (ValidCallOf c.toProposed .runCommand ∧ CommandOk wf c.args ∧ AskMatches wf c.args) ↔
      (AskApplies wf c.toProposed ∧ ∃ p, FirstMatch wf.policy.commands.ask (commandArg c.args) p) := by
  constructor
  · intro hx
    obtain ⟨⟨⟨hm, ht⟩, ha⟩, hc, cmd, hcmd, p, hp, hmatch⟩ := hx
    refine ⟨⟨hm, ht, ha, hc⟩, ?_⟩
    rw [Spec.commandArg_of hcmd]
    exact Spec.exists_firstMatch cmd _ ⟨p, hp, hmatch⟩
  · intro hx
    obtain ⟨⟨hm, ht, ha, hc⟩, p, hfm⟩ := hx
    obtain ⟨hp, hmatch⟩ := Spec.mem_of_firstMatch hfm
    exact ⟨⟨⟨hm, ht⟩, ha⟩, hc, commandArg c.args, Spec.command_of_argsOk c.toProposed ha, p, hp, hmatch⟩

/-! ## The rows made before a call runs -/

/-- The table's rows that depend on the tool: `tool.transition` to `tool.sandbox_required`. -/
noncomputable def Spec.toolRows (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall) :
    List Judgement :=
  row (ValidCallOf c .enterStage ∧ RunOpen cur) ⟨.toolTransition, TransitionNow wf cur c.args⟩ ++
  row (ValidCallOf c .submit ∧ RunOpen cur) ⟨.toolSubmitTerminal, TerminalNow wf cur⟩ ++
  row (ValidCallOf c .runCommand) ⟨.toolCommandPolicy, CommandOk wf c.args⟩ ++
  row (∃ t : Tool, ValidCallOf c t ∧ t.pathArgs ≠ []) ⟨.toolPathPolicy, PathsOk wf c⟩ ++
  row (ValidCallOf c .runCommand) ⟨.toolSandboxRequired, SandboxOk wf sb⟩

/-- The rows made before a call runs: the four every known call may get, then the tool's. -/
theorem Spec.callTable_split (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    callTable wf sb mcp cur c =
      row True ⟨.toolRunOpen, RunOpen cur⟩ ++ row True ⟨.toolKnown, KnownNow mcp c.tool⟩ ++
      row (KnownNow mcp c.tool) ⟨.toolArgs, CallArgsOk c⟩ ++
      row (KnownNow mcp c.tool ∧ RunOpen cur) ⟨.toolPermitted, PermittedNow cur c.tool⟩ ++
      Spec.toolRows wf sb cur c := by
  unfold Spec.callTable Spec.toolRows
  simp only [List.append_assoc]

/-- None of the tool's rows applies to a call that is no built-in tool's with valid arguments. -/
theorem Spec.toolRows_nil (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall)
    (hV : ∀ t, ¬ValidCallOf c t) : Spec.toolRows wf sb cur c = [] := by
  have h5 : ¬(ValidCallOf c .enterStage ∧ RunOpen cur) := fun hx => hV _ hx.1
  have h6 : ¬(ValidCallOf c .submit ∧ RunOpen cur) := fun hx => hV _ hx.1
  have h7 : ¬ValidCallOf c .runCommand := hV _
  have h8 : ¬∃ t, ValidCallOf c t ∧ t.pathArgs ≠ [] := fun ⟨t, hv, _⟩ => hV t hv
  unfold Spec.toolRows
  rw [Spec.row_neg h5, Spec.row_neg h6, Spec.row_neg h7, Spec.row_neg h8, Spec.row_neg h7] <;> rfl

/-- The tool's rows for a call of the built-in tool `t` with valid arguments are the checks of `t`. -/
theorem Spec.toolRows_sameAs (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall)
    (t : Tool) (hm : isMcpName c.tool = false) (ht : Tool.ofName? c.tool = some t) (ha : ArgsOkFor t c) :
    Spec.SameAs (Spec.toolRows wf sb cur c) (Spec.toolBranch wf sb cur c.args t) := by
  have hv : ∀ t', ValidCallOf c t' ↔ t' = t := fun t' =>
    ⟨fun hx => Spec.ofTool_eq ht hx.1, fun e => by rw [e]; exact ⟨⟨hm, ht⟩, ha⟩⟩
  have hno : ∀ t', t' ≠ t → ¬ValidCallOf c t' := fun t' hne hx => hne ((hv t').mp hx)
  have hpath : PathsOk wf c ↔ PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor t) t c.args := by
    constructor
    · intro hp
      exact hp t ⟨hm, ht⟩
    · intro hp t' ho
      rw [Spec.ofTool_eq ht ho]
      exact hp
  have hrow : (∃ t', ValidCallOf c t' ∧ t'.pathArgs ≠ []) ↔ t.pathArgs ≠ [] := by
    constructor
    · intro hx
      obtain ⟨t', hx', hp⟩ := hx
      rw [(hv t').mp hx'] at hp
      exact hp
    · intro hp
      exact ⟨t, (hv t).mpr rfl, hp⟩
  unfold Spec.toolRows
  cases t
  case runCommand =>
    have h5 : ¬(ValidCallOf c .enterStage ∧ RunOpen cur) := fun hx => hno _ (by intro h; cases h) hx.1
    have h6 : ¬(ValidCallOf c .submit ∧ RunOpen cur) := fun hx => hno _ (by intro h; cases h) hx.1
    have h7 : ValidCallOf c .runCommand := (hv _).mpr rfl
    have h8 : ∃ t', ValidCallOf c t' ∧ t'.pathArgs ≠ [] := hrow.mpr (by intro h; cases h)
    rw [Spec.row_neg h5, Spec.row_neg h6, Spec.row_pos h7, Spec.row_pos h8, Spec.row_pos h7]
    exact Spec.sameAs_cons rfl Iff.rfl (Spec.sameAs_cons rfl hpath (Spec.sameAs_cons rfl Iff.rfl True.intro))
  case enterStage =>
    have h6 : ¬(ValidCallOf c .submit ∧ RunOpen cur) := fun hx => hno _ (by intro h; cases h) hx.1
    have h7 : ¬ValidCallOf c .runCommand := hno _ (by intro h; cases h)
    have h8 : ¬∃ t', ValidCallOf c t' ∧ t'.pathArgs ≠ [] := fun hx => hrow.mp hx rfl
    cases cur with
    | none =>
      have h5 : ¬(ValidCallOf c .enterStage ∧ RunOpen none) := fun hx => hx.2 rfl
      rw [Spec.row_neg h5, Spec.row_neg h6, Spec.row_neg h7, Spec.row_neg h8, Spec.row_neg h7]
      exact True.intro
    | some st =>
      have h5 : ValidCallOf c .enterStage ∧ RunOpen (some st) := ⟨(hv _).mpr rfl, fun hn => by cases hn⟩
      rw [Spec.row_pos h5, Spec.row_neg h6, Spec.row_neg h7, Spec.row_neg h8, Spec.row_neg h7]
      exact Spec.sameAs_cons rfl (Spec.transitionNow_some wf st c.args) True.intro
  case submit =>
    have h5 : ¬(ValidCallOf c .enterStage ∧ RunOpen cur) := fun hx => hno _ (by intro h; cases h) hx.1
    have h7 : ¬ValidCallOf c .runCommand := hno _ (by intro h; cases h)
    have h8 : ¬∃ t', ValidCallOf c t' ∧ t'.pathArgs ≠ [] := fun hx => hrow.mp hx rfl
    cases cur with
    | none =>
      have h6 : ¬(ValidCallOf c .submit ∧ RunOpen none) := fun hx => hx.2 rfl
      rw [Spec.row_neg h5, Spec.row_neg h6, Spec.row_neg h7, Spec.row_neg h8, Spec.row_neg h7]
      exact True.intro
    | some st =>
      have h6 : ValidCallOf c .submit ∧ RunOpen (some st) := ⟨(hv _).mpr rfl, fun hn => by cases hn⟩
      rw [Spec.row_neg h5, Spec.row_pos h6, Spec.row_neg h7, Spec.row_neg h8, Spec.row_neg h7]
      exact Spec.sameAs_cons rfl (Spec.terminalNow_some wf st) True.intro
  -- The file tools: the path row alone.
  all_goals
    have h5 : ¬(ValidCallOf c .enterStage ∧ RunOpen cur) := fun hx => hno _ (by intro h; cases h) hx.1
    have h6 : ¬(ValidCallOf c .submit ∧ RunOpen cur) := fun hx => hno _ (by intro h; cases h) hx.1
    have h7 : ¬ValidCallOf c .runCommand := hno _ (by intro h; cases h)
    have h8 : ∃ t', ValidCallOf c t' ∧ t'.pathArgs ≠ [] := hrow.mpr (by intro h; cases h)
    rw [Spec.row_neg h5, Spec.row_neg h6, Spec.row_neg h7, Spec.row_pos h8, Spec.row_neg h7]
    exact Spec.sameAs_cons rfl hpath True.intro

/-- The first four rows for a call of an MCP name, then none of the tool's. -/
theorem Spec.callTable_mcp (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) (hm : isMcpName c.tool = true) :
    Spec.SameAs
      (row True ⟨.toolRunOpen, RunOpen cur⟩ ++ row True ⟨.toolKnown, KnownNow mcp c.tool⟩ ++
        row (KnownNow mcp c.tool) ⟨.toolArgs, CallArgsOk c⟩ ++
        row (KnownNow mcp c.tool ∧ RunOpen cur) ⟨.toolPermitted, PermittedNow cur c.tool⟩ ++
        Spec.toolRows wf sb cur c)
      (Spec.mcpBranch mcp cur c) := by
  have hV : ∀ t, ¬ValidCallOf c t := fun t hv => by
    obtain ⟨⟨hf, _⟩, _⟩ := hv
    rw [hm] at hf
    cases hf
  have hK : KnownNow mcp c.tool ↔ McpKnown mcp c.tool := by
    constructor
    · intro hx
      rcases hx with ⟨_, hk⟩ | ⟨hf, _⟩
      · exact hk
      · rw [hm] at hf
        cases hf
    · intro hk
      exact Or.inl ⟨hm, hk⟩
  have hA : CallArgsOk c ↔ McpArgsOk c := by
    constructor
    · intro hx
      rcases hx with ⟨_, ha⟩ | ⟨hf, _⟩
      · exact ha
      · rw [hm] at hf
        cases hf
    · intro ha
      exact Or.inl ⟨hm, ha⟩
  rw [Spec.toolRows_nil wf sb cur c hV, List.append_nil, Spec.row_true, Spec.row_true]
  unfold Spec.mcpBranch
  by_cases hk : McpKnown mcp c.tool
  · have hK' : KnownNow mcp c.tool := hK.mpr hk
    rw [Spec.row_pos hK', if_pos hk]
    cases cur with
    | none =>
      have h4 : ¬(KnownNow mcp c.tool ∧ RunOpen none) := fun hx => hx.2 rfl
      rw [Spec.row_neg h4]
      exact Spec.sameAs_cons rfl Iff.rfl (Spec.sameAs_cons rfl hK (Spec.sameAs_cons rfl hA True.intro))
    | some st =>
      have h4 : KnownNow mcp c.tool ∧ RunOpen (some st) := ⟨hK', fun hn => by cases hn⟩
      rw [Spec.row_pos h4]
      exact Spec.sameAs_cons rfl Iff.rfl (Spec.sameAs_cons rfl hK (Spec.sameAs_cons rfl hA
        (Spec.sameAs_cons rfl (Spec.permittedNow_some st c.tool) True.intro)))
  · have hK' : ¬KnownNow mcp c.tool := fun hx => hk (hK.mp hx)
    have h4 : ¬(KnownNow mcp c.tool ∧ RunOpen cur) := fun hx => hK' hx.1
    rw [Spec.row_neg hK', Spec.row_neg h4, if_neg hk]
    exact Spec.sameAs_cons rfl Iff.rfl (Spec.sameAs_cons rfl hK True.intro)

/-- A name that is neither an MCP name nor one of the eight tools: `tool.run_open` and a failed
`tool.known`, nothing more. -/
theorem Spec.callTable_unknown (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) (hm : isMcpName c.tool = false) (ht : Tool.ofName? c.tool = none) :
    Spec.SameAs
      (row True ⟨.toolRunOpen, RunOpen cur⟩ ++ row True ⟨.toolKnown, KnownNow mcp c.tool⟩ ++
        row (KnownNow mcp c.tool) ⟨.toolArgs, CallArgsOk c⟩ ++
        row (KnownNow mcp c.tool ∧ RunOpen cur) ⟨.toolPermitted, PermittedNow cur c.tool⟩ ++
        Spec.toolRows wf sb cur c)
      (Spec.builtinBranch wf sb cur c none) := by
  have hk : ¬Known c.tool := fun hk => by
    have h1 := (known_iff c.tool).mpr hk
    unfold knownB at h1
    rw [ht] at h1
    cases h1
  have hK : ¬KnownNow mcp c.tool := fun hx => by
    rcases hx with ⟨hf, _⟩ | ⟨_, hk'⟩
    · rw [hm] at hf
      cases hf
    · exact hk hk'
  have hV : ∀ t, ¬ValidCallOf c t := fun t hv => by
    obtain ⟨⟨_, h2⟩, _⟩ := hv
    rw [ht] at h2
    cases h2
  have h4 : ¬(KnownNow mcp c.tool ∧ RunOpen cur) := fun hx => hK hx.1
  rw [Spec.toolRows_nil wf sb cur c hV, List.append_nil, Spec.row_true, Spec.row_true, Spec.row_neg hK,
    Spec.row_neg h4]
  exact Spec.sameAs_cons rfl Iff.rfl
    (Spec.sameAs_cons rfl ⟨fun hx => absurd hx hK, fun hx => absurd hx hk⟩ True.intro)

/-- The first four rows for a call of the built-in tool `t`: `tool.run_open`, `tool.known` (it
passes), `tool.args`, and `tool.permitted` while the run is open. -/
theorem Spec.callHead_builtin (mcp : List (String × String)) (cur : Option Stage) (c : ProposedCall) (t : Tool)
    (hm : isMcpName c.tool = false) (ht : Tool.ofName? c.tool = some t) :
    Spec.SameAs
      (row True ⟨.toolRunOpen, RunOpen cur⟩ ++ row True ⟨.toolKnown, KnownNow mcp c.tool⟩ ++
        row (KnownNow mcp c.tool) ⟨.toolArgs, CallArgsOk c⟩ ++
        row (KnownNow mcp c.tool ∧ RunOpen cur) ⟨.toolPermitted, PermittedNow cur c.tool⟩)
      ([⟨.toolRunOpen, RunOpen cur⟩, ⟨.toolKnown, Known c.tool⟩, ⟨.toolArgs, ArgsOkFor t c⟩] ++
        Spec.permittedBranch cur c.tool) := by
  have hk : Known c.tool := (known_iff c.tool).mp (by unfold knownB; rw [ht] <;> rfl)
  have hK : KnownNow mcp c.tool := Or.inr ⟨hm, hk⟩
  have hKi : KnownNow mcp c.tool ↔ Known c.tool := ⟨fun _ => hk, fun _ => hK⟩
  have hA : CallArgsOk c ↔ ArgsOkFor t c := by
    constructor
    · intro hx
      rcases hx with ⟨hf, _⟩ | ⟨_, he, t', ht', hv⟩
      · rw [hm] at hf
        cases hf
      · have e : t' = t := Option.some.inj (ht'.symm.trans ht)
        rw [e] at hv
        exact ⟨he, hv⟩
    · intro hx
      obtain ⟨he, hv⟩ := hx
      exact Or.inr ⟨hm, he, t, ht, hv⟩
  rw [Spec.row_true, Spec.row_true, Spec.row_pos hK]
  cases cur with
  | none =>
    have h4 : ¬(KnownNow mcp c.tool ∧ RunOpen none) := fun hx => hx.2 rfl
    rw [Spec.row_neg h4]
    exact Spec.sameAs_cons rfl Iff.rfl (Spec.sameAs_cons rfl hKi (Spec.sameAs_cons rfl hA True.intro))
  | some st =>
    have h4 : KnownNow mcp c.tool ∧ RunOpen (some st) := ⟨hK, fun hn => by cases hn⟩
    rw [Spec.row_pos h4]
    exact Spec.sameAs_cons rfl Iff.rfl (Spec.sameAs_cons rfl hKi (Spec.sameAs_cons rfl hA
      (Spec.sameAs_cons rfl (Spec.permittedNow_some st c.tool) True.intro)))

/-- Every row made before a call of the built-in tool `t` runs. -/
theorem Spec.callTable_builtin (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) (t : Tool) (hm : isMcpName c.tool = false)
    (ht : Tool.ofName? c.tool = some t) :
    Spec.SameAs
      (row True ⟨.toolRunOpen, RunOpen cur⟩ ++ row True ⟨.toolKnown, KnownNow mcp c.tool⟩ ++
        row (KnownNow mcp c.tool) ⟨.toolArgs, CallArgsOk c⟩ ++
        row (KnownNow mcp c.tool ∧ RunOpen cur) ⟨.toolPermitted, PermittedNow cur c.tool⟩ ++
        Spec.toolRows wf sb cur c)
      (Spec.knownBranch wf sb cur c t) := by
  unfold Spec.knownBranch
  refine Spec.SameAs.app (Spec.callHead_builtin mcp cur c t hm ht) ?_
  by_cases ha : ArgsOkFor t c
  · rw [if_pos ha]
    exact Spec.toolRows_sameAs wf sb cur c t hm ht ha
  · have hV : ∀ t', ¬ValidCallOf c t' := fun t' hv => by
      obtain ⟨ho, ha'⟩ := hv
      rw [Spec.ofTool_eq ht ho] at ha'
      exact ha ha'
    rw [if_neg ha, Spec.toolRows_nil wf sb cur c hV]
    exact True.intro

/-- The table's rows made before any call runs, in any stage with any MCP tools offered, are the
checks the checker's branching makes. -/
theorem Spec.callTable_sameAs (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String))
    (cur : Option Stage) (c : ProposedCall) :
    Spec.SameAs (callTable wf sb mcp cur c) (Spec.preBranch wf sb mcp cur c) := by
  rw [Spec.callTable_split]
  unfold Spec.preBranch
  cases hm : isMcpName c.tool with
  | true => exact Spec.callTable_mcp wf sb mcp cur c hm
  | false =>
    show Spec.SameAs _ (Spec.builtinBranch wf sb cur c (Tool.ofName? c.tool))
    cases ht : Tool.ofName? c.tool with
    | none => exact Spec.callTable_unknown wf sb mcp cur c hm ht
    | some t => exact Spec.callTable_builtin wf sb mcp cur c t hm ht

/-- The gate's rows are the checks the gate's branching makes. -/
theorem Spec.gateJudgements_sameAs (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ProposedCall) :
    Spec.SameAs (gateJudgements wf sb h c) (Spec.gateBranch wf sb h c) := by
  unfold gateJudgements Spec.gateBranch
  exact Spec.SameAs.app (Spec.callTable_sameAs wf sb (offered h) (current wf h) c) (Spec.row_true_sameAs _)

/-- Every row of the tool-call table, for a step made after `h`, is the check the step's branching
makes. -/
theorem Spec.stepJudgements_sameAs (wf : Workflow) (sb : Option SandboxRecord) (h : History) (c : ToolCall) :
    Spec.SameAs (stepJudgements wf sb h c) (Spec.stepBranch wf sb h c) := by
  unfold stepJudgements Spec.stepBranch
  exact Spec.SameAs.app
    (Spec.SameAs.app
      (Spec.SameAs.app (Spec.gateJudgements_sameAs wf sb h c.toProposed)
        (Spec.row_sameAs_ite (Spec.approvedRow_iff wf c) _))
      (Spec.row_sameAs_ite Iff.rfl _))
    (Spec.row_true_sameAs _)

/-! ## Every event -/

/-- One event after `h`: the verdicts `State.append` reports for it are `eventJudgements`, one for one. -/
theorem State.append_judges {wf : Workflow} {sb : Option SandboxRecord} {h : History} {st : State}
    (A : Agrees wf sb h st) (O : OutcomeAgrees wf h st) (line : Nat) :
    ∀ e : Event, JudgesAll (st.append line e).2.verdicts (eventJudgements wf sb h e)
  | .toolCall c => Spec.JudgesAll.same (State.callVerdicts_judges A c) (Spec.stepJudgements_sameAs wf sb h c)
  | .outcome o => State.outcomeVerdicts_judges A O o line
  | .mcpTools _ _ => True.intro
  | .message => True.intro
  | .compaction => True.intro
  | .restore => True.intro
  | .tokens => True.intro
  | .finish => True.intro

/-- Every event of a run: for a workflow that loads and any events `h` (newest first) before it,
the verdicts the checker reports for the next event are the specification's checks of that event,
one for one (`eventJudgements`: for a step, the rows of the tool-call table that apply to it): the
same checks in the same order, each passing exactly when its proposition holds. -/
theorem State.verdicts_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) (line : Nat) (e : Event) :
    JudgesAll ((st0.after h).append line e).2.verdicts (eventJudgements wf sb h e) :=
  State.append_judges (State.after_agrees hc h) (State.after_outcomeAgrees hc h) line e

/-- The gate, after any events: its verdicts on a proposed call are the specification's
`gateJudgements` (the rows of the tool-call table up to `tool.not_repeated` that apply to the call),
one for one. -/
theorem State.gate_spec {wf : Workflow} {headerLine : Nat} {sb : Option SandboxRecord} {st0 : State}
    (hc : State.create wf headerLine sb = .ok st0) (h : History) (call : ProposedCall) :
    JudgesAll ((st0.after h).gate call).verdicts (gateJudgements wf sb h call) :=
  Spec.JudgesAll.same (State.gate_judges (State.after_agrees hc h) call) (Spec.gateJudgements_sameAs wf sb h call)

end Lar
