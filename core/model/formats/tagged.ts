import { balancedEnd, parseLenientJson, preview } from './json-repair';
import { uniqueRepairs, type RepairId } from './repairs';
import type { ParsedContent, TextCall, TextFormatId, ToolSpec } from './types';

/**
 * Reads `<tool_call>` blocks, the wrapper the Qwen family uses for both of
 * its call forms: a JSON object (Hermes, Qwen2.5, Qwen3) or the XML form
 * `<function=NAME><parameter=KEY>VALUE</parameter></function>` (Qwen3-Coder,
 * Qwen3.5, Qwen3.6). Either body is read in either block, since models drift
 * between them. The reading follows vLLM's parsers (an unclosed last block
 * runs to the end; a missing `</parameter>` ends at the next parameter or
 * `</function>`; exactly one newline is stripped on each side of a value;
 * values typed by the tool's schema) and goes further where models slip:
 * a closing tag counts only where the structure allows it, so a value that
 * itself holds `</tool_call>` or `</parameter>` (editing this very file) is
 * kept whole; a stray or missing tag, prose inside a block, a body without
 * its opening tag are each repaired and named.
 */

export const CALL_OPEN = '<tool_call>';
export const CALL_CLOSE = '</tool_call>';
const FN_OPEN = '<function=';
const FN_CLOSE = '</function>';
const PARAM_OPEN = '<parameter=';
const PARAM_CLOSE = '</parameter>';

export function parseTagged(content: string, tools: readonly ToolSpec[], format: TextFormatId): ParsedContent {
  // Each call is named by the form it was written in: a JSON body is Hermes's, an XML one the Qwen3-Coder family's.
  const jsonForm: TextFormatId = 'hermes';
  const xmlForm: TextFormatId = format === 'qwen3_coder' || format === 'qwen3_5' ? format : 'qwen3_5';
  const prose: string[] = [];
  const calls: TextCall[] = [];
  const turn: RepairId[] = [];
  const find = finder(content);
  let at = 0;
  while (at < content.length) {
    const open = find(CALL_OPEN, at);
    const stray = find(CALL_CLOSE, at);
    const bareFn = find(FN_OPEN, at);
    // A `<function=` block with no `<tool_call>` around it (the model left the wrapper off).
    if (bareFn >= 0 && (open < 0 || bareFn < open) && (stray < 0 || bareFn < stray)) {
      prose.push(content.slice(at, bareFn));
      const fn = readFunction(content, bareFn, tools, xmlForm, find);
      fn.call.repairs.unshift('missing_open_tag');
      calls.push(fn.call);
      at = skipClose(content, fn.end, fn.call.repairs, prose, find);
      continue;
    }
    if (stray >= 0 && (open < 0 || stray < open)) {
      const before = content.slice(at, stray);
      const json = trailingJsonCall(before);
      if (json) {
        // `{"name": …}</tool_call>`: the body was written, its opening tag was not.
        prose.push(before.slice(0, json.start));
        const call = decodeJson(json.text, jsonForm);
        call.repairs.unshift('missing_open_tag');
        calls.push(call);
      } else {
        prose.push(before);
        turn.push('extra_close_tag');
      }
      at = stray + CALL_CLOSE.length;
      continue;
    }
    if (open < 0) {
      prose.push(content.slice(at));
      break;
    }
    prose.push(content.slice(at, open));
    at = readBlock(content, open + CALL_OPEN.length, tools, { json: jsonForm, xml: xmlForm }, calls, prose, find);
  }
  return { text: tidyProse(prose), calls, repairs: uniqueRepairs(turn) };
}

/**
 * `indexOf` that remembers: the next occurrence of a tag from a position is
 * searched again only once reading has passed the last one found, and a tag
 * not found from some position stays not found after it. Without it, content full of one tag and none of
 * another rescans the whole text per tag (quadratic in what a model may write).
 */
type Find = ((tag: string, from: number) => number) & { structural: () => number[] };

