import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FORMATS, type TextFormatId } from '../core/model/formats';
import { textOf } from './text';

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

export interface ScriptedToolCall {
  name: string;
  /** Arguments as an object (sent as JSON text) or as raw text (to test malformed JSON). */
  arguments: Record<string, unknown> | string;
  id?: string;
}

export interface ReplyTurn {
  kind?: 'reply';
  content?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * Put the tool calls in `content` as text, as a server without a (working)
   * tool parser does: `true` for Hermes's `<tool_call>` JSON, or the text
   * format to write them in.
   */
  toolCallsAsText?: boolean | TextFormatId;
  /** Reasoning, sent in the flavor's field (`reasoning` for vLLM, `reasoning_content` for SGLang). */
  reasoning?: string;
  /** Reasoning left in `content` instead: `<think>…</think>`, or only the closing tag (the template opened it). */
  reasoningInContent?: 'tags' | 'close-only';
  /** Characters per streamed content or argument fragment (default 7). */
  fragment?: number;
  /** `length`: the answer stopped at max_tokens. */
  finishReason?: 'stop' | 'length';
}

export type ScriptedTurn =
  | ReplyTurn
  | { kind: 'http_error'; status: number; body: unknown }
  | { kind: 'stream_error'; after?: string; error: unknown }
  /**
   * The answer stops after `after`, with no finish_reason and no [DONE]: the
   * connection drops, or with `graceful` the response ends normally (a proxy
   * that cut the stream short).
   */
  | { kind: 'truncate'; after: string; graceful?: boolean }
  | { kind: 'stall'; after?: string; ms: number }
  | { kind: 'malformed_sse'; after?: string }
  /** Data chunks sent exactly as given (a recorded stream), then [DONE]. */
  | { kind: 'raw'; chunks: unknown[] };

/** Which server's wire habits to reproduce. */
export type ServerFlavor = 'vllm' | 'sglang';

export interface ChatRequestBody {
  model?: string;
  messages?: { role?: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: unknown[];
  tool_choice?: unknown;
  max_tokens?: number;
  stream?: boolean;
  chat_template_kwargs?: Record<string, unknown>;
}

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
  /** Makes each turn from the request instead of the script (a model that reads its prompt). */
  respond?: (body: ChatRequestBody, n: number) => ScriptedTurn;
}

/** Test Connection's probe: only the `ping` tool offered (in the API, or described in the prompt for a text format). */
function isProbe(chat: ChatRequestBody): boolean {
  const tools = (chat.tools ?? []) as { function?: { name?: string } }[];
  if (tools.length) return tools.length === 1 && tools[0]?.function?.name === 'ping';
  return textOf(chat.messages?.[0]?.content).includes('You are a connection probe');
}

/**
 * The stand-in tokenizer: a prompt as a Qwen-style template renders it,
 * counted in pieces of up to four letters, single digits and symbols, runs
 * of spaces. Not the client's estimate, on purpose: the client must learn
 * the server's counts from `usage`, as with a real tokenizer.
 */
export function countPromptTokens(body: ChatRequestBody): number {
  const piece = /[A-Za-z]{1,4}|[0-9]|[^\sA-Za-z0-9]|\s+/g;
  const count = (t: string) => (t.match(piece) ?? []).length;
  let n = 2;
  for (const m of body.messages ?? []) {
    n += 4 + count(m.role ?? '');
    n += count(textOf(m.content));
    if (m.tool_calls) n += count(JSON.stringify(m.tool_calls));
  }
  if (body.tools?.length) n += 60 + count(JSON.stringify(body.tools));
  return n;
}

export interface RecordedRequest {
  path: string;
  body: unknown;
  headers: IncomingMessage['headers'];
}

export class ScriptedModelServer {
  private server: Server | undefined;
  private turn = 0;
  readonly requests: RecordedRequest[] = [];

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
    const body =
      this.opts.errorShape === 'nested'
        ? { error: { message, type, code: status } }
        : { object: 'error', message, type, code: status };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  private get flavor(): ServerFlavor {
    return this.opts.flavor ?? 'sglang';
  }

