import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendModels, sendServerInfo, sendTokenCount, type ServerInfo } from './info-routes';
import { countPromptTokens } from './prompt-tokens';
import { completionBody } from './reply-render';
import { isReply, type ChatRequestBody, type ScriptedTurn, type ServerFlavor } from './scripted-turns';
import { streamTurn } from './sse-stream';
import { textOf } from './text';
import { asksForIds, promptIdsOf, TurnTokenWriter } from './token-ids';
import type { TurnTokens } from '../core/model/token-record';
import { NO_TOOL_PARSER_REFUSAL, sendError, sendJson, sendRefusal, windowRefusal } from './wire-errors';

/**
 * A scripted OpenAI-compatible inference server: the stand-in for a GPU
 * model in tests and in the demo. It speaks the real wire format — HTTP,
 * JSON bodies, Server-Sent Events with streamed tool-call deltas in the
 * shapes SGLang and vLLM send — so the real `openai` client talks to it
 * unchanged. Each chat request takes the next turn of the script (or what
 * a responder function makes of the request). With a context window it
 * enforces it as the real servers do: a stand-in tokenizer counts the
 * rendered prompt (differently from the client's estimate, as a real one
 * would), and a prompt + max_tokens over the window is refused with vLLM's
 * or SGLang's exact status, body shape and wording; `/tokenize` and SGLang's
 * `/server_info` answer with the same count.
 */

export interface ScriptedServerOptions {
  models?: string[];
  /** Sent as `max_model_len` with each model at /v1/models, as vLLM and SGLang do. */
  contextLength?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, else 401. */
  apiKey?: string;
  script: ScriptedTurn[];
  /** What to do when the script has run out: repeat its last turn, or answer 500. */
  whenDone?: 'repeat' | 'error';
  /** `error` body shape for errors the server makes itself: SGLang's flat one or OpenAI's nested one. */
  errorShape?: 'flat' | 'nested';
  /** Start the script over for each new conversation (a request with no assistant message yet): the demo replays its run for every task. */
  restartPerConversation?: boolean;
  /** Whose wire habits (default `sglang`): the reasoning field, where finish_reason goes, error wording. */
  flavor?: ServerFlavor;
  /** Enforce `contextLength` on chat requests (prompt + max_tokens), refusing oversize ones as the flavor does. */
  enforceWindow?: boolean;
  /** Where the window is reported: `/v1/models` (default), SGLang's `/server_info` only, or nowhere. */
  reportWindow?: 'models' | 'server_info' | 'none';
  /** No `/tokenize` endpoint (404), as on a server that has none. */
  noTokenize?: boolean;
  /**
   * No tool-call parser: with vLLM a request with tools is refused (400, as
   * without --enable-auto-tool-choice); with SGLang the tools are accepted
   * and every call comes back as text in content.
   */
  noToolParser?: boolean;
  /** The refusal's wording instead of the flavor's (a proxy in front of the server that rewords it, numbers and all). */
  refusalMessage?: string;
  /** Answer Test Connection's probe (a request offering only the `ping` tool) with the ping call, outside the script. */
  answerProbe?: boolean;
  /**
   * Report in `usage.prompt_tokens_details.cached_tokens` what a prefix cache held of each prompt, as
   * vLLM (--enable-prompt-tokens-details) and SGLang do: the previous chat request's prompt tokens when
   * this request's messages begin with that one's, else 0.
   */
  promptCache?: boolean;
  /**
   * What a request for token ids gets: `answer` (default) sends them in the flavor's shape (and SGLang
   * refuses them on a stream, as it does); `ignore` sends none, as an older SGLang that knows no such field.
   */
  tokenIds?: 'answer' | 'ignore';
  /** Wait this long before answering a chat request (a model slow to make its whole answer). */
  answerDelayMs?: number;
  /** `owned_by` at /v1/models instead of the flavor's name (a gateway or proxy in front of the engine). */
  ownedBy?: string;
  /** Makes each turn from the request instead of the script (a model that reads its prompt). */
  respond?: (body: ChatRequestBody, n: number) => ScriptedTurn;
}

/** Test Connection's probe: only the `ping` tool offered (in the API, or described in the prompt for a text format). */
function isProbe(chat: ChatRequestBody): boolean {
  const tools = (chat.tools ?? []) as { function?: { name?: string } }[];
  if (tools.length) return tools.length === 1 && tools[0]?.function?.name === 'ping';
  return textOf(chat.messages?.[0]?.content).includes('You are a connection probe');
}

/** SGLang's refusal of ids on a stream (serving_chat.py, `_validate_request`). */
const SGLANG_STREAM_IDS =
  'return_token_ids is not supported with streaming on /v1/chat/completions. Please set stream=false when using return_token_ids=true.';

export interface RecordedRequest {
  path: string;
  body: unknown;
  headers: IncomingMessage['headers'];
}

export class ScriptedModelServer {
  private server: Server | undefined;
  private turn = 0;
  /** Prompt tokens of the chat request being answered (the `usage` it reports). */
  private lastPromptTokens = 0;
  /** The previous chat request's messages and prompt tokens: what a prefix cache holds. */
  private cache: { messages: string[]; tokens: number } | undefined;
  readonly requests: RecordedRequest[] = [];
  /** The ids and logprobs sent for each chat request that asked for them, in order. */
  readonly sentTokens: TurnTokens[] = [];

  constructor(private readonly opts: ScriptedServerOptions) {}

