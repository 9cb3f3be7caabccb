/**
 * An unstreamed `chat.completion` body read as one stream chunk, so an answer asked for whole (token ids
 * from SGLang, which will not stream them) goes through the same assembler and checks as a streamed one.
 */
import type { ChunkChoice, StreamChunk, ToolCallDelta } from './assemble';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The body's choices as deltas (message → delta, each call given its position); an error body stays as it is. */
export function bodyAsChunk(body: unknown): StreamChunk {
  if (!isObject(body)) return body as StreamChunk;
  const choices = Array.isArray(body.choices) ? (body.choices as unknown[]) : [];
  const chunk: StreamChunk = {
    ...(body as StreamChunk),
    choices: choices.filter(isObject).map((c): ChunkChoice => {
      const m = isObject(c.message) ? c.message : {};
      const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]) : [];
      return {
        ...(typeof c.index === 'number' ? { index: c.index } : {}),
        delta: {
          ...(m as NonNullable<ChunkChoice['delta']>),
          tool_calls: calls.filter(isObject).map((t, i): ToolCallDelta => ({ ...(t as ToolCallDelta), index: i })),
        },
        finish_reason: typeof c.finish_reason === 'string' ? c.finish_reason : null,
      };
    }),
  };
  return chunk;
}
