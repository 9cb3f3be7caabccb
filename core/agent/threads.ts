/**
 * The conversations recorded in a workspace, for the chat's History: the run files of `.lar/runs` grouped by
 * their header's `thread` (a run without one is a conversation of its own), newest activity first, each with
 * its first message and how its latest run went. A chat is reopened from its latest run (core/agent/resume.ts).
 */
import { describeRun, MAX_VERIFY_BYTES, newestFirst, readRunHead, runFiles } from './history';
import type { RunFile, RunHead, RunStatus } from './history';

/** One run of a conversation as History lists it. */
export interface ThreadRun {
  file: string;
  task: string;
  started: string;
  status: RunStatus;
}

/** A run's head with the time its file was last written: what grouping needs. */
export type ThreadRunHead = RunHead & { mtimeMs: number };

/** One conversation: its runs oldest first; the figures are its latest run's (how the chat ended up). */
export interface ThreadSummary {
  id: string;
  /** The first run's task: the message that started the conversation. */
  task: string;
  /** When its first run started. */
  started: string;
  /** When any of its files was last written (ISO). */
  lastActive: string;
  runs: ThreadRun[];
  /** The latest run's. */
  status: RunStatus;
  model?: string;
  steps?: number;
  return?: number;
  outcome?: number;
  note?: string;
}

export interface ListThreadsOptions {
  /** The conversations with the newest activity, at most this many. Default 30. */
  limit?: number;
  /** Only the newest this many run files are read (a conversation older than them is not listed). Default 500. */
  maxFiles?: number;
  /** The latest run of a conversation is verified for its figures only up to this size. Default 8 MB. */
  maxVerifyBytes?: number;
  /** False: no figures (a look-up by id needs none, and verifying takes time). Default true. */
  figures?: boolean;
}

/** The conversation a run belongs to: its header's thread, else the run alone (named as a first run names its thread). */
export function threadIdOf(head: Pick<RunHead, 'file' | 'thread'>): string {
  return head.thread?.id ?? head.file.replace(/\.lar\.jsonl$/, '');
}

/** A time to order by: the ISO time when it is one, else the fallback. */
function timeOf(iso: string, fallback: number): number {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : fallback;
}

/**
 * Pure: the runs grouped into conversations, newest activity first (then by id). Inside one, runs are ordered
 * by the time their header gives, then by file name: files that share a thread id without being a chain
 * still read in the order they happened.
 */
export function groupThreads(heads: readonly ThreadRunHead[]): ThreadSummary[] {
  const groups = new Map<string, ThreadRunHead[]>();
  for (const h of heads) {
    const id = threadIdOf(h);
    const group = groups.get(id);
    if (group) group.push(h);
    else groups.set(id, [h]);
  }
  const threads: { thread: ThreadSummary; activeMs: number }[] = [];
  for (const [id, group] of groups) {
    group.sort((a, b) => {
      const d = timeOf(a.started, a.mtimeMs) - timeOf(b.started, b.mtimeMs);
      return d || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0);
    });
    const first = group[0]!;
    const latest = group[group.length - 1]!;
    const activeMs = Math.max(...group.map((h) => h.mtimeMs));
    const thread: ThreadSummary = {
      id,
      // A first run whose header lost its task gives way to the first run that has one.
      task: group.find((h) => h.task.trim())?.task ?? '',
      started: first.started,
      lastActive: new Date(activeMs).toISOString(),
      runs: group.map((h) => ({ file: h.file, task: h.task, started: h.started, status: h.status })),
      status: latest.status,
      ...(latest.model ? { model: latest.model } : {}),
      ...(latest.note ? { note: latest.note } : {}),
    };
    threads.push({ thread, activeMs });
  }
  threads.sort(
    (a, b) => b.activeMs - a.activeMs || (a.thread.id < b.thread.id ? 1 : a.thread.id > b.thread.id ? -1 : 0),
  );
  return threads.map((t) => t.thread);
}

/** The workspace's conversations, newest activity first, each with its latest run's figures. */
export async function listThreads(workspace: string, opts: ListThreadsOptions = {}): Promise<ThreadSummary[]> {
  const files = newestFirst(await runFiles(workspace)).slice(0, opts.maxFiles ?? 500);
  const byName = new Map<string, RunFile>(files.map((f) => [f.name, f]));
  const heads: ThreadRunHead[] = [];
  for (const f of files) heads.push({ ...(await readRunHead(f)), mtimeMs: f.mtimeMs });
  const threads = groupThreads(heads).slice(0, opts.limit ?? 30);
  for (const t of opts.figures === false ? [] : threads) {
    const latest = byName.get(t.runs[t.runs.length - 1]!.file)!;
    const figures = await describeRun(latest, opts.maxVerifyBytes ?? MAX_VERIFY_BYTES);
    if (figures.return !== undefined) {
      t.steps = figures.steps;
      t.return = figures.return;
      t.outcome = figures.outcome ?? 0;
    }
    if (figures.note) t.note = figures.note;
  }
  return threads;
}
