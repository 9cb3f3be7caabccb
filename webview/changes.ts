/**
 * The Changes card at a run's end: each file the run changed with its size of change, a mark on the files that
 * run later, Diff / Keep / Undo each and for all. The extension sends the card whole again when a file's state
 * changes; it replaces the one drawn before. Buttons name files by the ids the extension gave.
 */
import { actionTargets, changeStat, laterWarning, reviewSummary } from '../core/protocol/review-text';
import type { ReviewFile, RunReview } from '../core/protocol/run-review';
import { el, send } from './page';
import { append } from './scroll';
import type { Msg } from './state';

/** The cards drawn, by run: a new state replaces its card where it stands. */
const cards = new Map<string, HTMLElement>();

const STATE_LABEL = { pending: '', kept: 'Kept', undone: 'Undone' } as const;

function button(review: RunReview, file: string, action: 'diff' | 'keep' | 'undo', label: string, title: string) {
  const b = el('button', 'secondary small', label);
  b.title = title;
  b.addEventListener('click', () => send({ type: 'reviewChange', run: review.run, file, action }));
  return b;
}

function fileRow(review: RunReview, f: ReviewFile): HTMLElement {
  const row = el('li', `review-file ${f.state}`);
  const name = el('div', 'review-name');
  if (f.runsLater) {
    const mark = el('span', 'runs-later', '▲');
    mark.title = 'Runs later: your tools (make, npm, git hooks, a shell) may execute it outside the sandbox';
    name.appendChild(mark);
  }
  const path = el('span', 'review-path', f.path);
  path.title = f.path;
  name.appendChild(path);
  name.appendChild(el('span', 'review-stat', changeStat(f)));
  if (f.state !== 'pending') name.appendChild(el('span', 'review-state', STATE_LABEL[f.state]));
  row.appendChild(name);
  const buttons = el('div', 'review-buttons');
  if (!f.untracked)
    buttons.appendChild(button(review, f.id, 'diff', 'Diff', 'The file before the run beside the file now'));
  if (f.state === 'pending')
    buttons.appendChild(button(review, f.id, 'keep', 'Keep', 'Mark it reviewed: it stays as it is'));
  if (f.state !== 'undone' && !f.untracked)
    buttons.appendChild(
      button(review, f.id, 'undo', 'Undo', 'Put this file back as it was before the run (no other file changes)'),
    );
  if (buttons.children.length) row.appendChild(buttons);
  if (f.untracked && f.diff !== undefined) {
    const d = el('details', 'later-file');
    d.appendChild(el('summary', '', 'diff (not in the checkpoints: Undo cannot put it back)'));
    d.appendChild(el('pre', 'diff', f.diff));
    row.appendChild(d);
  }
  return row;
}

function card(review: RunReview): HTMLElement {
  const box = el('div', 'run-changes');
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', 'Changes of the run');
  box.appendChild(el('div', 'title', reviewSummary(review)));
  const warning = laterWarning(review.files);
  if (warning) box.appendChild(el('div', 'review-warning', warning));
  const list = el('ul', 'review-files');
  for (const f of review.files) list.appendChild(fileRow(review, f));
  box.appendChild(list);
  if (review.more) box.appendChild(el('div', 'review-note', `… and ${review.more} more (not listed here)`));
  if (review.note) box.appendChild(el('div', 'review-note', review.note));
  const row = el('div', 'row');
  const keepAll = button(review, 'all', 'keep', 'Keep all', 'Mark every file reviewed');
  keepAll.disabled = !actionTargets(review.files, 'all', 'keep').length;
  const undoAll = button(
    review,
    'all',
    'undo',
    'Undo all',
    "Put every file still to review back as before the run (what you kept stays, and so do others' edits)",
  );
  undoAll.disabled = !actionTargets(review.files, 'all', 'undo').length;
  row.appendChild(keepAll);
  row.appendChild(undoAll);
  box.appendChild(row);
  return box;
}

/** The log was cleared: the cards drawn are gone. */
export function forgetCards(): void {
  cards.clear();
}

export function runChanges(msg: Msg<'runChanges'>): void {
  const next = card(msg.review);
  const old = cards.get(msg.review.run);
  cards.set(msg.review.run, next);
  if (old) old.replaceWith(next);
  else append(next);
}
