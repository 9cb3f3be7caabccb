/**
 * One tool call through the gate: blocked, refused by the user, refused as malformed or run, then
 * recorded and told to the model; apart from the loop, which only decides when calls are made.
 */
import type { ModelToolCall } from '../model/reply';
import { isToolName, ToolArgs, type ToolName } from '../schema/tools';
import { isMcpName, type McpCallRecord } from '../schema/mcp';
import type { CallStatus, ToolCallEvent, ToolResult, TurnUsage } from '../schema/trajectory';
import { changedFiles } from '../verifier/events';
import type { VerifierState } from '../verifier/state';
import type { GateResult, ProposedCall } from '../verifier/types';
import { describeCall, enteredStage, submittedText, verifierFeedback } from './prompts';
import { RepeatedFailures } from './repeats';
import type { TrajectoryWriter } from './trajectory-writer';
import type { AgentEvent, AgentGate, AgentOptions } from './types';

/** Checks whose failure blocks a call even with enforcement `warn`: the command and path policies. */
export const SAFETY_CHECKS: ReadonlySet<string> = new Set(['tool.command_policy', 'tool.path_policy']);

/** For an MCP call, checks that block it whatever the enforcement: it runs only where the workflow permits it. */
const MCP_SAFETY_CHECKS: ReadonlySet<string> = new Set(['tool.known', 'tool.args', 'tool.permitted']);

/** The tools whose call may change files: a checkpoint is taken before each. */
const MAY_CHANGE_FILES: ReadonlySet<string> = new Set(['run_command', 'write_file', 'edit_file']);

/** What the steps share with their run. */
export interface StepContext {
  opts: AgentOptions;
  state: VerifierState;
  gate: AgentGate;
  writer: TrajectoryWriter;
  emit: (e: AgentEvent) => void;
  redact: (text: string) => string;
}

/** What the model reads of a step, whether it submitted, and why the run must stop if it must. */
export interface Stepped {
  observation: string;
  submitted: boolean;
  loop?: string;
}

/** How a call went, before it is recorded. */
interface Ran {
  status: CallStatus;
  result: ToolResult;
  observation: string;
  submitted: boolean;
  checkpoint?: string | undefined;
  mcp?: McpCallRecord | undefined;
}

/** The run's tool calls, one at a time, with what they leave behind: changed files, failures, repeats. */
export class CallSteps {
  /** Files the run changed and its latest failing calls: the facts a compaction's note carries. */
  readonly touched = new Set<string>();
  readonly recentFailures: string[] = [];
  /** Calls that failed since the last file change: how many times each. */
  private readonly failures: RepeatedFailures;

  constructor(
    private readonly run: StepContext,
    maxRepeats: number,
  ) {
    this.failures = new RepeatedFailures(maxRepeats);
  }

  /** Gates, runs (or not) and records one tool call of the model's `reply`-th reply with calls (`usage`: the reply's, on its first call when it had no words). */
  async step(call: ModelToolCall, reply: number, usage?: TurnUsage): Promise<Stepped> {
    const { state, writer, emit, redact, gate } = this.run;
    const proposed: ProposedCall =
      call.argsError !== undefined
        ? { tool: call.name, args: call.args, argsError: call.argsError }
        : { tool: call.name, args: call.args };
    const verdict = await gate(proposed);
    const t0 = Date.now();
    const stageBefore = state.currentStage;
    const ran = await this.decide(call, verdict);
    if (ran.result.durationMs === undefined) ran.result = { ...ran.result, durationMs: Date.now() - t0 };
    const event = eventOf(call, ran, reply, usage);
    const written = writer.append(event);
    const stepResult = state.append(event, written.line);
    emit({ kind: 'step', ...written, event, result: stepResult, gate: verdict });
    // Tell the model what the verifier made of it, so it can correct course.
    const feedback = verifierFeedback(stepResult, state.currentStage !== stageBefore);
    for (const f of changedFiles(event)) this.touched.add(f);
    const failure = stepResult.verdicts.find((v) => v.check === 'tool.succeeded' && !v.ok);
    if (failure || ran.status === 'blocked') {
      this.recentFailures.push(
        redact(`${describeCall(call)} (${ran.status === 'blocked' ? 'blocked' : failure!.reason})`.slice(0, 400)),
      );
      if (this.recentFailures.length > 5) this.recentFailures.shift();
    }
    const repeat = this.failures.observe(event, stepResult, call.argsText);
    if (repeat.stop) {
      const loop = `the model repeated the same failing call (${describeCall(call)}) ${repeat.times} times with no file changed in between; the last time: ${failure!.reason}`;
      return { observation: `${ran.observation}${feedback}`, submitted: false, loop: redact(loop) };
    }
    return { observation: `${ran.observation}${feedback}${repeat.warning}`, submitted: ran.submitted && state.ended };
  }

