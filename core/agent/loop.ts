/**
 * The verified agent loop, editor-free: the model proposes tool calls, every
 * call goes through the verifier gate before it runs, blocked calls do not
 * run and the model is told why, each step is written to the trajectory and
 * flushed before the next one starts, and `submit` ends the run with the
 * workflow's outcome check. The extension, the `lar run` CLI and the tests
 * drive the same loop with their own tool executor, gate and approvals.
 */
import { wireFormatOf } from '../model/client';
import { ModelError } from '../model/errors';
import type { ModelReply, ModelToolCall } from '../model/reply';
import { DEFAULT_CONTEXT_WINDOW, type ContextWindow } from '../model/server-info';
import type { ToolFormatSetting } from '../model/formats';
import { StreamView } from '../model/stream-view';
import type { TurnUsage } from '../schema/trajectory';
import { turnUsage } from '../model/usage';
import { externalJudge, type Workflow } from '../schema/workflow';
import { VerifierState } from '../verifier/state';
import { capText, MIN_ANSWER } from './context';
import { Conversation, newCallId, type TurnCall, type TurnResult } from './conversation';
import { callInFlight, hostFacts, newRunNote, outcomeLine, restoreNote, systemFor, toolSpecs } from './prompts';
import { recordDigest } from './run-digests';
import { CallSteps } from './step';
import { TrajectoryWriter } from './trajectory-writer';
import { headerOf, limitsOf } from './run-header';
import { asUserInput, partsOf, renderUserMessage, type UserInput } from '../schema/user-message';
import { TokenLog } from './token-log';
import { McpListings } from './mcp-listings';
import { WindowFit, type Prompt } from './window-fit';
import type { AgentEvent, AgentGate, AgentOptions, AgentResult } from './types';

export type { ToolExecutor } from '../tools/types'; // runAgent's signature, where its callers find runAgent
export type { AgentEvent, AgentGate, AgentLimits, AgentModel, AgentOptions, AgentResult } from './types';

export async function runAgent(opts: AgentOptions): Promise<AgentResult> {
  // The window before the header, so the file says what the run was sized for (a server down fails the first request).
  const window: ContextWindow = opts.limits?.contextWindow
    ? { tokens: opts.limits.contextWindow, source: 'setting' }
    : ((await opts.model.contextWindow?.(opts.signal).catch(() => undefined)) ?? {
        tokens: DEFAULT_CONTEXT_WINDOW,
        source: 'default',
      });
  return new Run(opts, window).cycle();
}

/**
 * One run's state, with a method per phase of a turn: check the limits, take what the user typed,
 * fit the prompt, ask the model, hear its reply, run its calls, end. A phase that returns a result
 * ends the run; one that returns nothing lets the next turn begin.
 */
class Run {
  private readonly wf: Workflow;
  private readonly redact: (text: string) => string;
  private readonly setting: ToolFormatSetting;
  private readonly limits: ReturnType<typeof limitsOf>;
  private readonly writer: TrajectoryWriter;
  private readonly state: VerifierState;
  private readonly emit: (e: AgentEvent) => void;
  private readonly steps: CallSteps;
  private readonly started: number;
  private readonly conversation: Conversation;
  private readonly fit: WindowFit;
  private tokens = 0;
  private idleTurns = 0;
  /** Model replies with calls so far: each call records the reply it came in. */
  private replies = 0;
  /** With `modelInfo.tokens`: each turn's token ids, as `tokens` lines. */
  private readonly tokenLog: TokenLog | undefined;
  private readonly mcp: McpListings;
  /** The token counts of a reply without words, for its first call's line. */
  private usage: TurnUsage | undefined;
  /** The calls of the model's latest turn and the results so far: settled into the conversation however the run ends. */
  private pending: { calls: readonly ModelToolCall[]; results: TurnResult[] } | undefined;

