import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible inference server: the stand-in for a GPU
 * model in tests and in the demo. It speaks the real wire format — HTTP,
 * JSON bodies, Server-Sent Events with streamed tool-call deltas in the
 * shapes SGLang and vLLM send — so the real `openai` client talks to it
 * unchanged. Each chat request takes the next turn of the script.
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
      /** Put tool calls in `content` as <tool_call> text, as a server without a tool parser does. */
      toolCallsAsText?: boolean;
  /** Characters per streamed content or argument fragment (default 7). */
  fragment?: number;
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
  | { kind: 'malformed_sse'; after?: string };

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
    const body = this.opts.errorShape === 'nested' ? { error: { message, type, code: status } } : { object: 'error', message, type, code: status };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
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
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted', ...(this.opts.contextLength ? { max_model_len: this.opts.contextLength } : {}) })) }),
      );
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') return this.error(res, 404, `no route ${req.method} ${path}`, 'NotFoundError');
    const request = (body ?? {}) as { model?: string; stream?: boolean };
    if (!request.model || !models.includes(request.model)) return this.error(res, 404, `The model \`${request.model}\` does not exist.`, 'NotFoundError');

    const script = this.opts.script;
    const messages = (body as { messages?: { role?: string }[] } | null)?.messages;
    if (this.opts.restartPerConversation && Array.isArray(messages) && !messages.some((m) => m?.role === 'assistant')) this.turn = 0;
    let turn = script[this.turn];
    if (turn) this.turn++;
    else if (this.opts.whenDone === 'repeat' && script.length) turn = script[script.length - 1];
    if (!turn) return this.error(res, 500, 'the script has no more turns', 'InternalServerError');

    if (turn.kind === 'http_error') {
      res.writeHead(turn.status, { 'content-type': 'application/json' }).end(JSON.stringify(turn.body));
      return;
    }
    if (request.stream) return this.stream(res, request.model, turn);
    return this.whole(res, request.model, turn);
  }

  private whole(res: ServerResponse, model: string, turn: ScriptedTurn): void {
    if (turn.kind !== undefined && turn.kind !== 'reply') return this.error(res, 500, `turn "${turn.kind}" needs a streaming request`, 'InternalServerError');
    const { content, toolCalls } = render(turn as ReplyTurn);
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${this.turn}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: 'assistant', content, ...(toolCalls.length ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })) } : {}) }, finish_reason: toolCalls.length ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }),
    );
  }

  private async stream(res: ServerResponse, model: string, turn: ScriptedTurn): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const id = `chatcmpl-${this.turn}`;
    const created = Math.floor(Date.now() / 1000);
    const send = (chunk: object) => res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...chunk })}\n\n`);
    const delta = (d: object, finish: string | null = null) => send({ choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }] });

    send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    const prefix = turn.kind === 'reply' || turn.kind === undefined ? undefined : 'after' in turn ? turn.after : undefined;
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
      }
    }
    const reply = turn as ReplyTurn;
    const size = reply.fragment ?? 7;
    const { content, toolCalls } = render(reply);
    for (const piece of fragments(content, size)) delta({ content: piece });
    toolCalls.forEach((c, i) => {
      delta({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
      const pieces = fragments(c.args, size);
      pieces.forEach((piece, j) => {
        const last = i === toolCalls.length - 1 && j === pieces.length - 1;
        // The last fragment shares its chunk with finish_reason, as SGLang sends it.
        delta({ tool_calls: [{ index: i, id: null, type: null, function: { name: null, arguments: piece } }] }, last ? 'tool_calls' : null);
      });
      if (i === toolCalls.length - 1 && pieces.length === 0) delta({}, 'tool_calls');
    });
    if (toolCalls.length === 0) delta({}, 'stop');
    send({ choices: [], usage: { prompt_tokens: 10, completion_tokens: Math.ceil((content.length + toolCalls.reduce((n, c) => n + c.args.length, 0)) / 4), total_tokens: 0 } });
    res.end('data: [DONE]\n\n');
  }
}

function render(turn: ReplyTurn): { content: string; toolCalls: { id: string; name: string; args: string }[] } {
  const calls = (turn.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}_${Math.random().toString(36).slice(2, 10)}`,
    name: c.name,
    args: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
  }));
  if (turn.toolCallsAsText) {
    const text = calls.map((c) => `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${c.args}}\n</tool_call>`).join('\n');
    return { content: [turn.content ?? '', text].filter(Boolean).join('\n'), toolCalls: [] };
  }
  return { content: turn.content ?? '', toolCalls: calls };
}

function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
