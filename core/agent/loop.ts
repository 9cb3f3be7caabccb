import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { CompleteRequest, ContextWindow, ModelReply, ModelToolCall } from '../model/client';
import { DEFAULT_CONTEXT_WINDOW, ModelError, wireFormatOf } from '../model/client';
import { guessFormat, type ToolFormatSetting, type WireFormat } from '../model/formats';
import { StreamView } from '../model/stream-view';
import { TokenMeter } from '../model/tokens';
import { toolDefinitions } from '../schema/tool-definitions';
import { isToolName, ToolArgs } from '../schema/tools';
import type {
  CallStatus,
  CompactionEvent,
  Header,
  OutcomeEvent,
  RestoreEvent,
  SandboxRecord,
  ToolCallEvent,
  ToolResult,
  WorkflowRef,
} from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import {
  changedFiles,
  VerifierState,
  type GateResult,
  type ProposedCall,
  type StepResult,
  type TrajectorySummary,
} from '../verifier/state';
import type { ToolExecutor } from '../tools/types';

export type { ToolExecutor };
import { answerBudget, budgetFor, capText, compact, MIN_ANSWER, promptLimit, tooSmall, type Budget } from './context';
import { Conversation, newCallId, type TurnCall, type TurnResult } from './conversation';
import type { Rules } from './rules';
import {
  describeCall,
  enteredStage,
  hostFacts,
  newRunNote,
  outcomeLine,
  restoreNote,
  systemFor,
  toolSpecs,
  verifierFeedback,
} from './prompts';
import { RepeatedFailures } from './repeats';
import { TrajectoryWriter } from './trajectory-writer';
import { recordDigest } from './run-digests';
import { maskEndpoint } from '../model/endpoint';

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
  /** The model's context window (ModelClient asks the server); absent: the default is assumed. */
  contextWindow?(signal?: AbortSignal): Promise<ContextWindow>;
  /** Exact prompt tokens of a request where the server can count them. */
  countTokens?(
    messages: ChatCompletionMessageParam[],
    tools?: ChatCompletionTool[],
    signal?: AbortSignal,
  ): Promise<number | undefined>;
  /** A refusal said what the window is. */
  learnWindow?(tokens: number): void;
  /** Whether the model's template opens `<think>` in the prompt (answers then hold only the closing tag). */
  opensThinking?(): boolean;
}

/** Decides whether a call may run; by default the run's own builtin verifier state. */
export type AgentGate = (call: ProposedCall) => Promise<GateResult>;

export type AgentEvent =
  /** The header, line 1, written when the run starts. */
  | { kind: 'header'; line: 1; text: string }
  /** Streamed prose of the answer (tool calls written as text and reasoning held apart). */
  | { kind: 'text'; delta: string }
  /** Streamed reasoning. */
  | { kind: 'reasoning'; delta: string }
  /** The prose streamed so far in this answer was reasoning after all (a bare </think> came). */
  | { kind: 'retract'; text: string }
  /** A request to the model is on its way (nothing streamed yet): for a "waiting" indicator. */
  | { kind: 'request' }
  /** How full the window is after an answer (prompt tokens of the last request), and the completion tokens of the run so far. */
  | { kind: 'context'; used: number; window: number; source: ContextWindow['source']; completionTokens: number }
  /** A tool call passed the gate and starts now (its step event follows when it ends). */
  | { kind: 'toolStart'; id: string; tool: string; args: unknown }
  /** The restore the user made before this run, recorded after the header. */
  | { kind: 'restore'; line: number; text: string; event: RestoreEvent }
  | { kind: 'compaction'; line: number; text: string; event: CompactionEvent }
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
  /** The model's context window in tokens; default: what the model client says (the server), else 32768. */
  contextWindow?: number;
  /** Tokens kept for each answer (`max_tokens`); default a quarter of the window, at most 8192. */
  maxOutputTokens?: number;
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
  /**
   * Takes a checkpoint of the workspace before a call that may change files
   * runs (after the gate and any approval): its id is recorded on the step.
   * Undefined (or a failure) records none; the call runs either way.
   */
  checkpoint?: (call: { id: string; tool: string; step: number }) => Promise<string | undefined>;
  /** The restores the user made since the chat's last run: recorded first, and the model is told of the last. */
  restored?: readonly RestoreEvent[];
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
  /** How tool calls travel (default `auto`: native, text calls in content read too, a text format when the server has no parser). */
  toolFormat?: ToolFormatSetting;
  /** The workspace's rules for agents (core/agent/rules.ts), added to the system prompt and named in the header. */
  rules?: Rules;
  /**
   * A chat's conversation so far (the previous run's `conversation`): the task is
   * then a follow-up, added to it as the user's next message, and the model keeps
   * its whole context. Absent: a new conversation.
   */
  conversation?: Conversation;
  /** Recorded in the header: the chat this run belongs to. */
  thread?: { id: string; turn: number; previous?: string; step?: number };
  /**
   * What a reply without a tool call does: `nudge` (default, for `lar run`, where nobody answers)
   * asks the model to call a tool, `end` (a chat) ends the run `answered` and hands the turn back.
   */
  onIdle?: 'nudge' | 'end';
  /**
   * Messages the user typed while the run worked: asked at each turn boundary
   * (before the next request to the model); each one is the user's next
   * message in the conversation, recorded as such.
   */
  nextUserMessage?: () => string | undefined;
  /**
   * Gets, once the trajectory exists, a way to end its file at once (marked
   * interrupted, synchronously) when the host is going away and cannot wait
   * for the loop: an editor reloading mid-run.
   */
  onStart?: (run: { interrupt: (detail: string) => void }) => void;
}

