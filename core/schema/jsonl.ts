import type { z } from 'zod';
import { MAX_JSON_DEPTH, tooDeep } from '../json/depth';
import { Header, TrajectoryEvent } from './trajectory';
import { fastEvent } from './fast-event';
import { findJsonSyntaxError, locateJsonValue, type JsonPath } from '../json/position';

/** Where a line went wrong: 1-based line and columns, and what was expected. */
export interface LineError {
  line: number;
  column: number;
  endColumn: number;
  message: string;
  path?: JsonPath;
}

export type ParsedLine =
  | { kind: 'blank'; line: number }
  | { kind: 'header'; line: number; text: string; header: Header }
  | { kind: 'event'; line: number; text: string; event: TrajectoryEvent }
  | { kind: 'malformed'; line: number; text: string; error: LineError };

export function formatLineError(e: LineError, file?: string): string {
  return `${file ? `${file}:` : ''}${e.line}:${e.column}: ${e.message}`;
}

/** Splits text into lines the way editors count them (\n, \r\n). */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.endsWith('\r')) lines[i] = l.slice(0, -1);
  }
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The event types, from the schema itself (a new event type cannot be forgotten here). */
const EVENT_TYPES: readonly string[] = TrajectoryEvent.options.map((o) => o.shape.type.value);

/**
 * Parses one line. `first` says whether this is the first non-blank line, the
 * only place a header may stand. Never throws: a bad line is returned as
 * `malformed` with its position.
 */
export function parseLine(text: string, line: number, first: boolean): ParsedLine {
  if (text.trim() === '') return { kind: 'blank', line };
  if (first && text.charCodeAt(0) === 0xfeff) {
    // A byte order mark (the file was saved as "UTF-8 with BOM") must not cost the header.
    // Columns are counted without it, as editors show the line.
    const p = parseLine(text.slice(1), line, first);
    return p.kind === 'blank' ? p : { ...p, text };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const err = findJsonSyntaxError(text) ?? { offset: 0, message: 'not valid JSON' };
    return malformed(text, line, err.offset, err.offset + 1, `invalid JSON: ${err.message}`);
  }
  const deep = tooDeep(text, 'the line');
  if (deep) return malformed(text, line, 0, text.length, deep);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return malformed(text, line, 0, text.length, 'expected a JSON object on each line');
  }
  const type = (value as { type?: unknown }).type;
  if (first) {
    if (type !== 'header') {
      return malformed(
        text,
        line,
        ...spanOf(text, ['type']),
        'expected the header on the first line: {"lar": 1, "type": "header", "task": …, "workflow": …, "started": …}',
      );
    }
    const r = Header.safeParse(value);
    return r.success ? { kind: 'header', line, text, header: r.data } : fromZod(text, line, r.error, 'header');
  }
  if (type === 'header') {
    return malformed(
      text,
      line,
      ...spanOf(text, ['type']),
      'a header is only allowed on the first line of a trajectory',
    );
  }
  if (typeof type !== 'string' || !EVENT_TYPES.includes(type)) {
    return malformed(
      text,
      line,
      ...spanOf(text, ['type']),
      `"type": expected one of ${EVENT_TYPES.map((t) => `"${t}"`).join(', ')}`,
    );
  }
  const r = TrajectoryEvent.safeParse(value);
  return r.success ? { kind: 'event', line, text, event: r.data } : fromZod(text, line, r.error, `${type} event`);
}

/**
 * At most MAX_JSON_DEPTH `{` and `[` in the whole line, strings included: then it cannot nest deeper,
 * and the exact scan (a loop over every character, as long as JSON.parse itself) is not needed.
 */
function surelyShallow(text: string): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i >= 0 && n <= MAX_JSON_DEPTH; i = text.indexOf('{', i + 1)) n++;
  for (let i = text.indexOf('['); i >= 0 && n <= MAX_JSON_DEPTH; i = text.indexOf('[', i + 1)) n++;
  return n <= MAX_JSON_DEPTH;
}

