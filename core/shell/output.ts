/**
 * Terminal output for the model: plain text, bounded in size, never binary junk.
 *
 * Pure functions, no I/O: `stripTerminal` removes ANSI/VT escape sequences and
 * applies carriage-return and backspace overwrites the way a terminal would show
 * them; `capOutput` keeps the head and the tail with a marker naming what was
 * left out; `looksBinary` / `binarySummary` keep NUL bytes and invalid UTF-8
 * from reaching the model.
 */

// CSI: ESC [ (or 8-bit 0x9B) params, intermediates, final byte.
const CSI = '(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]';
// OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \ or 0x9C); an unterminated one runs to the end.
const STRING_SEQ =
  '(?:\\u001b[\\]PX^_]|[\\u0090\\u009d\\u0098\\u009e\\u009f])[\\s\\S]*?(?:\\u0007|\\u001b\\\\|\\u009c|$)';
// Charset selections and other ESC + intermediate + final forms: ESC ( B, ESC ) 0, ESC # 8, ESC % G ...
const ESC_INTERMEDIATE = '\\u001b[\\u0020-\\u002f]+[\\u0030-\\u007e]?';
// Two-character escapes (ESC 7, ESC =, ESC M, ESC c ...) and a lone ESC.
const ESC_SINGLE = '\\u001b[\\u0030-\\u007e]?';
const ESCAPES = new RegExp(`${STRING_SEQ}|${CSI}|${ESC_INTERMEDIATE}|${ESC_SINGLE}`, 'g');
// Control characters other than tab, newline, carriage return and backspace (handled by overwrite), plus DEL and C1.
const CONTROLS = /[\u0000-\u0007\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/** Remove escape sequences and control characters; apply \r and \b overwrites line by line. Idempotent. */
export function stripTerminal(text: string): string {
  const noEsc = text.replace(ESCAPES, '').replace(CONTROLS, '');
  if (!noEsc.includes('\r') && !noEsc.includes('\b')) return noEsc;
  return noEsc.replace(/\r+\n/g, '\n').split('\n').map(overwriteLine).join('\n');
}

/** What a terminal shows for one line written with carriage returns and backspaces. */
function overwriteLine(line: string): string {
  if (!line.includes('\r') && !line.includes('\b')) return line;
  const cells: string[] = [];
  let col = 0;
  for (const ch of line) {
    if (ch === '\r') col = 0;
    else if (ch === '\b') col = Math.max(0, col - 1);
    else {
      cells[col] = ch;
      col++;
    }
  }
  return Array.from(cells, (c) => c ?? ' ').join('');
}

export interface BinaryCheck {
  binary: boolean;
  nulBytes: number;
  invalidUtf8: number;
  bytes: number;
}

/**
 * Whether bytes look like binary junk rather than terminal text: NUL bytes or
 * many invalid UTF-8 sequences (or other stray control bytes). Samples at most
 * `sampleBytes` from the head and the tail.
 */
export function looksBinary(data: Uint8Array, sampleBytes = 64 * 1024): BinaryCheck {
  const parts =
    data.length <= 2 * sampleBytes ? [data] : [data.subarray(0, sampleBytes), data.subarray(data.length - sampleBytes)];
  let nul = 0;
  let invalid = 0;
  let stray = 0;
  let total = 0;
  for (const part of parts) {
    total += part.length;
    for (const b of part) {
      if (b === 0) nul++;
      else if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x08 && b !== 0x1b && b !== 0x07) stray++;
    }
    const decoded = new TextDecoder('utf-8', { fatal: false }).decode(part);
    for (const ch of decoded) if (ch === '\ufffd') invalid++;
  }
  const suspicious = nul + invalid + stray;
  const binary = total > 0 && (nul / total > 0.001 || suspicious / total > 0.1);
  return { binary, nulBytes: nul, invalidUtf8: invalid, bytes: data.length };
}

