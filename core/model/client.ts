import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { CompletionAssembler, ModelServerError, errorOf, type AssembledCompletion, type StreamChunk, type Usage } from './assemble';
import { extractTextToolCalls } from './hermes';

/**
 * The model client: the official `openai` client against any
 * OpenAI-compatible server (SGLang, vLLM, local or remote), streaming with
 * cancellation, an idle timeout, retries with backoff, and errors a person
 * can act on. Tool calls come back parsed (native `tool_calls`, or the
 * `<tool_call>` text form), never as a crash.
 */

export interface ModelClientOptions {
  /** Base URL ending in /v1, e.g. SGLang's default http://127.0.0.1:30000/v1. */
  endpoint: string;
  /** Read from SecretStorage by the extension; never logged. */
  apiKey?: string;
  /** Model id; default: the first model the server lists. */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  /** Time allowed for the response to start (headers). Default 60 s. */
  requestTimeoutMs?: number;
  /** Longest silence allowed inside a stream before it counts as stalled. Default 60 s. */
  idleTimeoutMs?: number;
  /** `native`: tool_calls in the API; `hermes`: <tool_call> text in the content. */
  toolFormat?: 'native' | 'hermes';
  /** Retries for 429, 5xx and connection errors before anything was streamed. Default 3. */
  retries?: number;
  /** First backoff delay; doubles each retry (with jitter). Default 500 ms. */
  backoffMs?: number;
}

export type ModelErrorKind =
  | 'unreachable'
  | 'unauthorized'
  | 'model_not_found'
  | 'no_tool_parser'
  | 'rate_limited'
  | 'server_error'
  | 'bad_request'
  | 'stalled'
  | 'dropped'
  | 'cancelled';

/** A failure with a kind to branch on and a message that says what to do. */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelError';
  }

  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'server_error' || this.kind === 'unreachable' || this.kind === 'dropped';
  }
}

export interface ModelToolCall {
  id: string;
  name: string;
  args: unknown;
  /** Set when the arguments were not JSON: the model is told on its next turn. */
  argsError?: string;
  /** With `argsError`: what the model wrote, so whoever is told can see it. */
  argsText?: string;
  /** How the call reached us. */
  via: 'native' | 'text';
}

export interface ModelReply {
  model: string;
  text: string;
  reasoning: string;
  toolCalls: ModelToolCall[];
  finishReason: string | null;
  usage?: Usage;
  /** Attempts it took (1 when the first one succeeded). */
  attempts: number;
}

export interface CompleteRequest {
  messages: ChatCompletionMessageParam[];
  tools?: ChatCompletionTool[];
  signal?: AbortSignal;
  /** Streamed text as it arrives (for the chat view). */
  onText?: (delta: string) => void;
  /**
   * `required`: the model must call one of `tools` (sent as `tool_choice`;
   * SGLang and vLLM accept it). Default `auto`. Only the native format sends
   * it: the `hermes` format sends no tools at all.
   */
  toolChoice?: 'auto' | 'required';
}

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
  /** What failed or needs attention, each a sentence a person can act on. */
  problems: string[];
  error?: ModelErrorKind;
}

const VLLM_NO_PARSER = /enable-auto-tool-choice|tool-call-parser|tool_choice.*not supported|does not support tool/i;

/** Removes anything that looks like the API key from a message before it is shown or logged. */
export function redact(text: string, secret: string | undefined): string {
  let out = secret && secret.length >= 4 ? text.split(secret).join('***') : text;
  out = out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, '$1***').replace(/\bsk-[A-Za-z0-9_-]{8,}/g, 'sk-***');
  // Credentials in a URL (http://user:password@host/…), e.g. inside a network error.
  out = out.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, '$1***@');
  return out;
}

export class ModelClient {
  private readonly openai: OpenAI;
  private model: string | undefined;

  constructor(private readonly opts: ModelClientOptions) {
    // Retries are ours (we must not retry once text has streamed); the client's are off.
    this.openai = new OpenAI({ apiKey: opts.apiKey || 'none', baseURL: opts.endpoint, maxRetries: 0, timeout: opts.requestTimeoutMs ?? 60_000 });
    this.model = opts.model;
  }

