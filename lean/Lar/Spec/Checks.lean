import Lar.Checks

/-!
# What each check means

For every check of docs/rewards.md, the proposition saying what passing means, over the pieces of
state the check reads: the glob relation `Matches` (one constructor per line of `match` in the
document), the tool-call checks and `CallConforms` (the checks of severity `error` together), the
ask policy, the stage-visit checks and exit conditions, the outcome checks.

Statements only: no theorem, no tactic (test/lean/import-closure.test.ts). `LarProofs.Checks` proves
that each `Bool` procedure of the checker (`Lar.Checks`) decides its proposition; the specification
of a whole run (`Lar.Spec.Trajectory`) is written with these, so it elaborates, and can be read, on
its own, whether or not a proof does. Neither this file nor the specification is imported by
`lar-verify`.
-/

namespace Lar
open Lean

/-! ## Patterns -/

/-- `Matches p s`: the pattern `p` matches the whole text `s`. One constructor
per line of the definition of `match` in docs/rewards.md. The special
characters appear as premises (`c = '*'`) rather than in the indices, so that
case analysis on a derivation only ever unifies variables and list
constructors. -/
inductive Matches : List Char → List Char → Prop where
  /-- `match([], s) = s == []` -/
  | nil : Matches [] []
  /-- `'*'` matches the empty run: `match(p, s)`. -/
  | starSkip {c : Char} {p s : List Char} : c = '*' → Matches p s → Matches (c :: p) s
  /-- `'*'` eats one more character: `s = c :: s' ∧ match('*' :: p, s')`. -/
  | starEat {c d : Char} {p s : List Char} : c = '*' → Matches (c :: p) s → Matches (c :: p) (d :: s)
  /-- `'?'` matches exactly one character. -/
  | any {c d : Char} {p s : List Char} : c = '?' → Matches p s → Matches (c :: p) (d :: s)
  /-- Any other character matches itself. -/
  | lit {c : Char} {p s : List Char} : c ≠ '*' → c ≠ '?' → Matches p s → Matches (c :: p) (c :: s)

/-- A pattern matches a command when it matches the normalized command or one of its parts. -/
def CommandMatches (pattern cmd : List Char) : Prop :=
  Matches pattern (normL cmd) ∨ ∃ part ∈ partsL cmd, Matches pattern part

/-- `p` is the first pattern of `patterns` that matches the command `cmd` (whole or a part). -/
def FirstMatch (patterns : List String) (cmd : String) (p : String) : Prop :=
  ∃ before after, patterns = before ++ p :: after ∧ CommandMatches p.toList cmd.toList ∧
    ∀ q ∈ before, ¬CommandMatches q.toList cmd.toList

/-! ## Tool-call level -/

/-- The strict schema of a tool's arguments, as a proposition. -/
def ArgsValid (t : Tool) (args : Json) : Prop :=
  isObject args = true ∧
  (∀ s ∈ t.argSpecs, fieldOk args s = true) ∧
  ∀ k ∈ objectKeys args, ∃ s ∈ t.argSpecs, s.key = k

/-- `tool.run_open`: the run has not ended (there is a current stage). -/
def RunOpen (cur : Option Stage) : Prop := cur ≠ none

/-- `tool.known`: the name is one of the eight tools. -/
def Known (name : String) : Prop := ∃ t ∈ Tool.all, t.name = name

/-- `tool.args`: the argument text was JSON, and the arguments fit the tool's strict schema. -/
def ArgsOk (c : ProposedCall) : Prop :=
  c.argsError = none ∧ ∃ t, Tool.ofName? c.tool = some t ∧ ArgsValid t c.args

/-- `tool.args` for a call of the known tool `t`: no `argsError`, and the arguments
fit `t`'s strict schema. -/
def ArgsOkFor (t : Tool) (c : ProposedCall) : Prop := c.argsError = none ∧ ArgsValid t c.args

/-- `tool.permitted` (`stagePermits` in core/verifier/pre-checks.ts): the tool is in the current
stage's `tools`, or it is an MCP tool that an MCP pattern of the stage matches (`mcp__github__get_*`).
A built-in tool is never an MCP name, so it is permitted by its exact name only. -/
def Permitted (stage : Stage) (tool : String) : Prop :=
  tool ∈ stage.tools ∨
    (isMcpName tool = true ∧ ∃ p ∈ stage.tools, isMcpPattern p = true ∧ Matches p.toList tool.toList)

