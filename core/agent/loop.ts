import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { CompleteRequest, ModelReply, ModelToolCall } from '../model/client';
import { ModelError } from '../model/client';
import { toolDefinitions } from '../schema/tool-definitions';
import { isToolName, ToolArgs, type ToolName } from '../schema/tools';
import type { CallStatus, Header, OutcomeEvent, SandboxRecord, ToolCallEvent, ToolResult, WorkflowRef } from '../schema/trajectory';
import { transitionsFrom, type Workflow } from '../schema/workflow';
import { CHECKS } from '../verifier/checks';
import { callKey, changedFiles, VerifierState, type GateResult, type ProposedCall, type StepResult, type TrajectorySummary } from '../verifier/state';
import type { ToolContext, ToolOutcome } from '../tools/types';
import { compactMessages } from './context';
import { TrajectoryWriter } from './trajectory-writer';

/**
 * The verified agent loop, editor-free: the model proposes tool calls, every
 * call goes through the verifier gate before it runs, blocked calls do not
 * run and the model is told why, each step is written to the trajectory and
 * flushed before the next one starts, and `submit` ends the run with the
 * workflow's outcome check. The extension, the `lar run` CLI and the tests
 * drive the same loop with their own tool executor, gate and approvals.
 */

export interface AgentModel {
  complete(req: CompleteRequest): Promise<ModelReply>;
}

/** Decides whether a call may run; by default the run's own builtin verifier state. */
export type AgentGate = (call: ProposedCall) => Promise<GateResult>;

