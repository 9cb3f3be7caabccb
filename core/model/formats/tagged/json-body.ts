/**
 * The JSON body of a call (Hermes, Qwen2.5, Qwen3): where it ends inside the block, a body written before a
 * stray `</tool_call>` without its opening tag, and one call or a list of them made of it.
 */
import { scanJson } from '../../../json/scan';
import { callFromObject, skipSpace } from '../calls';
import { balancedEnd, parseLenientJson } from '../json-repair';
import type { RepairId } from '../repairs';
import type { TextCall, TextFormatId } from '../types';
import { CALL_CLOSE, CALL_OPEN } from './scan';

/** Where a JSON body (an object, an array or a code fence) starts in `text`, or -1. */
export function firstJsonStart(text: string): number {
  const brace = text.search(/[{[]|```/);
  return brace;
}

/**
 * The JSON body from `pos` (a fence, an object or an array): to where its
 * brackets balance, string-aware, or up to a tag seen outside a string when
 * they never do (then the repair layer adds the closers).
 */
export function readJsonBody(s: string, pos: number): { text: string; end: number; repairs: RepairId[] } {
  const repairs: RepairId[] = [];
  let start = pos;
  let fence = false;
  if (s.startsWith('```', pos)) {
    fence = true;
    const nl = s.indexOf('\n', pos);
    start = nl < 0 ? s.length : nl + 1;
    repairs.push('code_fence');
  }
  let { end: i } = balancedEnd(
    s,
    start,
    (k) =>
      (s[k] === '<' && (s.startsWith(CALL_CLOSE, k) || s.startsWith(CALL_OPEN, k))) ||
      (fence && s.startsWith('```', k)),
  );
  // `{…}}`: closers past the end of the value, before the tag.
  while (i < s.length && (s[i] === '}' || s[i] === ']')) {
    i++;
    if (!repairs.includes('extra_closer')) repairs.push('extra_closer');
  }
  let end = i;
  const text = s.slice(start, end).trimEnd();
  if (fence) {
    const after = skipSpace(s, end);
    if (s.startsWith('```', after)) end = after + 3;
  }
  return { text, end, repairs };
}

/** A JSON call object ending `text` (before a stray closing tag): where it starts. */
export function trailingJsonCall(text: string): { start: number; text: string } | undefined {
  const trimmed = text.trimEnd();
  if (!trimmed.endsWith('}')) return undefined;
  // Walk back to the `{` that balances the final `}` (string-aware from the front).
  const opens: number[] = [];
  let start = -1;
  scanJson(trimmed, 0, (c, i) => {
    if (c === 0x7b /* { */) opens.push(i);
    else if (c === 0x7d /* } */) {
      const o = opens.pop();
      if (i === trimmed.length - 1 && o !== undefined && opens.length === 0) start = o;
    }
  });
  if (start < 0) return undefined;
  const body = trimmed.slice(start);
  const parsed = parseLenientJson(body);
  if (
    !parsed.ok ||
    typeof parsed.value !== 'object' ||
    parsed.value === null ||
    typeof (parsed.value as { name?: unknown }).name !== 'string'
  )
    return undefined;
  return { start, text: body };
}

/** A JSON body: one call object, or a list of them (as Llama and Mistral write several). */
export function decodeJsonCalls(raw: string, format: TextFormatId): TextCall[] {
  const parsed = parseLenientJson(raw.trim(), 'the tool call');
  // A list of calls is a list of objects; any other array is one malformed call.
  if (
    parsed.ok &&
    Array.isArray(parsed.value) &&
    parsed.value.length > 0 &&
    parsed.value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))
  ) {
    return parsed.value.map((v) => callFromObject(v, { raw, format }, [...parsed.repairs]));
  }
  return [decodeJson(raw, format)];
}

/** `{"name": …, "arguments": …}` (or `parameters`, or wrapped in `function`) as a call. */
export function decodeJson(raw: string, format: TextFormatId): TextCall {
  const base = { raw, format };
  const parsed = parseLenientJson(raw.trim(), 'the tool call');
  if (!parsed.ok) {
    const name = /"name"\s*:\s*"([^"\\]*)"/.exec(raw)?.[1] ?? '';
    return { ...base, name, args: null, argsError: `the tool call is not JSON: ${parsed.error}`, repairs: [] };
  }
  return callFromObject(parsed.value, base, [...parsed.repairs]);
}