/-- `tool.known` for an MCP name: some tool the servers offer now (name, schema digest) has it. -/
def McpKnown (mcp : List (String × String)) (name : String) : Prop := ∃ p ∈ mcp, p.1 = name

/-- `tool.args` for an MCP tool: the argument text was JSON, and the arguments are an object. -/
def McpArgsOk (c : ProposedCall) : Prop := c.argsError = none ∧ isObject c.args = true

/-- A stage of this id is defined. -/
def StageDefined (wf : Workflow) (id : String) : Prop := ∃ s ∈ wf.stages, s.id = id

/-- `tool.transition` (and `stage.transition` for a transition): `dst` is a defined
stage and `src → dst` is in `transitions`. -/
def LegalTransition (wf : Workflow) (src dst : String) : Prop :=
  StageDefined wf dst ∧ dst ∈ wf.succs src

/-- `tool.submit_terminal` (and `stage.transition` for a submit): the stage is terminal. -/
def Terminal (wf : Workflow) (id : String) : Prop := id ∈ wf.terminal

/-- `tool.command_policy`: no deny pattern matches the command (whole or any part). -/
def CommandAllowed (deny : List String) (cmd : String) : Prop :=
  ∀ p ∈ deny, ¬CommandMatches p.toList cmd.toList

/-- The normalized path `n` is the read-only path `r` or lies below it (docs/rewards.md,
`tool.path_policy`): with `q` the path `r` without its trailing `/`s, `n == q` or `n` starts with
`q + "/"`. So `src/` protects `src` and `src/a.ts`, not `srcx/a.ts`; `tests/x` is not below `test`. -/
def UnderPath (r n : List Char) : Prop :=
  n = dropTrailingSlashes r ∨ dropTrailingSlashes r ++ ['/'] <+: n

/-- One path argument: it normalizes (`npath`), the normal form matches no deny
pattern and lies under none of the read-only paths `ro` (given only for the
write tools, `Workflow.readOnlyFor`). -/
def PathOk (deny ro : List String) (path : String) : Prop :=
  ∃ n, npath path = .ok n ∧ (∀ p ∈ deny, ¬Matches p.toList n.toList) ∧ ∀ r ∈ ro, ¬UnderPath r.toList n.toList

/-- `tool.path_policy`: every present path argument of the tool passes `PathOk`. -/
def PathPolicyOk (deny ro : List String) (t : Tool) (args : Json) : Prop :=
  ∀ key ∈ t.pathArgs, ∀ s, strArg? args key = some s → PathOk deny ro s

/-- `tool.not_repeated`: the same call did not fail in the current change epoch.
`lastFail` is the epoch at which the same call last failed. -/
def NotRepeated (lastFail : Option Nat) (epoch : Nat) : Prop := lastFail ≠ some epoch

/-- `tool.approved` (made only for a command that matches an `ask` pattern): not rejected. -/
def Approved (status : CallStatus) : Prop := status ≠ .denied

/-- `tool.succeeded`: status `ok` and, for `run_command`, exit code 0 with an observed end. -/
def Succeeded (c : ToolCall) : Prop :=
  c.status = .ok ∧
    (c.tool ≠ "run_command" ∨
      (c.result.exitCode = some 0 ∧
        (c.result.completion = none ∨ c.result.completion = some .marker ∨
          c.result.completion = some .exit)))

/-- A command whose end was observed, whatever its exit code (`command_ran`). -/
def RanToEnd (c : ToolCall) : Prop :=
  c.status = .ok ∧ c.tool = "run_command" ∧ c.result.exitCode ≠ none ∧
    c.result.completion ≠ some .timeout ∧ c.result.completion ≠ some .unobserved

/-- `outcome_ran`: the call ran the workflow's outcome command itself (the same
command line after `norm`, and no `cwd`: the host runs only such a call as the check runs it, any
other in the agent's terminal) to an observed end, and its tests ran: the count its
output gives is positive or, when the host recognised no test runner, the exit
code is the one the check expects. -/
def RanCheck (check : OutcomeCheck) (c : ToolCall) : Prop :=
  RanToEnd c ∧ field? c.args "cwd" = none ∧
    (strArg? c.args "command").map (fun s => normL s.toList) = some (normL check.command.toList) ∧
    match c.result.testsRan with
    | some n => 0 < n
    | none => c.result.exitCode = some check.expectExitCode

