/**
 * Keeping a run's conversation inside the model's context window: the budget, compaction, and what
 * a server's refusal teaches; apart from the loop, which only asks for a prompt that fits.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ModelError } from '../model/errors';
import type { ContextWindow } from '../model/server-info';
import { guessFormat, type ToolSpec, type WireFormat } from '../model/formats';
import { TokenMeter } from '../model/tokens';
import { toolDefinitions } from '../schema/tool-definitions';
import type { CompactionEvent } from '../schema/trajectory';
import type { VerifierState } from '../verifier/state';
import { answerBudget, budgetFor, compact, promptLimit, tooSmall, type Budget } from './context';
import type { Conversation } from './conversation';
import type { TrajectoryWriter } from './trajectory-writer';
import type { AgentEvent, AgentOptions } from './types';

/** Steps between two compaction notes from the model (a small window compacts often; the host writes the notes in between). */
const NOTE_EVERY = 6;

/** What the window's keeper shares with its run. */
export interface FitContext {
  opts: AgentOptions;
  conversation: Conversation;
  state: VerifierState;
  writer: TrajectoryWriter;
  emit: (e: AgentEvent) => void;
  /** What the host knows for certain about the run so far, for a compaction's note. */
  facts: () => string;
  /** Completion tokens the model spent writing a compaction's note. */
  spend: (tokens: number) => void;
}

/** A request as it goes out: the rendered messages, the tools sent with them, their size, and the answer's share. */
export interface Prompt {
  messages: ChatCompletionMessageParam[];
  sent: ChatCompletionTool[] | undefined;
  estimate: number;
  answer: number;
}

/** The window, the wire format and the budget they leave, as the run learns them. */
export class WindowFit {
  tools: ChatCompletionTool[] = toolDefinitions();
  readonly meter = new TokenMeter();
  private budget: Budget;
  private compactions = 0;
  /** How many turns the conversation had at the last compaction: it is not compacted again until it grows. */
  private compactedAt = -1;
  /** The step at which the model last wrote a compaction note: it is asked at most every few steps. */
  private notedAt = -Infinity;
  /** Context refusals in a row for the same turn (each compacts further). */
  private refusals = 0;

  constructor(
    private readonly ctx: FitContext,
    public window: ContextWindow,
    public format: WireFormat,
  ) {
    this.budget = this.budgetNow();
  }

  /** The tools sent from now on (the built-in ones, then the MCP tools the stage permits); the budget follows. */
  setTools(tools: ChatCompletionTool[]): void {
    if (tools === this.tools) return;
    this.tools = tools;
    this.ctx.conversation.setTools(tools.map((t) => (t as { function: ToolSpec }).function));
    this.budget = this.budgetNow();
  }

  /** Token ids are recorded: the conversation is never compacted (one linear segment), the run ends when it is full. */
  get linear(): boolean {
    return this.ctx.opts.modelInfo.tokens !== undefined;
  }

  /** Why the window cannot hold even the system prompt and the tools, if it cannot. */
  tooSmall(): string | undefined {
    return tooSmall(this.window.tokens, this.headTokens());
  }

  /** The most one tool result may take: a quarter of what a prompt can hold. */
  resultCap(): number {
    return Math.max(256, Math.floor(promptLimit(this.budget) / 4));
  }

  /** The conversation as the next request, compacted first when it is near the window's edge. */
  async fitPrompt(): Promise<Prompt> {
    const { conversation, opts } = this.ctx;
    const { meter } = this;
    let messages = conversation.render(this.format);
    const sent = this.format === 'native' ? this.tools : undefined;
    let estimate = meter.estimate(messages, sent);
    if (estimate > promptLimit(this.budget)) {
      // Near the edge an estimate is not enough: the server's own count decides, where it can give one.
      const exact = await opts.model.countTokens?.(messages, sent, opts.signal).catch(() => undefined);
      if (exact !== undefined) {
        meter.observe(messages, sent, exact);
        estimate = exact;
      }
    }
    // Compacted once per growth: a conversation that did not grow since cannot be made smaller again.
    // Never while token ids are recorded: a trainer takes the run as one unbroken segment.
    if (estimate > promptLimit(this.budget) && conversation.turns.length !== this.compactedAt && !this.linear) {
      await this.compactTo(Math.floor(promptLimit(this.budget) * 0.6), 'window');
      this.compactedAt = conversation.turns.length;
      messages = conversation.render(this.format);
      estimate = meter.estimate(messages, sent);
    }
    return { messages, sent, estimate, answer: answerBudget(this.budget, estimate) };
  }

