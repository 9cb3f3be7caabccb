/**
 * The builtin verifier's state: what a run has done so far, fed one event at a time; the verdicts
 * come from pre-checks.ts, stages.ts and score.ts. Lean counterpart: `State` in lean/Lar/Verifier.lean.
 */
import type { OutcomeEvent, SandboxRecord, ToolCallEvent, TrajectoryEvent } from '../schema/trajectory';
import { outcomeCommand, transitionsFrom, type OutcomeCheck, type Stage, type Workflow } from '../schema/workflow';
import { canonicalExact } from '../json/canonical';
import { fail, pass, type Verdict } from './checks';
import { changedFiles, failureReason, ran, succeeded } from './events';
import { PassCache } from './pass-cache';
import { newScratch, stepResultOf, type Scratch, type VerdictBuffer } from './step-view';
import { compileCallPolicy, pushPreChecks, type CallPolicy } from './pre-checks';
import { newVisit, scoreVisit, trackConditions } from './stages';
import { outcomeEventVerdicts, runningReturn, stageRewardOf, summarize, toolRewardOf } from './score';
import type {
  GateResult,
  ProposedCall,
  RecordedOutcome,
  StageVisitResult,
  StepResult,
  StepView,
  TrajectorySummary,
  VerdictOut,
  Visit,
  VisitEnd,
} from './types';