/-- `tool.transition` for an `enter_stage` call made in stage `st`: the stage it
names is defined and `st.id → stage` is a transition. -/
def TransitionOk (wf : Workflow) (st : Stage) (args : Json) : Prop :=
  ∀ tg, strArg? args "stage" = some tg → LegalTransition wf st.id tg

/-- `tool.command_policy` for a `run_command` call: no deny pattern matches the command. -/
def CommandOk (wf : Workflow) (args : Json) : Prop :=
  ∀ cmd, strArg? args "command" = some cmd → CommandAllowed wf.policy.commands.deny cmd

/-- The sandbox is required (docs/rewards.md, `tool.sandbox_required`): by the workflow's
`sandbox.required`, or by the user for this run (the header's `sandbox.required`; `sb` is the
header's sandbox record, `none` when it records none). -/
def SandboxRequired (wf : Workflow) (sb : Option SandboxRecord) : Prop :=
  wf.sandbox.required = true ∨ ∃ r, sb = some r ∧ r.required = true

/-- The header records that the run's commands were held: there is a sandbox record, and its
`sandbox.confined` is true (the OS sandbox) or its `sandbox.container` is true (a container that is
the run's sandbox). -/
def CommandsHeld (sb : Option SandboxRecord) : Prop :=
  ∃ r, sb = some r ∧ (r.confined = true ∨ r.container = true)

/-- `tool.sandbox_required`: where the sandbox is required, commands run only in
a run whose header records that its commands were held: confined by the OS sandbox,
or inside a container that is the run's sandbox. -/
def SandboxOk (wf : Workflow) (sb : Option SandboxRecord) : Prop :=
  SandboxRequired wf sb → CommandsHeld sb

/-- The checks that depend on the tool, for a call made in stage `st` of a run
whose header records the sandbox `sb`: `run_command` obeys the command policy,
the path policy (its `cwd`) and the sandbox requirement; the file tools obey
the path policy (the write tools also stay off the read-only paths);
`enter_stage` names a legal transition; `submit` is made from a terminal stage. -/
def ToolOk (wf : Workflow) (sb : Option SandboxRecord) (st : Stage) (args : Json) : Tool → Prop
  | .runCommand => CommandOk wf args ∧
      (PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .runCommand) .runCommand args ∧ SandboxOk wf sb)
  | .readFile => PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .readFile) .readFile args
  | .writeFile => PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .writeFile) .writeFile args
  | .editFile => PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .editFile) .editFile args
  | .listFiles => PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .listFiles) .listFiles args
  | .search => PathPolicyOk wf.policy.paths.deny (wf.readOnlyFor .search) .search args
  | .enterStage => TransitionOk wf st args
  | .submit => Terminal wf st.id

/-- A call of a built-in tool conforms in the current stage `cur` (`none` once the run has
ended): the run is open in a stage `st`, the name is one of the eight tools `t`, the
arguments are valid, `t` is permitted in `st`, and the checks of `t` pass. -/
def BuiltinConforms (wf : Workflow) (sb : Option SandboxRecord) (cur : Option Stage) (c : ProposedCall) : Prop :=
  ∃ st t, cur = some st ∧ Tool.ofName? c.tool = some t ∧ ArgsOkFor t c ∧ Permitted st c.tool ∧
    ToolOk wf sb st c.args t