/** Steps between two compaction notes from the model (a small window compacts often; the host writes the notes in between). */
const NOTE_EVERY = 6;

/** Checks whose failure blocks a call even with enforcement `warn`: the command and path policies. */
export const SAFETY_CHECKS: ReadonlySet<string> = new Set(['tool.command_policy', 'tool.path_policy']);

export interface AgentResult {
  trajectoryPath: string;
  /** sha-256 of the trajectory as this run wrote it (absent when someone else changed the file). */
  digest?: string;
  summary: TrajectorySummary;
  endReason: 'submitted' | 'answered' | 'limit' | 'error' | 'cancelled';
  detail?: string;
  /** The conversation as it stands at the end, for a follow-up to continue. */
  conversation: Conversation;
}

export async function runAgent(opts: AgentOptions): Promise<AgentResult> {
  const wf = opts.workflow;
  const redact = opts.redact ?? ((t: string) => t);
  const setting = opts.toolFormat ?? 'auto';
  let format: WireFormat = wireFormatOf(setting);
  // The window before the header, so the file says what the run was sized for; a server that is
  // down here fails the first request instead, with the file already written.
  let window: ContextWindow = opts.limits?.contextWindow
    ? { tokens: opts.limits.contextWindow, source: 'setting' }
    : ((await opts.model.contextWindow?.(opts.signal).catch(() => undefined)) ?? {
        tokens: DEFAULT_CONTEXT_WINDOW,
        source: 'default',
      });
  const limits = {
    maxSteps: 200,
    maxTimeMs: 3_600_000,
    maxTokens: Infinity,
    maxIdleTurns: 3,
    maxRepeatedFailures: 3,
    ...opts.limits,
  };
  const maxRepeats = Math.max(2, Math.floor(limits.maxRepeatedFailures));
  const header: Header = {
    lar: 1,
    type: 'header',
    task: opts.task,
    workflow: opts.workflowRef,
    model: {
      name: opts.modelInfo.name,
      ...(opts.modelInfo.endpoint ? { endpoint: maskEndpoint(opts.modelInfo.endpoint) } : {}),
      toolFormat: format,
      contextWindow: window.tokens,
      contextWindowSource: window.source,
    },
    started: new Date().toISOString(),
    ...(opts.runId ? { id: opts.runId } : {}),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    ...(opts.rules?.files.length ? { rules: opts.rules.files.map((f) => f.path) } : {}),
    ...(opts.thread ? { thread: opts.thread } : {}),
    limits: { maxRepeatedFailures: maxRepeats },
  };
  const writer = TrajectoryWriter.create(opts.trajectoryPath, header, redact);
  opts.onStart?.({ interrupt: (detail) => writer.close(detail) });
  const state = new VerifierState(wf, 1, header.sandbox);
  const gate: AgentGate = opts.gate ?? ((call) => Promise.resolve(state.gate(call)));
  const emit = opts.onEvent ?? (() => {});
  emit({ kind: 'header', line: 1, text: writer.headerText });
  /** Calls that failed since the last file change: how many times each. */
  const failures = new RepeatedFailures(maxRepeats);
  const started = Date.now();
  const tools: ChatCompletionTool[] = toolDefinitions();
  const specs = toolSpecs();
  const conversation = opts.conversation ?? new Conversation(systemFor(wf, opts.rules), opts.task, specs);
  // A follow-up: the user's next message in the conversation the chat already has.
  // Each run is verified on its own, from the workflow's start stage: the model is told, or it would go on in the stage it last entered.
  const lastRestore = opts.restored?.[opts.restored.length - 1];
  if (opts.conversation)
    conversation.push({
      kind: 'user',
      text: `${opts.task}\n\n${lastRestore ? `${restoreNote(lastRestore)}\n` : ''}${newRunNote(wf)}`,
    });
  const meter = new TokenMeter();
  /** The system prompt and the tools as the current format carries them: what every request starts with. */
  const headTokens = () => meter.estimate(conversation.headOf(format), format === 'native' ? tools : undefined);
  let budget: Budget = budgetFor(window.tokens, limits.maxOutputTokens, headTokens());
  let compactions = 0;
  /** How many turns the conversation had at the last compaction: it is not compacted again until it grows. */
  let compactedAt = -1;
  /** The step at which the model last wrote a compaction note: it is asked at most every few steps. */
  let notedAt = -Infinity;
  /** Files the run changed and its latest failing calls: the facts a compaction's note carries. */
  const touched = new Set<string>();
  const recentFailures: string[] = [];
  /** Context refusals in a row for the same turn (each compacts further). */
  let refusals = 0;
  for (const r of opts.restored ?? []) {
    const w = writer.append(r);
    state.append(r, w.line);
    emit({ kind: 'restore', ...w, event: r });
  }
  const user = writer.append({ type: 'message', role: 'user', content: opts.task, at: new Date().toISOString() });
  emit({ kind: 'message', ...user });
  let tokens = 0;
  let idleTurns = 0;
  /** Model replies with calls so far: each call records the reply it came in. */
  let replies = 0;

  /** The calls of the model's latest turn and the results so far: settled into the conversation however the run ends. */
  let pending: { calls: readonly ModelToolCall[]; results: TurnResult[] } | undefined;
  /**
   * The turn's results join the conversation, every call with one (templates that pair calls with
   * results refuse a request that lacks one; a follow-up or a resume continues this conversation).
   */
  const settle = (why: string) => {
    if (!pending) return;
    const done = new Set(pending.results.map((r) => r.callId));
    const rest = pending.calls
      .filter((c) => !done.has(c.id))
      .map((c) => ({ callId: c.id, name: c.name || 'tool', content: `Not run: ${why} before this call.` }));
    conversation.push({ kind: 'results', results: [...pending.results, ...rest] });
    pending = undefined;
  };
  const finish = (reason: AgentResult['endReason'], detail?: string): AgentResult => {
    settle(`the run ended (${reason})`);
    const end = writer.append({ type: 'end', reason, ...(detail ? { detail } : {}), at: new Date().toISOString() });
    emit({ kind: 'end', ...end, reason, ...(detail ? { detail } : {}) });
    writer.close();
    // Kept outside the workspace, so lar verify can tell a record changed after the run ended.
    if (writer.digest) recordDigest(opts.trajectoryPath, writer.digest);
    return {
      trajectoryPath: opts.trajectoryPath,
      ...(writer.digest ? { digest: writer.digest } : {}),
      summary: state.summary(),
      endReason: reason,
      ...(detail ? { detail } : {}),
      conversation,
    };
  };

  /** Makes the conversation fit `target` tokens and records it; false when nothing was left to make smaller. */
  const compactTo = async (target: number, reason: CompactionEvent['reason']): Promise<boolean> => {
    compactions++;
    const c = await compact(conversation, {
      format,
      tools,
      meter,
      target,
      window: window.tokens,
      reason,
      ordinal: compactions,
      modelNote: state.steps - notedAt >= NOTE_EVERY,
      facts: () => hostFacts(state, wf, touched, recentFailures),
      summarize: async (messages, maxTokens) => {
        const r = await opts.model.complete({
          messages,
          format,
          maxTokens,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        tokens += r.usage?.completion_tokens ?? 0;
        return r.text.trim()
          ? { text: r.text, ...(r.usage?.completion_tokens !== undefined ? { tokens: r.usage.completion_tokens } : {}) }
          : undefined;
      },
    });
    if (c.summaryBy === 'model') notedAt = state.steps;
    const event: CompactionEvent = { type: 'compaction', ...c, at: new Date().toISOString() };
    const w = writer.append(event);
    state.append(event, w.line);
    emit({ kind: 'compaction', ...w, event });
    return c.tokensAfter < c.tokensBefore;
  };

  try {
    const small = tooSmall(window.tokens, headTokens());
    if (small) return finish('error', small);
    for (;;) {
      if (opts.signal?.aborted) return finish('cancelled', 'the user stopped the run');
      if (state.steps >= limits.maxSteps) return finish('limit', `the step limit (${limits.maxSteps}) was reached`);
      if (Date.now() - started > limits.maxTimeMs)
        return finish('limit', `the time limit (${Math.round(limits.maxTimeMs / 1000)} s) was reached`);
      if (tokens > limits.maxTokens) return finish('limit', `the token limit (${limits.maxTokens}) was reached`);

      // What the user typed meanwhile reaches the model now, in order.
      for (let typed = opts.nextUserMessage?.(); typed !== undefined; typed = opts.nextUserMessage?.()) {
        conversation.push({ kind: 'user', text: typed });
        const m = writer.append({ type: 'message', role: 'user', content: typed, at: new Date().toISOString() });
        emit({ kind: 'message', ...m });
      }
      let messages = conversation.render(format);
      const sent = format === 'native' ? tools : undefined;
      let estimate = meter.estimate(messages, sent);
      if (estimate > promptLimit(budget)) {
        // Near the edge an estimate is not enough: the server's own count decides, where it can give one.
        const exact = await opts.model.countTokens?.(messages, sent, opts.signal).catch(() => undefined);
        if (exact !== undefined) {
          meter.observe(messages, sent, exact);
          estimate = exact;
        }
      }
      // Compacted once per growth: a conversation that did not grow since cannot be made smaller again.
      if (estimate > promptLimit(budget) && conversation.turns.length !== compactedAt) {
        await compactTo(Math.floor(promptLimit(budget) * 0.6), 'window');
        compactedAt = conversation.turns.length;
        messages = conversation.render(format);
        estimate = meter.estimate(messages, sent);
      }
      const answer = answerBudget(budget, estimate);
      if (answer < MIN_ANSWER) {
        return finish(
          'error',
          `the conversation does not fit the model's context window (${window.tokens} tokens) even compacted: its ${estimate} prompt tokens leave ${Math.max(0, answer)} for an answer. Serve the model with a longer context (vLLM --max-model-len, SGLang --context-length) or shorten the task`,
        );
      }

      let reply: ModelReply;
      const view = new StreamView({ promptOpensThinking: opts.model.opensThinking?.() ?? false });
      const show = (pieces: ReturnType<StreamView['push']>) => {
        for (const p of pieces)
          emit(p.kind === 'retract' ? { kind: 'retract', text: p.text } : { kind: p.kind, delta: p.delta });
      };
      emit({ kind: 'request' });
      try {
        reply = await opts.model.complete({
          messages,
          tools,
          format,
          maxTokens: answer,
          onText: (delta) => show(view.push(delta)),
          onReasoning: (delta) => emit({ kind: 'reasoning', delta }),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        show(view.flush());
      } catch (e) {
        if (e instanceof ModelError && e.kind === 'cancelled') return finish('cancelled', 'the user stopped the run');
        if (e instanceof ModelError && e.kind === 'context_length') {
          // The server counts differently from the estimate: believe it, make room, and ask again.
          // A refusal that names no window (a proxy rewording it) still says this request was too long.
          const named = e.context?.window;
          const implied = Math.floor((estimate + answer) * 0.85);
          const next = named && named > 0 ? named : Math.min(window.tokens, implied);
          if (next !== window.tokens) {
            window = { tokens: next, source: 'error' };
            // Only a window the server named outlives this run (later rollouts of a group start from it).
            if (named && named > 0) opts.model.learnWindow?.(named);
          }
          if (e.context?.promptTokens) meter.observe(messages, sent, e.context.promptTokens);
          budget = budgetFor(window.tokens, limits.maxOutputTokens, headTokens());
          const target = Math.floor(promptLimit(budget) * (refusals === 0 ? 0.6 : 0.4));
          if (++refusals <= 4 && !tooSmall(window.tokens, headTokens())) {
            await compactTo(target, 'context_error');
            compactedAt = conversation.turns.length;
            continue;
          }
          return finish(
            'error',
            `${e.message}. The server refused the request as too long ${refusals} time(s) in a row, compacting each time; the window is now taken to be ${window.tokens} tokens, too small for the system prompt, the task and the latest turn. Serve the model with a longer context (vLLM --max-model-len, SGLang --context-length) or shorten the task.`,
          );
        }
        if (e instanceof ModelError && e.kind === 'no_tool_parser' && setting === 'auto' && format === 'native') {
          // The server takes no tools in the API: the model is told about them in its own family's text form instead.
          format = guessFormat(opts.modelInfo.name) ?? 'hermes';
          budget = budgetFor(window.tokens, limits.maxOutputTokens, headTokens());
          const smallNow = tooSmall(window.tokens, headTokens());
          if (smallNow) return finish('error', smallNow);
          const m = writer.append({
            type: 'message',
            role: 'system',
            content: `The server cannot parse tool calls (${e.message}); the run carries them as text in the ${format} format from here on.`,
            at: new Date().toISOString(),
          });
          emit({ kind: 'message', ...m });
          continue;
        }
        return finish('error', e instanceof Error ? e.message : String(e));
      }
      refusals = 0;
      if (reply.usage?.prompt_tokens) meter.observe(messages, sent, reply.usage.prompt_tokens);
      tokens += reply.usage?.completion_tokens ?? 0;
      emit({
        kind: 'context',
        used: reply.usage?.prompt_tokens ?? estimate,
        window: window.tokens,
        source: window.source,
        completionTokens: tokens,
      });
      if (reply.text || reply.reasoning) {
        const m = writer.append({
          type: 'message',
          role: 'assistant',
          content: reply.text,
          ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
          at: new Date().toISOString(),
        });
        emit({ kind: 'message', ...m });
      }
      // Text calls get run-unique ids (the server gave them none); the conversation keys results by them.
      const calls = reply.toolCalls.map((c) => (c.via === 'text' ? { ...c, id: newCallId() } : c));
      const turnCalls: TurnCall[] = calls.map((c) => ({
        id: c.id,
        name: c.name,
        args: c.args,
        ...(c.argsError !== undefined ? { malformed: true } : {}),
      }));
      conversation.push({
        kind: 'assistant',
        text: reply.text,
        calls: turnCalls,
        ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
      });

      if (calls.length === 0) {
        // A chat: the model answered; the turn is the user's (a question answered is not a failed task).
        if (opts.onIdle === 'end') return finish('answered');
        if (++idleTurns >= limits.maxIdleTurns)
          return finish('error', `the model answered ${idleTurns} times in a row without calling a tool`);
        conversation.push({
          kind: 'user',
          text: 'Continue by calling a tool. The run ends only with submit from a terminal stage.',
        });
        continue;
      }
      idleTurns = 0;

      // The turn's results join the conversation once all are in (a rendered turn is kept as rendered).
      const results: TurnResult[] = [];
      pending = { calls, results };
      replies++;
      // One result may not take more than a quarter of what a prompt can hold.
      const resultCap = Math.max(256, Math.floor(promptLimit(budget) / 4));
      for (const call of calls) {
        if (opts.signal?.aborted) return finish('cancelled', 'the user stopped the run');
        const stepped = await step(call);
        const { submitted, loop } = stepped;
        // What a command printed or a file held may carry a secret: the model gets it masked, as the trajectory does.
        const observation = capText(
          redact(stepped.observation),
          resultCap,
          meter,
          'read_file with startLine/endLine, or a narrower command, shows the rest',
        );
        results.push({ callId: call.id, name: call.name || 'tool', content: observation });
        // A model that keeps making the same failing call would burn the whole step budget.
        if (loop) return finish('limit', loop);
        if (submitted) {
          const outcome = await opts.runOutcomeCheck(opts.signal);
          const w = writer.append(outcome);
          state.append(outcome, w.line);
          emit({ kind: 'outcome', ...w, event: outcome });
          const last = results[results.length - 1]!;
          const passed = state.summary().outcome.reward === 1;
          results[results.length - 1] = { ...last, content: `${last.content}${outcomeLine(outcome, passed)}` };
          return finish('submitted');
        }
        if (state.steps >= limits.maxSteps) break;
      }
      settle('the step limit was reached');
    }
  } catch (e) {
    // Whatever went wrong, the file on disk stays complete and says so.
    writer.close(`the run failed: ${e instanceof Error ? e.message : String(e)}`);
    throw e;
  }

  /** Gates, runs (or not) and records one tool call; returns what the model reads, and why the run must stop if it must. */
  async function step(call: ModelToolCall): Promise<{ observation: string; submitted: boolean; loop?: string }> {
    const proposed: ProposedCall =
      call.argsError !== undefined
        ? { tool: call.name, args: call.args, argsError: call.argsError }
        : { tool: call.name, args: call.args };
    const verdict = await gate(proposed);
    const t0 = Date.now();
    let status: CallStatus;
    let result: ToolResult = {};
    let observation: string;
    let submitted = false;
    let checkpoint: string | undefined;
    const stageBefore = state.currentStage;

    // `warn` relaxes the workflow's structure (stages, transitions), never its safety policy:
    // a denied command or path is blocked whatever the enforcement.
    const unsafe = verdict.verdicts.find((v) => !v.ok && SAFETY_CHECKS.has(v.check));
    if (verdict.decision === 'block' && ((opts.enforcement ?? 'block') === 'block' || unsafe)) {
      status = 'blocked';
      observation = `Blocked by the workflow verifier, not run: ${unsafe?.reason ?? verdict.reason}`;
    } else if (
      approvalReason(verdict) !== undefined &&
      !(await (opts.approve?.({
        tool: call.name,
        args: copyOf(call.args),
        reason: approvalReason(verdict)!,
        ...(verdict.askPattern ? { pattern: verdict.askPattern } : {}),
      }) ?? Promise.resolve(false)))
    ) {
      status = 'denied';
      observation = `The user rejected this call at the approval prompt (${verdict.reason}). Do something else.`;
    } else if (
      !isToolName(call.name) ||
      call.argsError !== undefined ||
      !ToolArgs[call.name].safeParse(call.args).success
    ) {
      // Only reachable with enforcement "warn": such a call cannot run at all.
      status = 'error';
      observation = `Not run: ${verdict.verdicts.find((v) => !v.ok)?.reason ?? 'the call is malformed'}`;
      result = { error: observation };
    } else if (call.name === 'enter_stage') {
      const target = (call.args as { stage: string }).stage;
      status = 'ok';
      observation = enteredStage(wf, target);
    } else if (call.name === 'submit') {
      status = 'ok';
      submitted = true;
      observation = 'Submitted. The workflow outcome check runs now.';
    } else {
      if (MAY_CHANGE_FILES.has(call.name) && opts.checkpoint)
        checkpoint = await opts
          .checkpoint({ id: call.id, tool: call.name, step: state.steps + 1 })
          .catch(() => undefined);
      emit({ kind: 'toolStart', id: call.id, tool: call.name, args: copyOf(call.args) });
      const outcome = await opts.execute(call.name, call.args as Record<string, unknown>, {
        workspace: opts.workspace,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
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
      ...(call.argsError !== undefined
        ? { argsError: call.argsError, ...(call.argsText !== undefined ? { argsText: call.argsText } : {}) }
        : {}),
      ...(call.repairs?.length ? { repairs: call.repairs } : {}),
      ...(call.via === 'text' ? { via: 'text' as const } : {}),
      reply: replies,
      ...(checkpoint ? { checkpoint } : {}),
      status,
      result,
      at: new Date().toISOString(),
    };
    const written = writer.append(event);
    const stepResult = state.append(event, written.line);
    emit({ kind: 'step', ...written, event, result: stepResult, gate: verdict });
    // Tell the model what the verifier made of it, so it can correct course.
    const feedback = verifierFeedback(stepResult, state.currentStage !== stageBefore);
    for (const f of changedFiles(event)) touched.add(f);
    const failure = stepResult.verdicts.find((v) => v.check === 'tool.succeeded' && !v.ok);
    if (failure || status === 'blocked') {
      recentFailures.push(
        redact(`${describeCall(call)} (${status === 'blocked' ? 'blocked' : failure!.reason})`.slice(0, 400)),
      );
      if (recentFailures.length > 5) recentFailures.shift();
    }
    const repeat = failures.observe(event, stepResult, call.argsText);
    if (repeat.stop) {
      const loop = `the model repeated the same failing call (${describeCall(call)}) ${repeat.times} times with no file changed in between; the last time: ${failure!.reason}`;
      return { observation: `${observation}${feedback}`, submitted: false, loop: redact(loop) };
    }
    return { observation: `${observation}${feedback}${repeat.warning}`, submitted: submitted && state.ended };
  }
}

/** The tools whose call may change files: a checkpoint is taken before each. */
export const MAY_CHANGE_FILES: ReadonlySet<string> = new Set(['run_command', 'write_file', 'edit_file']);

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

/**
 * What the approver is shown: a copy, so that nothing it does to the arguments
 * changes the call that then runs (an approval is for exactly what was shown).
 */
function copyOf(args: unknown): unknown {
  return structuredClone(args);
}