  /** Writes the header, then the restores and the task; a follow-up's task joins the chat's conversation. */
  constructor(
    private readonly opts: AgentOptions,
    window: ContextWindow,
  ) {
    const wf = (this.wf = opts.workflow);
    const redact = (this.redact = opts.redact ?? ((t: string) => t));
    this.setting = opts.toolFormat ?? 'auto';
    const format = wireFormatOf(this.setting);
    this.limits = limitsOf(opts);
    const maxRepeats = Math.max(2, Math.floor(this.limits.maxRepeatedFailures));
    const header = headerOf(opts, format, window, maxRepeats);
    const writer = (this.writer = TrajectoryWriter.create(opts.trajectoryPath, header, redact));
    // The call in flight when the host goes away is named in the end line: the chat and a Resume say what was lost.
    let inFlight: string | undefined;
    opts.onStart?.({
      interrupt: (detail) =>
        writer.close(inFlight ? `${detail}, while ${inFlight} was running (its result is lost)` : detail),
    });
    const state = (this.state = new VerifierState(wf, 1, header.sandbox));
    const gate: AgentGate = opts.gate ?? ((call) => Promise.resolve(state.gate(call)));
    const onEvent = opts.onEvent ?? (() => {});
    const emit = (this.emit = (e) => {
      if (e.kind === 'toolStart') inFlight = callInFlight(e.tool, e.args);
      else if (e.kind === 'step') inFlight = undefined;
      onEvent(e);
    });
    emit({ kind: 'header', line: 1, text: writer.headerText });
    const steps = (this.steps = new CallSteps({ opts, state, gate, writer, emit, redact }, maxRepeats));
    this.started = Date.now();
    // The model reads the attachments in the task's message, masked as everything it is sent.
    const attachments = (opts.attachments ?? []).map((a) => ({ ...a, content: redact(a.content) }));
    this.mcp = new McpListings(opts.mcp, wf, writer, state, emit);
    for (const r of opts.restored ?? []) {
      const w = writer.append(r);
      state.append(r, w.line);
      emit({ kind: 'restore', ...w, event: r });
    }
    // The servers' listings before the task: the verifier knows their tools from the first call on.
    this.mcp.record();
    const mcpNote = this.mcp.takeNote();
    const asked = `${renderUserMessage(opts.task, attachments)}${mcpNote ? `\n\n${redact(mcpNote)}` : ''}`;
    const conversation = (this.conversation =
      opts.conversation ?? new Conversation(systemFor(wf, opts.rules), asked, toolSpecs()));
    // A follow-up: the user's next message in the conversation the chat already has.
    // Each run is verified on its own, from the workflow's start stage: the model is told, or it would go on in the stage it last entered.
    const lastRestore = opts.restored?.[opts.restored.length - 1];
    if (opts.conversation)
      conversation.push({
        kind: 'user',
        text: `${asked}\n\n${lastRestore ? `${restoreNote(lastRestore)}\n` : ''}${newRunNote(wf)}`,
      });
    const facts = () => hostFacts(state, wf, steps.touched, steps.recentFailures);
    const spend = (tokens: number) => {
      this.tokens += tokens;
    };
    this.fit = new WindowFit({ opts, conversation, state, writer, emit, facts, spend }, window, format);
    this.tokenLog = opts.modelInfo.tokens ? new TokenLog() : undefined;
    this.record({ text: opts.task, attachments });
  }

  /** Turns until one ends the run. */
  async cycle(): Promise<AgentResult> {
    try {
      const small = this.fit.tooSmall();
      if (small) return this.finish('error', small, true);
      for (;;) {
        const end = await this.turn();
        if (end) return end;
      }
    } catch (e) {
      // Whatever went wrong, the file on disk stays complete and says so.
      this.writer.close(`the run failed: ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
  }

  private async turn(): Promise<AgentResult | undefined> {
    const limit = this.overLimit();
    if (limit) return limit;
    this.takeTyped();
    await this.mcpTurn();
    const prompt = await this.fit.fitPrompt();
    if (prompt.answer < MIN_ANSWER) {
      const left = `its ${prompt.estimate} prompt tokens leave ${Math.max(0, prompt.answer)} for an answer`;
      return this.finish(
        'error',
        this.fit.linear
          ? `the conversation filled the model's context window (${this.fit.window.tokens} tokens): ${left}, and it is not compacted while token ids are recorded (--record-tokens), so that the run stays one unbroken segment for a trainer`
          : `the conversation does not fit the model's context window (${this.fit.window.tokens} tokens) even compacted: ${left}. Serve the model with a longer context (vLLM --max-model-len, SGLang --context-length) or shorten the task`,
        true,
      );
    }
    const asked = await this.ask(prompt);
    if (!('reply' in asked)) return asked.end;
    const calls = this.hear(asked.reply, prompt);
    return calls.length === 0 ? this.idle() : this.runCalls(calls);
  }

  private overLimit(): AgentResult | undefined {
    const { limits } = this;
    if (this.opts.signal?.aborted) return this.finish('cancelled', 'the user stopped the run');
    if (this.state.steps >= limits.maxSteps)
      return this.finish('limit', `the step limit (${limits.maxSteps}) was reached`);
    if (Date.now() - this.started > limits.maxTimeMs)
      return this.finish('limit', `the time limit (${Math.round(limits.maxTimeMs / 1000)} s) was reached`);
    if (this.tokens > limits.maxTokens)
      return this.finish('limit', `the token limit (${limits.maxTokens}) was reached`);
    return undefined;
  }