/-- A call of an MCP tool conforms: the run is open in a stage `st`, a server offers the tool now
(`mcp`: the tools of the servers' latest `mcp_tools` lines), its arguments are an object, and `st`
permits it. -/
def McpConforms (mcp : List (String × String)) (cur : Option Stage) (c : ProposedCall) : Prop :=
  ∃ st, cur = some st ∧ McpKnown mcp c.tool ∧ McpArgsOk c ∧ Permitted st c.tool

/-- A call conforms in the current stage `cur`, the MCP tools `mcp` the servers offer now and the
header's sandbox record `sb`: an MCP name's call as `McpConforms`, any other as `BuiltinConforms`
(the pre-checks take the MCP branch first, as core/verifier/pre-checks.ts does). These are exactly
the checks of severity `error` in the tool-call table. -/
def CallConforms (wf : Workflow) (sb : Option SandboxRecord) (mcp : List (String × String)) (cur : Option Stage)
    (c : ProposedCall) : Prop :=
  (isMcpName c.tool = true ∧ McpConforms mcp cur c) ∨ (isMcpName c.tool = false ∧ BuiltinConforms wf sb cur c)

/-- The ask policy applies to the call (`tool.approved`, "Command policy"): a call of the built-in
`run_command` whose arguments are valid and whose command no deny pattern matches. An MCP name is
never a built-in tool's; the condition says so rather than evaluate the names. -/
abbrev AskApplies (wf : Workflow) (c : ProposedCall) : Prop :=
  isMcpName c.tool = false ∧ Tool.ofName? c.tool = some .runCommand ∧ ArgsOkFor .runCommand c ∧
    CommandOk wf c.args

/-! ## Stage-visit level -/

def Closed (e : VisitEnd) : Prop := e ≠ .runEnd

/-- `stage.transition` for a visit of stage `src` that ended as `e` (toward `dst`
for a transition): a transition went to a defined stage that `src` may move to; a
submit was made from a terminal stage. An unclosed visit gets no such verdict
(and a transition always has a target, so the `none` case does not occur). -/
def StageTransitionOk (wf : Workflow) (src : String) : VisitEnd → Option String → Prop
  | .transition, some dst => LegalTransition wf src dst
  | .transition, none => True
  | .submit, _ => Terminal wf src
  | .runEnd, _ => True

/-- `stage.budget`: at most `budget` steps (the step that ends the visit counts). -/
def WithinBudget (steps budget : Nat) : Prop := steps ≤ budget

/-- `stage.exit.tool_succeeded`: at least `atLeast` calls of `tool` succeeded. -/
def ToolSucceededMet (tool : String) (atLeast : Nat) (facts : List StepFact) : Prop :=
  atLeast ≤ countSucceeded tool facts

/-- `stage.exit.command_succeeded` / `command_ran`: some step of the visit is good
and, with `afterLastChange`, no later step of the visit changed a file (a step
that changes files and is good counts as after its own change). -/
def CmdMet (good : StepFact → Bool) (alc : Bool) : List StepFact → Prop
  | [] => False
  | f :: rest => (good f = true ∧ (alc = true → ∀ g ∈ rest, g.changed = [])) ∨ CmdMet good alc rest

/-- A changed file counts for `file_changed`: any file without a pattern, else one
whose `npath` form (or the path as recorded, when `npath` rejects it) matches. -/
def FileMatches (pattern : Option String) (file : String) : Prop :=
  ∀ p, pattern = some p → Matches p.toList (npathOrSelf file).toList

/-- `stage.exit.file_changed`: some step of the visit changed a file that counts. -/
def FileChangedMet (pattern : Option String) (facts : List StepFact) : Prop :=
  ∃ f ∈ facts, ∃ x ∈ f.changed, FileMatches pattern x

/-- Whether an exit condition holds over the facts of a visit (oldest first). -/
def ExitMet : ExitCondition → List StepFact → Prop
  | .toolSucceeded tool n, facts => ToolSucceededMet tool n facts
  | .commandSucceeded p alc, facts => CmdMet (cmdGood false p) alc facts
  | .commandRan p alc, facts => CmdMet (cmdGood true p) alc facts
  | .fileChanged p, facts => FileChangedMet p facts
  | .outcomeRan alc, facts => CmdMet (fun f => f.checked) alc facts

/-! ## Outcome level -/

/-- `outcome.external`: an `outcome` event may be recorded only when the workflow's outcome
is its own command's; in a run judged outside it the event is an error and is ignored. -/
def JudgedInRun (o : WorkflowOutcome) : Prop := o.judge? = none

/-- `outcome.after_submit`: the run has ended. -/
def AfterSubmit (ended : Bool) : Prop := ended = true

/-- `outcome.single`: no outcome was recorded yet. -/
def SingleOutcome (recorded : Option Nat) : Prop := recorded = none

/-- `outcome.submitted`: the run ended by a submit made from a terminal stage
(`fromTerminal` is whether the stage of the submit was terminal). -/
def Submitted (ended fromTerminal : Bool) : Prop := ended = true ∧ fromTerminal = true

/-- `outcome.check_passed`: the end was observed, the exit code is the expected one,
and the check did not report running no tests. -/
def CheckPassed (expect : Int) (o : OutcomeEvent) : Prop :=
  o.completion ≠ some .timeout ∧ o.completion ≠ some .unobserved ∧ o.exitCode = some expect ∧
    o.testsRan ≠ some 0

end Lar
