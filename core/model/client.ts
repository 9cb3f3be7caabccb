/**
 * The model client: the official `openai` client against any
 * OpenAI-compatible server (SGLang, vLLM, local or remote), streaming with
 * cancellation, an idle timeout, retries with backoff, and errors a person
 * can act on. Tool calls come back parsed (native `tool_calls`, or the
 * `<tool_call>` text form), never as a crash.
 */
import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { CompletionAssembler, errorOf, type ModelServerError, type StreamChunk } from './assemble';
import { classifyError, ModelError, SERVER_LOG, STUCK } from './errors';
import { guessFormat, isTextFormat, type ToolFormatSetting, type ToolSpec, type WireFormat } from './formats';
import type { ModelClientOptions } from './options';
import { probeConnection, type ConnectionReport } from './probe';
import { contentOf, reasoningOf, toReply, type ModelReply } from './reply';
import { ServerInfo, templateKwargs, type ContextWindow, type ServedModel } from './server-info';
import { bodyAsChunk } from './whole-answer';
import { TokenCollector, tokenRequest, type TokenEngine } from './token-record';
import { maskEndpoint } from '../secrets/endpoint';

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

export class ModelClient {
  private readonly openai: OpenAI;
  private readonly server: ServerInfo;

  constructor(
    private readonly opts: ModelClientOptions,
    server?: ServerInfo,
  ) {
    // Retries are ours (we must not retry once text has streamed); the client's are off.
    this.openai = new OpenAI({
      apiKey: opts.apiKey || 'none',
      baseURL: opts.endpoint,
      maxRetries: 0,
      timeout: opts.requestTimeoutMs ?? 60_000,
    });
    this.server = server ?? new ServerInfo(this.openai, opts);
  }

  /** The same server and model with other sampling (a rollout's own seed): what the server told is shared. */
  withSampling(sampling: Pick<ModelClientOptions, 'seed' | 'temperature'>): ModelClient {
    return new ModelClient({ ...this.opts, ...sampling }, this.server);
  }

  /** Turns anything thrown while talking to the server into a ModelError. */
  classify(e: unknown, what?: string): ModelError {
    return classifyError(e, { ...this.opts, model: this.server.model }, what);
  }