/** Runs one of the workspace tools (everything but enter_stage and submit). */
export type ToolExecutor = (tool: ToolName, args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolOutcome>;

export type AgentEvent =
  /** The header, line 1, written when the run starts. */
  | { kind: 'header'; line: 1; text: string }
  | { kind: 'text'; delta: string }
  | { kind: 'step'; line: number; text: string; event: ToolCallEvent; result: StepResult; gate: GateResult }
  | { kind: 'outcome'; line: number; text: string; event: OutcomeEvent }
  | { kind: 'message'; line: number; text: string }
  | { kind: 'end'; line: number; text: string; reason: string; detail?: string };

export interface AgentLimits {
  /** Most tool calls in the run. Default 200. */
  maxSteps?: number;
  /** Longest the run may take. Default 1 h. */
  maxTimeMs?: number;
  /** Most completion tokens over the run. Default unlimited. */
  maxTokens?: number;
  /** Replies in a row without a tool call before the run stops. Default 3. */
  maxIdleTurns?: number;
  /** Conversation size (characters) past which old tool results are elided. Default 200 000 (~50k tokens). */
  contextChars?: number;
  /**
   * Times the same call (same tool, same arguments) may fail with no file
   * changed in between before the run stops with `limit`; the model is warned
   * on the time before. Other calls in between that change no file do not
   * reset the count. Default 3, at least 2.
   */
  maxRepeatedFailures?: number;
}

export interface AgentOptions {
  task: string;
  workflow: Workflow;
  /** How the header names the workflow (inline object, builtin:ID or a path). */
  workflowRef: WorkflowRef;
  model: AgentModel;
  modelInfo: { name: string; endpoint?: string };
  workspace: string;
  trajectoryPath: string;
  execute: ToolExecutor;
  runOutcomeCheck: (signal?: AbortSignal) => Promise<OutcomeEvent>;
  /** Asked for calls that match an approval pattern; no answer means no. */
  approve?: (req: { tool: string; args: unknown; reason: string; pattern?: string }) => Promise<boolean>;
  /** `block`: a call the gate blocks does not run. `warn`: it runs and is scored −1, unless the command or path policy forbids it (those are always blocked). */
  enforcement?: 'block' | 'warn';
  gate?: AgentGate;
  limits?: AgentLimits;
  onEvent?: (e: AgentEvent) => void;
  signal?: AbortSignal;
  /** Removes secrets from everything written to the trajectory and from every tool result the model is sent. */
  redact?: (text: string) => string;
  runId?: string;
  /** The sandbox the run's commands have, recorded in the header. */
  sandbox?: SandboxRecord;
  /**
   * Gets, once the trajectory exists, a way to end its file at once (marked
   * interrupted, synchronously) when the host is going away and cannot wait
   * for the loop: an editor reloading mid-run.
   */
  onStart?: (run: { interrupt(detail: string): void }) => void;
}

/** Checks whose failure blocks a call even with enforcement `warn`: the command and path policies. */
export const SAFETY_CHECKS: ReadonlySet<string> = new Set(['tool.command_policy', 'tool.path_policy']);

export interface AgentResult {
  trajectoryPath: string;
  /** sha-256 of the trajectory as this run wrote it (absent when someone else changed the file). */
  digest?: string;
  summary: TrajectorySummary;
  endReason: 'submitted' | 'limit' | 'error' | 'cancelled';
  detail?: string;
}

export function systemPrompt(wf: Workflow): string {
  const stages = wf.stages.map((s) => {
    const exits = s.exit.map((c) => {
      switch (c.kind) {
        case 'tool_succeeded':
          return `${c.tool} succeeded at least ${c.atLeast} time(s)`;
        case 'file_changed':
          return c.pattern ? `a file matching ${c.pattern} changed` : 'a file changed';
        case 'command_succeeded':
        case 'command_ran':
          return `a command matching "${c.pattern}" ${c.kind === 'command_succeeded' ? 'succeeded' : 'ran'}${c.afterLastChange ? ' after the last file change' : ''}`;
      }
    });
    const next = transitionsFrom(wf, s.id);
    return `- ${s.id}${wf.terminal.includes(s.id) ? ' (terminal: submit from here)' : ''}: tools ${s.tools.join(', ')}; at most ${s.budget} calls per visit${exits.length ? `; done when ${exits.join(' and ')}` : ''}${next.length ? `; may move to ${next.join(', ')}` : ''}${s.description ? `. ${s.description}` : ''}`;
  });
  return [
    'You are a coding agent working in a workspace through tools. Every tool call is checked against a formal workflow before it runs; a call the workflow does not allow is blocked and you are told why.',
    `Workflow "${wf.id}"${wf.description ? `: ${wf.description}` : ''}. You start in stage "${wf.start}".`,
    'Stages:',
    ...stages,
    'Move between stages with enter_stage; use only the tools of the current stage; finish with submit from a terminal stage. After submit the workflow runs its own check:',
    `  ${wf.outcome.command} (must exit ${wf.outcome.expectExitCode}).`,
    'Call tools; do not only describe what you would do.',
  ].join('\n');
}

export async function runAgent(opts: AgentOptions): Promise<AgentResult> {
  const wf = opts.workflow;
  const redact = opts.redact ?? ((t: string) => t);
  const header: Header = {
    lar: 1,
    type: 'header',
    task: opts.task,
    workflow: opts.workflowRef,
    model: opts.modelInfo.endpoint ? { name: opts.modelInfo.name, endpoint: opts.modelInfo.endpoint } : { name: opts.modelInfo.name },
    started: new Date().toISOString(),
    ...(opts.runId ? { id: opts.runId } : {}),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
  };
  const writer = TrajectoryWriter.create(opts.trajectoryPath, header, redact);
  opts.onStart?.({ interrupt: (detail) => writer.close(detail) });
  const state = new VerifierState(wf, 1, header.sandbox);
  const gate: AgentGate = opts.gate ?? (async (call) => state.gate(call));
  const emit = opts.onEvent ?? (() => {});
  emit({ kind: 'header', line: 1, text: writer.headerText });
  const limits = { maxSteps: 200, maxTimeMs: 3_600_000, maxTokens: Infinity, maxIdleTurns: 3, contextChars: 200_000, maxRepeatedFailures: 3, ...opts.limits };
  const maxRepeats = Math.max(2, Math.floor(limits.maxRepeatedFailures));
  /** Calls that failed since the last file change: how many times each. */
  const failures = new Map<string, number>();
  const started = Date.now();
  const tools: ChatCompletionTool[] = toolDefinitions() as unknown as ChatCompletionTool[];
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: systemPrompt(wf) },
    { role: 'user', content: opts.task },
  ];
  const user = writer.append({ type: 'message', role: 'user', content: opts.task, at: new Date().toISOString() });
  emit({ kind: 'message', ...user });
  let tokens = 0;
  let idleTurns = 0;

  const finish = (reason: AgentResult['endReason'], detail?: string): AgentResult => {
    const end = writer.append({ type: 'end', reason, ...(detail ? { detail } : {}), at: new Date().toISOString() });
    emit({ kind: 'end', ...end, reason, ...(detail ? { detail } : {}) });
    writer.close();
    return { trajectoryPath: opts.trajectoryPath, ...(writer.digest ? { digest: writer.digest } : {}), summary: state.summary(), endReason: reason, ...(detail ? { detail } : {}) };
  };

  try {
    for (;;) {
      if (opts.signal?.aborted) return finish('cancelled', 'the user stopped the run');
      if (state.steps >= limits.maxSteps) return finish('limit', `the step limit (${limits.maxSteps}) was reached`);
      if (Date.now() - started > limits.maxTimeMs) return finish('limit', `the time limit (${Math.round(limits.maxTimeMs / 1000)} s) was reached`);
      if (tokens > limits.maxTokens) return finish('limit', `the token limit (${limits.maxTokens}) was reached`);

      let reply: ModelReply;
      try {
        reply = await opts.model.complete({ messages: compactMessages(messages, limits.contextChars), tools, onText: (delta) => emit({ kind: 'text', delta }), ...(opts.signal ? { signal: opts.signal } : {}) });
      } catch (e) {
        if (e instanceof ModelError && e.kind === 'cancelled') return finish('cancelled', 'the user stopped the run');
        return finish('error', e instanceof Error ? e.message : String(e));
      }
      tokens += reply.usage?.completion_tokens ?? 0;
      if (reply.text) {
        const m = writer.append({ type: 'message', role: 'assistant', content: reply.text, at: new Date().toISOString() });
        emit({ kind: 'message', ...m });
      }
      const native = reply.toolCalls.filter((c) => c.via === 'native');
      messages.push({
        role: 'assistant',
        content: reply.text || (native.length ? null : ''),
        ...(native.length ? { tool_calls: native.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: argumentsText(c) } })) } : {}),
      } as ChatCompletionMessageParam);

      if (reply.toolCalls.length === 0) {
        if (++idleTurns >= limits.maxIdleTurns) return finish('error', `the model answered ${idleTurns} times in a row without calling a tool`);
        messages.push({ role: 'user', content: 'Continue by calling a tool. The run ends only with submit from a terminal stage.' });
        continue;
      }
      idleTurns = 0;

      for (const call of reply.toolCalls) {
        if (opts.signal?.aborted) return finish('cancelled', 'the user stopped the run');
        const stepped = await step(call);
        const { submitted, loop } = stepped;
        // What a command printed or a file held may carry a secret: the model gets it masked, as the trajectory does.
        const observation = redact(stepped.observation);
        if (call.via === 'native') messages.push({ role: 'tool', tool_call_id: call.id, content: observation });
        else messages.push({ role: 'user', content: `Result of ${call.name || 'your tool call'}:\n${observation}` });
        // A model that keeps making the same failing call would burn the whole step budget.
        if (loop) return finish('limit', loop);
        if (submitted) {
          const outcome = await opts.runOutcomeCheck(opts.signal);
          const w = writer.append(outcome);
          state.append(outcome, w.line);
          emit({ kind: 'outcome', ...w, event: outcome });
          return finish('submitted');
        }
        if (state.steps >= limits.maxSteps) break;
      }
    }
  } catch (e) {
    // Whatever went wrong, the file on disk stays complete and says so.
    writer.close(`the run failed: ${e instanceof Error ? e.message : String(e)}`);
    throw e;
  }

  /** Gates, runs (or not) and records one tool call; returns what the model reads, and why the run must stop if it must. */
  async function step(call: ModelToolCall): Promise<{ observation: string; submitted: boolean; loop?: string }> {
    const proposed: ProposedCall = call.argsError !== undefined ? { tool: call.name, args: call.args, argsError: call.argsError } : { tool: call.name, args: call.args };
    const verdict = await gate(proposed);
    const t0 = Date.now();
    let status: CallStatus;
    let result: ToolResult = {};
    let observation: string;
    let submitted = false;
    const stageBefore = state.currentStage;

    // `warn` relaxes the workflow's structure (stages, transitions), never its safety policy:
    // a denied command or path is blocked whatever the enforcement.
    const unsafe = verdict.verdicts.find((v) => !v.ok && SAFETY_CHECKS.has(v.check));
    if (verdict.decision === 'block' && ((opts.enforcement ?? 'block') === 'block' || unsafe)) {
      status = 'blocked';
      observation = `Blocked by the workflow verifier, not run: ${unsafe?.reason ?? verdict.reason}`;
    } else if (approvalReason(verdict) !== undefined && !(await (opts.approve?.({ tool: call.name, args: copyOf(call.args), reason: approvalReason(verdict)!, ...(verdict.askPattern ? { pattern: verdict.askPattern } : {}) }) ?? Promise.resolve(false)))) {
      status = 'denied';
      observation = `The user rejected this call at the approval prompt (${verdict.reason}). Do something else.`;
    } else if (!isToolName(call.name) || call.argsError !== undefined || !ToolArgs[call.name].safeParse(call.args).success) {
      // Only reachable with enforcement "warn": such a call cannot run at all.
      status = 'error';
      observation = `Not run: ${verdict.verdicts.find((v) => !v.ok)?.reason ?? 'the call is malformed'}`;
      result = { error: observation };
    } else if (call.name === 'enter_stage') {
      const target = (call.args as { stage: string }).stage;
      status = 'ok';
      const s = wf.stages.find((x) => x.id === target);
      observation = s ? `Now in stage "${target}". Tools: ${s.tools.join(', ')}.` : `There is no stage "${target}".`;
    } else if (call.name === 'submit') {
      status = 'ok';
      submitted = true;
      observation = 'Submitted. The workflow outcome check runs now.';
    } else {
      const outcome = await opts.execute(call.name, call.args as Record<string, unknown>, { workspace: opts.workspace, ...(opts.signal ? { signal: opts.signal } : {}) });
      status = outcome.status;
      result = outcome.result;
      observation = outcome.observation;
    }
    if (result.durationMs === undefined) result = { ...result, durationMs: Date.now() - t0 };
    const event: ToolCallEvent = {
      type: 'tool_call',
      id: call.id,
      tool: call.name,
      args: call.args,
      ...(call.argsError !== undefined ? { argsError: call.argsError } : {}),
      status,
      result,
      at: new Date().toISOString(),
    };
    const written = writer.append(event);
    const stepResult = state.append(event, written.line);
    emit({ kind: 'step', ...written, event, result: stepResult, gate: verdict });
    // Tell the model what the verifier made of it, so it can correct course.
    const failed = stepResult.verdicts.filter((v) => !v.ok && v.check !== 'tool.succeeded');
    const notes = failed.length ? `\nVerifier: ${failed.map((v) => `${v.check} (${CHECKS[v.check].severity}): ${v.reason}`).join('; ')}` : '';
    const moved = stepResult.stageVisit && state.currentStage !== stageBefore ? `\nStage "${stepResult.stageVisit.stage}" scored ${stepResult.stageVisit.reward}.` : '';
    // The loop breaker: the same failing call, nothing changed in between (as tool.not_repeated sees it).
    if (changedFiles(event).length) failures.clear();
    const failure = stepResult.verdicts.find((v) => v.check === 'tool.succeeded' && !v.ok);
    let warning = '';
    if (failure) {
      // Malformed arguments are all `null` to the verifier; here only the same text is the same call.
      const key = call.argsError !== undefined ? `${callKey(call.name, null)}\u0000${call.argsText ?? call.argsError}` : callKey(call.name, call.args);
      const times = (failures.get(key) ?? 0) + 1;
      failures.set(key, times);
      if (times >= maxRepeats) {
        const loop = `the model repeated the same failing call (${describeCall(call)}) ${times} times with no file changed in between; the last time: ${failure.reason}`;
        return { observation: `${observation}${notes}${moved}`, submitted: false, loop: redact(loop) };
      }
      if (times === maxRepeats - 1) {
        warning =
          times > 1
            ? `\nThis exact call has now failed ${times} times with no file changed in between: you are looping. Making it again unchanged ends the run; change something first, or do something else.`
            : '\nMaking this exact call again with no file changed in between ends the run.';
      }
    }
    return { observation: `${observation}${notes}${moved}${warning}`, submitted: submitted && state.ended };
  }
}

/** A call as a person reads it in a message: the tool and its arguments (as the model wrote them), shortened. */
function describeCall(c: ModelToolCall): string {
  const args = c.argsError !== undefined ? (c.argsText ?? '') : JSON.stringify(c.args ?? {});
  return `${c.name || '(no tool name)'} ${args.length > 200 ? `${args.slice(0, 200)}…` : args}`;
}

/**
 * Why the user must approve the call, if they must: an `ask` verdict, or a
 * blocked call (run anyway under enforcement `warn`) that matches an approval
 * pattern or a tool set to ask.
 */
function approvalReason(v: GateResult): string | undefined {
  if (v.decision === 'ask') return v.reason;
  if (v.decision !== 'block') return undefined;
  if (v.askPattern !== undefined) return `the command matches the approval pattern "${v.askPattern}"; it runs only if the user approves`;
  return v.askReason;
}

/**
 * What the approver is shown: a copy, so that nothing it does to the arguments
 * changes the call that then runs (an approval is for exactly what was shown).
 */
function copyOf(args: unknown): unknown {
  return structuredClone(args);
}

function argumentsText(c: ModelToolCall): string {
  return c.argsError !== undefined ? '{}' : JSON.stringify(c.args ?? {});
}