  /** Listens on 127.0.0.1 (a free port unless given); resolves with the base URL ending in /v1. */
  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', resolve);
    });
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The base URL (ending in /v1) while listening. */
  get baseURL(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the scripted server is not listening');
    return `http://127.0.0.1:${address.port}/v1`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private error(res: ServerResponse, status: number, message: string, type: string): void {
    sendError(res, this.opts.errorShape, status, message, type);
  }

  private get flavor(): ServerFlavor {
    return this.opts.flavor ?? 'sglang';
  }

  private get info(): ServerInfo {
    return {
      models: this.opts.models ?? ['LAR-9B'],
      flavor: this.flavor,
      contextLength: this.opts.contextLength,
      report: this.opts.reportWindow ?? 'models',
      ...(this.opts.ownedBy !== undefined ? { ownedBy: this.opts.ownedBy } : {}),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return this.error(res, 400, 'the request body is not JSON', 'BadRequestError');
    }
    const path = (req.url ?? '').split('?')[0]!;
    this.requests.push({ path, body, headers: req.headers });
    if (this.opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${this.opts.apiKey}`) {
      return this.error(res, 401, 'invalid API key', 'AuthenticationError');
    }
    const sglang = this.flavor === 'sglang';
    if (req.method === 'GET' && path === '/v1/models') return sendModels(res, this.info);
    if (req.method === 'GET' && (path === '/server_info' || path === '/get_server_info') && sglang)
      return sendServerInfo(res, this.info);
    if (req.method === 'POST' && (path === '/tokenize' || (path === '/v1/tokenize' && sglang))) {
      if (this.opts.noTokenize) return this.error(res, 404, `no route ${req.method} ${path}`, 'NotFoundError');
      return sendTokenCount(res, this.info, body);
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions')
      return this.error(res, 404, `no route ${req.method} ${path}`, 'NotFoundError');
    return this.chat(res, body ?? {});
  }

  /** A chat completion: refused as the flavor would, or answered with the script's next turn. */
  private async chat(res: ServerResponse, chat: ChatRequestBody): Promise<void> {
    const model = chat.model;
    if (!model || !this.info.models.includes(model))
      return this.error(res, 404, `The model \`${model}\` does not exist.`, 'NotFoundError');
    if (
      chat.tools?.length &&
      this.opts.noToolParser &&
      this.flavor === 'vllm' &&
      (chat.tool_choice ?? 'auto') !== 'none'
    ) {
      return sendRefusal(res, this.flavor, 400, NO_TOOL_PARSER_REFUSAL);
    }
    const promptTokens = countPromptTokens(chat);
    if (this.opts.enforceWindow) {
      const refusal = windowRefusal(this.flavor, this.opts.contextLength, promptTokens, chat.max_tokens);
      if (refusal)
        return sendRefusal(res, this.flavor, 400, this.opts.refusalMessage ?? refusal.message, refusal.param);
    }
    const ids = asksForIds(chat) && this.opts.tokenIds !== 'ignore';
    if (ids && chat.stream && this.flavor === 'sglang') return sendRefusal(res, 'sglang', 400, SGLANG_STREAM_IDS);
    if (this.opts.answerDelayMs) await new Promise((r) => setTimeout(r, this.opts.answerDelayMs));
    let turn = this.nextTurn(chat);
    if (!turn) return this.error(res, 500, 'the script has no more turns', 'InternalServerError');
    // A server with no parser (SGLang) passes every call through as text.
    if (this.opts.noToolParser && isReply(turn) && turn.toolCalls?.length && !turn.toolCallsAsText)
      turn = { ...turn, toolCallsAsText: true };
    this.lastPromptTokens = promptTokens;

    if (turn.kind === 'http_error') return sendJson(res, turn.status, turn.body);
    const tokens = ids ? new TurnTokenWriter(promptIdsOf(chat)) : undefined;
    if (tokens) this.sentTokens.push(tokens.sent);
    const answer = {
      id: `chatcmpl-${this.turn}`,
      model,
      flavor: this.flavor,
      promptTokens: this.lastPromptTokens,
      includeUsage: chat.stream_options?.include_usage === true,
      ...(this.opts.promptCache ? { cachedTokens: this.cached(chat, promptTokens) } : {}),
      ...(tokens ? { tokens } : {}),
    };
    if (chat.stream) return streamTurn(res, answer, turn, chat.max_tokens);
    if (!isReply(turn))
      return this.error(res, 500, `turn "${turn.kind}" needs a streaming request`, 'InternalServerError');
    sendJson(res, 200, completionBody(turn, answer));
  }

  /** What the prefix cache held of this prompt, remembering it for the next request. */
  private cached(chat: ChatRequestBody, promptTokens: number): number {
    const messages = (chat.messages ?? []).map((m) => JSON.stringify(m));
    const before = this.cache;
    this.cache = { messages, tokens: promptTokens };
    if (!before || before.messages.length > messages.length) return 0;
    const grows = before.messages.every((m, i) => m === messages[i]);
    return grows ? Math.min(before.tokens, promptTokens) : 0;
  }

  /** The turn that answers this request: the probe's, the responder's, or the script's next. */
  private nextTurn(chat: ChatRequestBody): ScriptedTurn | undefined {
    const script = this.opts.script;
    const messages = chat.messages;
    if (this.opts.restartPerConversation && Array.isArray(messages) && !messages.some((m) => m?.role === 'assistant'))
      this.turn = 0;
    if (this.opts.answerProbe && isProbe(chat)) return { toolCalls: [{ name: 'ping', arguments: { echo: 'lar' } }] };
    if (this.opts.respond) return this.opts.respond(chat, this.turn++);
    const turn = script[this.turn];
    if (turn) this.turn++;
    else if (this.opts.whenDone === 'repeat' && script.length) return script[script.length - 1];
    return turn;
  }
}
