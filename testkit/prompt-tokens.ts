/** The scripted server's own token count, apart from the client's estimate, as a real server's tokenizer is. */

import type { ChatRequestBody } from './scripted-turns';
import { textOf } from './text';

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
