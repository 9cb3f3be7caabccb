/**
 * How deep JSON text nests, found without recursion: JSON.parse takes
 * 5 000 levels of valid JSON (10 KB), but JSON.stringify, structuredClone and
 * the schema checks recurse and overflow the stack on it. Text from a model
 * or a trajectory line deeper than MAX_JSON_DEPTH is refused before parsing.
 */
import { stringEnd } from './scan';

/** Deeper than any tool's arguments need (they are at most 3 levels), far below what overflows. */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of `[` and `{` outside strings (not a validity check). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Its own loop rather than scanJson's callback, which measured twice as slow on text dense in brackets.
    if (c === 0x22 /* " */) i = stringEnd(text, i);
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) max = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return max;
}

/** The message for text nested too deep, or undefined when it is not. */
export function tooDeep(text: string, what = 'the JSON'): string | undefined {
  const d = jsonDepth(text);
  return d > MAX_JSON_DEPTH ? `${what}: nested ${d} levels deep, more than the ${MAX_JSON_DEPTH} accepted` : undefined;
}
