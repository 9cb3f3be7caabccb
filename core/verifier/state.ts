import { ToolArgs, PATH_ARGS, isToolName } from '../schema/tools';
import {
  ALWAYS_READ_ONLY,
  readOnlyPathOf,
  transitionsFrom,
  type ExitCondition,
  type OutcomeCheck,
  type Stage,
  type Workflow,
} from '../schema/workflow';
import type { OutcomeEvent, SandboxRecord, ToolCallEvent, TrajectoryEvent } from '../schema/trajectory';
import { CommandView, compilePatterns, firstMatch, normalizeSpaces, type CompiledPatterns } from '../policy/command';
import { globMatch } from '../policy/glob';
import { normalizeWorkspacePath } from '../policy/path';
import { canonicalExact } from '../json/canonical';
import {
  fail,
  pass,
  stageRewardOf,
  toolRewardOf,
  type CheckId,
  type StageReward,
  type ToolReward,
  type Verdict,
} from './checks';

/** A call the model proposes, before it runs. */
export interface ProposedCall {
  tool: string;
  args: unknown;
  /** Set when the model's argument text was not JSON. */
  argsError?: string;
}

export type GateDecision = 'allow' | 'ask' | 'block';

export interface GateResult {
  decision: GateDecision;
  /** The checks that can be decided before the call runs. */
  verdicts: Verdict[];
  /** The reason to show the model or the user (the first failed check, or the approval rule). */
  reason: string;
  /**
   * The `ask` pattern the call matches: it needs approval — when decision is
   * `ask`, and also when it is `block` (with enforcement `warn` such a call may
   * still run, and then only if the user approves it).
   */
  askPattern?: string;
  /** Why the user must approve a call that is not `ask` (set by the per-tool approval setting on a blocked call). */
  askReason?: string;
  /** The reward the call gets if it is made anyway and then succeeds (−1 when blocked). */
  toolReward: ToolReward;
}

export type VisitEnd = 'transition' | 'submit' | 'run_end';

/** One visit of a stage, scored when it ends. */
export interface StageVisitResult {
  stage: string;
  /** 0-based ordinal of this visit in the run. */
  visit: number;
  /** Line of the first event in the visit (of the header for the start stage). */
  startLine: number;
  /** Line of the event that ended it; undefined when the run stopped inside it. */
  endLine?: number;
  endedBy: VisitEnd;
  steps: number;
  budget: number;
  verdicts: Verdict[];
  reward: StageReward;
}

export interface StepResult {
  line: number;
  type: TrajectoryEvent['type'];
  /** 1-based ordinal among tool calls; undefined for other events. */
  step?: number;
  /** The tool named by a tool call, as written (it may not be a known tool). */
  tool?: string;
  /** The stage the event happened in; undefined once the run has ended. */
  stage?: string;
  visit?: number;
  verdicts: Verdict[];
  toolReward?: ToolReward;
  /** The stage visit this event ended, scored. */
  stageVisit?: StageVisitResult;
  /** Return so far: rewards of closed visits and all calls up to here, outcome not yet counted. */
  runningReturn: number;
}

export interface OutcomeResult {
  reward: 0 | 1;
  verdicts: Verdict[];
  /** Line of the outcome event that counted, if any. */
  line?: number;
}

export interface TrajectorySummary {
  steps: number;
  toolRewards: { sum: number; count: number; mean: number };
  stages: StageVisitResult[];
  stageRewards: { sum: number; count: number; mean: number };
  outcome: OutcomeResult;
  /** outcome + α·mean(stage rewards) + β·mean(tool rewards); a mean over nothing is 0. */
  return: number;
  alpha: number;
  beta: number;
  /** Whether the run ended by a submit. */
  ended: boolean;
  finalStage?: string;
}

interface ConditionState {
  cond: ExitCondition;
  /** Successes counted (tool_succeeded) or 1 once met (the others). */
  count: number;
}

interface Visit {
  stage: Stage;
  visit: number;
  startLine: number;
  steps: number;
  conditions: ConditionState[];
}