  /** The server answered: the refusals in a row are over, and its count of the prompt is learnt. */
  answered(prompt: Prompt, promptTokens: number | undefined): void {
    this.refusals = 0;
    if (promptTokens) this.meter.observe(prompt.messages, prompt.sent, promptTokens);
  }

  /**
   * The server refused the request as too long: believe it, make room, and ask again (undefined),
   * or say why the run must end.
   */
  async refused(e: ModelError, prompt: Prompt): Promise<string | undefined> {
    // The server counts differently from the estimate.
    // A refusal that names no window (a proxy rewording it) still says this request was too long.
    const named = e.context?.window;
    const implied = Math.floor((prompt.estimate + prompt.answer) * 0.85);
    const next = named && named > 0 ? named : Math.min(this.window.tokens, implied);
    if (next !== this.window.tokens) {
      this.window = { tokens: next, source: 'error' };
      // Only a window the server named outlives this run (later rollouts of a group start from it).
      if (named && named > 0) this.ctx.opts.model.learnWindow?.(named);
    }
    if (e.context?.promptTokens) this.meter.observe(prompt.messages, prompt.sent, e.context.promptTokens);
    this.budget = this.budgetNow();
    if (this.linear)
      return `${e.message}. The conversation filled the model's context window (${this.window.tokens} tokens); it is not compacted while token ids are recorded (--record-tokens), so that the run stays one unbroken segment for a trainer`;
    const target = Math.floor(promptLimit(this.budget) * (this.refusals === 0 ? 0.6 : 0.4));
    if (++this.refusals <= 4 && !this.tooSmall()) {
      await this.compactTo(target, 'context_error');
      this.compactedAt = this.ctx.conversation.turns.length;
      return undefined;
    }
    return `${e.message}. The server refused the request as too long ${this.refusals} time(s) in a row, compacting each time; the window is now taken to be ${this.window.tokens} tokens, too small for the system prompt, the task and the latest turn. Serve the model with a longer context (vLLM --max-model-len, SGLang --context-length) or shorten the task.`;
  }

  /**
   * The server takes no tools in the API: the model is told about them in its own family's text form
   * instead. Says why the run must end if the window is then too small.
   */
  toText(e: ModelError): string | undefined {
    const { opts, writer, emit } = this.ctx;
    this.format = guessFormat(opts.modelInfo.name) ?? 'hermes';
    this.budget = this.budgetNow();
    const smallNow = this.tooSmall();
    if (smallNow) return smallNow;
    const m = writer.append({
      type: 'message',
      role: 'system',
      content: `The server cannot parse tool calls (${e.message}); the run carries them as text in the ${this.format} format from here on.`,
      at: new Date().toISOString(),
    });
    emit({ kind: 'message', ...m });
    return undefined;
  }

  /** The system prompt and the tools as the current format carries them: what every request starts with. */
  private headTokens(): number {
    return this.meter.estimate(
      this.ctx.conversation.headOf(this.format),
      this.format === 'native' ? this.tools : undefined,
    );
  }

  private budgetNow(): Budget {
    return budgetFor(this.window.tokens, this.ctx.opts.limits?.maxOutputTokens, this.headTokens());
  }

  /** Makes the conversation fit `target` tokens and records it; false when nothing was left to make smaller. */
  private async compactTo(target: number, reason: CompactionEvent['reason']): Promise<boolean> {
    const { opts, state, writer, emit } = this.ctx;
    this.compactions++;
    const c = await compact(this.ctx.conversation, {
      format: this.format,
      tools: this.tools,
      meter: this.meter,
      target,
      window: this.window.tokens,
      reason,
      ordinal: this.compactions,
      modelNote: state.steps - this.notedAt >= NOTE_EVERY,
      facts: this.ctx.facts,
      summarize: async (messages, maxTokens) => {
        const r = await opts.model.complete({
          messages,
          format: this.format,
          maxTokens,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        this.ctx.spend(r.usage?.completion_tokens ?? 0);
        return r.text.trim()
          ? { text: r.text, ...(r.usage?.completion_tokens !== undefined ? { tokens: r.usage.completion_tokens } : {}) }
          : undefined;
      },
    });
    if (c.summaryBy === 'model') this.notedAt = state.steps;
    const event: CompactionEvent = { type: 'compaction', ...c, at: new Date().toISOString() };
    const w = writer.append(event);
    state.append(event, w.line);
    emit({ kind: 'compaction', ...w, event });
    return c.tokensAfter < c.tokensBefore;
  }
}