  /** The MCP servers' changes recorded and told; the request carries the tools the stage permits now. */
  private async mcpTurn(): Promise<void> {
    await this.opts.mcp?.settle(this.opts.signal);
    this.mcp.record();
    const note = this.conversation.awaitsModel ? undefined : this.mcp.takeNote();
    if (note) this.conversation.push({ kind: 'user', text: this.redact(note) });
    // Without servers the built-in tools never change: the window's own list stays.
    if (this.opts.mcp) this.fit.setTools(this.mcp.tools());
  }

  /** What the user typed meanwhile reaches the model now, in order. */
  private takeTyped(): void {
    for (let typed = this.opts.nextUserMessage?.(); typed !== undefined; typed = this.opts.nextUserMessage?.()) {
      const input = asUserInput(typed);
      const attachments = (input.attachments ?? []).map((a) => ({ ...a, content: this.redact(a.content) }));
      this.conversation.push({ kind: 'user', text: renderUserMessage(input.text, attachments) });
      this.record({ text: input.text, attachments });
    }
  }

  /** The user's message in the trajectory: the text as typed, with its parts when something was attached. */
  private record(input: UserInput): void {
    const parts = partsOf(input);
    const at = new Date().toISOString();
    const m = this.writer.append({
      type: 'message',
      role: 'user',
      content: input.text,
      ...(parts ? { parts } : {}),
      at,
    });
    this.emit({ kind: 'message', ...m });
  }