/** Tool calls that count as having run to a successful end. */
/** The tools that change files: protected and always-read-only paths are refused to them. */
const WRITE_TOOLS: ReadonlySet<string> = new Set(['write_file', 'edit_file']);

/** The call ran (it was not blocked, rejected, or refused before it started). */
function ran(e: ToolCallEvent): boolean {
  return e.status === 'ok' || e.status === 'timeout' || e.status === 'interrupted';
}

function succeeded(e: ToolCallEvent): boolean {
  if (e.status !== 'ok') return false;
  if (e.tool !== 'run_command') return true;
  const r = e.result;
  return (
    r !== undefined &&
    r.exitCode === 0 &&
    (r.completion === undefined || r.completion === 'marker' || r.completion === 'exit')
  );
}

/** A command whose end was observed, whatever its exit code. */
function ranToEnd(e: ToolCallEvent): boolean {
  if (e.status !== 'ok' || e.tool !== 'run_command') return false;
  const r = e.result;
  return (
    r !== undefined && typeof r.exitCode === 'number' && r.completion !== 'timeout' && r.completion !== 'unobserved'
  );
}

/**
 * `outcome_ran`: the call ran the workflow's outcome command itself (the same
 * command line after `norm`) to an observed end, and its tests ran: the count
 * its output gives is positive or, with no test runner recognised, the exit
 * code is the one the check expects.
 */
function ranCheck(check: OutcomeCheck, e: ToolCallEvent): boolean {
  if (!ranToEnd(e)) return false;
  const command = commandOf(e.args);
  if (command === undefined || normalizeSpaces(command) !== normalizeSpaces(check.command)) return false;
  const tests = e.result?.testsRan;
  return tests !== undefined ? tests > 0 : e.result?.exitCode === check.expectExitCode;
}

/** Files a call changed: as recorded, or the written/edited path of a successful write or edit. */
export function changedFiles(e: ToolCallEvent): readonly string[] {
  const recorded = e.result?.filesChanged;
  if (recorded) return recorded;
  if (e.status === 'ok' && (e.tool === 'write_file' || e.tool === 'edit_file')) {
    const path = (e.args as { path?: unknown } | null)?.path;
    if (typeof path === 'string') return [path];
  }
  return [];
}

/** Key identifying "the same call" for loop detection: tool plus canonical arguments. */
export function callKey(tool: string, args: unknown): string {
  return `${tool}\u0000${canonicalExact(args)}`;
}

function commandOf(args: unknown): string | undefined {
  const c = (args as { command?: unknown } | null)?.command;
  return typeof c === 'string' ? c : undefined;
}

/**
 * The builtin verifier: a state fed one event at a time. Appending costs O(1)
 * amortized in the length of the run (each exit condition is kept up to date
 * as events arrive instead of being re-evaluated over the visit). The same
 * definitions are written in Lean (lean/Lar/) and pinned by the conformance
 * corpus in test-fixtures/conformance/.
 */
export class VerifierState {
  private visit: Visit | undefined;
  private visitCount = 0;
  private stepCount = 0;
  private toolSum = 0;
  private stageSum = 0;
  private readonly stages: StageVisitResult[] = [];
  /** Number of steps so far that changed a file: the "state epoch" for loop detection. */
  private changeEpoch = 0;
  /** Call key → change epoch at which it last failed. */
  private failedCalls = new Map<string, number>();
  /** Failures recorded in the current epoch: none means no call can be a repeat, and no key is needed. */
  private failuresInEpoch = 0;
  private submittedFromTerminal = false;
  private runEnded = false;
  private outcomeEvent: { event: OutcomeEvent; line: number } | undefined;
  private readonly stageById: Map<string, Stage>;
  private readonly terminal: Set<string>;
  private readonly policy: { deny: CompiledPatterns; ask: CompiledPatterns; paths: CompiledPatterns };
  /**
   * Passing verdicts depend only on the workflow, so each distinct one is made
   * once and shared (clones share the cache too): results are retained for
   * the whole run, and one object per passing check per step is what made
   * long runs slow.
   */
  private readonly passCache = new Map<CheckId, Map<unknown, Map<string, Verdict>>>();

