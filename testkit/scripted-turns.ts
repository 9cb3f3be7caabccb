/** The script's vocabulary: what a scripted turn may hold and what a chat request carries, shared by the server's parts. */

import type { TextFormatId } from '../core/model/formats';

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

/** A turn that is not a reply: a fault, only a streaming request can be given one (but `http_error`). */
export type FaultTurn = Exclude<ScriptedTurn, ReplyTurn>;

/** Which server's wire habits to reproduce. */
export type ServerFlavor = 'vllm' | 'sglang';

export interface ChatRequestBody {
  model?: string;
  messages?: { role?: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: unknown[];
  tool_choice?: unknown;
  max_tokens?: number;
  stream?: boolean;
  /** vLLM and SGLang send a final usage chunk only when asked with `include_usage`. */
  stream_options?: { include_usage?: boolean } | null;
  chat_template_kwargs?: Record<string, unknown>;
}

export function isReply(turn: ScriptedTurn): turn is ReplyTurn {
  return turn.kind === undefined || turn.kind === 'reply';
}
