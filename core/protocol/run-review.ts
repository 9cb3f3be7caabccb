/**
 * The review of what a run changed, shared by the extension (which builds it and acts on it) and the chat
 * (which draws it): the list of files with their state, Kept / Undone / to review, and the texts it shows.
 * Pure: no git, no `vscode`, no DOM.
 */
import { z } from 'zod';
import { RUN_FILE } from '../schema/trajectory';

/** A file of a review, as the extension names it to the chat (the chat never names a path). */
export const REVIEW_FILE_ID = /^f[0-9]{1,6}$/;

/** The most files a review card lists. */
export const MAX_REVIEW_FILES = 300;

export const ReviewState = z.enum(['pending', 'kept', 'undone']);
export type ReviewState = z.infer<typeof ReviewState>;

export const ReviewFile = z
  .object({
    id: z.string().regex(REVIEW_FILE_ID),
    path: z.string().max(2000),
    change: z.enum(['added', 'modified', 'deleted']),
    /** Lines added and removed (absent for a binary file). */
    added: z.number().int().nonnegative().optional(),
    removed: z.number().int().nonnegative().optional(),
    /** The user's tools may execute it later (a Makefile, package.json, a script, an executable). */
    runsLater: z.boolean().optional(),
    /** Not in the checkpoints (ignored, node_modules, .git): listed for its diff, cannot be undone here. */
    untracked: z.boolean().optional(),
    /** The diff as text, for a file the checkpoints do not hold. */
    diff: z.string().max(40_000).optional(),
    state: ReviewState,
  })
  .strict();
export type ReviewFile = z.infer<typeof ReviewFile>;

/** The card: the run (its trajectory's file names the review), its files, and what the list leaves out. */
export const RunReview = z
  .object({
    run: z.string().regex(RUN_FILE),
    files: z.array(ReviewFile).max(MAX_REVIEW_FILES),
    /** Files changed beyond the list's length. */
    more: z.number().int().nonnegative(),
    /** What the checkpoints do not capture, when it matters for this run. */
    note: z.string().max(1000).optional(),
  })
  .strict();
export type RunReview = z.infer<typeof RunReview>;

/** What the chat asks of a review: a file's diff, Keep or Undo; `all` for Keep all / Undo all. */
export const ReviewAction = z
  .object({
    type: z.literal('reviewChange'),
    run: z.string().regex(RUN_FILE),
    file: z.union([z.string().regex(REVIEW_FILE_ID), z.literal('all')]),
    action: z.enum(['diff', 'keep', 'undo']),
  })
  .strict();
export type ReviewAction = z.infer<typeof ReviewAction>;

/** A changed file as the checkpoints see it (core/checkpoints/run-diff.ts FileDiff). */
export interface ChangedFile {
  path: string;
  change: 'added' | 'deleted' | 'modified';
  added?: number;
  removed?: number;
}

/** A changed file that runs later (core/sandbox/later-changes.ts LaterChange). */
export interface LaterFile {
  path: string;
  change: 'changed' | 'added' | 'removed';
  diff?: string;
}

const LATER_CHANGE = { changed: 'modified', added: 'added', removed: 'deleted' } as const;

/** The review's files: the checkpoints' list with the files that run later marked, and those they miss added. */
export function reviewFiles(changed: readonly ChangedFile[], later: readonly LaterFile[]): ReviewFile[] {
  const runsLater = new Map(later.map((l) => [l.path, l]));
  const rows: Omit<ReviewFile, 'id'>[] = changed.map((c) => ({
    ...c,
    ...(runsLater.has(c.path) ? { runsLater: true } : {}),
    state: 'pending',
  }));
  const listed = new Set(changed.map((c) => c.path));
  for (const l of later) {
    if (listed.has(l.path)) continue;
    const diff = l.diff ?? (l.change === 'removed' ? '(removed)' : '(too large to show: open the file)');
    rows.push({
      path: l.path,
      change: LATER_CHANGE[l.change],
      runsLater: true,
      untracked: true,
      diff,
      state: 'pending',
    });
  }
  rows.sort((a, b) => Number(!a.runsLater) - Number(!b.runsLater) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return rows.map((r, i) => ({ id: `f${i + 1}`, ...r, path: r.path.slice(0, 2000), diff: r.diff?.slice(0, 40_000) }));
}

/** The files with those of `ids` in `state`. */
export function withState(files: readonly ReviewFile[], ids: readonly string[], state: ReviewState): ReviewFile[] {
  const set = new Set(ids);
  return files.map((f) => (set.has(f.id) ? { ...f, state } : f));
}

/** What the checkpoints do not capture, said when this run's list may miss something. */
export function captureNote(
  skipped: readonly string[],
  nested: readonly string[],
  untracked: number,
): string | undefined {
  if (!skipped.length && !nested.length && !untracked) return undefined;
  const named = [...skipped.map((p) => `${p} (over 5 MB)`), ...nested.map((p) => `${p} (a nested repository)`)];
  const list = named.length ? ` Left out here: ${named.slice(0, 5).join(', ')}${named.length > 5 ? ', …' : ''}.` : '';
  return `Not listed: files .gitignore ignores, node_modules, .lar, files over 5 MB and nested repositories (Undo cannot put them back).${list}`.slice(
    0,
    1000,
  );
}