  constructor(
    readonly workflow: Workflow,
    /** Line of the header, where the start stage's first visit begins. */
    headerLine = 1,
    /** The header's record of the sandbox the run's commands had (absent in older trajectories). */
    readonly sandbox?: SandboxRecord,
  ) {
    this.stageById = new Map(workflow.stages.map((s) => [s.id, s]));
    this.terminal = new Set(workflow.terminal);
    this.policy = {
      deny: compilePatterns(workflow.policy.commands.deny),
      ask: compilePatterns(workflow.policy.commands.ask),
      paths: compilePatterns(workflow.policy.paths.deny),
    };
    const start = this.stageById.get(workflow.start);
    if (!start) throw new Error(`workflow "${workflow.id}": start stage "${workflow.start}" does not exist`);
    this.openVisit(start, headerLine);
  }

  /** An independent copy; appending to one does not affect the other. */
  clone(): VerifierState {
    const c = Object.create(VerifierState.prototype) as VerifierState;
    Object.assign(c, this);
    const mutable = c as unknown as {
      visit: Visit | undefined;
      stages: StageVisitResult[];
      failedCalls: Map<string, number>;
    };
    mutable.visit = this.visit && { ...this.visit, conditions: this.visit.conditions.map((x) => ({ ...x })) };
    mutable.stages = [...this.stages];
    mutable.failedCalls = new Map(this.failedCalls);
    return c;
  }

  /** The current stage, or undefined once the run has ended. */
  get currentStage(): string | undefined {
    return this.visit?.stage.id;
  }

  get ended(): boolean {
    return this.runEnded;
  }

  get steps(): number {
    return this.stepCount;
  }

  private openVisit(stage: Stage, line: number): void {
    this.visit = {
      stage,
      visit: this.visitCount++,
      startLine: line,
      steps: 0,
      conditions: stage.exit.map((cond) => ({ cond, count: 0 })),
    };
  }