/** Key identifying "the same call" for loop detection: tool plus canonical arguments. */
export function callKey(tool: string, args: unknown): string {
  return `${tool}\u0000${canonicalExact(args)}`;
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
  /** Closed visits (unless made for a stream) and their count. Clones share the array and copy it before a push. */
  private stages: StageVisitResult[] = [];
  private ownsStages = true;
  private stageCount = 0;
  private lastStage: string | undefined;
  /** Number of steps so far that changed a file: the "state epoch" for loop detection. */
  private changeEpoch = 0;
  /** Call key → change epoch at which it last failed. */
  private failedCalls = new Map<string, number>();
  /** Tool → change epoch at which a call of it last failed: a tool with no failure in this epoch needs no key. */
  private failedTools = new Map<string, number>();
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
  private readonly keepVisits: boolean;
  // What judge() reuses from step to step, so that judging allocates nothing when nothing fails.
  private scratch = newScratch();

  constructor(
    readonly workflow: Workflow,
    /** Line of the header, where the start stage's first visit begins. */
    headerLine = 1,
    /** The header's record of the sandbox the run's commands had (absent in older trajectories). */
    readonly sandbox?: SandboxRecord,
    /**
     * keepVisits false (a stream): closed visits are given once on the step that closed them and
     * not kept, so summary() lists only the visit still open (its counts and means cover all).
     */
    opts: { keepVisits?: boolean } = {},
  ) {
    this.policy = compileCallPolicy(workflow);
    this.outcomeCheck = outcomeCommand(workflow);
    this.keepVisits = opts.keepVisits ?? true;
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
      ownsStages: boolean;
      failedCalls: Map<string, number>;
      failedTools: Map<string, number>;
      mcpTools: Map<string, string>;
      scratch: Scratch;
    };
    mutable.visit = this.visit && { ...this.visit, conditions: this.visit.conditions.map((x) => ({ ...x })) };
    mutable.ownsStages = false;
    mutable.failedCalls = new Map(this.failedCalls);
    mutable.failedTools = new Map(this.failedTools);
    mutable.mcpTools = new Map(this.mcpTools);
    mutable.scratch = newScratch();
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

  /** The pre-checks of `call` pushed onto `out`; returns the `ask` pattern it matches. */
  private preChecks(out: VerdictOut, call: ProposedCall): string | undefined {
    return pushPreChecks(out, this.policy, this.visit?.stage, this.sandbox, call, this.passCache, this.mcpTools);
  }

  private repeatVerdict(call: ProposedCall): Verdict {
    const epoch =
      this.failuresInEpoch === 0 || this.failedTools.get(call.tool) !== this.changeEpoch
        ? undefined
        : this.failedCalls.get(callKey(call.tool, call.args));
    return epoch === this.changeEpoch
      ? fail('tool.not_repeated', 'the same call failed before and no file has changed since: this is a loop', ['tool'])
      : pass('tool.not_repeated');
  }

  /** Decides, before it runs, whether a proposed call may run. Does not change the state. */
  gate(call: ProposedCall): GateResult {
    const verdicts: Verdict[] = [];
    const askPattern = this.preChecks(verdicts, call);
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
    return stepResultOf(this.judge(event, line));
  }

  /**
   * The same as append, into an object reused by the next call (a stream's hot path: judging
   * then allocates nothing unless a check fails or a visit ends). Read it before the next call.
   */
  judge(event: TrajectoryEvent, line: number): StepView {
    const verdicts = this.scratch.verdicts;
    switch (event.type) {
      case 'tool_call':
        return this.judgeCall(event, line, verdicts);
      case 'outcome':
        this.judgeOutcome(event, line, verdicts);
        return this.view(line, event.type, verdicts.take());
      case 'mcp_tools': // A server's list replaces what it offered before; nothing in it is scored.
        for (const name of [...this.mcpTools.keys()])
          if (name.startsWith(`mcp__${event.server}__`)) this.mcpTools.delete(name);
        for (const t of event.tools) this.mcpTools.set(t.name, t.digest);
        return this.view(line, event.type, verdicts.take());
      default:
        return this.view(line, event.type, verdicts.take());
    }
  }

  /** The view of an event that is not a tool call, placed in the current stage. */
  private view(line: number, type: TrajectoryEvent['type'], verdicts: Verdict[]): StepView {
    const v = this.scratch.view;
    v.line = line;
    v.type = type;
    v.step = v.tool = v.toolReward = v.stageVisit = undefined;
    v.stage = this.visit?.stage.id;
    v.visit = this.visit?.visit;
    v.verdicts = verdicts;
    v.runningReturn = this.runningReturn();
    return v;
  }

  private judgeCall(e: ToolCallEvent, line: number, buffer: VerdictBuffer): StepView {
    const step = ++this.stepCount;
    const visitBefore = this.visit;
    const ok = succeeded(e);
    this.callVerdicts(e, ok, buffer);
    const verdicts = buffer.take();
    const toolReward = toolRewardOf(verdicts);
    this.toolSum += toolReward;
    const changed = changedFiles(e);
    this.countRepeats(e, ok, changed);
    const stageVisit = visitBefore ? this.advanceVisit(visitBefore, e, line, ok, changed) : undefined;
    const v = this.scratch.view;
    v.line = line;
    v.type = 'tool_call';
    v.step = step;
    v.tool = e.tool;
    v.stage = visitBefore?.stage.id;
    v.visit = visitBefore?.visit;
    v.verdicts = verdicts;
    v.toolReward = toolReward;
    v.runningReturn = this.runningReturn();
    v.stageVisit = stageVisit;
    return v;
  }

  /** The verdicts of a call that was made, onto `verdicts`: the pre-checks, then what its running showed. */
  private callVerdicts(e: ToolCallEvent, ok: boolean, verdicts: VerdictOut): void {
    const call = this.scratch.call;
    call.tool = e.tool;
    call.args = e.args;
    call.argsError = e.argsError;
    const askPattern = this.preChecks(verdicts, call);
    verdicts.push(this.repeatVerdict(call));
    if (askPattern !== undefined) {
      verdicts.push(
        e.status === 'denied'
          ? fail('tool.approved', `the user rejected the command at the approval prompt (it matches "${askPattern}")`, [
              'args',
              'command',
            ])
          : this.passCache.pass('tool.approved', askPattern, approvedReason),
      );
    }
    if (e.tool === 'run_command' && ran(e)) verdicts.push(this.sandboxedVerdict(e));
    verdicts.push(
      ok
        ? pass('tool.succeeded')
        : fail('tool.succeeded', failureReason(e), e.status === 'ok' ? ['result'] : ['status']),
    );
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
      this.failedTools.set(e.tool, this.changeEpoch);
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
    if (this.sandbox?.container === true) return this.passCache.pass('tool.sandboxed', this.sandbox, containerReason);
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
    if (this.keepVisits) {
      if (!this.ownsStages) {
        this.stages = this.stages.slice(0, this.stageCount);
        this.ownsStages = true;
      }
      this.stages.push(result);
    }
    this.stageCount++;
    this.lastStage = result.stage;
    return result;
  }

  private judgeOutcome(e: OutcomeEvent, line: number, verdicts: VerdictOut): void {
    const counted = outcomeEventVerdicts(
      this.workflow,
      this.outcomeCheck,
      this.runEnded,
      this.outcomeEvent,
      e,
      line,
      verdicts,
    );
    if (counted) this.outcomeEvent = counted;
  }

  private runningReturn(): number {
    return runningReturn(this.workflow, this.stageSum, this.stageCount, this.toolSum, this.stepCount);
  }

  /** The trajectory's scores as if it stopped now. Does not change the state. */
  summary(): TrajectorySummary {
    const stages = this.stages.slice(0, this.keepVisits ? this.stageCount : 0);
    let stageSum = this.stageSum;
    let stageCount = this.stageCount;
    const v = this.visit;
    if (v) {
      const verdicts = scoreVisit(v, this.outcomeCheck, this.passCache, 'run_end', false);
      const reward = stageRewardOf(verdicts);
      stageSum += reward;
      stageCount++;
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
      stageCount,
      stageSum,
      ended: this.runEnded,
      submittedFromTerminal: this.submittedFromTerminal,
      outcome: this.outcomeEvent,
      finalStage: v?.stage.id ?? this.lastStage,
    });
  }
}

const approvedReason = (pattern: string) => `approved (the command matches the approval pattern "${pattern}")`;
const containerReason = () => "the command ran in the run's container, its sandbox";