  /** Turns anything thrown while talking to the server into a ModelError. */
  classify(e: unknown, what = 'the inference server'): ModelError {
    if (e instanceof ModelError) return e;
    const where = displayEndpoint(this.opts.endpoint);
    const server = `${what} at ${where}`;
    const key = this.opts.apiKey;
    if (e instanceof OpenAI.APIUserAbortError || (e instanceof Error && e.name === 'AbortError')) return new ModelError('cancelled', 'the request was cancelled');
    if (e instanceof OpenAI.APIConnectionTimeoutError) return new ModelError('stalled', `${server} did not start answering within ${(this.opts.requestTimeoutMs ?? 60_000) / 1000} s. ${STUCK}`);
    if (e instanceof OpenAI.APIConnectionError) {
      return new ModelError('unreachable', `cannot reach ${server}: ${redact(causeOf(e), key)}. Is the server running (e.g. SGLang: python -m sglang.launch_server --model-path … --port 30000 --tool-call-parser …)? Check the endpoint setting.`);
    }
    if (e instanceof OpenAI.APIError || e instanceof ModelServerError) {
      const status = e.status;
      const message = tidy(redact(e.message, key), status);
      if (status === 401 || status === 403) return new ModelError('unauthorized', `${server} refused the API key (${status}): ${message}. Set the key with the "Set API Key" command (lar run: the LAR_API_KEY environment variable).`, status);
      if (status === 404) return new ModelError('model_not_found', `${server} does not serve ${this.model ? `"${this.model}"` : 'that model'} (404): ${message}. Pick one of the served models in the model setting (lar run: --model), or leave it empty for the first one.`, status);
      if (status === 429) return new ModelError('rate_limited', `${server} is busy (429): ${message}. Wait a moment, then send the task again.`, status);
      if (status === 400 && VLLM_NO_PARSER.test(e.message)) {
        return new ModelError('no_tool_parser', `${server} cannot return tool calls: ${message}. Start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>, or SGLang with --tool-call-parser <parser>; or set the tool-call format to "hermes".`, status);
      }
      if (status !== undefined && status >= 500) return new ModelError('server_error', `${server} failed (${status}): ${message}. ${SERVER_LOG}`, status);
      if (status === undefined) return new ModelError('server_error', `${server} reported an error: ${message}. ${SERVER_LOG}`);
      return new ModelError('bad_request', `${server} rejected the request (${status}): ${message}`, status);
    }
    if (e instanceof TypeError && /terminated|other side closed|socket/i.test(e.message + causeOf(e))) {
      return new ModelError('dropped', `the connection to ${server} dropped mid-answer (${redact(causeOf(e) || e.message, key)}); the partial answer was discarded. ${SERVER_LOG}`);
    }
    // The openai client's SSE parser: an event whose data is not JSON.
    if (e instanceof SyntaxError && /server-sent event/i.test(e.message)) {
      return new ModelError('server_error', `${server} sent a malformed stream (an event that is not JSON); the answer was discarded. The server, or a proxy in front of it, garbles its events. ${SERVER_LOG}`);
    }
    return new ModelError('server_error', `unexpected failure talking to ${server}: ${redact(e instanceof Error ? e.message : String(e), key)}`);
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
        models.push(typeof length === 'number' && Number.isInteger(length) && length > 0 ? { id: m.id, contextLength: length } : { id: m.id });
      }
      return models;
    } catch (e) {
      throw this.classify(e);
    }
  }

  /** The configured model, else the first the server lists. */
  async resolveModel(signal?: AbortSignal): Promise<string> {
    if (this.model) return this.model;
    const ids = await this.listModels(signal);
    if (!ids.length) throw new ModelError('model_not_found', `the inference server at ${this.opts.endpoint} lists no models`);
    this.model = ids[0]!;
    return this.model;
  }

  /**
   * "Test connection": lists the models and sends one tool-calling probe, and
   * says exactly what failed (unreachable, 401, model not found, no tool
   * parser on the server, a model that does not call tools).
   */
  async testConnection(signal?: AbortSignal): Promise<ConnectionReport> {
    const report: ConnectionReport = { endpoint: this.opts.endpoint, ok: false, models: [], toolCalls: 'none', problems: [] };
    try {
      report.models = await this.listModels(signal);
      report.model = await this.resolveModel(signal);
      if (!report.models.includes(report.model)) {
        throw new ModelError('model_not_found', `the server does not serve "${report.model}" (it serves: ${report.models.join(', ') || 'nothing'})`);
      }
      const reply = await this.complete({
        messages: [
          { role: 'system', content: 'You are a connection probe. Answer only by calling the ping tool.' },
          { role: 'user', content: 'Call ping with {"echo": "lar"}.' },
        ],
        tools: [{ type: 'function', function: { name: 'ping', description: 'Answers pong.', parameters: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] } } }],
        ...(signal ? { signal } : {}),
      });
      const ping = reply.toolCalls.find((c) => c.name === 'ping');
      if (ping?.via === 'native') report.toolCalls = 'native';
      else if (ping?.via === 'text') {
        report.toolCalls = 'text';
        report.problems.push(
          (this.opts.toolFormat ?? 'native') === 'native'
            ? 'the model wrote its tool call as <tool_call> text: the server has no tool-call parser. Start SGLang with --tool-call-parser <parser> (vLLM: --enable-auto-tool-choice --tool-call-parser <parser>), or set the tool-call format to "hermes".'
            : 'tool calls arrive as <tool_call> text, as the "hermes" format expects.',
        );
      } else {
        report.problems.push(`the model answered without calling the probe tool${reply.text ? ` ("${reply.text.slice(0, 80)}")` : ''}: it may not support tool calls`);
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
          throw attempt > 1 && err.retryable ? new ModelError(err.kind, `after ${attempt} attempts: ${err.message}`, err.status) : err;
        }
        await sleep(backoff(this.opts.backoffMs ?? 500, attempt), req.signal);
      }
    }
  }

  private async once(model: string, req: CompleteRequest, onFirstText: () => void): Promise<Omit<ModelReply, 'attempts'>> {
    const idle = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
    const idleMs = this.opts.idleTimeoutMs ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    let stalled = false;
    let chunks = 0;
    const stalledError = () =>
      new ModelError(
        'stalled',
        `the inference server at ${displayEndpoint(this.opts.endpoint)} sent nothing for ${idleMs / 1000} s ${chunks ? 'in the middle of an answer' : 'after the request'}; it was stopped. ${STUCK}`,
      );
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = true;
        idle.abort();
      }, idleMs);
    };
    const native = (this.opts.toolFormat ?? 'native') === 'native';
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
          ...(this.opts.maxTokens !== undefined ? { max_tokens: this.opts.maxTokens } : {}),
        },
        { signal },
      );
      for await (const chunk of stream) {
        arm();
        chunks++;
        assembler.push(chunk as unknown as StreamChunk);
        const piece = contentOf(chunk as unknown as StreamChunk);
        if (piece) {
          onFirstText();
          req.onText?.(piece);
        }
      }
    } catch (e) {
      if (stalled) throw stalledError();
      // An `error` object sent inside the stream surfaces as an APIError without a status.
      const inStream =
        e instanceof OpenAI.APIError && !(e instanceof OpenAI.APIConnectionError) && !(e instanceof OpenAI.APIUserAbortError) && e.status === undefined
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
      throw new ModelError('dropped', `the answer from the inference server at ${displayEndpoint(this.opts.endpoint)} ended without a finish reason: the stream was cut short and the partial answer was discarded. ${SERVER_LOG}`);
    }
    return toReply(model, done, native);
  }
}

