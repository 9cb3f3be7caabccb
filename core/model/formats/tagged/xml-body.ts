/**
 * The XML body of a call, `<function=NAME><parameter=KEY>VALUE</parameter></function>` (the Qwen3-Coder
 * family's): where each value ends, which takes the most care, and the values typed by the tool's schema.
 */
import { skipSpace } from '../calls';
import { uniqueRepairs, type RepairId } from '../repairs';
import { schemaOf, typedValue } from '../typed-values';
import type { TextCall, TextFormatId, ToolSpec } from '../types';
import { CALL_CLOSE, CALL_OPEN, FN_CLOSE, FN_OPEN, nextOf, PARAM_CLOSE, PARAM_OPEN, type Find } from './scan';

/** One `<function=NAME>…</function>` from `pos`; returns the call and where it ended. */
export function readFunction(
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
