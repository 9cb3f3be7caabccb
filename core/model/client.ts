import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { CompletionAssembler, errorOf } from './assemble';
import {
  FORMATS,
  guessFormat,
  isTextFormat,
  SERVER_PARSERS,
  type TextFormatId,
  type ToolFormatSetting,
  type ToolSpec,
  type WireFormat,
} from './formats';
import { maskEndpoint } from '../secrets/endpoint';
import { classifyError, ModelError, type ModelErrorKind, SERVER_LOG, STUCK } from './errors';
import type { ModelClientOptions } from './options';
import { contentOf, reasoningOf, toReply, type ModelReply } from './reply';
import {
  DEFAULT_CONTEXT_WINDOW,
  ServerInfo,
  templateKwargs,
  type ContextWindow,
  type ServedModel,
} from './server-info';

// For core/agent/loop.ts, which may not grow by a line until its own split lands: import these from their homes.
export { ModelError } from './errors';
export type { ModelReply, ModelToolCall } from './reply';
export { DEFAULT_CONTEXT_WINDOW, type ContextWindow } from './server-info';

/**
 * The model client: the official `openai` client against any
 * OpenAI-compatible server (SGLang, vLLM, local or remote), streaming with
 * cancellation, an idle timeout, retries with backoff, and errors a person
 * can act on. Tool calls come back parsed (native `tool_calls`, or the
 * `<tool_call>` text form), never as a crash.
 */

export interface CompleteRequest {
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  signal?: AbortSignal;
  /** Streamed content as it arrives (raw: use StreamView to show it). */
  onText?: (delta: string) => void;
  /** Streamed reasoning the server sends apart (`reasoning` / `reasoning_content`). */
  onReasoning?: (delta: string) => void;
  /**
   * `required`: the model must call one of `tools` (sent as `tool_choice`;
   * SGLang and vLLM accept it). Default `auto`. Only the native format sends
   * it: a text format sends no tools at all.
   */
  toolChoice?: 'auto' | 'required';
  /** How this request carries the tools; default: the client's format (`auto` is `native`). */
  format?: WireFormat;
  /** The answer's token budget for this request (`max_tokens`); default: the client's. */
  maxTokens?: number;
}

export interface ConnectionReport {
  endpoint: string;
  ok: boolean;
  models: string[];
  model?: string;
  /** How tool calls came back from the probe. */
  toolCalls: 'native' | 'text' | 'none';
  /** The form a text call came in, when one did. */
  textFormat?: TextFormatId;
  /** The format to set, from what came back and the model's family. */
  suggestedFormat?: ToolFormatSetting;
  /** The model's context window, and where the figure came from. */
  contextWindow?: ContextWindow;
  /** Whether the server sent reasoning apart from the answer (a reasoning parser runs). */
  reasoning?: boolean;
  /** What failed or needs attention, each a sentence a person can act on. */
  problems: string[];
  error?: ModelErrorKind;
}

export class ModelClient {
  private readonly openai: OpenAI;
  private readonly server: ServerInfo;

  constructor(private readonly opts: ModelClientOptions) {
    // Retries are ours (we must not retry once text has streamed); the client's are off.
    this.openai = new OpenAI({
      apiKey: opts.apiKey || 'none',
      baseURL: opts.endpoint,
      maxRetries: 0,
      timeout: opts.requestTimeoutMs ?? 60_000,
    });
    this.server = new ServerInfo(this.openai, opts);
  }

  /** Turns anything thrown while talking to the server into a ModelError. */
  classify(e: unknown, what?: string): ModelError {
    return classifyError(e, { ...this.opts, model: this.server.model }, what);
  }

  /** Model ids the server serves. */
  listModels(signal?: AbortSignal): Promise<string[]> {
    return this.server.listModels(signal);
  }

  /** The models the server serves, with what it says about their size. */
  servedModels(signal?: AbortSignal): Promise<ServedModel[]> {
    return this.server.servedModels(signal);
  }

  /** The configured model, else the first the server lists. */
  resolveModel(signal?: AbortSignal, served?: readonly ServedModel[]): Promise<string> {
    return this.server.resolveModel(signal, served);
  }

  /** The model's context window: the setting, else what the server says, else the default (marked as such). */
  contextWindow(signal?: AbortSignal, served?: readonly ServedModel[]): Promise<ContextWindow> {
    return this.server.contextWindow(signal, served);
  }

  /** A refusal said what the window is: believed from now on (unless the setting says otherwise). */
  learnWindow(tokens: number): void {
    this.server.learnWindow(tokens);
  }

