/**
 * The builtin verifier's state: what a run has done so far, fed one event at a time; the verdicts
 * come from pre-checks.ts, stages.ts and score.ts. Lean counterpart: `State` in lean/Lar/Verifier.lean.
 */
import type { OutcomeEvent, SandboxRecord, ToolCallEvent, TrajectoryEvent } from '../schema/trajectory';
import {
  externalJudge,
  outcomeCommand,
  transitionsFrom,
  type OutcomeCheck,
  type Stage,
  type Workflow,
} from '../schema/workflow';
import { canonicalExact } from '../json/canonical';
import { fail, pass, type CheckId, type Verdict } from './checks';
import { changedFiles, failureReason, ran, succeeded } from './events';
import { compileCallPolicy, preChecks, type CallPolicy, type PreChecked } from './pre-checks';
import { newVisit, scoreVisit, trackConditions } from './stages';
import { outcomeCheckVerdict, runningReturn, stageRewardOf, summarize, toolRewardOf } from './score';
import type {
  GateResult,
  ProposedCall,
  RecordedOutcome,
  StageVisitResult,
  StepResult,
  TrajectorySummary,
  VerdictCache,
  Visit,
  VisitEnd,
} from './types';

/** Key identifying "the same call" for loop detection: tool plus canonical arguments. */
export function callKey(tool: string, args: unknown): string {
  return `${tool}\u0000${canonicalExact(args)}`;
}

/**
 * Passing verdicts depend only on the workflow, so each distinct one is made
 * once and shared (clones share the cache too): results are retained for
 * the whole run, and one object per passing check per step is what made
 * long runs slow. The reason is only built the first time: building it on
 * every step cost more than the check.
 */
class PassCache implements VerdictCache {
  private readonly byCheck = new Map<CheckId, Map<unknown, Map<string, Verdict>>>();

  pass(check: CheckId, key: unknown, reason: () => string, subkey = ''): Verdict {
    let byKey = this.byCheck.get(check);
    if (!byKey) this.byCheck.set(check, (byKey = new Map<unknown, Map<string, Verdict>>()));
    let bySub = byKey.get(key);
    if (!bySub) byKey.set(key, (bySub = new Map<string, Verdict>()));
    let v = bySub.get(subkey);
    if (!v) bySub.set(subkey, (v = Object.freeze(pass(check, reason())) as Verdict));
    return v;
  }
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
  private outcomeEvent: RecordedOutcome | undefined;
  /** The MCP tools the servers offer now (name → schema digest), from the latest `mcp_tools` line of each. */
  private mcpTools = new Map<string, string>();
  private readonly policy: CallPolicy;
  private readonly passCache = new PassCache();
  /** The workflow's outcome command; undefined when its outcome is judged outside the run. */
  private readonly outcomeCheck: OutcomeCheck | undefined;