  /**
   * The checks decidable before a call runs. The gate and the post-hoc
   * verdict both use this, so they cannot disagree about a violation.
   */
  private preChecks(call: ProposedCall): { verdicts: Verdict[]; askPattern?: string } {
    const verdicts: Verdict[] = [];
    const { tool, args } = call;
    const wf = this.workflow;
    const visit = this.visit;

    verdicts.push(
      visit
        ? pass('tool.run_open')
        : fail('tool.run_open', `the run already ended with a submit; no ${tool} call can follow it`, ['tool']),
    );

    if (!isToolName(tool)) {
      verdicts.push(
        fail(
          'tool.known',
          `"${tool}" is not a tool; the tools are run_command, read_file, write_file, edit_file, list_files, search, enter_stage and submit`,
          ['tool'],
        ),
      );
      return { verdicts };
    }
    verdicts.push(pass('tool.known'));

    let argsOk = true;
    if (call.argsError !== undefined) {
      argsOk = false;
      verdicts.push(fail('tool.args', `the arguments are not valid JSON: ${call.argsError}`, ['args']));
    } else {
      const r = ToolArgs[tool].safeParse(args);
      if (r.success) {
        verdicts.push(pass('tool.args'));
      } else {
        argsOk = false;
        const issue = r.error.issues[0]!;
        const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
        const where = path.length ? `"${path.join('.')}": ` : '';
        verdicts.push(fail('tool.args', `bad arguments for ${tool}: ${where}${issue.message}`, ['args', ...path]));
      }
    }

    if (visit) {
      verdicts.push(
        visit.stage.tools.includes(tool)
          ? pass('tool.permitted')
          : fail(
              'tool.permitted',
              `${tool} is not permitted in stage "${visit.stage.id}" (permitted: ${visit.stage.tools.join(', ') || 'none'})`,
              ['tool'],
            ),
      );
    }

    if (!argsOk) return { verdicts };
    const a = args as Record<string, unknown>;

    if (tool === 'enter_stage' && visit) {
      const target = a.stage as string;
      const legal = transitionsFrom(wf, visit.stage.id);
      if (!this.stageById.has(target)) {
        verdicts.push(
          fail('tool.transition', `there is no stage "${target}" (stages: ${wf.stages.map((s) => s.id).join(', ')})`, [
            'args',
            'stage',
          ]),
        );
      } else if (!legal.includes(target)) {
        verdicts.push(
          fail(
            'tool.transition',
            `"${visit.stage.id}" → "${target}" is not a legal transition (from "${visit.stage.id}": ${legal.join(', ') || 'none'})`,
            ['args', 'stage'],
          ),
        );
      } else {
        verdicts.push(
          this.cachedPass(
            'tool.transition',
            visit.stage,
            () => `"${visit.stage.id}" → "${target}" is a legal transition`,
            target,
          ),
        );
      }
    }

    if (tool === 'submit' && visit) {
      verdicts.push(
        this.terminal.has(visit.stage.id)
          ? pass('tool.submit_terminal')
          : fail(
              'tool.submit_terminal',
              `submit from "${visit.stage.id}", which is not a terminal stage (terminal: ${wf.terminal.join(', ')})`,
              ['tool'],
            ),
      );
    }

    let askPattern: string | undefined;
    if (tool === 'run_command') {
      const command = new CommandView(a.command as string);
      const denied = firstMatch(this.policy.deny, command);
      verdicts.push(
        denied === undefined
          ? pass('tool.command_policy')
          : fail('tool.command_policy', `the command matches the deny pattern "${denied}"`, ['args', 'command']),
      );
      if (denied === undefined) askPattern = firstMatch(this.policy.ask, command);
    }

    const pathKeys = PATH_ARGS[tool];
    if (pathKeys.length) {
      let bad: Verdict | undefined;
      for (const key of pathKeys) {
        const p = a[key];
        if (typeof p !== 'string') continue;
        const n = normalizeWorkspacePath(p);
        if (!n.ok) {
          bad = fail('tool.path_policy', n.reason, ['args', key]);
          break;
        }
        const denied = this.policy.paths.find(([, m]) => m(n.normalized));
        if (denied !== undefined) {
          bad = fail('tool.path_policy', `"${n.normalized}" matches the path deny pattern "${denied[0]}"`, [
            'args',
            key,
          ]);
          break;
        }
        const readOnly = WRITE_TOOLS.has(tool) ? readOnlyPathOf(wf, n.normalized) : undefined;
        if (readOnly !== undefined) {
          bad = fail(
            'tool.path_policy',
            `"${n.normalized}" is read-only for the agent ("${readOnly}" is ${ALWAYS_READ_ONLY.includes(readOnly) ? 'always read-only' : "protected by the workflow's sandbox section"}): it can be read, not changed`,
            ['args', key],
          );
          break;
        }
      }
      verdicts.push(bad ?? pass('tool.path_policy'));
    }

    // Decided from the header, so the gate and the verdict after the run agree: the run's
    // commands either were confined or were not.
    if (tool === 'run_command') {
      verdicts.push(
        !(wf.sandbox.required || this.sandbox?.required === true) || this.sandbox?.confined === true
          ? pass('tool.sandbox_required')
          : fail(
              'tool.sandbox_required',
              `the sandbox is required and this run's commands are not confined (${this.sandbox ? (this.sandbox.reason ?? 'no sandbox') : 'the trajectory does not record a sandbox'})`,
              ['tool'],
            ),
      );
    }

    return askPattern === undefined ? { verdicts } : { verdicts, askPattern };
  }

  /**
   * The shared passing verdict of `check` for `key` (a workflow object such as
   * a stage or an exit condition, or a pattern or stage id). The reason is only
   * built the first time: building it on every step cost more than the check.
   */
  private cachedPass(check: CheckId, key: unknown, reason: () => string, subkey = ''): Verdict {
    let byKey = this.passCache.get(check);
    if (!byKey) this.passCache.set(check, (byKey = new Map<unknown, Map<string, Verdict>>()));
    let bySub = byKey.get(key);
    if (!bySub) byKey.set(key, (bySub = new Map<string, Verdict>()));
    let v = bySub.get(subkey);
    if (!v) bySub.set(subkey, (v = Object.freeze(pass(check, reason())) as Verdict));
    return v;
  }