  /** The prompt tokens of a chat request as the server counts them, or undefined where it cannot. */
  countTokens(
    messages: ChatCompletionMessageParam[],
    tools?: ChatCompletionTool[],
    signal?: AbortSignal,
  ): Promise<number | undefined> {
    return this.server.countTokens(messages, tools, signal);
  }

  /**
   * "Test connection": lists the models and sends one tool-calling probe, and
   * says exactly what failed (unreachable, 401, model not found, no tool
   * parser on the server, a model that does not call tools).
   */
  async testConnection(signal?: AbortSignal): Promise<ConnectionReport> {
    const report: ConnectionReport = {
      endpoint: maskEndpoint(this.opts.endpoint),
      ok: false,
      models: [],
      toolCalls: 'none',
      problems: [],
    };
    try {
      // One listing serves the models, the model and its window.
      const served = await this.servedModels(signal);
      report.models = served.map((m) => m.id);
      report.model = await this.resolveModel(signal, served);
      if (!report.models.includes(report.model)) {
        throw new ModelError(
          'model_not_found',
          `the server does not serve "${report.model}" (it serves: ${report.models.join(', ') || 'nothing'})`,
        );
      }
      report.contextWindow = await this.contextWindow(signal, served);
      const setting = this.opts.toolFormat ?? 'auto';
      const family = guessFormat(report.model) ?? 'hermes';
      const probe = (format: WireFormat) =>
        this.complete({
          messages: PROBE_MESSAGES(format),
          tools: [PROBE_TOOL],
          format,
          maxTokens: 1024,
          ...(signal ? { signal } : {}),
        });
      let reply: ModelReply;
      try {
        reply = await probe(isTextFormat(setting) ? setting : 'native');
      } catch (e) {
        const err = this.classify(e);
        if (err.kind !== 'no_tool_parser' || isTextFormat(setting)) throw err;
        // vLLM without a tool parser refuses tools in the API: what a text format would do.
        report.problems.push(`${err.message}.`);
        reply = await probe(family);
        if (setting === 'auto')
          report.problems.push(`With "auto", runs switch to the ${family} text format by themselves on this server.`);
      }
      report.reasoning = reply.reasoning.length > 0;
      const ping = reply.toolCalls.find((c) => c.name === 'ping');
      if (ping?.via === 'native') {
        report.toolCalls = 'native';
        report.suggestedFormat = setting === 'native' ? 'native' : 'auto';
      } else if (ping?.via === 'text') {
        report.toolCalls = 'text';
        if (ping.format) report.textFormat = ping.format;
        const written = ping.format ?? family;
        report.suggestedFormat = isTextFormat(setting)
          ? setting
          : written === 'qwen3_5' && family === 'qwen3_coder'
            ? family
            : written;
        const parser = SERVER_PARSERS[written];
        if (!isTextFormat(setting)) {
          report.problems.push(
            `the model wrote its tool call as text (${written}) instead of a structured call: the server parsed none. Runs still work (calls in the text are read), but start vLLM with --enable-auto-tool-choice --tool-call-parser ${parser.vllm} (SGLang: --tool-call-parser ${parser.sglang}), or set the tool-call format to "${report.suggestedFormat}".`,
          );
        }
      } else {
        report.problems.push(
          `the model answered without calling the probe tool${reply.text ? ` ("${reply.text.slice(0, 80)}")` : ''}: it may not support tool calls`,
        );
        report.suggestedFormat = family;
      }
      if (report.contextWindow.source === 'default') {
        report.problems.push(
          `the server does not say how long the model's context window is: ${DEFAULT_CONTEXT_WINDOW} tokens are assumed until a refusal says otherwise. Set the context length setting (lar run: --context-length) to the server's --max-model-len / --context-length.`,
        );
      }
      report.ok = report.toolCalls !== 'none';
    } catch (e) {
      const err = this.classify(e);
      report.error = err.kind;
      report.problems.push(err.message);
    }
    return report;
  }

  /**
   * Whether the model's chat template opens `<think>` in the prompt, so that
   * an answer holds only the closing tag: the Qwen3.5 family (the LAR models)
   * with thinking not turned off.
   */
  opensThinking(): boolean {
    return (this.opts.thinking ?? 'auto') !== 'off' && guessFormat(this.server.model ?? '') === 'qwen3_5';
  }