/** The one line the model sees instead of binary output. */
export function binarySummary(check: BinaryCheck, savedAt?: string): string {
  const why = [
    check.nulBytes ? `${check.nulBytes} NUL bytes` : '',
    check.invalidUtf8 ? `${check.invalidUtf8} invalid UTF-8 sequences` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return `[binary output: ${check.bytes} bytes not shown${why ? ` (${why} in the sampled part)` : ''}${savedAt ? `; full output saved at ${savedAt}` : ''}]`;
}

export interface CapOptions {
  /** Most UTF-8 bytes of kept text (head + tail), the marker not counted. Default 16 KiB. */
  maxBytes?: number;
  /** Most lines kept (head + tail). Default 400. */
  maxLines?: number;
  /** Share of the budget given to the head, 0..1. Default 0.5. */
  headFraction?: number;
}

export interface Capped {
  text: string;
  truncated: boolean;
  omittedLines: number;
  omittedBytes: number;
}

export const DEFAULT_CAP = { maxBytes: 16 * 1024, maxLines: 400, headFraction: 0.5 } as const;

const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The marker put between head and tail. */
export function omissionMarker(lines: number, bytes: number): string {
  return `\n… ${lines} line${lines === 1 ? '' : 's'} / ${bytes} byte${bytes === 1 ? '' : 's'} omitted …\n`;
}

/** Longest prefix of `s` of at most `budget` UTF-8 bytes, not splitting a surrogate pair. */
function headBytes(s: string, budget: number): string {
  if (utf8Length(s) <= budget) return s;
  let bytes = 0;
  let i = 0;
  for (const ch of s) {
    const n = utf8Length(ch);
    if (bytes + n > budget) break;
    bytes += n;
    i += ch.length;
  }
  return s.slice(0, i);
}

function tailBytes(s: string, budget: number): string {
  if (utf8Length(s) <= budget) return s;
  const chars = Array.from(s);
  let bytes = 0;
  let k = chars.length;
  while (k > 0) {
    const n = utf8Length(chars[k - 1]!);
    if (bytes + n > budget) break;
    bytes += n;
    k--;
  }
  return chars.slice(k).join('');
}

/**
 * Keep the head and the tail of `text` within `maxLines` lines and `maxBytes`
 * UTF-8 bytes, with a marker "… N lines / M bytes omitted …" between them.
 * The result is never longer than the budget plus the marker. Cuts at line
 * boundaries when whole lines fit, else inside a line.
 */
export function capOutput(text: string, options: CapOptions = {}): Capped {
  const maxBytes = Math.max(0, Math.floor(options.maxBytes ?? DEFAULT_CAP.maxBytes));
  const maxLines = Math.max(0, Math.floor(options.maxLines ?? DEFAULT_CAP.maxLines));
  const frac = Math.min(
    1,
    Math.max(0, Number.isFinite(options.headFraction) ? options.headFraction! : DEFAULT_CAP.headFraction),
  );
  const lines = text.split('\n');
  const totalBytes = utf8Length(text);
  if (lines.length <= maxLines && totalBytes <= maxBytes)
    return { text, truncated: false, omittedLines: 0, omittedBytes: 0 };

  const headLineBudget = Math.floor(maxLines * frac);
  const tailLineBudget = maxLines - headLineBudget;
  const headByteBudget = Math.floor(maxBytes * frac);
  const tailByteBudget = maxBytes - headByteBudget;

  // Head: whole lines while they fit, then a partial line if no whole line fit.
  let head = '';
  let headLines = 0;
  for (const line of lines) {
    if (headLines >= headLineBudget) break;
    const piece = headLines === 0 ? line : `\n${line}`;
    if (utf8Length(head) + utf8Length(piece) > headByteBudget) {
      if (headLines === 0) head = headBytes(line, headByteBudget);
      break;
    }
    head += piece;
    headLines++;
  }
  // Tail: the same from the end, never overlapping the head.
  let tail = '';
  let tailLines = 0;
  const available = lines.length - headLines;
  for (let k = lines.length - 1; k >= lines.length - available; k--) {
    if (tailLines >= tailLineBudget) break;
    const line = lines[k]!;
    const piece = tailLines === 0 ? line : `${line}\n`;
    if (utf8Length(tail) + utf8Length(piece) > tailByteBudget) {
      if (tailLines === 0) tail = tailBytes(line, tailByteBudget);
      break;
    }
    tail = piece + tail;
    tailLines++;
  }
  const keptBytes = utf8Length(head) + utf8Length(tail);
  const omittedBytes = Math.max(0, totalBytes - keptBytes);
  const omittedLines = Math.max(0, lines.length - headLines - tailLines);
  return {
    text: head + omissionMarker(omittedLines, omittedBytes) + tail,
    truncated: true,
    omittedLines,
    omittedBytes,
  };
}

export interface ModelTextOptions extends CapOptions {
  /** Where the full output is saved, named in the binary summary. */
  savedAt?: string;
}

/** Raw terminal bytes to what the model sees: binary summarized, else stripped and capped. */
export function toModelText(raw: Uint8Array | string, options: ModelTextOptions = {}): Capped & { binary: boolean } {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  const check = looksBinary(bytes);
  if (check.binary) {
    return {
      text: binarySummary(check, options.savedAt),
      truncated: true,
      omittedLines: 0,
      omittedBytes: bytes.length,
      binary: true,
    };
  }
  const text = stripTerminal(typeof raw === 'string' ? raw : new TextDecoder('utf-8').decode(raw));
  return { ...capOutput(text, options), binary: false };
}