  /** Sends the request and streams the answer out; a failed request ends the run or is made again (`end` absent). */
  private async ask(prompt: Prompt): Promise<{ reply: ModelReply } | { end?: AgentResult }> {
    const { opts } = this;
    const view = new StreamView({ promptOpensThinking: opts.model.opensThinking?.() ?? false });
    const show = (pieces: ReturnType<StreamView['push']>) => {
      for (const p of pieces)
        this.emit(p.kind === 'retract' ? { kind: 'retract', text: p.text } : { kind: p.kind, delta: p.delta });
    };
    this.emit({ kind: 'request' });
    try {
      const reply = await opts.model.complete({
        messages: prompt.messages,
        tools: this.fit.tools,
        format: this.fit.format,
        maxTokens: prompt.answer,
        onText: (delta) => show(view.push(delta)),
        onReasoning: (delta) => this.emit({ kind: 'reasoning', delta }),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      show(view.flush());
      return { reply };
    } catch (e) {
      return { end: await this.recover(e, prompt) };
    }
  }

  private async recover(e: unknown, prompt: Prompt): Promise<AgentResult | undefined> {
    if (e instanceof ModelError && e.kind === 'cancelled') return this.finish('cancelled', 'the user stopped the run');
    if (e instanceof ModelError && e.kind === 'context_length') return this.endIf(await this.fit.refused(e, prompt));
    if (
      e instanceof ModelError &&
      e.kind === 'no_tool_parser' &&
      this.setting === 'auto' &&
      this.fit.format === 'native'
    )
      return this.endIf(this.fit.toText(e));
    return this.finish('error', e instanceof Error ? e.message : String(e));
  }

  /** Records the answer (its size, its prose, its calls) and returns the calls to run. */
  private hear(reply: ModelReply, prompt: Prompt): ModelToolCall[] {
    this.fit.answered(prompt, reply.usage?.prompt_tokens);
    this.tokens += reply.usage?.completion_tokens ?? 0;
    this.emit({
      kind: 'context',
      used: reply.usage?.prompt_tokens ?? prompt.estimate,
      window: this.fit.window.tokens,
      source: this.fit.window.source,
      completionTokens: this.tokens,
    });
    // The turn's ids come first: a trainer reads them with the message or calls that follow.
    const ids = this.tokenLog?.event(reply);
    if (ids) this.emit({ kind: 'tokens', ...this.writer.append(ids), event: ids });
    // The turn's token counts go on its message, or on its first call when it had no words (no line is added for them).
    const usage = turnUsage(reply.usage);
    this.usage = undefined;
    if (reply.text || reply.reasoning || (usage && reply.toolCalls.length === 0)) {
      const m = this.writer.append({
        type: 'message',
        role: 'assistant',
        content: reply.text,
        ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
        ...(usage ? { usage } : {}),
        at: new Date().toISOString(),
      });
      this.emit({ kind: 'message', ...m });
    } else this.usage = usage;
    // Text calls get run-unique ids (the server gave them none); the conversation keys results by them.
    const calls = reply.toolCalls.map((c) => (c.via === 'text' ? { ...c, id: newCallId() } : c));
    const turnCalls: TurnCall[] = calls.map((c) => ({
      id: c.id,
      name: c.name,
      args: c.args,
      ...(c.argsError !== undefined ? { malformed: true } : {}),
    }));
    this.conversation.push({
      kind: 'assistant',
      text: reply.text,
      calls: turnCalls,
      ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
    });
    return calls;
  }

  /** A reply without a tool call. */
  private idle(): AgentResult | undefined {
    // A chat: the model answered; the turn is the user's (a question answered is not a failed task).
    if (this.opts.onIdle === 'end') return this.finish('answered');
    if (++this.idleTurns >= this.limits.maxIdleTurns)
      return this.finish('error', `the model answered ${this.idleTurns} times in a row without calling a tool`);
    this.conversation.push({
      kind: 'user',
      text: 'Continue by calling a tool. The run ends only with submit from a terminal stage.',
    });
    return undefined;
  }

  /** The reply's calls, one after another, until one ends the run or the step limit is reached. */
  private async runCalls(calls: readonly ModelToolCall[]): Promise<AgentResult | undefined> {
    this.idleTurns = 0;
    // The turn's results join the conversation once all are in (a rendered turn is kept as rendered).
    const results: TurnResult[] = [];
    this.pending = { calls, results };
    this.replies++;
    const resultCap = this.fit.resultCap();
    for (const call of calls) {
      if (this.opts.signal?.aborted) return this.finish('cancelled', 'the user stopped the run');
      const stepped = await this.steps.step(call, this.replies, this.usage);
      this.usage = undefined;
      // What a command printed or a file held may carry a secret: the model gets it masked, as the trajectory does.
      const observation = capText(
        this.redact(stepped.observation),
        resultCap,
        this.fit.meter,
        'read_file with startLine/endLine, or a narrower command, shows the rest',
      );
      results.push({ callId: call.id, name: call.name || 'tool', content: observation });
      // A model that keeps making the same failing call would burn the whole step budget.
      if (stepped.loop) return this.finish('limit', stepped.loop);
      if (stepped.submitted) return this.submitted(results);
      if (this.state.steps >= this.limits.maxSteps) break;
    }
    this.settle('the step limit was reached');
    return undefined;
  }

  /** Submit ran: the outcome check runs (nothing when judged outside the run), and submit's result says how it went. */
  private async submitted(results: TurnResult[]): Promise<AgentResult> {
    if (externalJudge(this.wf) !== undefined) return this.finish('submitted');
    const outcome = await this.opts.runOutcomeCheck(this.opts.signal);
    const w = this.writer.append(outcome);
    this.state.append(outcome, w.line);
    this.emit({ kind: 'outcome', ...w, event: outcome });
    const last = results[results.length - 1]!;
    const passed = this.state.summary().outcome.reward === 1;
    results[results.length - 1] = { ...last, content: `${last.content}${outcomeLine(outcome, passed)}` };
    return this.finish('submitted');
  }

  /**
   * The turn's results join the conversation, every call with one (templates that pair calls with
   * results refuse a request that lacks one; a follow-up or a resume continues this conversation).
   */
  private settle(why: string): void {
    const pending = this.pending;
    if (!pending) return;
    const done = new Set(pending.results.map((r) => r.callId));
    const rest = pending.calls
      .filter((c) => !done.has(c.id))
      .map((c) => ({ callId: c.id, name: c.name || 'tool', content: `Not run: ${why} before this call.` }));
    this.conversation.push({ kind: 'results', results: [...pending.results, ...rest] });
    this.pending = undefined;
  }

  /** Ends the run because the window cannot hold it when there is a `detail` to give; nothing when the turn goes on. */
  private endIf(detail: string | undefined): AgentResult | undefined {
    return detail === undefined ? undefined : this.finish('error', detail, true);
  }

  private finish(reason: AgentResult['endReason'], detail?: string, windowFull = false): AgentResult {
    const { writer, opts } = this;
    this.settle(`the run ended (${reason})`);
    const end = writer.append({ type: 'end', reason, ...(detail ? { detail } : {}), at: new Date().toISOString() });
    this.emit({ kind: 'end', ...end, reason, ...(detail ? { detail } : {}) });
    writer.close();
    // Kept outside the workspace, so lar verify can tell a record changed after the run ended.
    if (writer.digest) recordDigest(opts.trajectoryPath, writer.digest);
    return {
      trajectoryPath: opts.trajectoryPath,
      ...(writer.digest ? { digest: writer.digest } : {}),
      summary: this.state.summary(),
      endReason: reason,
      ...(detail ? { detail } : {}),
      ...(windowFull ? { windowFull } : {}),
      conversation: this.conversation,
    };
  }
}
