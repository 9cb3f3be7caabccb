// A run's review over the shadow repository (core/checkpoints/run-diff.ts through the store), with the real
// git in scratch folders: the files a run changed with their line counts, and putting back some files only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { read, setup } from '../../support/checkpoint-workspace';

test('the files a run changed: added, modified, deleted, with their line counts; binary files without', async () => {
  const { ws, store } = await setup({ 'a.js': '1\n2\n3\n', 'gone.txt': 'x\ny\n', 'same.txt': 's', 'b.bin': 'a' });
  const start = await store.snapshot('runs/r/steps/1', 'start');
  writeFileSync(join(ws, 'a.js'), '1\ntwo\n3\n4\n');
  rmSync(join(ws, 'gone.txt'));
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src/new file.js'), 'n\n');
  writeFileSync(join(ws, 'b.bin'), Buffer.from([0, 1, 2]));
  const end = await store.snapshot('runs/r/end', 'end');
  assert.deepEqual(await store.diffFiles(start.commit, end.commit), [
    { path: 'a.js', change: 'modified', added: 2, removed: 1 },
    { path: 'b.bin', change: 'modified' },
    { path: 'gone.txt', change: 'deleted', added: 0, removed: 2 },
    { path: 'src/new file.js', change: 'added', added: 1, removed: 0 },
  ]);
});

test('putting back some files changes them only: others, and the user edits since, stay; it can be undone', async () => {
  const { ws, store } = await setup({ 'a.js': 'a1', 'b.js': 'b1', 'gone.txt': 'g', 'run.sh': 'echo 1' });
  chmodSync(join(ws, 'run.sh'), 0o755);
  const start = await store.snapshot('runs/r/steps/1', 'start');
  writeFileSync(join(ws, 'a.js'), 'a2');
  writeFileSync(join(ws, 'b.js'), 'b2');
  rmSync(join(ws, 'gone.txt'));
  writeFileSync(join(ws, 'made*[x].js'), 'm');
  writeFileSync(join(ws, 'run.sh'), 'echo 2');
  const end = await store.snapshot('runs/r/end', 'end');
  // The user edits a file after the run, and one the run did not touch.
  writeFileSync(join(ws, 'b.js'), 'b3');
  writeFileSync(join(ws, 'mine.txt'), 'mine');
  const paths = ['a.js', 'b.js', 'gone.txt', 'made*[x].js', 'run.sh'];
  const { pre, target, changedSince } = await store.previewFiles(start.commit, paths, end.commit);
  assert.deepEqual(changedSince, ['b.js']);
  const r = await store.restore(target, pre.commit);
  assert.deepEqual(r.leftovers, []);
  assert.deepEqual(
    ['a.js', 'b.js', 'gone.txt', 'made*[x].js', 'run.sh', 'mine.txt'].map((p) => read(ws, p)),
    ['a1', 'b1', 'g', undefined, 'echo 1', 'mine'],
  );
  assert.equal(statSync(join(ws, 'run.sh')).mode & 0o111, 0o111, 'the execute bit comes back with the file');
  const undo = await store.preview(pre.commit);
  await store.restore(pre.commit, undo.pre.commit);
  assert.deepEqual(
    ['a.js', 'b.js', 'gone.txt', 'made*[x].js', 'mine.txt'].map((p) => read(ws, p)),
    ['a2', 'b3', undefined, 'm', 'mine'],
  );
});

test('one file put back leaves the other files of the run as the run left them', async () => {
  const { ws, store } = await setup({ 'a.js': 'a1', 'b.js': 'b1' });
  const start = await store.snapshot('runs/r/steps/1', 'start');
  writeFileSync(join(ws, 'a.js'), 'a2');
  writeFileSync(join(ws, 'b.js'), 'b2');
  const end = await store.snapshot('runs/r/end', 'end');
  const { pre, target, changedSince } = await store.previewFiles(start.commit, ['a.js'], end.commit);
  assert.deepEqual(changedSince, []);
  const r = await store.restore(target, pre.commit);
  assert.deepEqual(r.changes, [{ path: 'a.js', change: 'modified' }]);
  assert.deepEqual([read(ws, 'a.js'), read(ws, 'b.js')], ['a1', 'b2']);
});

test('a checkpoint id that is not one is refused before git sees it', async () => {
  const { store } = await setup({ 'a.js': 'a' });
  const start = await store.snapshot('runs/r/steps/1', 'start');
  await assert.rejects(store.previewFiles('--output=/tmp/x', ['a.js'], start.commit), /not a checkpoint id/);
  await assert.rejects(store.diffFiles(start.commit, 'HEAD~1'), /not a checkpoint id/);
});