  private repeatVerdict(call: ProposedCall): Verdict {
    const epoch = this.failuresInEpoch === 0 ? undefined : this.failedCalls.get(callKey(call.tool, call.args));
    return epoch === this.changeEpoch
      ? fail('tool.not_repeated', 'the same call failed before and no file has changed since: this is a loop', ['tool'])
      : pass('tool.not_repeated');
  }

  /** Decides, before it runs, whether a proposed call may run. Does not change the state. */
  gate(call: ProposedCall): GateResult {
    const { verdicts, askPattern } = this.preChecks(call);
    verdicts.push(this.repeatVerdict(call));
    const failed = verdicts.find((v) => !v.ok && v.check !== 'tool.not_repeated');
    const toolReward = toolRewardOf(verdicts);
    if (failed)
      return askPattern === undefined
        ? { decision: 'block', verdicts, reason: failed.reason, toolReward }
        : { decision: 'block', verdicts, reason: failed.reason, toolReward, askPattern };
    const loop = verdicts.find((v) => !v.ok);
    if (askPattern !== undefined) {
      return {
        decision: 'ask',
        verdicts,
        reason: `the command matches the approval pattern "${askPattern}"; it runs only if the user approves`,
        askPattern,
        toolReward,
      };
    }
    return { decision: 'allow', verdicts, reason: loop ? loop.reason : 'every check passed', toolReward };
  }

  /** Feeds one event; returns its verdicts and rewards. */
  append(event: TrajectoryEvent, line: number): StepResult {
    switch (event.type) {
      case 'tool_call':
        return this.appendCall(event, line);
      case 'outcome':
        return this.appendOutcome(event, line);
      default:
        return this.result(line, event.type, []);
    }
  }

  /** A result for an event that is not a tool call, placed in the current stage. */
  private result(line: number, type: TrajectoryEvent['type'], verdicts: Verdict[]): StepResult {
    const v = this.visit;
    const runningReturn = this.runningReturn();
    return v
      ? { line, type, stage: v.stage.id, visit: v.visit, verdicts, runningReturn }
      : { line, type, verdicts, runningReturn };
  }

  private appendCall(e: ToolCallEvent, line: number): StepResult {
    const step = ++this.stepCount;
    const visitBefore = this.visit;
    const call: ProposedCall =
      e.argsError === undefined
        ? { tool: e.tool, args: e.args }
        : { tool: e.tool, args: e.args, argsError: e.argsError };
    const { verdicts, askPattern } = this.preChecks(call);
    verdicts.push(this.repeatVerdict(call));
    if (askPattern !== undefined) {
      verdicts.push(
        e.status === 'denied'
          ? fail('tool.approved', `the user rejected the command at the approval prompt (it matches "${askPattern}")`, [
              'args',
              'command',
            ])
          : this.cachedPass(
              'tool.approved',
              askPattern,
              () => `approved (the command matches the approval pattern "${askPattern}")`,
            ),
      );
    }
    if (e.tool === 'run_command' && ran(e)) {
      const unconfined =
        e.result?.sandboxed === false || (e.result?.sandboxed === undefined && this.sandbox?.confined === false);
      verdicts.push(
        unconfined
          ? fail('tool.sandboxed', `the command ran unconfined (${this.sandbox?.reason ?? 'no sandbox'})`, ['result'])
          : pass('tool.sandboxed'),
      );
    }
    const ok = succeeded(e);
    verdicts.push(
      ok
        ? pass('tool.succeeded')
        : fail('tool.succeeded', failureReason(e), e.status === 'ok' ? ['result'] : ['status']),
    );
    const toolReward = toolRewardOf(verdicts);
    this.toolSum += toolReward;

    const changed = changedFiles(e);
    // A new stage changes what is allowed, as a changed file changes what a call finds:
    // a call blocked in one stage and made again in the next is not a loop.
    const entered =
      e.status === 'ok' &&
      e.tool === 'enter_stage' &&
      this.visit !== undefined &&
      this.stageById.has((e.args as { stage?: unknown } | null)?.stage as string);
    if (changed.length || entered) {
      this.changeEpoch++;
      this.failuresInEpoch = 0;
    }
    if (!ok) {
      this.failedCalls.set(callKey(e.tool, e.args), this.changeEpoch);
      this.failuresInEpoch++;
    }

    const visit = this.visit;
    let stageVisit: StageVisitResult | undefined;
    if (visit) {
      visit.steps++;
      this.trackConditions(visit, e, ok, changed);
      if (e.status === 'ok' && e.tool === 'enter_stage') {
        const target = this.stageById.get((e.args as { stage?: unknown } | null)?.stage as string);
        if (target) {
          stageVisit = this.closeVisit(
            visit,
            line,
            'transition',
            (wf) => transitionsFrom(wf, visit.stage.id).includes(target.id),
            target.id,
          );
          this.openVisit(target, line);
        }
      } else if (e.status === 'ok' && e.tool === 'submit') {
        this.submittedFromTerminal = this.terminal.has(visit.stage.id);
        stageVisit = this.closeVisit(visit, line, 'submit', () => this.terminal.has(visit.stage.id));
        this.visit = undefined;
        this.runEnded = true;
      }
    }
    // One literal per shape: adding fields one by one would give each result
    // an out-of-object property store, and results are kept for the whole run.
    const runningReturn = this.runningReturn();
    const result: StepResult = visitBefore
      ? {
          line,
          type: 'tool_call',
          step,
          tool: e.tool,
          stage: visitBefore.stage.id,
          visit: visitBefore.visit,
          verdicts,
          toolReward,
          runningReturn,
        }
      : { line, type: 'tool_call', step, tool: e.tool, verdicts, toolReward, runningReturn };
    if (stageVisit) result.stageVisit = stageVisit;
    return result;
  }

