import { scanJson } from '../../json/scan';
import { tooDeep } from '../../json/depth';
import type { RepairId } from './repairs';

/**
 * JSON as models really write it inside tool calls: strict JSON first, and
 * only when that fails, the few slips models make that have exactly one
 * reading — a code fence around the object, a comma before a closing
 * bracket, closers left off at the end or one too many, Python's
 * True/False/None. Every slip repaired is named, so the step can record it
 * (a reward may then see a sloppy call). Anything else stays an error with
 * the parser's message, which the model reads on its next turn.
 */
export type LenientJson = { ok: true; value: unknown; repairs: RepairId[] } | { ok: false; error: string };

const FENCE = /^```[A-Za-z0-9_-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?[ \t]*```$/;

export function parseLenientJson(input: string, what = 'the arguments'): LenientJson {
  const deep = tooDeep(input, what);
  if (deep) return { ok: false, error: deep };
  const strict = tryParse(input);
  if (strict.ok) return { ok: true, value: strict.value, repairs: [] };
  const repairs: RepairId[] = [];
  let text = input.trim();
  const fenced = FENCE.exec(text);
  if (fenced) {
    text = fenced[1]!.trim();
    repairs.push('code_fence');
  }
  const attempt = (): LenientJson | undefined => {
    const r = tryParse(text);
    return r.ok ? { ok: true, value: r.value, repairs: [...repairs] } : undefined;
  };
  let done = attempt();
  if (done) return done;

  const scanned = scan(text);
  if (scanned.trailingCommas.length) {
    text = removeAt(text, scanned.trailingCommas);
    repairs.push('trailing_comma');
    if ((done = attempt())) return done;
  }
  const python = pythonLiterals(text);
  if (python !== text) {
    text = python;
    repairs.push('python_literal');
    if ((done = attempt())) return done;
  }
  const balance = scan(text);
  if (!balance.inString && balance.open.length > 0 && balance.extraCloseAt < 0) {
    text =
      text +
      balance.open
        .reverse()
        .map((c) => (c === '{' ? '}' : ']'))
        .join('');
    repairs.push('unclosed_json');
    if ((done = attempt())) return done;
  } else if (
    balance.extraCloseAt >= 0 &&
    balance.open.length === 0 &&
    /^[\s}\]]*$/.test(text.slice(balance.extraCloseAt))
  ) {
    // `{"a": 1}}`: the value ended where the brackets balanced; the rest is only closers.
    text = text.slice(0, balance.extraCloseAt);
    repairs.push('extra_closer');
    if ((done = attempt())) return done;
  }
  return { ok: false, error: `${strict.error} in ${preview(input)}` };
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

export function preview(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

interface Scan {
  /** Offsets of commas followed (past whitespace) by `}` or `]`, outside strings. */
  trailingCommas: number[];
  /** Brackets still open at the end, in order. */
  open: string[];
  /** Offset of the first closer with nothing open, or -1. */
  extraCloseAt: number;
  /** The text ended inside a string. */
  inString: boolean;
}

function scan(text: string): Scan {
  const out: Scan = { trailingCommas: [], open: [], extraCloseAt: -1, inString: false };
  let lastComma = -1;
  out.inString = scanJson(text, 0, (_, i) => {
    const c = text[i]!;
    if (c === '"') lastComma = -1;
    else if (c === ',') lastComma = i;
    else if (c === '}' || c === ']') {
      if (lastComma >= 0) out.trailingCommas.push(lastComma);
      lastComma = -1;
      const want = c === '}' ? '{' : '[';
      if (out.open.length && out.open[out.open.length - 1] === want) out.open.pop();
      else if (out.open.length === 0 && out.extraCloseAt < 0) out.extraCloseAt = i;
    } else if (c === '{' || c === '[') {
      out.open.push(c);
      lastComma = -1;
    } else if (!/\s/.test(c)) lastComma = -1;
  }).inString;
  return out;
}

function removeAt(text: string, offsets: number[]): string {
  const skip = new Set(offsets);
  let out = '';
  for (let i = 0; i < text.length; i++) if (!skip.has(i)) out += text[i];
  return out;
}

/** True/False/None outside strings, where JSON has true/false/null. */
function pythonLiterals(text: string): string {
  let out = '';
  let copied = 0;
  scanJson(text, 0, (code, i) => {
    // Only a T, F or N can start one of the words.
    if (code !== 0x54 && code !== 0x46 && code !== 0x4e) return;
    const word = /^(True|False|None)(?![A-Za-z0-9_])/.exec(text.slice(i, i + 6));
    if (word && !/[A-Za-z0-9_]/.test(text[i - 1] ?? '')) {
      out += text.slice(copied, i) + (word[1] === 'True' ? 'true' : word[1] === 'False' ? 'false' : 'null');
      copied = i + word[1]!.length;
    }
  });
  return out + text.slice(copied);
}

/**
 * Where the JSON value starting at `pos` (a `{` or `[`) ends: just past the
 * bracket that balances it, string-aware. When it never balances, reading
 * stops at the end of the text, or where `stop` says (outside a string: the
 * tag after a call), and `balanced` is false (the repair layer then adds the
 * closers).
 */
export function balancedEnd(s: string, pos: number, stop?: (i: number) => boolean): { end: number; balanced: boolean } {
  let depth = 0;
  let balanced = false;
  const { stoppedAt } = scanJson(s, pos, (c, i) => {
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) return (balanced = --depth <= 0);
    else return c !== 0x22 && stop?.(i) === true;
  });
  if (stoppedAt < 0) return { end: s.length, balanced: false };
  return { end: balanced ? stoppedAt + 1 : stoppedAt, balanced };
}