  /** A refusal in the flavor's body shape (vLLM nests it; SGLang keeps the flat form). */
  private refuse(res: ServerResponse, status: number, message: string, param: string | null = null): void {
    const body =
      this.flavor === 'vllm'
        ? { error: { message, type: 'BadRequestError', param, code: status } }
        : { object: 'error', message, type: 'BadRequestError', param: null, code: status };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  /** The window check, worded exactly as the flavor words it (research: vLLM renderers/params.py, SGLang tokenizer_manager.py). */
  private windowRefusal(prompt: number, maxTokens: number | undefined): { message: string; param: string } | undefined {
    const L = this.opts.contextLength;
    if (!L) return undefined;
    if (this.flavor === 'vllm') {
      if (maxTokens !== undefined && maxTokens > L)
        return {
          message: `max_tokens=${maxTokens} cannot be greater than max_model_len=${L}. Please request fewer output tokens. (parameter=max_tokens, value=${maxTokens})`,
          param: 'max_tokens',
        };
      const out = maxTokens ?? 0;
      if (prompt + out > L) {
        return {
          message: `This model's maximum context length is ${L} tokens. However, you requested ${out} output tokens and your prompt contains ${prompt} input tokens, for a total of ${prompt + out} tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${prompt})`,
          param: 'input_tokens',
        };
      }
      return undefined;
    }
    if (prompt >= L)
      return {
        message: `The input (${prompt} tokens) is longer than the model's context length (${L} tokens).`,
        param: 'input',
      };
    if (maxTokens !== undefined && prompt + maxTokens > L) {
      return {
        message: `Requested token count exceeds the model's maximum context length of ${L} tokens. You requested a total of ${prompt + maxTokens} tokens: ${prompt} tokens from the input messages and ${maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
        param: 'input',
      };
    }
    return undefined;
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
    const models = this.opts.models ?? ['LAR-9B'];
    const report = this.opts.reportWindow ?? 'models';
    if (req.method === 'GET' && path === '/v1/models') {
      const owned = this.flavor === 'vllm' ? 'vllm' : 'sglang';
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          data: models.map((id) => ({
            id,
            object: 'model',
            created: 0,
            owned_by: owned,
            root: id,
            parent: null,
            ...(this.opts.contextLength && report === 'models' ? { max_model_len: this.opts.contextLength } : {}),
          })),
        }),
      );
      return;
    }
    if (req.method === 'GET' && (path === '/server_info' || path === '/get_server_info') && this.flavor === 'sglang') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          model_path: models[0],
          context_length: report === 'server_info' ? (this.opts.contextLength ?? null) : null,
          version: '0.5.x-scripted',
        }),
      );
      return;
    }
    if (req.method === 'POST' && (path === '/tokenize' || (path === '/v1/tokenize' && this.flavor === 'sglang'))) {
      if (this.opts.noTokenize) return this.error(res, 404, `no route ${req.method} ${path}`, 'NotFoundError');
      const b = (body ?? {}) as ChatRequestBody & { prompt?: string };
      const count = Array.isArray(b.messages)
        ? countPromptTokens(b)
        : countPromptTokens({ messages: [{ role: '', content: b.prompt ?? '' }] }) - 6;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ count, max_model_len: this.opts.contextLength ?? 32768, tokens: [], token_strs: null }));
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions')
      return this.error(res, 404, `no route ${req.method} ${path}`, 'NotFoundError');
    const request = (body ?? {}) as { model?: string; stream?: boolean };
    if (!request.model || !models.includes(request.model))
      return this.error(res, 404, `The model \`${request.model}\` does not exist.`, 'NotFoundError');

    const chat = (body ?? {}) as ChatRequestBody;
    if (
      chat.tools?.length &&
      this.opts.noToolParser &&
      this.flavor === 'vllm' &&
      (chat.tool_choice ?? 'auto') !== 'none'
    ) {
      return this.refuse(
        res,
        400,
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      );
    }
    const promptTokens = countPromptTokens(chat);
    if (this.opts.enforceWindow) {
      const refusal = this.windowRefusal(promptTokens, chat.max_tokens);
      if (refusal) return this.refuse(res, 400, this.opts.refusalMessage ?? refusal.message, refusal.param);
    }
    const script = this.opts.script;
    const messages = chat.messages;
    if (this.opts.restartPerConversation && Array.isArray(messages) && !messages.some((m) => m?.role === 'assistant'))
      this.turn = 0;
    let turn: ScriptedTurn | undefined;
    const probe = this.opts.answerProbe && isProbe(chat);
    if (probe) turn = { toolCalls: [{ name: 'ping', arguments: { echo: 'lar' } }] };
    else if (this.opts.respond) turn = this.opts.respond(chat, this.turn++);
    else {
      turn = script[this.turn];
      if (turn) this.turn++;
      else if (this.opts.whenDone === 'repeat' && script.length) turn = script[script.length - 1];
    }
    if (!turn) return this.error(res, 500, 'the script has no more turns', 'InternalServerError');
    // A server with no parser (SGLang) passes every call through as text.
    if (
      this.opts.noToolParser &&
      (turn.kind === undefined || turn.kind === 'reply') &&
      turn.toolCalls?.length &&
      !turn.toolCallsAsText
    )
      turn = { ...turn, toolCallsAsText: true };
    this.lastPromptTokens = promptTokens;

    if (turn.kind === 'http_error') {
      res.writeHead(turn.status, { 'content-type': 'application/json' }).end(JSON.stringify(turn.body));
      return;
    }
    if (request.stream) return this.stream(res, request.model, turn, chat.max_tokens);
    return this.whole(res, request.model, turn);
  }

  /** Prompt tokens of the chat request being answered (the `usage` it reports). */
  private lastPromptTokens = 0;

  private whole(res: ServerResponse, model: string, turn: ScriptedTurn): void {
    if (turn.kind !== undefined && turn.kind !== 'reply')
      return this.error(res, 500, `turn "${turn.kind}" needs a streaming request`, 'InternalServerError');
    const { content, toolCalls } = render(turn);
    const reasoning = turn.reasoningInContent ? undefined : turn.reasoning;
    const field = this.flavor === 'vllm' ? 'reasoning' : 'reasoning_content';
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${this.turn}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content,
              ...(reasoning ? { [field]: reasoning } : {}),
              ...(toolCalls.length
                ? {
                    tool_calls: toolCalls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.args },
                    })),
                  }
                : {}),
            },
            finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
          },
        ],
        usage: {
          prompt_tokens: this.lastPromptTokens,
          completion_tokens: 10,
          total_tokens: this.lastPromptTokens + 10,
        },
      }),
    );
  }

  private async stream(
    res: ServerResponse,
    model: string,
    turn: ScriptedTurn,
    maxTokens: number | undefined,
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const id = `chatcmpl-${this.turn}`;
    const created = Math.floor(Date.now() / 1000);
    const send = (chunk: object) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...chunk })}\n\n`);
    const delta = (d: object, finish: string | null = null) =>
      send({ choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }] });

    send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    const prefix =
      turn.kind === 'reply' || turn.kind === undefined ? undefined : 'after' in turn ? turn.after : undefined;
    if (turn.kind !== undefined && turn.kind !== 'reply') {
      if (prefix) delta({ content: prefix });
      switch (turn.kind) {
        case 'stream_error':
          res.write(`data: ${JSON.stringify({ error: turn.error })}\n\n`);
          return void res.end();
        case 'truncate':
          if (turn.graceful) return void res.end();
          // The connection drops mid-stream (no finish_reason, no [DONE]),
          // after what was sent so far has reached the client.
          await new Promise((r) => setTimeout(r, 50));
          return void res.destroy();
        case 'stall':
          await new Promise((r) => setTimeout(r, turn.ms));
          if (!res.destroyed) delta({}, 'stop');
          if (!res.destroyed) res.end('data: [DONE]\n\n');
          return;
        case 'malformed_sse':
          res.write('data: {"choices": [{"index": 0, "delta": {"content": "x"\n\n');
          return void res.end('data: [DONE]\n\n');
        case 'raw':
          for (const c of turn.chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
          return void res.end('data: [DONE]\n\n');
      }
    }
    const reply = turn as ReplyTurn;
    const size = reply.fragment ?? 7;
    const { content, toolCalls } = render(reply);
    const vllm = this.flavor === 'vllm';
    if (reply.reasoning && !reply.reasoningInContent)
      for (const piece of fragments(reply.reasoning, size))
        delta(vllm ? { reasoning: piece } : { reasoning_content: piece });
    // A reply past max_tokens is cut there, as a server stops generating (finish_reason "length").
    const cap = maxTokens !== undefined ? maxTokens * 3 : Infinity;
    const shown = content.length > cap ? content.slice(0, cap) : content;
    const cut = shown.length < content.length || reply.finishReason === 'length';
    for (const piece of fragments(shown, size)) delta({ content: piece });
    if (cut) {
      delta({}, 'length');
      send({
        choices: [],
        usage: {
          prompt_tokens: this.lastPromptTokens,
          completion_tokens: Math.ceil(shown.length / 3),
          total_tokens: 0,
        },
      });
      return void res.end('data: [DONE]\n\n');
    }
    toolCalls.forEach((c, i) => {
      delta({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
      const pieces = fragments(c.args, size);
      pieces.forEach((piece, j) => {
        const last = i === toolCalls.length - 1 && j === pieces.length - 1;
        // vLLM puts finish_reason on the last delta; SGLang sends it in a chunk of its own.
        delta(
          { tool_calls: [{ index: i, id: null, type: null, function: { name: null, arguments: piece } }] },
          last && vllm ? 'tool_calls' : null,
        );
      });
      if (i === toolCalls.length - 1 && (pieces.length === 0 || !vllm)) delta({}, 'tool_calls');
    });
    if (toolCalls.length === 0) delta({}, 'stop');
    const completion = Math.ceil(
      ((reply.reasoning ?? '').length + content.length + toolCalls.reduce((n, c) => n + c.args.length, 0)) / 4,
    );
    send({
      choices: [],
      usage: {
        prompt_tokens: this.lastPromptTokens,
        completion_tokens: completion,
        total_tokens: this.lastPromptTokens + completion,
      },
    });
    res.end('data: [DONE]\n\n');
  }
}

function render(turn: ReplyTurn): { content: string; toolCalls: { id: string; name: string; args: string }[] } {
  const calls = (turn.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}_${Math.random().toString(36).slice(2, 10)}`,
    name: c.name,
    args: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
  }));
  let content = turn.content ?? '';
  if (turn.reasoningInContent && turn.reasoning) {
    content =
      turn.reasoningInContent === 'tags'
        ? `<think>\n${turn.reasoning}\n</think>\n\n${content}`
        : `${turn.reasoning}\n</think>\n\n${content}`;
  }
  if (turn.toolCallsAsText) {
    if (turn.toolCallsAsText === true) {
      const text = calls
        .map((c) => `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${c.args}}\n</tool_call>`)
        .join('\n');
      return { content: [content, text].filter(Boolean).join('\n'), toolCalls: [] };
    }
    // Written in the family's own form, as its template taught it.
    const written = FORMATS[turn.toolCallsAsText].assistantContent(
      content,
      calls.map((c) => ({ name: c.name, args: safeParse(c.args) })),
    );
    return { content: written, toolCalls: [] };
  }
  return { content, toolCalls: calls };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