  private trackConditions(visit: Visit, e: ToolCallEvent, ok: boolean, changed: readonly string[]): void {
    for (const c of visit.conditions) {
      const cond = c.cond;
      switch (cond.kind) {
        case 'tool_succeeded':
          if (ok && e.tool === cond.tool) c.count++;
          break;
        case 'file_changed':
          if (changed.length && (cond.pattern === undefined || changed.some((f) => matchesPath(cond.pattern!, f))))
            c.count = 1;
          break;
        case 'command_succeeded':
        case 'command_ran': {
          // A change invalidates an earlier run before this call's own run counts:
          // a command that changes files and succeeds has still run after the change.
          if (changed.length && cond.afterLastChange) c.count = 0;
          const command = e.tool === 'run_command' ? commandOf(e.args) : undefined;
          const counts = cond.kind === 'command_succeeded' ? ok : ranToEnd(e);
          if (command !== undefined && counts && globMatchCommand(cond.pattern, command)) c.count = 1;
          break;
        }
        case 'outcome_ran':
          if (changed.length && cond.afterLastChange) c.count = 0;
          if (ranCheck(this.workflow.outcome, e)) c.count = 1;
          break;
      }
    }
  }

  private pushConditionVerdicts(visit: Visit, out: Verdict[]): void {
    for (const { cond, count } of visit.conditions) {
      const id = `stage.exit.${cond.kind}` as const;
      switch (cond.kind) {
        case 'tool_succeeded':
          out.push(
            count >= cond.atLeast
              ? this.cachedPass(
                  id,
                  cond,
                  () => `${cond.tool} succeeded at least ${cond.atLeast} time${cond.atLeast === 1 ? '' : 's'}`,
                )
              : fail(
                  id,
                  `${cond.tool} succeeded ${count} time${count === 1 ? '' : 's'} in this visit; at least ${cond.atLeast} required`,
                ),
          );
          break;
        case 'file_changed':
          out.push(
            count
              ? this.cachedPass(id, cond, () =>
                  cond.pattern ? `a file matching "${cond.pattern}" changed` : 'a file changed',
                )
              : fail(
                  id,
                  cond.pattern
                    ? `no file matching "${cond.pattern}" changed in this visit`
                    : 'no file changed in this visit',
                ),
          );
          break;
        case 'command_succeeded':
        case 'command_ran': {
          const verb = cond.kind === 'command_succeeded' ? 'succeeded' : 'ran to an observed end';
          const after = cond.afterLastChange ? ' after the last file change' : '';
          out.push(
            count
              ? this.cachedPass(id, cond, () => `a command matching "${cond.pattern}" ${verb}${after}`)
              : fail(id, `no command matching "${cond.pattern}" ${verb} in this visit${after}`),
          );
          break;
        }
        case 'outcome_ran': {
          const after = cond.afterLastChange ? ' after the last file change' : '';
          const command = this.workflow.outcome.command;
          out.push(
            count
              ? this.cachedPass(id, cond, () => `the outcome command "${command}" ran tests${after}`)
              : fail(id, `the outcome command "${command}" did not run tests in this visit${after}`),
          );
          break;
        }
      }
    }
  }