  /**
   * One assistant turn, streamed; retried on transient failures before any
   * text arrived (finding the model too: a server that is down at the start
   * is retried like one that drops a request).
   */
  async complete(req: CompleteRequest): Promise<ModelReply> {
    const retries = this.opts.retries ?? 3;
    for (let attempt = 1; ; attempt++) {
      let streamed = false;
      try {
        const model = await this.resolveModel(req.signal);
        const reply = await this.once(model, req, () => (streamed = true));
        return { ...reply, attempts: attempt };
      } catch (e) {
        const err = this.classify(e);
        if (!err.retryable || streamed || attempt > retries || req.signal?.aborted) {
          throw attempt > 1 && err.retryable
            ? new ModelError(err.kind, `after ${attempt} attempts: ${err.message}`, err.status)
            : err;
        }
        await sleep(backoff(this.opts.backoffMs ?? 500, attempt), req.signal);
      }
    }
  }

  private async once(
    model: string,
    req: CompleteRequest,
    onFirstText: () => void,
  ): Promise<Omit<ModelReply, 'attempts'>> {
    const idle = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
    const idleMs = this.opts.idleTimeoutMs ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    let stalled = false;
    let chunks = 0;
    const stalledError = () =>
      new ModelError(
        'stalled',
        `the inference server at ${maskEndpoint(this.opts.endpoint)} sent nothing for ${idleMs / 1000} s ${chunks ? 'in the middle of an answer' : 'after the request'}; it was stopped. ${STUCK}`,
      );
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = true;
        idle.abort();
      }, idleMs);
    };
    const format = req.format ?? wireFormatOf(this.opts.toolFormat);
    const native = format === 'native';
    const maxTokens = req.maxTokens ?? this.opts.maxTokens;
    const assembler = new CompletionAssembler();
    try {
      arm();
      const stream = await this.openai.chat.completions.create(
        {
          model,
          messages: req.messages,
          stream: true,
          stream_options: { include_usage: true },
          ...(native && req.tools?.length ? { tools: req.tools, tool_choice: req.toolChoice ?? 'auto' } : {}),
          ...(this.opts.temperature !== undefined ? { temperature: this.opts.temperature } : {}),
          ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
          ...templateKwargs(this.opts.thinking),
        },
        { signal },
      );
      for await (const chunk of stream) {
        arm();
        chunks++;
        assembler.push(chunk);
        const piece = contentOf(chunk);
        if (piece) {
          onFirstText();
          req.onText?.(piece);
        }
        const thought = reasoningOf(chunk);
        if (thought) {
          onFirstText();
          req.onReasoning?.(thought);
        }
      }
    } catch (e) {
      if (stalled) throw stalledError();
      // An `error` object sent inside the stream surfaces as an APIError without a status.
      const inStream =
        e instanceof OpenAI.APIError &&
        !(e instanceof OpenAI.APIConnectionError) &&
        !(e instanceof OpenAI.APIUserAbortError) &&
        e.status === undefined
          ? errorOf((e as { error?: unknown }).error ?? { error: e.message })
          : undefined;
      throw this.classify(inStream ?? e);
    } finally {
      clearTimeout(timer);
    }
    // An abort can also end the stream quietly; say which one it was.
    if (stalled) throw stalledError();
    if (req.signal?.aborted) throw new ModelError('cancelled', 'the request was cancelled');
    const done = assembler.result();
    if (!assembler.finished) {
      throw new ModelError(
        'dropped',
        `the answer from the inference server at ${maskEndpoint(this.opts.endpoint)} ended without a finish reason: the stream was cut short and the partial answer was discarded. ${SERVER_LOG}`,
      );
    }
    return toReply(
      model,
      done,
      format,
      (req.tools ?? []).map((t) => (t as { function: ToolSpec }).function),
      this.opensThinking(),
    );
  }
}

/** The wire format a setting starts with: `auto` is native (with text calls still read from content). */
export function wireFormatOf(setting: ToolFormatSetting | undefined): WireFormat {
  return setting && isTextFormat(setting) ? setting : 'native';
}

const PROBE_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'ping',
    description: 'Answers pong.',
    parameters: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] },
  },
};

function PROBE_MESSAGES(format: WireFormat): ChatCompletionMessageParam[] {
  const system = 'You are a connection probe. Answer only by calling the ping tool.';
  const user = 'Call ping with {"echo": "lar"}.';
  if (format === 'native')
    return [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ];
  const p = FORMATS[format].prompt(system, user, [(PROBE_TOOL as { function: ToolSpec }).function]);
  return [
    { role: 'system', content: p.system },
    { role: 'user', content: p.task },
  ];
}

function backoff(base: number, attempt: number): number {
  return base * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new ModelError('cancelled', 'the request was cancelled'));
      },
      { once: true },
    );
  });
}
