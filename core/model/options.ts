/** What a ModelClient is told, apart from the client so the modules it draws on can read their part of it. */
import type { ToolFormatSetting } from './formats';
import type { TokenEngine } from './token-record';

export interface ModelClientOptions {
  /** Base URL ending in /v1, e.g. SGLang's default http://127.0.0.1:30000/v1. */
  endpoint: string;
  /** Read from SecretStorage by the extension; never logged. */
  apiKey?: string;
  /** Model id; default: the first model the server lists. */
  model?: string;
  temperature?: number;
  /** Sent as `seed` (vLLM and SGLang sample each request reproducibly with it); a group gives each rollout its own. */
  seed?: number;
  maxTokens?: number;
  /** Time allowed for the response to start (headers). Default 60 s. */
  requestTimeoutMs?: number;
  /** Longest silence allowed inside a stream before it counts as stalled. Default 60 s. */
  idleTimeoutMs?: number;
  /**
   * How tool calls travel: `auto` (the default) and `native` send the tools in
   * the API and take `tool_calls`, and still find calls a server left as text
   * in the content; a text format (core/model/formats) sends no tools, the
   * caller renders them into the prompt, and calls are read from the text.
   */
  toolFormat?: ToolFormatSetting;
  /** The model's context window in tokens; 0 or absent: ask the server. */
  contextLength?: number;
  /** `on`/`off`: ask the chat template for thinking or not (`chat_template_kwargs.enable_thinking`); `auto`: send nothing. */
  thinking?: 'auto' | 'on' | 'off';
  /**
   * Ask for each turn's prompt and completion token ids and their logprobs (for a trainer), in the
   * engine's way: streamed from vLLM, one unstreamed request per turn otherwise (core/model/token-record.ts).
   */
  recordTokens?: boolean;
  /** Which server answers; default: what `/v1/models` says (`owned_by`). Decides how token ids are asked for. */
  engine?: TokenEngine;
  /** Retries for 429, 5xx and connection errors before anything was streamed. Default 3. */
  retries?: number;
  /** First backoff delay; doubles each retry (with jitter). Default 500 ms. */
  backoffMs?: number;
}