  private scoreVisit(visit: Visit, endedBy: VisitEnd, legal: boolean, target?: string): StageVisitResult['verdicts'] {
    const verdicts: Verdict[] = [];
    const from = visit.stage.id;
    if (endedBy === 'run_end') {
      verdicts.push(fail('stage.closed', `the run stopped in "${from}" without a transition or a submit`));
    } else {
      verdicts.push(pass('stage.closed'));
      if (legal) {
        verdicts.push(
          endedBy === 'submit'
            ? this.cachedPass('stage.transition', visit.stage, () => `submitted from terminal stage "${from}"`)
            : this.cachedPass('stage.transition', visit.stage, () => `"${from}" → "${target}" is legal`, `→${target}`),
        );
      } else {
        verdicts.push(
          fail(
            'stage.transition',
            endedBy === 'submit'
              ? `the run ended by a submit from "${from}", which is not a terminal stage`
              : `left "${from}" for "${target}", which is not a legal transition`,
          ),
        );
      }
    }
    const budget = visit.stage.budget;
    verdicts.push(
      visit.steps <= budget
        ? this.cachedPass('stage.budget', visit.stage, () => `within the budget of ${budget} steps`)
        : fail('stage.budget', `${visit.steps} steps in this visit; the budget of "${from}" is ${budget}`),
    );
    this.pushConditionVerdicts(visit, verdicts);
    return verdicts;
  }

  private closeVisit(
    visit: Visit,
    line: number,
    endedBy: VisitEnd,
    legal: (wf: Workflow) => boolean,
    target?: string,
  ): StageVisitResult {
    const verdicts = this.scoreVisit(visit, endedBy, legal(this.workflow), target);
    const reward = stageRewardOf(verdicts);
    this.stageSum += reward;
    const result: StageVisitResult = {
      stage: visit.stage.id,
      visit: visit.visit,
      startLine: visit.startLine,
      endLine: line,
      endedBy,
      steps: visit.steps,
      budget: visit.stage.budget,
      verdicts,
      reward,
    };
    this.stages.push(result);
    return result;
  }

  private appendOutcome(e: OutcomeEvent, line: number): StepResult {
    const verdicts: Verdict[] = [];
    if (!this.runEnded) {
      verdicts.push(fail('outcome.after_submit', 'an outcome check result before any submit is ignored', ['type']));
    } else if (this.outcomeEvent) {
      verdicts.push(
        fail(
          'outcome.single',
          `the outcome was already recorded on line ${this.outcomeEvent.line}; this one is ignored`,
          ['type'],
        ),
      );
    } else {
      verdicts.push(pass('outcome.after_submit'), pass('outcome.single'));
      this.outcomeEvent = { event: e, line };
      verdicts.push(this.outcomeCheckVerdict());
    }
    return this.result(line, 'outcome', verdicts);
  }

  private outcomeCheckVerdict(): Verdict {
    const rec = this.outcomeEvent;
    const expected = this.workflow.outcome.expectExitCode;
    if (!rec) return fail('outcome.check_passed', 'no outcome check result was recorded after the submit');
    const e = rec.event;
    if (e.completion === 'timeout' || e.completion === 'unobserved' || e.exitCode === null) {
      return fail(
        'outcome.check_passed',
        `the outcome check "${e.command}" did not finish (${e.completion ?? 'no exit code'})`,
        ['exitCode'],
      );
    }
    if (e.exitCode !== expected)
      return fail('outcome.check_passed', `"${e.command}" exited ${e.exitCode}; expected ${expected}`, ['exitCode']);
    if (e.testsRan === 0)
      return fail(
        'outcome.check_passed',
        `"${e.command}" exited ${e.exitCode} but ran no tests: a check that runs no tests is not a pass`,
        ['testsRan'],
      );
    return pass('outcome.check_passed', `"${e.command}" exited ${e.exitCode} as expected`);
  }

