/**
 * The runs recorded in a workspace (`.lar/runs/*.lar.jsonl`), newest first,
 * each with its task and how it went, for the chat's history list. A run
 * whose file has no `end` line stopped without saying so (the editor was
 * closed or crashed mid-run): it is listed as `unfinished`, never as passed.
 */
import { appendFile, open, readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileResolver } from '../workflow/resolve';
import { verifyTrajectoryText } from '../verifier/verify';
import { EndEvent, RUN_FILE } from '../schema/trajectory';
import { RUNS_DIR } from '../workspace/lar-layout';

/** How a run ended; `unfinished`: no end line (the editor stopped mid-run). */
export type RunStatus = EndEvent['reason'] | 'unfinished';
const RUN_STATUSES: readonly RunStatus[] = [...EndEvent.shape.reason.options, 'unfinished'];

export interface RunEntry {
  /** File name inside the runs folder. */
  file: string;
  task: string;
  /** ISO time the run started (the header's), else the file's modification time. */
  started: string;
  model?: string;
  status: RunStatus;
  steps: number;
  /** Absent when the file was too large to verify for a list, or could not be verified. */
  return?: number;
  outcome?: number;
  /** Why the figures are missing, when they are. */
  note?: string;
}

/** Files above this size are listed without verifying them. */
export const MAX_VERIFY_BYTES = 8 * 1024 * 1024;

export interface ListRunsOptions {
  /** The newest this many files. Default 30. */
  limit?: number;
  /** Files above this size are listed without verifying them. Default 8 MB. */
  maxVerifyBytes?: number;
}

/** A run file found in the runs folder, with its size and time. */
export interface RunFile {
  name: string;
  path: string;
  mtimeMs: number;
  size: number;
}

/** The run files of a workspace with their size and time; none when there is no runs folder. */
export async function runFiles(workspace: string): Promise<RunFile[]> {
  const dir = join(workspace, RUNS_DIR);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => RUN_FILE.test(n));
  } catch {
    return [];
  }
  const files: RunFile[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const s = await stat(path);
      if (s.isFile()) files.push({ name, path, mtimeMs: s.mtimeMs, size: s.size });
    } catch {
      // Deleted between the listing and the stat: not a run any more.
    }
  }
  return files;
}

export async function listRuns(workspace: string, opts: ListRunsOptions = {}): Promise<RunEntry[]> {
  const files = newestFirst(await runFiles(workspace));
  const out: RunEntry[] = [];
  for (const f of files.slice(0, opts.limit ?? 30))
    out.push(await describeRun(f, opts.maxVerifyBytes ?? MAX_VERIFY_BYTES));
  return out;
}

/** Newest modification first; the same time ordered by name, newest name first (run ids sort by time). */
export function newestFirst(files: RunFile[]): RunFile[] {
  return files.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
}

/** One run file as the history lists it (its status, steps and figures), read from disk now. */
export async function describeRunFile(path: string, maxVerifyBytes = MAX_VERIFY_BYTES): Promise<RunEntry> {
  const s = await stat(path);
  return describeRun({ name: basename(path), path, mtimeMs: s.mtimeMs, size: s.size }, maxVerifyBytes);
}

/** What a run's first and last lines say: its task, start, model, the chat it belongs to, and how it ended. */
export interface RunHead {
  file: string;
  task: string;
  /** ISO time the run started (the header's), else the file's modification time. */
  started: string;
  model?: string;
  status: RunStatus;
  /** The header's `thread`, when it has a valid one. */
  thread?: { id: string; turn?: number; previous?: string };
  /** Why the header could not be read, when it could not. */
  note?: string;
}

/** The head of a run, from its first line (up to 8 MB) and the last 64 KB of its file (any size): never throws. */
export async function readRunHead(f: RunFile): Promise<RunHead> {
  const head: RunHead = { file: f.name, task: '', started: new Date(f.mtimeMs).toISOString(), status: 'unfinished' };
  let first: string;
  try {
    first = await readFirstLine(f.path, f.size);
  } catch (e) {
    return { ...head, note: `not readable: ${e instanceof Error ? e.message : String(e)}` };
  }
  const header = parseObject(first.slice(0, first.indexOf('\n') < 0 ? first.length : first.indexOf('\n')));
  if (header?.type === 'header') {
    if (typeof header.task === 'string') head.task = header.task;
    if (typeof header.started === 'string') head.started = header.started;
    const model = header.model as { name?: unknown } | undefined;
    if (model && typeof model.name === 'string') head.model = model.name;
    const thread = header.thread as { id?: unknown; turn?: unknown; previous?: unknown } | undefined;
    if (thread && typeof thread.id === 'string' && thread.id)
      head.thread = {
        id: thread.id,
        ...(typeof thread.turn === 'number' ? { turn: thread.turn } : {}),
        ...(typeof thread.previous === 'string' ? { previous: thread.previous } : {}),
      };
  }
  // How it ended is on its last line.
  const tail =
    f.size > first.length ? await readSlice(f.path, Math.max(0, f.size - 64 * 1024), f.size).catch(() => '') : first;
  const last = parseObject(lastLine(tail));
  if (
    last?.type === 'end' &&
    typeof last.reason === 'string' &&
    (RUN_STATUSES as readonly string[]).includes(last.reason)
  )
    head.status = last.reason as RunStatus;
  return head;
}

