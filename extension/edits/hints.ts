/**
 * Hints in the source files the agent edited: which lines a step changed, how
 * hints move or vanish when the user edits, and their labels. Pure functions,
 * no `vscode` (tested under `node --test`); edited-files.ts applies them.
 */
import { code, escapeMarkdown, type Reward } from '../trajectory/decorations';
import { formatReward } from '../../core/protocol/display';

/** 0-based lines, both ends included. */
export interface LineRange {
  start: number;
  end: number;
}

/** What a trajectory line says the tool did (a tool_call event, loosely typed). */
export interface StepEventLike {
  tool: string;
  args?: unknown;
  status?: string;
}

export type ChangedLines =
  /** The step's text is in the file at exactly these lines. */
  | { kind: 'lines'; ranges: LineRange[] }
  /** The step changed the file, but which lines cannot be told; `reason` says why. */
  | { kind: 'unknown'; reason: string }
  /** The step did not change the file (it did not run). */
  | { kind: 'none' };

const lf = (s: string): string => s.replace(/\r\n?/g, '\n');

function lineOf(text: string, offset: number): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function occurrences(text: string, needle: string, limit: number): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1 && found.length < limit; i = text.indexOf(needle, i + 1)) found.push(i);
  return found;
}

function stringArg(args: unknown, key: string): string | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const v = (args as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : undefined;
}

/** Lines with text in them, for a whole written file (a final line break opens no new line). */
function wholeFile(text: string): ChangedLines {
  if (text.length === 0) return { kind: 'unknown', reason: 'the file is empty now' };
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  return { kind: 'lines', ranges: [{ start: 0, end: lines - 1 }] };
}

/**
 * The lines of `fileText` (the file as it is now) that a step changed:
 * - `edit_file`: where its `replace` text is, if it is there exactly once
 *   (line breaks at its edges mark no line of their own);
 * - `write_file`: the whole file;
 * - anything else that changed the file (a command): unknown lines.
 * Line endings are compared as `\n`, so a CRLF file matches a LF replacement.
 */
export function changedLineRanges(event: StepEventLike, fileText: string): ChangedLines {
  const ran = event.status === undefined || event.status === 'ok';
  const text = lf(fileText);
  if (event.tool === 'write_file') return ran ? wholeFile(text) : { kind: 'none' };
  if (event.tool !== 'edit_file') {
    return { kind: 'unknown', reason: `${event.tool} changed the file; which lines is not recorded` };
  }
  if (!ran) return { kind: 'none' };
  const replace = stringArg(event.args, 'replace');
  if (replace === undefined) return { kind: 'unknown', reason: 'the edit has no replacement text' };
  const needle = lf(replace);
  const lead = needle.length - needle.replace(/^\n+/, '').length;
  const core = needle.slice(lead).replace(/\n+$/, '');
  if (core.length === 0) return { kind: 'unknown', reason: 'the edit removed text; no line is left to mark' };
  const at = occurrences(text, needle, 2);
  if (at.length === 0)
    return { kind: 'unknown', reason: 'the replacement text is no longer in the file (it changed since)' };
  if (at.length > 1) return { kind: 'unknown', reason: 'the replacement text occurs more than once in the file' };
  const start = lineOf(text, at[0]! + lead);
  const end = start + (core.split('\n').length - 1);
  return { kind: 'lines', ranges: [{ start, end }] };
}

/** One step that changed a file, as known from the trajectory. */
export interface StepRef {
  /** The trajectory's URI. */
  trajectory: string;
  /** 0-based line of the step in the trajectory. */
  trajectoryLine: number;
  step: number;
  tool: string;
  reward?: Reward;
  event: StepEventLike;
}

/** A hint on one line of an edited file. */
export interface EditHint {
  /** 0-based line in the edited file. */
  line: number;
  ref: Omit<StepRef, 'event'>;
  /** false: the step changed the file but not known where; shown on the first line. */
  precise: boolean;
  note?: string;
}

/** Lays one step's changes over the hints so far: its lines now name it. */
export function applyStep(hints: readonly EditHint[], ref: StepRef, changed: ChangedLines): EditHint[] {
  if (changed.kind === 'none') return [...hints];
  const { event: _event, ...bare } = ref;
  const fresh: EditHint[] = [];
  if (changed.kind === 'unknown') fresh.push({ line: 0, ref: bare, precise: false, note: changed.reason });
  else
    for (const r of changed.ranges)
      for (let line = r.start; line <= r.end; line++) fresh.push({ line, ref: bare, precise: true });
  const taken = new Set(fresh.map((h) => h.line));
  return [...hints.filter((h) => !taken.has(h.line)), ...fresh].sort((a, b) => a.line - b.line);
}