/**
 * An event line, not the first: the event when the line is a common well-formed one (tool call,
 * message, outcome), checked by hand; anything else, blank, malformed or unusual, as parseLine
 * says it, so the answer and every message are parseLine's (test/core/schema/fast-event.test.ts).
 */
export function parseEventLine(text: string, line: number): TrajectoryEvent | ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return parseLine(text, line, false);
  }
  const event = surelyShallow(text) ? fastEvent(value) : undefined;
  return event ?? parseLine(text, line, false);
}

function spanOf(text: string, path: JsonPath): [number, number] {
  const s = locateJsonValue(text, path) ?? { start: 0, end: text.length };
  return [s.start, s.end];
}

function malformed(
  text: string,
  line: number,
  start: number,
  end: number,
  message: string,
  path?: JsonPath,
): ParsedLine {
  const error: LineError = { line, column: start + 1, endColumn: Math.max(end, start + 1) + 1, message };
  if (path) error.path = path;
  return { kind: 'malformed', line, text, error };
}

function fromZod(text: string, line: number, error: z.ZodError, what: string): ParsedLine {
  const issue = error.issues[0]!;
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const where = path.length ? `"${path.join('.')}": ` : '';
  const more =
    error.issues.length > 1
      ? ` (and ${error.issues.length - 1} more problem${error.issues.length > 2 ? 's' : ''})`
      : '';
  return malformed(text, line, ...spanOf(text, path), `bad ${what}: ${where}${issue.message}${more}`, path);
}

export interface ParsedTrajectory {
  header?: Header;
  headerLine?: number;
  lines: ParsedLine[];
}

/** Parses a whole trajectory; every line is parsed whatever happened before it. */
export function parseTrajectory(text: string): ParsedTrajectory {
  const out: ParsedTrajectory = { lines: [] };
  let first = true;
  splitLines(text).forEach((t, i) => {
    const p = parseLine(t, i + 1, first);
    if (p.kind !== 'blank') first = false;
    if (p.kind === 'header') {
      out.header = p.header;
      out.headerLine = p.line;
    }
    out.lines.push(p);
  });
  return out;
}

/** Reads bytes into `buf` from `at` on; returns how many (0 at the end). */
export type ByteSource = (buf: Buffer, at: number) => number;

/**
 * The lines of text read in chunks, cut and numbered as splitLines cuts the whole text: each read's
 * whole lines are decoded together (a newline byte is never part of a UTF-8 sequence, so a
 * character split between two reads is decoded whole, and bad bytes as the whole text decodes
 * them), one line at a time is yielded, and only a line longer than a chunk grows the buffer.
 */
export function* linesOfBytes(read: ByteSource, chunkBytes = 1 << 16): Generator<string, void, undefined> {
  let buf = Buffer.allocUnsafe(chunkBytes);
  let have = 0;
  let any = false;
  for (;;) {
    if (have === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, have);
      buf = bigger;
    }
    const n = read(buf, have);
    if (n === 0) break;
    const end = have + n;
    const nl = buf.lastIndexOf(0x0a, end - 1);
    if (nl < have) {
      have = end;
      continue;
    }
    const text = buf.toString('utf8', 0, nl);
    any = true;
    for (let start = 0; ;) {
      const e = text.indexOf('\n', start);
      const l = e < 0 ? text.slice(start) : text.slice(start, e);
      yield l.charCodeAt(l.length - 1) === 0x0d ? l.slice(0, -1) : l;
      if (e < 0) break;
      start = e + 1;
    }
    buf.copy(buf, 0, nl + 1, end);
    have = end - nl - 1;
  }
  if (have > 0) {
    const l = buf.toString('utf8', 0, have);
    const last = l.charCodeAt(l.length - 1) === 0x0d ? l.slice(0, -1) : l;
    // As splitLines drops a last line left empty (a text ending "\n\r" ends on its newline).
    if (last !== '' || !any) yield last;
  }
}
