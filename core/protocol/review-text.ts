/**
 * What the review card says and which files its buttons act on: pure functions of a review's files, kept
 * apart from the zod schemas of ./run-review.ts so the chat's bundle carries no validator.
 */
import type { ReviewFile, ReviewState, RunReview } from './run-review';

/**
 * The files an action applies to: Undo to what can still be undone (Undo all leaves what the user kept: a file
 * kept stays as it is unless undone by itself), Keep to what is still to review.
 */
export function actionTargets(files: readonly ReviewFile[], file: string, action: 'keep' | 'undo'): ReviewFile[] {
  return files.filter(
    (f) =>
      (file === 'all' || f.id === file) &&
      (action === 'undo'
        ? f.state !== 'undone' && !f.untracked && (file !== 'all' || f.state !== 'kept')
        : f.state === 'pending'),
  );
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The card's title: how many files, and how far the review has gone. */
export function reviewSummary(review: Pick<RunReview, 'files' | 'more'>): string {
  const n = review.files.length + review.more;
  const count = (s: ReviewState) => review.files.filter((f) => f.state === s).length;
  const parts = [
    count('kept') && `${count('kept')} kept`,
    count('undone') && `${count('undone')} undone`,
    count('pending') && `${count('pending')} to review`,
  ].filter(Boolean);
  return `${plural(n, 'file')} changed${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

/** A file's size of change as a list shows it: `+3 −1`, `new, +12`, `deleted, −4`, `binary`. */
export function changeStat(f: Pick<ReviewFile, 'change' | 'added' | 'removed'>): string {
  const lines = f.added === undefined || f.removed === undefined ? 'binary' : undefined;
  if (f.change === 'added') return lines ? 'new, binary' : `new, +${f.added}`;
  if (f.change === 'deleted') return lines ? 'deleted, binary' : `deleted, −${f.removed}`;
  return lines ?? `+${f.added} −${f.removed}`;
}

/** The warning over the files that run later (your tools may execute them outside the sandbox). */
export function laterWarning(files: readonly ReviewFile[]): string | undefined {
  const n = files.filter((f) => f.runsLater).length;
  if (!n) return undefined;
  return `${plural(n, 'changed file')} that run${n === 1 ? 's' : ''} later (marked ▲): your tools (make, npm, git hooks, a shell) may execute ${n === 1 ? 'it' : 'them'} outside the sandbox. Read the ${n === 1 ? 'diff' : 'diffs'} before you commit.`;
}