/** The hints of one file, from every step that changed it (in order: later steps win), against its text now. */
export function hintsForFile(steps: readonly StepRef[], fileText: string): EditHint[] {
  return steps.reduce<EditHint[]>((hints, ref) => applyStep(hints, ref, changedLineRanges(ref.event, fileText)), []);
}

/** A document change as VS Code reports it (TextDocumentContentChangeEvent). */
export interface ContentChange {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  text: string;
}

/**
 * Hints after the user changed the document: lines above the change stay,
 * lines below move by the lines added or removed, and the lines the change
 * touched lose their hint, except a line moved whole (a line break typed at
 * its start, or the lines before it deleted up to its first column), and a
 * line the user only pressed Enter at the end of (when `lineLengthAfter`, the
 * length of a line in the changed document, is given to tell so).
 */
export function shiftHints<T extends { line: number }>(
  hints: readonly T[],
  change: ContentChange,
  lineLengthAfter?: (line: number) => number,
): T[] {
  const { start, end } = change.range;
  const text = lf(change.text);
  const added = text.split('\n').length - 1;
  const delta = added - (end.line - start.line);
  // The old line `end.line` stays intact (moved to `start.line + added`) when the change ends at its first column
  // and whatever comes before it ends in a line break (or is nothing at a line start).
  const endLineIntact = end.character === 0 && (text.endsWith('\n') || (text === '' && start.character === 0));
  // The old line `start.line` stays intact when a line break was typed at its end: the change is an insertion that
  // starts with a line break, and what followed the cursor (nothing) is all that trails the inserted text.
  const lastSegment = text.slice(text.lastIndexOf('\n') + 1);
  const startLineIntact =
    lineLengthAfter !== undefined &&
    start.line === end.line &&
    start.character === end.character &&
    text.startsWith('\n') &&
    lineLengthAfter(start.line + added) === lastSegment.length;
  const out: T[] = [];
  for (const h of hints) {
    if (h.line < start.line) out.push(h);
    else if (h.line > end.line) out.push({ ...h, line: h.line + delta });
    else if (h.line === end.line && endLineIntact) out.push({ ...h, line: start.line + added });
    else if (h.line === start.line && startLineIntact) out.push(h);
  }
  return out;
}

/** The first line of each run of consecutive lines changed by the same step: where the inline label goes. */
export function labelLines(hints: readonly EditHint[]): Set<number> {
  const sorted = [...hints].sort((a, b) => a.line - b.line);
  const out = new Set<number>();
  let prev: EditHint | undefined;
  for (const h of sorted) {
    const same =
      prev && prev.line === h.line - 1 && prev.ref.trajectory === h.ref.trajectory && prev.ref.step === h.ref.step;
    if (!same) out.add(h.line);
    prev = h;
  }
  return out;
}

/** The inline label after a hunk's first line: `step 6 · edit_file · +1`. */
export function hintLabel(h: EditHint): string {
  const reward = h.ref.reward === undefined ? '' : ` · ${formatReward(h.ref.reward)}`;
  return `step ${h.ref.step} · ${h.ref.tool}${reward}${h.precise ? '' : ' · lines unknown'}`;
}

/**
 * Hover Markdown for a hint. `link` is where "open the trajectory line" goes
 * (a `command:` URI); `trajectoryName` the trajectory's file name.
 */
export function hintHover(h: EditHint, trajectoryName: string, link: string): string {
  const reward = h.ref.reward === undefined ? 'not scored yet' : `tool reward **${formatReward(h.ref.reward)}**`;
  const parts = [`**Changed by the agent**: step ${h.ref.step} (${code(h.ref.tool)}), ${reward}`];
  if (!h.precise && h.note) parts.push(`Which lines is unknown: ${escapeMarkdown(h.note)}.`);
  parts.push(`[Open ${escapeMarkdown(trajectoryName)} at line ${h.ref.trajectoryLine + 1}](${link})`);
  parts.push('_The hint goes away on the lines you edit._');
  return parts.join('  \n');
}