  private runningReturn(): number {
    const { alpha, beta } = this.workflow.rewards;
    const n = this.stages.length;
    return alpha * (n ? this.stageSum / n : 0) + beta * (this.stepCount ? this.toolSum / this.stepCount : 0);
  }

  /** The trajectory's scores as if it stopped now. Does not change the state. */
  summary(): TrajectorySummary {
    const stages = [...this.stages];
    let stageSum = this.stageSum;
    if (this.visit) {
      const verdicts = this.scoreVisit(this.visit, 'run_end', false);
      const reward = stageRewardOf(verdicts);
      stageSum += reward;
      stages.push({
        stage: this.visit.stage.id,
        visit: this.visit.visit,
        startLine: this.visit.startLine,
        endedBy: 'run_end',
        steps: this.visit.steps,
        budget: this.visit.stage.budget,
        verdicts,
        reward,
      });
    }
    const outcomeVerdicts: Verdict[] = [
      this.submittedFromTerminal
        ? pass('outcome.submitted')
        : fail(
            'outcome.submitted',
            this.runEnded ? 'the run submitted from a stage that is not terminal' : 'the run never submitted',
          ),
    ];
    if (this.runEnded) outcomeVerdicts.push(this.outcomeCheckVerdict());
    const outcomeReward: 0 | 1 = outcomeVerdicts.every((v) => v.ok) && this.runEnded ? 1 : 0;
    const outcome: OutcomeResult = { reward: outcomeReward, verdicts: outcomeVerdicts };
    if (this.outcomeEvent) outcome.line = this.outcomeEvent.line;
    const { alpha, beta } = this.workflow.rewards;
    const stageMean = stages.length ? stageSum / stages.length : 0;
    const toolMean = this.stepCount ? this.toolSum / this.stepCount : 0;
    const summary: TrajectorySummary = {
      steps: this.stepCount,
      toolRewards: { sum: this.toolSum, count: this.stepCount, mean: toolMean },
      stages,
      stageRewards: { sum: stageSum, count: stages.length, mean: stageMean },
      outcome,
      return: outcomeReward + alpha * stageMean + beta * toolMean,
      alpha,
      beta,
      ended: this.runEnded,
    };
    const finalStage = this.visit?.stage.id ?? stages[stages.length - 1]?.stage;
    if (finalStage !== undefined) summary.finalStage = finalStage;
    return summary;
  }
}

function matchesPath(pattern: string, file: string): boolean {
  const n = normalizeWorkspacePath(file);
  return globMatch(pattern, n.ok ? n.normalized : file);
}

function globMatchCommand(pattern: string, command: string): boolean {
  // Exit conditions match the whole command line (normalized), not its parts:
  // `npm test` must be what ran, not something chained after `true &&`.
  return globMatch(pattern, normalizeSpaces(command));
}

function failureReason(e: ToolCallEvent): string {
  const r = e.result;
  switch (e.status) {
    case 'ok':
      if (r?.completion === 'timeout' || r?.completion === 'unobserved')
        return `the command's end was not observed (${r.completion}), so it does not count as a success`;
      if (r?.exitCode === undefined || r.exitCode === null) return 'the command has no recorded exit code';
      return `the command exited with code ${r.exitCode}`;
    case 'error':
      return `the tool failed${r?.error ? `: ${r.error}` : ''}`;
    case 'blocked':
      return 'the call was blocked by the verifier and did not run';
    case 'denied':
      return 'the user rejected the call; it did not run';
    case 'timeout':
      return 'the call timed out and was stopped';
    case 'interrupted':
      return 'the call was interrupted before it finished';
  }
}