  /** The server's engine (vLLM, SGLang, or unknown): the setting, else what its model card says. */
  engine(signal?: AbortSignal): Promise<TokenEngine | undefined> {
    return this.server.engine(signal);
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
  testConnection(signal?: AbortSignal): Promise<ConnectionReport> {
    return probeConnection(this, this.opts, signal);
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

  /** One streamed attempt: the request, its chunks relayed as they come, an idle timeout, the reply read. */
  private async once(
    model: string,
    req: CompleteRequest,
    onFirstText: () => void,
  ): Promise<Omit<ModelReply, 'attempts'>> {
    const idleMs = this.opts.idleTimeoutMs ?? 60_000;
    const idle = idleTimeout(idleMs);
    const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
    let chunks = 0;
    const stalledError = () =>
      new ModelError(
        'stalled',
        `the inference server at ${maskEndpoint(this.opts.endpoint)} sent nothing for ${idleMs / 1000} s ${chunks ? 'in the middle of an answer' : 'after the request'}; it was stopped. ${STUCK}`,
      );
    const format = req.format ?? wireFormatOf(this.opts.toolFormat);
    const assembler = new CompletionAssembler();
    const tokens = this.opts.recordTokens ? new TokenCollector() : undefined;
    try {
      idle.arm();
      for await (const chunk of await this.answer(model, req, format, signal, idle)) {
        idle.arm();
        chunks++;
        tokens?.push(chunk.raw);
        assembler.push(chunk.chunk);
        relay(chunk.chunk, req, onFirstText);
      }
    } catch (e) {
      if (idle.stalled) throw stalledError();
      throw this.classify(inStreamError(e) ?? e);
    } finally {
      idle.stop();
    }
    // An abort can also end the stream quietly; say which one it was.
    if (idle.stalled) throw stalledError();
    if (req.signal?.aborted) throw new ModelError('cancelled', 'the request was cancelled');
    const done = assembler.result();
    if (!assembler.finished) {
      throw new ModelError(
        'dropped',
        `the answer from the inference server at ${maskEndpoint(this.opts.endpoint)} ended without a finish reason: the stream was cut short and the partial answer was discarded. ${SERVER_LOG}`,
      );
    }
    const reply = toReply(
      model,
      done,
      format,
      (req.tools ?? []).map((t) => (t as { function: ToolSpec }).function),
      this.opensThinking(),
    );
    const record = tokens?.result();
    if (record)
      Object.assign(reply, 'tokens' in record ? { tokens: record.tokens } : { tokensMissing: record.missing });
    return reply;
  }

  /**
   * The answer's chunks, each with what the server sent: a stream, or (recording tokens from an
   * engine that will not stream them) the one unstreamed body, read as a single chunk.
   */
  private async answer(
    model: string,
    req: CompleteRequest,
    format: WireFormat,
    signal: AbortSignal,
    idle: { stop(): void },
  ): Promise<AsyncIterable<AnswerChunk> | Iterable<AnswerChunk>> {
    const base = this.request(model, req, format);
    const ask = this.opts.recordTokens ? tokenRequest(await this.server.engine(signal)) : undefined;
    if (!ask?.stream && ask) {
      const { stream: _s, stream_options: _o, ...rest } = base;
      const params: ChatCompletionCreateParamsNonStreaming = { ...rest, ...ask.fields };
      // Nothing arrives until the whole answer is made: no idle limit, but one on the whole request, ten
      // silences long (a turn of thousands of tokens takes minutes on a busy server).
      idle.stop();
      const timeout = Math.max(this.opts.requestTimeoutMs ?? 60_000, 10 * (this.opts.idleTimeoutMs ?? 60_000));
      const body: unknown = await this.openai.chat.completions.create(params, { signal, timeout });
      return [{ chunk: bodyAsChunk(body), raw: body }];
    }
    const stream = await this.openai.chat.completions.create({ ...base, ...ask?.fields }, { signal });
    return (async function* () {
      for await (const chunk of stream) yield { chunk, raw: chunk };
    })();
  }

  /** The streamed request; tools go in the API only in the native format. */
  private request(model: string, req: CompleteRequest, format: WireFormat): ChatCompletionCreateParamsStreaming {
    const maxTokens = req.maxTokens ?? this.opts.maxTokens;
    return {
      model,
      messages: req.messages,
      stream: true,
      stream_options: { include_usage: true },
      ...(format === 'native' && req.tools?.length ? { tools: req.tools, tool_choice: req.toolChoice ?? 'auto' } : {}),
      ...(this.opts.temperature !== undefined ? { temperature: this.opts.temperature } : {}),
      ...(this.opts.seed !== undefined ? { seed: this.opts.seed } : {}),
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
      ...templateKwargs(this.opts.thinking),
    };
  }
}

/** A chunk to assemble, and what the server sent for it (the token ids are read from that). */
interface AnswerChunk {
  chunk: StreamChunk;
  raw: unknown;
}

/** An abort once `ms` pass without `arm` being called again; `stalled` says it fired. */
function idleTimeout(ms: number): { signal: AbortSignal; stalled: boolean; arm(): void; stop(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const idle = {
    signal: controller.signal,
    stalled: false,
    arm() {
      clearTimeout(timer);
      timer = setTimeout(() => {
        idle.stalled = true;
        controller.abort();
      }, ms);
    },
    stop() {
      clearTimeout(timer);
    },
  };
  return idle;
}

/** Hands a chunk's text and reasoning to the caller as they arrive. */
function relay(chunk: StreamChunk, req: CompleteRequest, onFirstText: () => void): void {
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

/** An `error` object sent inside the stream surfaces as an APIError without a status: the server's error it holds. */
function inStreamError(e: unknown): ModelServerError | undefined {
  return e instanceof OpenAI.APIError &&
    !(e instanceof OpenAI.APIConnectionError) &&
    !(e instanceof OpenAI.APIUserAbortError) &&
    e.status === undefined
    ? errorOf((e as { error?: unknown }).error ?? { error: e.message })
    : undefined;
}

/** The wire format a setting starts with: `auto` is native (with text calls still read from content). */
export function wireFormatOf(setting: ToolFormatSetting | undefined): WireFormat {
  return setting && isTextFormat(setting) ? setting : 'native';
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
