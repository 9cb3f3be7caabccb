/**
 * What the server says about itself: the models it serves, the context
 * window (from /v1/models, SGLang's /server_info or a refusal), and prompt
 * token counts from /tokenize. Apart from the streamed completion, which
 * only needs the model's name from here.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { classifyError, ModelError } from './errors';
import type { ModelClientOptions } from './options';
import type { TokenEngine } from './token-record';
import { maskEndpoint } from '../secrets/endpoint';

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

/** What the server's answers depend on in the client's options. */
export type ServerOptions = Pick<
  ModelClientOptions,
  'endpoint' | 'apiKey' | 'model' | 'contextLength' | 'requestTimeoutMs' | 'thinking' | 'engine'
>;

/** One server's listing, window and token counts, each asked for once where the answer cannot change. */
export class ServerInfo {
  /** The model: the setting, else the first the server listed once asked. */
  model: string | undefined;
  private window: ContextWindow | undefined;
  private noTokenize = false;
  private detected: { engine: TokenEngine | undefined } | undefined;

  constructor(
    private readonly openai: OpenAI,
    private readonly opts: ServerOptions,
  ) {
    this.model = opts.model;
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
      throw classifyError(e, { ...this.opts, model: this.model });
    }
  }

  /** The engine: the setting, else what the model's card says (`owned_by`), else unknown. Asked once. */
  async engine(signal?: AbortSignal): Promise<TokenEngine | undefined> {
    if (this.opts.engine) return this.opts.engine;
    if (!this.detected) {
      const model = await this.resolveModel(signal);
      let owner: unknown;
      try {
        for await (const m of this.openai.models.list(signal ? { signal } : undefined))
          if (m.id === model || owner === undefined) owner = m.owned_by;
      } catch (e) {
        throw classifyError(e, { ...this.opts, model: this.model });
      }
      this.detected = { engine: owner === 'vllm' || owner === 'sglang' ? owner : undefined };
    }
    return this.detected.engine;
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
      ...templateKwargs(this.opts.thinking),
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
}

/** `chat_template_kwargs` for the thinking setting (nothing for `auto`: a server that knows no such field may refuse it). */
export function templateKwargs(thinking: ModelClientOptions['thinking']): {
  chat_template_kwargs?: { enable_thinking: boolean };
} {
  const t = thinking ?? 'auto';
  return t === 'auto' ? {} : { chat_template_kwargs: { enable_thinking: t === 'on' } };
}
