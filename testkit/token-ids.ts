/**
 * Token ids and logprobs the scripted server sends when asked (`return_token_ids`), derived from the text
 * by the stand-in tokenizer so they are deterministic, and kept so a test can compare them with what the
 * client recorded.
 */

import type { TurnTokens } from '../core/model/token-record';
import { countPromptTokens } from './prompt-tokens';
import type { ChatRequestBody } from './scripted-turns';
import { textOf } from './text';

const PIECE = /[A-Za-z]{1,4}|[0-9]|[^\sA-Za-z0-9]|\s+/g;

/** A stand-in for special tokens (the template's markers), padding a prompt to the count the server reports. */
const SPECIAL = 151_644;

/** The ids of a text's pieces: a small hash of each piece, below a Qwen-sized vocabulary. */
export function tokenIdsOf(text: string): number[] {
  return (text.match(PIECE) ?? []).map((p) => {
    let h = 2166136261;
    for (let i = 0; i < p.length; i++) h = Math.imul(h ^ p.charCodeAt(i), 16777619) >>> 0;
    return h % 151_000;
  });
}

/** The prompt's ids: its text's pieces, padded with markers to exactly the count `usage` reports. */
export function promptIdsOf(body: ChatRequestBody): number[] {
  const text = (body.messages ?? [])
    .map((m) => `${m.role ?? ''} ${textOf(m.content)} ${m.tool_calls ? JSON.stringify(m.tool_calls) : ''}`)
    .join('\n');
  const n = countPromptTokens(body);
  const ids = tokenIdsOf(text).slice(0, n);
  while (ids.length < n) ids.push(SPECIAL);
  return ids;
}

/** The logprob of a sampled token: a finite number ≤ 0 that varies with the id and the position. */
function logprobOf(id: number, position: number): number {
  return -((id + position) % 40) / 8 || 0; // never -0, which JSON sends as 0
}

/** Hands out a turn's completion ids piece by piece (a stream) or at once, remembering what was sent. */
export class TurnTokenWriter {
  readonly sent: TurnTokens;

  constructor(promptIds: number[]) {
    this.sent = { promptIds, completionIds: [], logprobs: [] };
  }

  /** The ids and the `logprobs` object of the next piece of the completion. */
  next(text: string): { token_ids: number[]; logprobs: { content: object[] } } {
    const ids = tokenIdsOf(text);
    const content = ids.map((id) => {
      const logprob = logprobOf(id, this.sent.completionIds.length);
      this.sent.completionIds.push(id);
      this.sent.logprobs.push(logprob);
      return { token: `token_id:${id}`, logprob, bytes: [], top_logprobs: [] };
    });
    return { token_ids: ids, logprobs: { content } };
  }
}

/** Whether a request asked for ids (vLLM's and SGLang's field). */
export function asksForIds(body: ChatRequestBody): boolean {
  const b = body as { return_token_ids?: unknown; return_prompt_token_ids?: unknown };
  return b.return_token_ids === true || b.return_prompt_token_ids === true;
}
