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

// For core/agent/loop.ts, which may not grow by a line until its own split lands: import these from their homes.
export { ModelError } from './errors';
export type { ModelReply, ModelToolCall } from './reply';

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

/** A context window in tokens and where the figure came from. */
export interface ContextWindow {
  tokens: number;
  source: 'setting' | 'server' | 'server_info' | 'error' | 'default';
}

/** The window assumed when neither the settings nor the server say (and until a refusal tells). */
export const DEFAULT_CONTEXT_WINDOW = 32_768;

/** A model the server serves, with its context window when the server says it. */
export interface ServedModel {
  id: string;
  /** `max_model_len` from /v1/models (vLLM and SGLang report it): prompt and answer together. */
  contextLength?: number;
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
  private model: string | undefined;
  private window: ContextWindow | undefined;
  private noTokenize = false;

  constructor(private readonly opts: ModelClientOptions) {
    // Retries are ours (we must not retry once text has streamed); the client's are off.
    this.openai = new OpenAI({
      apiKey: opts.apiKey || 'none',
      baseURL: opts.endpoint,
      maxRetries: 0,
      timeout: opts.requestTimeoutMs ?? 60_000,
    });
    this.model = opts.model;
  }

  /** Turns anything thrown while talking to the server into a ModelError. */
  classify(e: unknown, what?: string): ModelError {
    return classifyError(e, { ...this.opts, model: this.model }, what);
  }

  /** Model ids the server serves. */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    return (await this.servedModels(signal)).map((m) => m.id);
  }

  /** The models the server serves, with what it says about their size. */
  async servedModels(signal?: AbortSignal): Promise<ServedModel[]> {
    try {
      const models: ServedModel[] = [];
      for await (const m of this.openai.models.list(signal ? { signal } : undefined)) {
        // Not in the OpenAI schema: vLLM's and SGLang's model cards add it.
        const length = (m as { max_model_len?: unknown }).max_model_len;
        models.push(
          typeof length === 'number' && Number.isInteger(length) && length > 0
            ? { id: m.id, contextLength: length }
            : { id: m.id },
        );
      }
      return models;
    } catch (e) {
      throw this.classify(e);
    }
  }

  /** The configured model, else the first the server lists. */
  async resolveModel(signal?: AbortSignal, served?: readonly ServedModel[]): Promise<string> {
    if (this.model) return this.model;
    const ids = served ? served.map((m) => m.id) : await this.listModels(signal);
    if (!ids.length)
      throw new ModelError(
        'model_not_found',
        `the inference server at ${maskEndpoint(this.opts.endpoint)} lists no models`,
      );
    this.model = ids[0]!;
    return this.model;
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
   * The model's context window: the setting when given; else what the server
   * says (`max_model_len` at /v1/models, vLLM and SGLang; SGLang's
   * `/server_info` `context_length`); else the default, marked as such.
   * Asked once per client; `served`: the server's listing when the caller
   * has just fetched it.
   */
  async contextWindow(signal?: AbortSignal, served?: readonly ServedModel[]): Promise<ContextWindow> {
    if (this.opts.contextLength && this.opts.contextLength > 0)
      return { tokens: this.opts.contextLength, source: 'setting' };
    if (this.window) return this.window;
    const listing = served ?? (await this.servedModels(signal));
    const model = await this.resolveModel(signal, listing);
    const card = listing.find((m) => m.id === model);
    if (card?.contextLength) return (this.window = { tokens: card.contextLength, source: 'server' });
    for (const path of ['/server_info', '/get_server_info']) {
      const info = (await this.rootJson('GET', path, undefined, signal)).body as
        { context_length?: unknown; max_req_input_len?: unknown } | undefined;
      // `context_length` is set only when SGLang was started with --context-length; the scheduler's input bound always is.
      const n =
        typeof info?.context_length === 'number'
          ? info.context_length
          : typeof info?.max_req_input_len === 'number'
            ? info.max_req_input_len + 1
            : undefined;
      if (n !== undefined && Number.isInteger(n) && n > 0) return (this.window = { tokens: n, source: 'server_info' });
    }
    return (this.window = { tokens: DEFAULT_CONTEXT_WINDOW, source: 'default' });
  }

  /**
   * Whether the model's chat template opens `<think>` in the prompt, so that
   * an answer holds only the closing tag: the Qwen3.5 family (the LAR models)
   * with thinking not turned off.
   */
  opensThinking(): boolean {
    return (this.opts.thinking ?? 'auto') !== 'off' && guessFormat(this.model ?? '') === 'qwen3_5';
  }

  /** A refusal said what the window is: believed from now on (unless the setting says otherwise). */
  learnWindow(tokens: number): void {
    if (this.opts.contextLength && this.opts.contextLength > 0) return;
    if (Number.isInteger(tokens) && tokens > 0) this.window = { tokens, source: 'error' };
  }

  /**
   * The prompt tokens of a chat request as the server's own template and
   * tokenizer count them (`POST /tokenize` with the messages, vLLM and
   * SGLang), or undefined where the server has no such endpoint (asked once).
   */
  async countTokens(
    messages: ChatCompletionMessageParam[],
    tools?: ChatCompletionTool[],
    signal?: AbortSignal,
  ): Promise<number | undefined> {
    if (this.noTokenize) return undefined;
    const model = await this.resolveModel(signal);
    const body = {
      model,
      messages,
      add_generation_prompt: true,
      ...(tools?.length ? { tools } : {}),
      ...this.templateKwargs(),
    };
    const r = await this.rootJson('POST', '/tokenize', body, signal);
    const count = (r.body as { count?: unknown } | undefined)?.count;
    if (typeof count === 'number' && Number.isInteger(count) && count >= 0) return count;
    // Only a server without the endpoint is not asked again; a busy one or a timeout may answer next time.
    if (r.status === 404 || r.status === 405 || r.status === 501) this.noTokenize = true;
    return undefined;
  }

  /** A JSON answer from the server's root (beside /v1): its status, and its body when it is JSON and not an error. */
  private async rootJson(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<{ status?: number; body?: unknown }> {
    const root = this.opts.endpoint.replace(/\/+$/, '').replace(/\/v1$/, '');
    const timeout = AbortSignal.timeout(Math.min(this.opts.requestTimeoutMs ?? 60_000, 10_000));
    try {
      const res = await fetch(`${root}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (!res.ok) return { status: res.status };
      return { status: res.status, body: (await res.json()) as unknown };
    } catch {
      return {};
    }
  }

  /** `chat_template_kwargs` for the thinking setting (nothing for `auto`: a server that knows no such field may refuse it). */
  private templateKwargs(): { chat_template_kwargs?: { enable_thinking: boolean } } {
    const t = this.opts.thinking ?? 'auto';
    return t === 'auto' ? {} : { chat_template_kwargs: { enable_thinking: t === 'on' } };
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
          ...this.templateKwargs(),
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