/** A run's head and, when it is small enough to verify for a list, its figures. */
export async function describeRun(f: RunFile, maxVerifyBytes: number): Promise<RunEntry> {
  const head = await readRunHead(f);
  const entry: RunEntry = {
    file: head.file,
    task: head.task,
    started: head.started,
    status: head.status,
    steps: 0,
    ...(head.model ? { model: head.model } : {}),
  };
  if (head.note) return { ...entry, note: head.note };
  if (f.size > maxVerifyBytes) return { ...entry, note: `${Math.round(f.size / 1e6)} MB: open it to verify` };
  let text: string;
  try {
    text = await readFile(f.path, 'utf8');
  } catch (e) {
    return { ...entry, note: `not readable: ${e instanceof Error ? e.message : String(e)}` };
  }
  const report = verifyTrajectoryText(text, { resolve: fileResolver(f.path) });
  if (!report.summary) return { ...entry, note: report.fatal ?? 'not verifiable' };
  return {
    ...entry,
    steps: report.summary.steps,
    return: report.summary.return,
    outcome: report.summary.outcome.reward,
  };
}

/**
 * A file's first line, read 64 KB at a time up to `max` bytes: a header is one line whatever its size (a long
 * message, its attachments), and one cut short would read as no header at all.
 */
async function readFirstLine(path: string, size: number, max = 8 * 1024 * 1024): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const chunks: Buffer[] = [];
    for (let at = 0; at < Math.min(size, max);) {
      const buf = Buffer.alloc(Math.min(64 * 1024, size - at));
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      if (bytesRead === 0) break;
      const nl = buf.subarray(0, bytesRead).indexOf(10);
      chunks.push(buf.subarray(0, nl < 0 ? bytesRead : nl + 1));
      if (nl >= 0) break;
      at += bytesRead;
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** At most 64 KB of a file from `position` (the start of a run for its header, the end for its last line). */
async function readSlice(path: string, position: number, size: number): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(64 * 1024, Math.max(0, size - position)));
    const { bytesRead } = await fh.read(buf, 0, buf.length, position);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

function lastLine(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed.slice(trimmed.lastIndexOf('\n') + 1);
}

function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Ends the files of runs that stopped without saying so (the editor crashed
 * or was killed mid-run) with an `end` line marked interrupted, so they read
 * as what they are. Only runs that started longer ago than `olderThanMs` (the
 * longest a run may last, plus a margin) are touched: a younger one may still
 * be running in another window. Returns the files it marked.
 */
export async function markInterruptedRuns(workspace: string, olderThanMs: number, now = Date.now()): Promise<string[]> {
  const marked: string[] = [];
  for (const f of await runFiles(workspace)) {
    try {
      if (f.size === 0) continue;
      const text = await readSlice(f.path, Math.max(0, f.size - 64 * 1024), f.size);
      if (parseObject(lastLine(text))?.type === 'end') continue;
      const header = parseObject((await readFirstLine(f.path, f.size)).trimEnd());
      const started = typeof header?.started === 'string' ? Date.parse(header.started) : f.mtimeMs;
      // Both old and quiet: a run that outlived its limit (a long approval wait, a slow command) still writes.
      if (!(now - (Number.isFinite(started) ? started : f.mtimeMs) > olderThanMs) || !(now - f.mtimeMs > olderThanMs))
        continue;
      const end = {
        type: 'end',
        reason: 'interrupted',
        detail: 'the editor stopped during the run (found unfinished when it started again)',
        at: new Date(now).toISOString(),
      };
      // A file cut inside a line keeps its broken line; the end goes on a line of its own.
      await appendFile(f.path, `${text.endsWith('\n') ? '' : '\n'}${JSON.stringify(end)}\n`);
      marked.push(f.name);
    } catch {
      // Unreadable or gone: left as it is, the history says so.
    }
  }
  return marked;
}