  constructor(
    readonly workflow: Workflow,
    /** Line of the header, where the start stage's first visit begins. */
    headerLine = 1,
    /** The header's record of the sandbox the run's commands had (absent in older trajectories). */
    readonly sandbox?: SandboxRecord,
  ) {
    this.policy = compileCallPolicy(workflow);
    this.outcomeCheck = outcomeCommand(workflow);
    const start = this.policy.stageById.get(workflow.start);
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
      mcpTools: Map<string, string>;
    };
    mutable.visit = this.visit && { ...this.visit, conditions: this.visit.conditions.map((x) => ({ ...x })) };
    mutable.stages = [...this.stages];
    mutable.failedCalls = new Map(this.failedCalls);
    mutable.mcpTools = new Map(this.mcpTools);
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
    this.visit = newVisit(stage, this.visitCount++, line);
  }

  private preChecks(call: ProposedCall): PreChecked {
    return preChecks(this.policy, this.visit?.stage, this.sandbox, call, this.passCache, this.mcpTools);
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
      case 'mcp_tools': // A server's list replaces what it offered before; nothing in it is scored.
        for (const name of [...this.mcpTools.keys()])
          if (name.startsWith(`mcp__${event.server}__`)) this.mcpTools.delete(name);
        for (const t of event.tools) this.mcpTools.set(t.name, t.digest);
        return this.result(line, event.type, []);
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
    const ok = succeeded(e);
    const verdicts = this.callVerdicts(e, ok);
    const toolReward = toolRewardOf(verdicts);
    this.toolSum += toolReward;
    const changed = changedFiles(e);
    this.countRepeats(e, ok, changed);
    const stageVisit = visitBefore ? this.advanceVisit(visitBefore, e, line, ok, changed) : undefined;
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

  /** The verdicts of a call that was made: the pre-checks, then what its running showed. */
  private callVerdicts(e: ToolCallEvent, ok: boolean): Verdict[] {
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
          : this.passCache.pass(
              'tool.approved',
              askPattern,
              () => `approved (the command matches the approval pattern "${askPattern}")`,
            ),
      );
    }
    if (e.tool === 'run_command' && ran(e)) verdicts.push(this.sandboxedVerdict(e));
    verdicts.push(
      ok
        ? pass('tool.succeeded')
        : fail('tool.succeeded', failureReason(e), e.status === 'ok' ? ['result'] : ['status']),
    );
    return verdicts;
  }

  /** Moves the change epoch on and records a failed call, for `tool.not_repeated`. */
  private countRepeats(e: ToolCallEvent, ok: boolean, changed: readonly string[]): void {
    // A new stage changes what is allowed, as a changed file changes what a call finds:
    // a call blocked in one stage and made again in the next is not a loop.
    const entered =
      e.status === 'ok' &&
      e.tool === 'enter_stage' &&
      this.visit !== undefined &&
      this.policy.stageById.has((e.args as { stage?: unknown } | null)?.stage as string);
    if (changed.length || entered) {
      this.changeEpoch++;
      this.failuresInEpoch = 0;
    }
    if (!ok) {
      this.failedCalls.set(callKey(e.tool, e.args), this.changeEpoch);
      this.failuresInEpoch++;
    }
  }

  /** Counts the call in the visit; returns the visit scored if the call ended it. */
  private advanceVisit(
    visit: Visit,
    e: ToolCallEvent,
    line: number,
    ok: boolean,
    changed: readonly string[],
  ): StageVisitResult | undefined {
    visit.steps++;
    trackConditions(visit, this.outcomeCheck, e, ok, changed);
    if (e.status === 'ok' && e.tool === 'enter_stage') {
      const target = this.policy.stageById.get((e.args as { stage?: unknown } | null)?.stage as string);
      if (!target) return undefined;
      const legal = transitionsFrom(this.workflow, visit.stage.id).includes(target.id);
      const stageVisit = this.closeVisit(visit, line, 'transition', legal, target.id);
      this.openVisit(target, line);
      return stageVisit;
    }
    if (e.status === 'ok' && e.tool === 'submit') {
      this.submittedFromTerminal = this.policy.terminal.has(visit.stage.id);
      const stageVisit = this.closeVisit(visit, line, 'submit', this.submittedFromTerminal);
      this.visit = undefined;
      this.runEnded = true;
      return stageVisit;
    }
    return undefined;
  }

  /** `tool.sandboxed`: the OS sandbox held the command, or the container the run is in (it is the sandbox). */
  private sandboxedVerdict(e: ToolCallEvent): Verdict {
    if (this.sandbox?.container === true)
      return this.passCache.pass(
        'tool.sandboxed',
        this.sandbox,
        () => "the command ran in the run's container, its sandbox",
      );
    const unconfined =
      e.result?.sandboxed === false || (e.result?.sandboxed === undefined && this.sandbox?.confined === false);
    return unconfined
      ? fail('tool.sandboxed', `the command ran unconfined (${this.sandbox?.reason ?? 'no sandbox'})`, ['result'])
      : pass('tool.sandboxed');
  }

  private closeVisit(visit: Visit, line: number, endedBy: VisitEnd, legal: boolean, target?: string): StageVisitResult {
    const verdicts = scoreVisit(visit, this.outcomeCheck, this.passCache, endedBy, legal, target);
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
    const judge = externalJudge(this.workflow);
    if (judge !== undefined) {
      verdicts.push(
        fail('outcome.external', `the outcome is judged outside the run (${judge}): this outcome event is ignored`, [
          'type',
        ]),
      );
    } else if (!this.runEnded) {
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
      verdicts.push(outcomeCheckVerdict(this.outcomeCheck!, this.outcomeEvent));
    }
    return this.result(line, 'outcome', verdicts);
  }

  private runningReturn(): number {
    return runningReturn(this.workflow, this.stageSum, this.stages.length, this.toolSum, this.stepCount);
  }

  /** The trajectory's scores as if it stopped now. Does not change the state. */
  summary(): TrajectorySummary {
    const stages = [...this.stages];
    let stageSum = this.stageSum;
    const v = this.visit;
    if (v) {
      const verdicts = scoreVisit(v, this.outcomeCheck, this.passCache, 'run_end', false);
      const reward = stageRewardOf(verdicts);
      stageSum += reward;
      stages.push({
        stage: v.stage.id,
        visit: v.visit,
        startLine: v.startLine,
        endedBy: 'run_end',
        steps: v.steps,
        budget: v.stage.budget,
        verdicts,
        reward,
      });
    }
    return summarize(this.workflow, {
      steps: this.stepCount,
      toolSum: this.toolSum,
      stages,
      stageSum,
      ended: this.runEnded,
      submittedFromTerminal: this.submittedFromTerminal,
      outcome: this.outcomeEvent,
      finalStage: v?.stage.id ?? stages[stages.length - 1]?.stage,
    });
  }
}