function toReply(model: string, done: AssembledCompletion, native: boolean): Omit<ModelReply, 'attempts'> {
  const choice = done.choices[0]!;
  const toolCalls: ModelToolCall[] = choice.toolCalls.map((c) => ({
    id: c.id,
    name: c.name,
    args: c.args,
    ...(c.argsError !== undefined ? { argsError: c.argsError, argsText: c.argumentsText } : {}),
    via: 'native' as const,
  }));
  let text = choice.content;
  // A server without a tool parser (or the hermes format) leaves calls in the text.
  if (!toolCalls.length && (!native || text.includes('<tool_call>'))) {
    const extracted = extractTextToolCalls(text);
    text = extracted.text;
    extracted.calls.forEach((c, i) =>
      toolCalls.push({ id: `text_call_${i}`, name: c.name, args: c.args, ...(c.argsError !== undefined ? { argsError: c.argsError, argsText: c.raw } : {}), via: 'text' }),
    );
  }
  const reply: Omit<ModelReply, 'attempts'> = { model, text, reasoning: choice.reasoning, toolCalls, finishReason: choice.finishReason };
  if (done.usage) reply.usage = done.usage;
  return reply;
}

/** The text a chunk adds to the first choice. */
function contentOf(chunk: StreamChunk): string {
  const c = Array.isArray(chunk?.choices) ? chunk.choices.find((x) => (x?.index ?? 0) === 0) : undefined;
  const content = c?.delta?.content;
  return typeof content === 'string' ? content : '';
}

/** What to do about a server that failed: its log says why. */
const SERVER_LOG = "Check the inference server's log, then send the task again.";
/** What to do about a server that stopped answering. */
const STUCK = 'The server may be overloaded or stuck: check its log, then send the task again (a slow but healthy server needs a longer request timeout setting).';

/** The endpoint as messages show it: without credentials a URL may carry. */
function displayEndpoint(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    if (!u.username && !u.password) return endpoint;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return endpoint;
  }
}

/** A server's message inside ours: without the status the openai client puts first, nor a final period. */
function tidy(message: string, status: number | undefined): string {
  const bare = status !== undefined && message.startsWith(`${status} `) ? message.slice(String(status).length + 1) : message;
  return bare.trim().replace(/\.+$/, '');
}

/** The innermost cause: undici nests the system error (`fetch failed` ← `connect ECONNREFUSED …`). */
function causeOf(e: unknown): string {
  let c = (e as { cause?: unknown }).cause;
  if (!(c instanceof Error)) return e instanceof Error ? e.message : '';
  while ((c as { cause?: unknown }).cause instanceof Error) c = (c as { cause: Error }).cause;
  // Connecting to every address of a name fails as one AggregateError with an empty message.
  const first = c instanceof AggregateError && c.errors[0] instanceof Error ? (c.errors[0] as Error) : undefined;
  const code = (c as { code?: unknown }).code ?? (first as { code?: unknown } | undefined)?.code;
  const message = (c as Error).message || first?.message || '';
  if (typeof code !== 'string' || message.includes(code)) return message || 'no details';
  return message ? `${message} (${code})` : code;
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
