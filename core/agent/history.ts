/**
 * The runs recorded in a workspace (`.lar/runs/*.lar.jsonl`), newest first,
 * each with its task and how it went, for the chat's history list. A run
 * whose file has no `end` line stopped without saying so (the editor was
 * closed or crashed mid-run): it is listed as `unfinished`, never as passed.
 */
import { appendFile, open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileResolver } from '../workflow/files';
import { verifyTrajectoryText } from '../verifier/verify';
import type { EndEvent } from '../schema/trajectory';
import { RUN_FILE } from './run-file';

export const RUNS_DIR = join('.lar', 'runs');


/** How a run ended; `unfinished`: no end line (the editor stopped mid-run). */
export type RunStatus = EndEvent['reason'] | 'unfinished';

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

export interface ListRunsOptions {
  /** The newest this many files. Default 30. */
  limit?: number;
  /** Files above this size are listed without verifying them. Default 8 MB. */
  maxVerifyBytes?: number;
}

export async function listRuns(workspace: string, opts: ListRunsOptions = {}): Promise<RunEntry[]> {
  const dir = join(workspace, RUNS_DIR);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => RUN_FILE.test(n));
  } catch {
    return [];
  }
  const dated: { name: string; mtime: number; size: number }[] = [];
  for (const name of names) {
    try {
      const s = await stat(join(dir, name));
      if (s.isFile()) dated.push({ name, mtime: s.mtimeMs, size: s.size });
    } catch {
      // Deleted between the listing and the stat: not a run any more.
    }
  }
  dated.sort((a, b) => b.mtime - a.mtime || (a.name < b.name ? 1 : -1));
  const out: RunEntry[] = [];
  for (const f of dated.slice(0, opts.limit ?? 30)) {
    out.push(await describeRun(join(dir, f.name), f.name, f.size, new Date(f.mtime).toISOString(), opts.maxVerifyBytes ?? 8 * 1024 * 1024));
  }
  return out;
}

async function describeRun(path: string, name: string, size: number, mtime: string, maxVerifyBytes: number): Promise<RunEntry> {
  const entry: RunEntry = { file: name, task: '', started: mtime, status: 'unfinished', steps: 0 };
  let text: string;
  try {
    text = size > maxVerifyBytes ? await readHead(path) : await readFile(path, 'utf8');
  } catch (e) {
    return { ...entry, note: `not readable: ${e instanceof Error ? e.message : String(e)}` };
  }
  const firstLine = text.slice(0, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n'));
  const header = parseObject(firstLine);
  if (header?.type === 'header') {
    if (typeof header.task === 'string') entry.task = header.task;
    if (typeof header.started === 'string') entry.started = header.started;
    const model = header.model as { name?: unknown } | undefined;
    if (model && typeof model.name === 'string') entry.model = model.name;
  }
  if (size > maxVerifyBytes) return { ...entry, note: `${Math.round(size / 1e6)} MB: open it to verify` };
  const last = parseObject(lastLine(text));
  if (last?.type === 'end' && typeof last.reason === 'string') entry.status = last.reason as RunStatus;
  const report = verifyTrajectoryText(text, { resolve: fileResolver(path) });
  if (!report.summary) return { ...entry, note: report.fatal ?? 'not verifiable' };
  return { ...entry, steps: report.summary.steps, return: report.summary.return, outcome: report.summary.outcome.reward };
}

async function readHead(path: string): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
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
  const dir = join(workspace, RUNS_DIR);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => RUN_FILE.test(n));
  } catch {
    return [];
  }
  const marked: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const s = await stat(path);
      if (!s.isFile() || s.size === 0) continue;
      const text = await readTail(path, s.size);
      if (parseObject(lastLine(text))?.type === 'end') continue;
      const header = parseObject((await readHead(path)).split('\n')[0] ?? '');
      const started = typeof header?.started === 'string' ? Date.parse(header.started) : s.mtimeMs;
      // Both old and quiet: a run that outlived its limit (a long approval wait, a slow command) still writes.
      if (!(now - (Number.isFinite(started) ? started : s.mtimeMs) > olderThanMs) || !(now - s.mtimeMs > olderThanMs)) continue;
      const end = { type: 'end', reason: 'interrupted', detail: 'the editor stopped during the run (found unfinished when it started again)', at: new Date(now).toISOString() };
      // A file cut inside a line keeps its broken line; the end goes on a line of its own.
      await appendFile(path, `${text.endsWith('\n') ? '' : '\n'}${JSON.stringify(end)}\n`);
      marked.push(name);
    } catch {
      // Unreadable or gone: left as it is, the history says so.
    }
  }
  return marked;
}

async function readTail(path: string, size: number): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, size - len);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}
