// The review of what a run changed (core/protocol/run-review.ts): the list from the checkpoints and the files
// that run later, which files Keep and Undo apply to, the texts the card shows, and what the chat may send.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FromWebview, ToWebview } from '../../../core/protocol/chat';
import { actionTargets, changeStat, laterWarning, reviewSummary } from '../../../core/protocol/review-text';
import { captureNote, reviewFiles, withState, type ReviewFile } from '../../../core/protocol/run-review';

const changed = [
  { path: 'src/sum.js', change: 'modified', added: 2, removed: 1 },
  { path: 'package.json', change: 'modified', added: 1, removed: 0 },
  { path: 'notes.txt', change: 'added', added: 3, removed: 0 },
  { path: 'old.txt', change: 'deleted', added: 0, removed: 4 },
] as const;

test('the list: files that run later first and marked, those the checkpoints miss added with their diff', () => {
  const files = reviewFiles(changed, [
    { path: 'package.json', change: 'changed', diff: '+x' },
    { path: 'node_modules/.bin/jest', change: 'added', diff: '+evil' },
    { path: '.git-hooks/pre', change: 'added' },
  ]);
  assert.deepEqual(
    files.map((f) => [f.id, f.path, f.change, f.runsLater ?? false, f.untracked ?? false, f.state]),
    [
      ['f1', '.git-hooks/pre', 'added', true, true, 'pending'],
      ['f2', 'node_modules/.bin/jest', 'added', true, true, 'pending'],
      ['f3', 'package.json', 'modified', true, false, 'pending'],
      ['f4', 'notes.txt', 'added', false, false, 'pending'],
      ['f5', 'old.txt', 'deleted', false, false, 'pending'],
      ['f6', 'src/sum.js', 'modified', false, false, 'pending'],
    ],
  );
  assert.equal(files[1]!.diff, '+evil');
  assert.equal(files[0]!.diff, '(too large to show: open the file)');
  assert.equal(files[2]!.diff, undefined, 'a file the checkpoints hold opens in a diff editor instead');
});

test('Keep and Undo apply to what they still can; the files the checkpoints miss are never undone', () => {
  let files: ReviewFile[] = reviewFiles(changed, [{ path: 'node_modules/.bin/x', change: 'added' }]);
  const id = (p: string) => files.find((f) => f.path === p)!.id;
  files = withState(files, [id('src/sum.js')], 'undone');
  files = withState(files, [id('notes.txt')], 'kept');
  assert.deepEqual(
    actionTargets(files, 'all', 'undo').map((f) => f.path),
    ['old.txt', 'package.json'],
    'Undo all: not what was kept, not the undone one, not the untracked one',
  );
  assert.deepEqual(
    actionTargets(files, id('notes.txt'), 'undo').map((f) => f.path),
    ['notes.txt'],
    'a kept file can still be undone by itself',
  );
  assert.deepEqual(
    actionTargets(files, 'all', 'keep').map((f) => f.path),
    ['node_modules/.bin/x', 'old.txt', 'package.json'],
  );
  assert.deepEqual(actionTargets(files, id('src/sum.js'), 'undo'), [], 'undone twice is nothing');
  assert.deepEqual(actionTargets(files, 'f99', 'undo'), [], 'an id the extension never gave is nothing');
  assert.equal(reviewSummary({ files, more: 0 }), '5 files changed: 1 kept, 1 undone, 3 to review');
  assert.equal(reviewSummary({ files: files.slice(0, 1), more: 2 }), '3 files changed: 1 to review');
});

test('the texts: line counts, the warning about files that run later, what the checkpoints leave out', () => {
  assert.equal(changeStat({ change: 'modified', added: 2, removed: 1 }), '+2 −1');
  assert.equal(changeStat({ change: 'added', added: 3, removed: 0 }), 'new, +3');
  assert.equal(changeStat({ change: 'deleted', added: 0, removed: 4 }), 'deleted, −4');
  assert.equal(changeStat({ change: 'modified' }), 'binary');
  const files = reviewFiles(changed, [{ path: 'package.json', change: 'changed' }]);
  assert.match(laterWarning(files)!, /^1 changed file that runs later .*execute it outside the sandbox/);
  assert.equal(laterWarning(reviewFiles(changed, [])), undefined);
  assert.equal(captureNote([], [], 0), undefined);
  assert.match(
    captureNote(['big.bin'], ['vendor/lib'], 0)!,
    /big\.bin \(over 5 MB\), vendor\/lib \(a nested repository\)/,
  );
  assert.match(captureNote([], [], 1)!, /^Not listed: files \.gitignore ignores/);
});

test('the chat names a file by the id it was given, never by a path; the card round-trips its schema', () => {
  const ok = { type: 'reviewChange', run: 'r1.lar.jsonl', file: 'f2', action: 'undo' };
  assert.ok(FromWebview.safeParse(ok).success);
  assert.ok(FromWebview.safeParse({ ...ok, file: 'all', action: 'keep' }).success);
  for (const bad of [
    { ...ok, file: '../../etc/passwd' },
    { ...ok, file: 'src/sum.js' },
    { ...ok, run: '../x.lar.jsonl' },
    { ...ok, action: 'delete' },
    { ...ok, path: 'src/sum.js' },
  ])
    assert.ok(!FromWebview.safeParse(bad).success, JSON.stringify(bad));
  const review = { run: 'r1.lar.jsonl', files: reviewFiles(changed, []), more: 0 };
  assert.ok(ToWebview.safeParse({ type: 'runChanges', review }).success);
});
