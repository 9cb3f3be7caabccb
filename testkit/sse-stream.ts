/** A scripted turn sent as Server-Sent Events, chunked the way SGLang or vLLM chunks it, faults included. */

import type { ServerResponse } from 'node:http';
import { fragments, render, usageOf, type Answer, type RenderedCall } from './reply-render';
import { isReply, type FaultTurn, type ReplyTurn, type ScriptedTurn } from './scripted-turns';

interface DeltaText {
  content?: string;
  reasoning?: string;
  reasoning_content?: string;
  tool_calls?: {
    index: number;
    id: string | null;
    type: string | null;
    function: { name: string | null; arguments: string };
  }[];
}

/** The text a delta adds, as the model sampled it. */
function deltaText(d: DeltaText): string {
  const calls = (d.tool_calls ?? []).map((c) => (c.function.name ?? '') + c.function.arguments).join('');
  return (d.reasoning ?? '') + (d.reasoning_content ?? '') + (d.content ?? '') + calls;
}

/** Writes the chunks of one streamed answer. */
class ChunkWriter {
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    readonly res: ServerResponse,
    readonly answer: Answer,
  ) {}

  send(chunk: object): void {
    const { id, model } = this.answer;
    const created = this.created;
    this.res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...chunk })}\n\n`);
  }

  /** A delta; asked for ids, it carries those of its own text (vLLM: `token_ids` per chunk, logprobs per token). */
  delta(d: DeltaText, finish: string | null = null): void {
    const ids = this.answer.tokens?.next(deltaText(d));
    const extra = ids ? { token_ids: ids.token_ids, logprobs: ids.logprobs } : { logprobs: null };
    this.send({ choices: [{ index: 0, delta: d, ...extra, finish_reason: finish }] });
  }

  /** The final usage chunk, empty `choices`, sent only when the request asked for it (as vLLM and SGLang do). */
  usage(completion: number, total: number): void {
    if (this.answer.includeUsage) this.send({ choices: [], usage: usageOf(this.answer, completion, total) });
  }
}

export async function streamTurn(
  res: ServerResponse,
  answer: Answer,
  turn: ScriptedTurn,
  maxTokens: number | undefined,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const out = new ChunkWriter(res, answer);
  // vLLM sends the prompt's ids once, in the first chunk.
  const promptIds = answer.tokens && isReply(turn) ? { prompt_token_ids: answer.tokens.sent.promptIds } : {};
  out.send({
    ...promptIds,
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
  });
  if (isReply(turn)) streamReply(out, turn, maxTokens);
  else await streamFault(out, turn);
}

async function streamFault(out: ChunkWriter, turn: FaultTurn): Promise<void> {
  const res = out.res;
  const prefix = 'after' in turn ? turn.after : undefined;
  if (prefix) out.delta({ content: prefix });
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
      if (!res.destroyed) out.delta({}, 'stop');
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

function streamReply(out: ChunkWriter, reply: ReplyTurn, maxTokens: number | undefined): void {
  const size = reply.fragment ?? 7;
  const { content, toolCalls } = render(reply);
  const vllm = out.answer.flavor === 'vllm';
  if (reply.reasoning && !reply.reasoningInContent)
    for (const piece of fragments(reply.reasoning, size))
      out.delta(vllm ? { reasoning: piece } : { reasoning_content: piece });
  // A reply past max_tokens is cut there, as a server stops generating (finish_reason "length").
  const cap = maxTokens !== undefined ? maxTokens * 3 : Infinity;
  const shown = content.length > cap ? content.slice(0, cap) : content;
  const cut = shown.length < content.length || reply.finishReason === 'length';
  for (const piece of fragments(shown, size)) out.delta({ content: piece });
  if (cut) {
    out.delta({}, 'length');
    out.usage(Math.ceil(shown.length / 3), 0);
    return void out.res.end('data: [DONE]\n\n');
  }
  streamToolCalls(out, toolCalls, size);
  if (toolCalls.length === 0) out.delta({}, 'stop');
  const completion = Math.ceil(
    ((reply.reasoning ?? '').length + content.length + toolCalls.reduce((n, c) => n + c.args.length, 0)) / 4,
  );
  out.usage(completion, out.answer.promptTokens + completion);
  out.res.end('data: [DONE]\n\n');
}

function streamToolCalls(out: ChunkWriter, toolCalls: RenderedCall[], size: number): void {
  const vllm = out.answer.flavor === 'vllm';
  toolCalls.forEach((c, i) => {
    out.delta({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] });
    const pieces = fragments(c.args, size);
    pieces.forEach((piece, j) => {
      const last = i === toolCalls.length - 1 && j === pieces.length - 1;
      // vLLM puts finish_reason on the last delta; SGLang sends it in a chunk of its own.
      out.delta(
        { tool_calls: [{ index: i, id: null, type: null, function: { name: null, arguments: piece } }] },
        last && vllm ? 'tool_calls' : null,
      );
    });
    if (i === toolCalls.length - 1 && (pieces.length === 0 || !vllm)) out.delta({}, 'tool_calls');
  });
}