  /** What becomes of a gated call: blocked, denied, refused as malformed, a stage move, submit, or run. */
  private async decide(call: ModelToolCall, verdict: GateResult): Promise<Ran> {
    const { opts } = this.run;
    const not = (status: CallStatus, observation: string): Ran => ({
      status,
      result: {},
      observation,
      submitted: false,
    });
    // `warn` relaxes the workflow's structure (stages, transitions), never its safety policy:
    // a denied command or path is blocked whatever the enforcement.
    const mcp = isMcpName(call.name);
    // An MCP tool's permission is its only policy (no command or path policy reaches a server): under `warn`
    // too, a tool the stage does not permit, or no server offers now, never runs.
    const unsafe = verdict.verdicts.find(
      (v) => !v.ok && (SAFETY_CHECKS.has(v.check) || (mcp && MCP_SAFETY_CHECKS.has(v.check))),
    );
    if (verdict.decision === 'block' && ((opts.enforcement ?? 'block') === 'block' || unsafe))
      return not('blocked', `Blocked by the workflow verifier, not run: ${unsafe?.reason ?? verdict.reason}`);
    // An MCP tool's own hints set whether the user is asked (never whether it may run: the gate decided that).
    const reason = approvalReason(verdict) ?? (mcp ? opts.mcp?.approvalReason(call.name) : undefined);
    if (reason !== undefined && !(await this.ask(call, verdict, reason)))
      return not('denied', `The user rejected this call at the approval prompt (${reason}). Do something else.`);
    if (mcp && opts.mcp && call.argsError === undefined && isObject(call.args)) return this.executeMcp(call);
    if (!isToolName(call.name) || call.argsError !== undefined || !ToolArgs[call.name].safeParse(call.args).success) {
      // Only reachable with enforcement "warn": such a call cannot run at all.
      const observation = `Not run: ${verdict.verdicts.find((v) => !v.ok)?.reason ?? 'the call is malformed'}`;
      return { status: 'error', result: { error: observation }, observation, submitted: false };
    }
    if (call.name === 'enter_stage')
      return not('ok', enteredStage(opts.workflow, (call.args as { stage: string }).stage));
    if (call.name === 'submit') return { ...not('ok', submittedText(opts.workflow)), submitted: true };
    return this.execute(call, call.name);
  }

  /** The user's answer at the approval prompt; no one to ask means no. */
  private ask(call: ModelToolCall, verdict: GateResult, reason: string): Promise<boolean> {
    const { opts } = this.run;
    return (
      opts.approve?.({
        tool: call.name,
        args: copyOf(call.args),
        reason,
        ...(verdict.askPattern ? { pattern: verdict.askPattern } : {}),
      }) ?? Promise.resolve(false)
    );
  }

  /** Runs an MCP tool's call on its server, after a checkpoint when the server runs here (it may write the workspace). */
  private async executeMcp(call: ModelToolCall): Promise<Ran> {
    const { opts, state, emit } = this.run;
    const checkpoint =
      opts.checkpoint && opts.mcp!.touchesWorkspace(call.name)
        ? await opts.checkpoint({ id: call.id, tool: call.name, step: state.steps + 1 }).catch(() => undefined)
        : undefined;
    emit({ kind: 'toolStart', id: call.id, tool: call.name, args: copyOf(call.args) });
    const outcome = await opts.mcp!.call(call.name, call.args as Record<string, unknown>, opts.signal);
    return { ...outcome, submitted: false, checkpoint, mcp: outcome.mcp };
  }

  /** Runs the call (its tool `name`, known by now) with the run's executor, after a checkpoint if it may change files. */
  private async execute(call: ModelToolCall, name: ToolName): Promise<Ran> {
    const { opts, state, emit } = this.run;
    let checkpoint: string | undefined;
    if (MAY_CHANGE_FILES.has(call.name) && opts.checkpoint)
      checkpoint = await opts
        .checkpoint({ id: call.id, tool: call.name, step: state.steps + 1 })
        .catch(() => undefined);
    emit({ kind: 'toolStart', id: call.id, tool: call.name, args: copyOf(call.args) });
    const outcome = await opts.execute(name, call.args as Record<string, unknown>, {
      workspace: opts.workspace,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return {
      status: outcome.status,
      result: outcome.result,
      observation: outcome.observation,
      submitted: false,
      checkpoint,
    };
  }
}

/** The trajectory's record of a call. */
function eventOf(call: ModelToolCall, ran: Ran, reply: number, usage: TurnUsage | undefined): ToolCallEvent {
  return {
    type: 'tool_call',
    id: call.id,
    tool: call.name,
    args: call.args,
    ...(call.argsError !== undefined
      ? { argsError: call.argsError, ...(call.argsText !== undefined ? { argsText: call.argsText } : {}) }
      : {}),
    ...(call.repairs?.length ? { repairs: call.repairs } : {}),
    ...(call.via === 'text' ? { via: 'text' as const } : {}),
    reply,
    ...(usage ? { usage } : {}),
    ...(ran.checkpoint ? { checkpoint: ran.checkpoint } : {}),
    ...(ran.mcp ? { mcp: ran.mcp } : {}),
    status: ran.status,
    result: ran.result,
    at: new Date().toISOString(),
  };
}

/**
 * Why the user must approve the call, if they must: an `ask` verdict, or a
 * blocked call (run anyway under enforcement `warn`) that matches an approval
 * pattern or a tool set to ask.
 */
function approvalReason(v: GateResult): string | undefined {
  if (v.decision === 'ask') return v.reason;
  if (v.decision !== 'block') return undefined;
  if (v.askPattern !== undefined)
    return `the command matches the approval pattern "${v.askPattern}"; it runs only if the user approves`;
  return v.askReason;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * What the approver is shown: a copy, so that nothing it does to the arguments
 * changes the call that then runs (an approval is for exactly what was shown).
 */
function copyOf(args: unknown): unknown {
  return structuredClone(args);
}