function finder(s: string): Find {
  /** Per tag, the last search: from where, and the first occurrence found (-1: none to the end). */
  const last = new Map<string, { from: number; at: number }>();
  const find = ((tag: string, from: number) => {
    const known = last.get(tag);
    // Valid when there is nothing between its start and what it found, and `from` lies in that stretch.
    if (known && known.from <= from && (known.at < 0 || from <= known.at)) return known.at;
    const at = s.indexOf(tag, from);
    last.set(tag, { from, at });
    return at;
  }) as Find;
  let closers: number[] | undefined;
  /** Every `</parameter>` that the structure allows to close a value, in order (found once). */
  find.structural = () => {
    if (closers) return closers;
    closers = [];
    for (let i = s.indexOf(PARAM_CLOSE); i >= 0; i = s.indexOf(PARAM_CLOSE, i + 1)) {
      const after = skipSpace(s, i + PARAM_CLOSE.length);
      if (
        after >= s.length ||
        s.startsWith(PARAM_OPEN, after) ||
        s.startsWith(FN_CLOSE, after) ||
        s.startsWith(CALL_CLOSE, after)
      )
        closers.push(i);
    }
    return closers;
  };
  return find;
}

/** The first of the sorted `positions` at or after `from`, or -1. */
function firstFrom(positions: readonly number[], from: number): number {
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (positions[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < positions.length ? positions[lo]! : -1;
}

/** Reads one block's body from `start`; returns where reading goes on. */
function readBlock(
  content: string,
  start: number,
  tools: readonly ToolSpec[],
  forms: { json: TextFormatId; xml: TextFormatId },
  calls: TextCall[],
  prose: string[],
  find: Find,
): number {
  const blockEnd = nextOf(content, start, [CALL_CLOSE, CALL_OPEN], find);
  let pos = start;
  let found = 0;
  const repairs: RepairId[] = [];
  const lead = content.slice(pos, blockEnd);
  const fnFound = find(FN_OPEN, pos);
  const fnAt = fnFound >= 0 && fnFound < blockEnd ? fnFound - pos : -1;
  const jsonAt = firstJsonStart(lead);
  const bodyAt = fnAt >= 0 && (jsonAt < 0 || fnAt < jsonAt) ? fnAt : jsonAt;
  if (bodyAt < 0) {
    // A block with no call in it: its text is prose, the empty call an error the model sees.
    const text = lead.trim();
    calls.push({
      name: '',
      args: null,
      argsError: text ? `the <tool_call> block holds no call: ${preview(text)}` : 'the <tool_call> block is empty',
      raw: lead,
      repairs: [],
      format: forms.json,
    });
    return closeAfter(content, blockEnd);
  }
  if (lead.slice(0, bodyAt).trim()) {
    prose.push(lead.slice(0, bodyAt));
    repairs.push('prose_inside_call');
  }
  pos += bodyAt;
  for (;;) {
    if (content.startsWith(FN_OPEN, pos)) {
      const fn = readFunction(content, pos, tools, forms.xml, find);
      fn.call.repairs.unshift(...repairs);
      calls.push(fn.call);
      pos = fn.end;
    } else {
      const json = scanJson(content, pos);
      for (const call of decodeJsonCalls(json.text, forms.json)) {
        call.repairs = uniqueRepairs([...repairs, ...json.repairs, ...call.repairs]);
        calls.push(call);
      }
      pos = json.end;
    }
    found++;
    repairs.length = 0;
    // Another function in the same block (vLLM reads them all), else the close.
    const ws = skipSpace(content, pos);
    if (
      content.startsWith(FN_OPEN, ws) ||
      (content[ws] === '{' && found > 0 && content.startsWith('"name"', skipSpace(content, ws + 1)))
    ) {
      pos = ws;
      continue;
    }
    break;
  }
  const last = calls[calls.length - 1]!;
  return skipClose(content, pos, last.repairs, prose, find);
}

/** After a call's body: consumes `</tool_call>` (prose before it moved out), or notes it missing. */
function skipClose(content: string, pos: number, repairs: RepairId[], prose: string[], find: Find): number {
  const close = find(CALL_CLOSE, pos);
  const next = nextOf(content, pos, [CALL_OPEN, FN_OPEN], find);
  if (close >= 0 && close <= next) {
    const between = content.slice(pos, close);
    if (between.trim()) {
      prose.push(between);
      if (!repairs.includes('prose_inside_call')) repairs.push('prose_inside_call');
    }
    return close + CALL_CLOSE.length;
  }
  if (!repairs.includes('missing_open_tag')) repairs.push('missing_close_tag');
  return pos;
}

function closeAfter(content: string, blockEnd: number): number {
  return content.startsWith(CALL_CLOSE, blockEnd) ? blockEnd + CALL_CLOSE.length : blockEnd;
}

/** The first of `tags` at or after `from`, or the end of the text. */
function nextOf(content: string, from: number, tags: readonly string[], find: Find): number {
  let best = content.length;
  for (const t of tags) {
    const i = find(t, from);
    if (i >= 0 && i < best) best = i;
  }
  return best;
}

/** The first position at or after `pos` that is not whitespace. */
export function skipSpace(s: string, pos: number): number {
  while (pos < s.length && /\s/.test(s[pos]!)) pos++;
  return pos;
}

function firstJsonStart(text: string): number {
  const brace = text.search(/[{[]|```/);
  return brace;
}

/**
 * The JSON body from `pos` (a fence, an object or an array): to where its
 * brackets balance, string-aware, or up to a tag seen outside a string when
 * they never do (then the repair layer adds the closers).
 */
function scanJson(s: string, pos: number): { text: string; end: number; repairs: RepairId[] } {
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
function trailingJsonCall(text: string): { start: number; text: string } | undefined {
  const trimmed = text.trimEnd();
  if (!trimmed.endsWith('}')) return undefined;
  // Walk back to the `{` that balances the final `}` (string-aware from the front).
  const opens: number[] = [];
  let inString = false;
  let start = -1;
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') opens.push(i);
    else if (c === '}') {
      const o = opens.pop();
      if (i === trimmed.length - 1 && o !== undefined && opens.length === 0) start = o;
    }
  }
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

export function callFromObject(
  value: unknown,
  base: { raw: string; format: TextFormatId },
  repairs: RepairId[],
): TextCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ...base,
      name: '',
      args: null,
      argsError: 'a tool call must be a JSON object {"name": …, "arguments": {…}}',
      repairs,
    };
  }
  let v = value as Record<string, unknown>;
  // `{"type": "function", "function": {"name": …, "arguments": …}}`: the API's own shape.
  if (typeof v.function === 'object' && v.function !== null && !Array.isArray(v.function) && v.name === undefined)
    v = v.function as Record<string, unknown>;
  const name = typeof v.name === 'string' ? v.name : '';
  const given = v.arguments !== undefined ? v.arguments : v.parameters;
  if (name === '') return { ...base, name, args: given ?? null, argsError: 'the tool call has no "name"', repairs };
  if (typeof given === 'string') {
    const inner = parseLenientJson(given);
    if (!inner.ok)
      return { ...base, name, args: null, argsError: `the arguments are not JSON: ${inner.error}`, repairs };
    return {
      ...base,
      name,
      args: inner.value,
      repairs: uniqueRepairs([...repairs, 'arguments_as_string', ...inner.repairs]),
    };
  }
  return { ...base, name, args: given ?? {}, repairs: uniqueRepairs(repairs) };
}

/** One `<function=NAME>…</function>` from `pos`; returns the call and where it ended. */
function readFunction(
  s: string,
  pos: number,
  tools: readonly ToolSpec[],
  format: TextFormatId,
  find: Find,
): { call: TextCall; end: number } {
  const repairs: RepairId[] = [];
  const nameStart = pos + FN_OPEN.length;
  const gt = s.indexOf('>', nameStart);
  const lineEnd = s.indexOf('\n', nameStart);
  // `<function=name` with the `>` left off: the name runs to the end of its line.
  const nameEnd = gt >= 0 && (lineEnd < 0 || gt < lineEnd) ? gt : lineEnd >= 0 ? lineEnd : s.length;
  if (nameEnd !== gt) repairs.push('missing_close_tag');
  const name = s.slice(nameStart, nameEnd).trim();
  const tool = tools.find((t) => t.name === name);
  const args: Record<string, unknown> = {};
  const errors: string[] = [];
  let at = nameEnd === gt ? gt + 1 : nameEnd;
  let end = -1;
  for (;;) {
    const next = skipSpace(s, at);
    if (s.startsWith(PARAM_OPEN, next)) {
      const p = readParameter(s, next, find);
      if (p.missingClose) repairs.push('missing_close_tag');
      const typed = typedValue(p.value, schemaOf(tool, p.key));
      if ('error' in typed) errors.push(`parameter "${p.key}": ${typed.error}`);
      else if (Object.prototype.hasOwnProperty.call(args, p.key)) {
        // No call names a parameter twice; a value that closes its parameter and opens the same one
        // again is text from somewhere else (a file copied into the call) taking the call over.
        errors.push(`parameter "${p.key}" is given twice`);
      } else {
        // An own property whatever the key: `__proto__` must not become the object's prototype.
        Object.defineProperty(args, p.key, {
          value: typed.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        repairs.push(...typed.repairs);
      }
      at = p.end;
      continue;
    }
    if (s.startsWith(FN_CLOSE, next)) {
      end = next + FN_CLOSE.length;
      break;
    }
    if (
      next >= s.length ||
      s.startsWith(CALL_CLOSE, next) ||
      s.startsWith(CALL_OPEN, next) ||
      s.startsWith(FN_OPEN, next)
    ) {
      repairs.push('missing_close_tag');
      end = next;
      break;
    }
    // Prose between parameters: skipped up to the next tag of the call.
    const tag = nextOf(s, next, [PARAM_OPEN, FN_CLOSE, CALL_CLOSE, CALL_OPEN, FN_OPEN], find);
    repairs.push('prose_inside_call');
    at = tag;
  }
  const raw = s.slice(pos, end);
  const call: TextCall = { name, args, raw, repairs: uniqueRepairs(repairs), format };
  if (!name) {
    call.args = null;
    call.argsError = 'the <function=…> tag names no tool';
  } else if (errors.length) {
    call.args = null;
    call.argsError = errors.join('; ');
  }
  return { call, end };
}

/**
 * One parameter from `pos` (at `<parameter=`). Its value ends at the first
 * `</parameter>` that the structure allows (followed by another parameter,
 * the function's close, the block's close, or the end); failing that, at the
 * first `</parameter>`, or where the next parameter or the function's close
 * begins (the closing tag missing).
 */
function readParameter(
  s: string,
  pos: number,
  find: Find,
): { key: string; value: string; end: number; missingClose: boolean } {
  const keyStart = pos + PARAM_OPEN.length;
  const gt = s.indexOf('>', keyStart);
  const key = s.slice(keyStart, gt < 0 ? s.length : gt).trim();
  const valueStart = gt < 0 ? s.length : gt + 1;
  let close = firstFrom(find.structural(), valueStart);
  // A value never runs on past its own call: a `</function>` that ends a call and starts the next
  // (`</function></tool_call><tool_call>`, `</function><function=`) before the closer means the
  // model forgot this `</parameter>` (vLLM ends the value at `</function>` too).
  const boundary = callBoundary(s, valueStart, close < 0 ? s.length : close, find);
  if (boundary >= 0)
    return { key, value: trimOneNewline(s.slice(valueStart, boundary)), end: boundary, missingClose: true };
  let missingClose = false;
  if (close < 0) {
    const firstClose = find(PARAM_CLOSE, valueStart);
    const stop = nextOf(s, valueStart, [PARAM_OPEN, FN_CLOSE, CALL_CLOSE], find);
    if (firstClose >= 0 && firstClose <= stop) close = firstClose;
    else {
      missingClose = true;
      return { key, value: trimOneNewline(s.slice(valueStart, stop)), end: stop, missingClose };
    }
  }
  return { key, value: trimOneNewline(s.slice(valueStart, close)), end: close + PARAM_CLOSE.length, missingClose };
}

/** The first `</function>` in [from, to) after which another call begins (or the text ends), or -1. */
function callBoundary(s: string, from: number, to: number, find: Find): number {
  for (let f = find(FN_CLOSE, from); f >= 0 && f < to; f = find(FN_CLOSE, f + 1)) {
    let after = skipSpace(s, f + FN_CLOSE.length);
    if (s.startsWith(FN_OPEN, after)) return f;
    if (!s.startsWith(CALL_CLOSE, after)) continue;
    after = skipSpace(s, after + CALL_CLOSE.length);
    if (after >= s.length || s.startsWith(CALL_OPEN, after) || s.startsWith(FN_OPEN, after)) return f;
  }
  return -1;
}

/** Exactly one newline off each side, as the template puts them there and the servers take them off. */
function trimOneNewline(v: string): string {
  let out = v;
  if (out.startsWith('\n')) out = out.slice(1);
  if (out.endsWith('\n')) out = out.slice(0, -1);
  return out;
}

function schemaOf(tool: ToolSpec | undefined, key: string): Record<string, unknown> | undefined {
  const props = tool?.parameters?.properties;
  if (typeof props !== 'object' || props === null) return undefined;
  const s = (props as Record<string, unknown>)[key];
  return typeof s === 'object' && s !== null ? (s as Record<string, unknown>) : undefined;
}

/** The JSON types a property's schema allows (`type`, a list of them, or `anyOf`/`oneOf` branches). */
export function typesOf(schema: Record<string, unknown> | undefined): Set<string> {
  const out = new Set<string>();
  if (!schema) return out;
  const t = schema.type;
  if (typeof t === 'string') out.add(t);
  else if (Array.isArray(t)) for (const x of t) if (typeof x === 'string') out.add(x);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list))
      for (const b of list)
        for (const x of typesOf(typeof b === 'object' && b !== null ? (b as Record<string, unknown>) : undefined))
          out.add(x);
  }
  if (out.size === 0 && Array.isArray(schema.enum))
    for (const e of schema.enum)
      out.add(e === null ? 'null' : typeof e === 'number' ? 'number' : typeof e === 'boolean' ? 'boolean' : 'string');
  return out;
}

/**
 * A parameter's text as the value its schema asks for: a string stays as
 * written (newlines and all); numbers, booleans, null, objects and arrays
 * are parsed. A value that does not read as its type is passed on as the
 * text, so the verifier says what is wrong with it; an unknown parameter
 * (not in the schema) is kept as text too.
 */
export function typedValue(
  text: string,
  schema: Record<string, unknown> | undefined,
): { value: unknown; repairs: RepairId[] } | { error: string } {
  const types = typesOf(schema);
  if (types.size === 0 || types.has('string')) {
    // As vLLM reads it: the word null is null only where the schema allows null.
    if (types.has('null') && text.trim() === 'null') return { value: null, repairs: [] };
    return { value: text, repairs: [] };
  }
  const t = text.trim();
  if (types.has('null') && (t === 'null' || t === 'None')) return { value: null, repairs: [] };
  if (types.has('integer') || types.has('number')) {
    if (/^[+-]?\d+$/.test(t)) return { value: Number(t), repairs: [] };
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) {
      const n = Number(t);
      if (types.has('number')) return { value: n, repairs: [] };
      if (Number.isInteger(n)) return { value: n, repairs: ['parameter_type'] };
    }
  }
  if (types.has('boolean')) {
    if (/^true$/i.test(t)) return { value: true, repairs: t === 'true' ? [] : ['parameter_type'] };
    if (/^false$/i.test(t)) return { value: false, repairs: t === 'false' ? [] : ['parameter_type'] };
  }
  if (types.has('object') || types.has('array')) {
    const parsed = parseLenientJson(t, 'the value');
    if (parsed.ok) return { value: parsed.value, repairs: parsed.repairs };
    return { error: `not JSON (${parsed.error})` };
  }
  return { value: text, repairs: [] };
}

/** The prose around the calls, as written (only the ends trimmed). */
function tidyProse(parts: string[]): string {
  return parts.join('').trim();
}
