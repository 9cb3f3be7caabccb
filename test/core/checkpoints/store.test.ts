// Checkpoints in a shadow git repository (core/checkpoints/store.ts), with
// the real git, in scratch folders: what a restore puts back and deletes,
// what it never touches, and that the user's own repository is left as it
// was even when the host environment points git at it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { read, setup } from '../../support/checkpoint-workspace';
import fc from '../../support/fc';
import { CheckpointStore, type CheckpointStore as Store } from '../../../core/checkpoints/store';

function hashTree(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      h.update(`${relative(dir, p)}\0${st.mode}\0`);
      if (st.isDirectory()) walk(p);
      else h.update(readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
}

test('restore to a checkpoint: changed files reverted, deleted ones back, new ones removed — and it can be undone', async () => {
  const { ws, store } = await setup({ 'src/a.js': 'a1', 'src/b.js': 'b1', 'README.md': 'r' });
  const step1 = await store.snapshot('runs/r1/steps/1', 'before step 1');
  writeFileSync(join(ws, 'src/a.js'), 'a2');
  rmSync(join(ws, 'src/b.js'));
  writeFileSync(join(ws, 'src/new.js'), 'n');
  mkdirSync(join(ws, 'made/deep'), { recursive: true });
  writeFileSync(join(ws, 'made/deep/x.txt'), 'x');
  const { pre, changes } = await store.preview(step1.commit);
  assert.deepEqual(
    [...changes].sort((x, y) => x.path.localeCompare(y.path)),
    [
      { path: 'made/deep/x.txt', change: 'deleted' },
      { path: 'src/a.js', change: 'modified' },
      { path: 'src/b.js', change: 'added' },
      { path: 'src/new.js', change: 'deleted' },
    ],
  );
  const r = await store.restore(step1.commit, pre.commit);
  assert.deepEqual(r.leftovers, []);
  assert.deepEqual(
    [
      read(ws, 'src/a.js'),
      read(ws, 'src/b.js'),
      read(ws, 'src/new.js'),
      read(ws, 'made/deep/x.txt'),
      read(ws, 'README.md'),
    ],
    ['a1', 'b1', undefined, undefined, 'r'],
  );
  // Undo: restore to the snapshot taken before.
  const undo = await store.preview(pre.commit);
  await store.restore(pre.commit, undo.pre.commit);
  assert.deepEqual(
    [read(ws, 'src/a.js'), read(ws, 'src/b.js'), read(ws, 'src/new.js'), read(ws, 'made/deep/x.txt')],
    ['a2', undefined, 'n', 'x'],
  );
  assert.equal((await store.show(step1.commit, 'src/a.js'))?.toString(), 'a1');
  assert.equal(await store.show(step1.commit, 'src/new.js'), undefined);
});

test('never touched by a restore: ignored files, node_modules, .lar, files above the size cap, nested repositories', async () => {
  const { ws, store } = await setup({ '.gitignore': 'build/\n', 'src/a.js': 'a1' });
  const step1 = await store.snapshot('runs/r1/steps/1', 'before step 1');
  mkdirSync(join(ws, 'build'));
  writeFileSync(join(ws, 'build/out.js'), 'built');
  mkdirSync(join(ws, 'node_modules/dep'), { recursive: true });
  writeFileSync(join(ws, 'node_modules/dep/index.js'), 'dep');
  mkdirSync(join(ws, '.lar/runs'), { recursive: true });
  writeFileSync(join(ws, '.lar/runs/r1.lar.jsonl'), '{}');
  writeFileSync(join(ws, 'big.bin'), 'x'.repeat(2048));
  mkdirSync(join(ws, 'vendor/lib'), { recursive: true });
  const nestedGit = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: join(ws, 'vendor/lib'),
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'u',
        GIT_AUTHOR_EMAIL: 'u@x',
        GIT_COMMITTER_NAME: 'u',
        GIT_COMMITTER_EMAIL: 'u@x',
      },
    });
  nestedGit('init', '-q');
  writeFileSync(join(ws, 'vendor/lib/file.c'), 'int x;');
  nestedGit('add', '.');
  nestedGit('commit', '-qm', 'nested');
  writeFileSync(join(ws, 'vendor/lib/file.c'), 'int y; /* uncommitted */');
  writeFileSync(join(ws, 'src/a.js'), 'a2');
  const { pre, changes } = await store.preview(step1.commit);
  assert.deepEqual(changes, [{ path: 'src/a.js', change: 'modified' }], 'only captured files would change');
  assert.deepEqual(pre.skipped, ['big.bin']);
  assert.deepEqual(pre.nested, ['vendor/lib']);
  await store.restore(step1.commit, pre.commit);
  for (const p of [
    'build/out.js',
    'node_modules/dep/index.js',
    '.lar/runs/r1.lar.jsonl',
    'big.bin',
    'vendor/lib/file.c',
  ])
    assert.ok(existsSync(join(ws, p)), `${p} is still there`);
  assert.equal(
    read(ws, 'vendor/lib/file.c'),
    'int y; /* uncommitted */',
    "a nested repository's uncommitted change survives",
  );
  assert.equal(read(ws, 'src/a.js'), 'a1');
});

test("the user's repository is left exactly as it was, even with GIT_DIR, hooks and a hostile config in the environment", async () => {
  const { root, ws } = await setup({ 'f1.txt': 'one', 'f2.txt': 'two' });
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: ws,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'u',
        GIT_AUTHOR_EMAIL: 'u@x',
        GIT_COMMITTER_NAME: 'u',
        GIT_COMMITTER_EMAIL: 'u@x',
      },
    }).toString();
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'first');
  writeFileSync(join(ws, 'f1.txt'), 'one staged');
  git('add', 'f1.txt');
  writeFileSync(join(ws, 'f2.txt'), 'two unstaged');
  mkdirSync(join(ws, '.git/hooks'), { recursive: true });
  const marker = join(root, 'hook-ran');
  writeFileSync(join(ws, '.git/hooks/pre-commit'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  writeFileSync(join(ws, '.gitattributes'), '*.txt text eol=crlf\n');
  const home = join(root, 'home');
  mkdirSync(home);
  writeFileSync(
    join(home, '.gitconfig'),
    `[core]\n  hooksPath = ${join(ws, '.git/hooks')}\n  autocrlf = true\n[filter "evil"]\n  clean = touch ${marker}\n  required = true\n`,
  );
  const userGitBefore = hashTree(join(ws, '.git'));
  const saved = { ...process.env };
  Object.assign(process.env, {
    HOME: home,
    GIT_DIR: join(ws, '.git'),
    GIT_WORK_TREE: ws,
    GIT_INDEX_FILE: join(ws, '.git/index'),
    GIT_CONFIG_PARAMETERS: `'core.hookspath=${join(ws, '.git/hooks')}'`,
  });
  try {
    const store = (await CheckpointStore.open({ storage: join(root, 'storage2'), workspace: ws })) as Store;
    assert.ok(store instanceof CheckpointStore);
    const c = await store.snapshot('runs/r/steps/1', 's1');
    writeFileSync(join(ws, 'f2.txt'), 'changed by the agent');
    const p = await store.preview(c.commit);
    await store.restore(c.commit, p.pre.commit);
    assert.equal(read(ws, 'f2.txt'), 'two unstaged', 'bytes come back as they were (no eol conversion)');
  } finally {
    for (const k of ['HOME', 'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_CONFIG_PARAMETERS']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
  assert.equal(hashTree(join(ws, '.git')), userGitBefore, "the user's .git is byte for byte the same");
  assert.equal(existsSync(marker), false, 'no hook or filter ran');
  assert.match(
    git('status', '--porcelain'),
    /^M  f1\.txt\n M f2\.txt\n/m,
    'the staged and the unstaged change are still there',
  );
});

test('a file in the way stops a restore before anything is written; a workspace changed since the preview is refused', async () => {
  const { ws, store } = await setup({ 'a.txt': 'a', 'gone.txt': 'g' });
  const c = await store.snapshot('runs/r/steps/1', 's1');
  rmSync(join(ws, 'gone.txt'));
  writeFileSync(join(ws, 'a.txt'), 'a2');
  const p = await store.preview(c.commit);
  writeFileSync(join(ws, 'a.txt'), 'a3');
  await assert.rejects(store.restore(c.commit, p.pre.commit), /changed since the preview/);
  assert.equal(read(ws, 'a.txt'), 'a3');
  // A symlink the agent put where a directory was is replaced by the directory; nothing is written through it.
  const outside = mkdtempSync(join(tmpdir(), 'lar-ckpt-out-'));
  mkdirSync(join(ws, 'dir'));
  writeFileSync(join(ws, 'dir/f.txt'), 'f');
  const c2 = await store.snapshot('runs/r/steps/2', 's2');
  rmSync(join(ws, 'dir'), { recursive: true });
  symlinkSync(outside, join(ws, 'dir'));
  const p2 = await store.preview(c2.commit);
  await store.restore(c2.commit, p2.pre.commit);
  assert.equal(statSync(join(ws, 'dir')).isDirectory(), true);
  assert.deepEqual(readdirSync(outside), [], 'nothing was written outside the workspace');
});

test('property: after any edits, restoring a checkpoint gives back exactly its captured files', async () => {
  const name = fc.constantFrom(
    'a.txt',
    'b.txt',
    'd/c.txt',
    'd/e/f.txt',
    'g h.txt',
    '-x.txt',
    '#y.txt',
    '!z.txt',
    'ü.txt',
  );
  const op = fc.oneof(
    fc.record({ kind: fc.constant('write' as const), path: name, text: fc.string({ maxLength: 12 }) }),
    fc.record({ kind: fc.constant('delete' as const), path: name }),
  );
  const apply = (ws: string, ops: { kind: 'write' | 'delete'; path: string; text?: string }[]) => {
    for (const o of ops) {
      const p = join(ws, o.path);
      if (o.kind === 'write') {
        // A file cannot stand where a directory of the same name is; the property is about files.
        if (existsSync(p) && statSync(p).isDirectory()) continue;
        try {
          mkdirSync(join(p, '..'), { recursive: true });
          writeFileSync(p, o.text ?? '');
        } catch {
          // A parent that is a file: not writable here either.
        }
      } else rmSync(p, { force: true });
    }
  };
  const files = (ws: string) => {
    const out: Record<string, string> = {};
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else out[relative(ws, p)] = readFileSync(p, 'utf8');
      }
    };
    walk(ws);
    return out;
  };
  await fc.assert(
    fc.asyncProperty(fc.array(op, { maxLength: 8 }), fc.array(op, { maxLength: 8 }), async (before, after) => {
      const { ws, store } = await setup();
      apply(ws, before);
      const want = files(ws);
      const c = await store.snapshot('runs/p/steps/1', 's');
      apply(ws, after);
      const p = await store.preview(c.commit);
      const r = await store.restore(c.commit, p.pre.commit);
      assert.deepEqual(r.leftovers, []);
      assert.deepEqual(files(ws), want);
    }),
    { numRuns: 25 },
  );
});

test('hostile names: a checkpoint id that is a git option, a .gitignore that re-includes .lar, a file name with a newline and a star', async () => {
  const { root, ws, store } = await setup({ 'a.txt': 'a' });
  const c = await store.snapshot('runs/r/steps/1', 's1');
  const written = join(root, 'written-by-git');
  for (const bad of [
    `--output=${written}`,
    'HEAD',
    'refs/lar/latest',
    `${c.commit}..${c.commit}`,
    '-p',
    c.commit.slice(0, 12),
  ]) {
    await assert.rejects(store.preview(bad), /not a checkpoint id/);
    await assert.rejects(store.restore(c.commit, bad), /not a checkpoint id/);
  }
  await assert.rejects(store.preview('0'.repeat(40)), /no checkpoint 000000000000/);
  assert.equal(existsSync(written), false);
  // The agent (or the repository) writes a .gitignore that would bring .lar back: the run records stay out of every checkpoint.
  writeFileSync(join(ws, '.gitignore'), '!/.lar/\n!node_modules/\n');
  mkdirSync(join(ws, '.lar', 'runs'), { recursive: true });
  writeFileSync(join(ws, '.lar', 'runs', 'run-1.lar.jsonl'), '{}');
  writeFileSync(join(ws, 'x\n*'), 'y'.repeat(4096));
  writeFileSync(join(ws, 'small\nname'), 'ok');
  const c2 = await store.snapshot('runs/r/steps/2', 's2');
  assert.deepEqual(c2.skipped, ['x\n*'], 'the big file with an odd name is left out, by its literal name');
  writeFileSync(join(ws, 'b.txt'), 'b');
  const p = await store.preview(c.commit);
  assert.ok(!p.changes.some((x) => x.path.startsWith('.lar')), JSON.stringify(p.changes));
  await store.restore(c.commit, p.pre.commit);
  assert.ok(existsSync(join(ws, '.lar', 'runs', 'run-1.lar.jsonl')), 'the run record survives the restore');
  assert.ok(existsSync(join(ws, 'x\n*')), 'a file left out is never deleted');
  assert.equal(existsSync(join(ws, 'small\nname')), false, 'a captured file made after the checkpoint is removed');
  assert.equal(existsSync(join(ws, 'b.txt')), false);
  // Files made after this point are still captured: nothing in the exclude file swallowed them.
  writeFileSync(join(ws, 'later.txt'), 'l');
  const c3 = await store.snapshot('runs/r/steps/3', 's3');
  assert.equal((await store.show(c3.commit, 'later.txt'))?.toString(), 'l');
});

test('a run takes a checkpoint before each step that may change files, records it on the step, and records a restore made before it', async () => {
  const { outcomePasses, runWith } = await import('../../../testkit/agent-run.js');
  const { ScriptedModelServer } = await import('../../../testkit/scripted-server.js');
  const { defaultWorkflow } = await import('../../../core/workflow/load.js');
  const { readThread, rebuildConversation } = await import('../../../core/agent/resume.js');
  const { systemFor, toolSpecs } = await import('../../../core/agent/prompts.js');
  const { ws, store } = await setup({ 'a.txt': 'a' });
  const server = new ScriptedModelServer({
    contextLength: 32768,
    script: [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi > b.txt' } }] },
      { content: 'Done.' },
    ],
  });
  const endpoint = await server.start();
  const taken: number[] = [];
  const restore = {
    type: 'restore' as const,
    checkpoint: 'c'.repeat(40),
    step: 4,
    run: 'run-0.lar.jsonl',
    before: 'd'.repeat(40),
    reverted: ['a.txt'],
    deleted: [],
    restored: [],
  };
  mkdirSync(join(ws, '.lar', 'runs'), { recursive: true });
  const path = join(ws, '.lar', 'runs', 'run-1.lar.jsonl');
  let seen: unknown[] = [];
  try {
    const r = await runWith({
      endpoint,
      task: 'Make b.',
      runOutcomeCheck: outcomePasses,
      workspace: ws,
      trajectoryPath: path,
      execute: (name) => {
        if (name === 'run_command') writeFileSync(join(ws, 'b.txt'), 'hi');
        return Promise.resolve({
          status: 'ok',
          result: name === 'run_command' ? { exitCode: 0, completion: 'exit', output: '' } : {},
          observation: 'ok',
        });
      },
      onIdle: 'end',
      checkpoint: async (c) => {
        taken.push(c.step);
        return (await store.snapshot(`runs/run-1/steps/${c.step}`, 'before')).commit;
      },
      restored: [restore],
      conversation: undefined,
    });
    assert.equal(r.endReason, 'answered');
    seen = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
  } finally {
    await server.stop();
  }
  assert.deepEqual(taken, [2], 'only before the command (read_file changes nothing)');
  const events = seen as { type: string; tool?: string; checkpoint?: string }[];
  assert.deepEqual(
    events.map((e) => e.type),
    ['header', 'restore', 'message', 'tool_call', 'tool_call', 'message', 'end'],
  );
  assert.equal(events[3]!.checkpoint, undefined);
  assert.match(events[4]!.checkpoint ?? '', /^[0-9a-f]{40}$/);
  // The checkpoint is the workspace before the command: b.txt is not in it, and restoring it removes b.txt.
  assert.equal(await store.show(events[4]!.checkpoint!, 'b.txt'), undefined);
  const p = await store.preview(events[4]!.checkpoint!);
  assert.deepEqual(p.changes, [{ path: 'b.txt', change: 'deleted' }]);
  // A chat restored from this file tells the model of the restore in its next message, as a live follow-up would.
  const runs = readThread(join(ws, '.lar', 'runs'), 'run-1.lar.jsonl');
  assert.equal(runs[0]!.events.filter((e) => e.event.type === 'restore').length, 1);
  assert.ok(rebuildConversation(runs, systemFor(defaultWorkflow()), toolSpecs()).turns.length > 2);
});

test('checkpoints older than the retention are forgotten and their objects reclaimed; the latest stays usable', async () => {
  const { ws, store } = await setup({ 'a.txt': 'one' });
  const old = await store.snapshot('runs/r1/steps/1', 'old');
  writeFileSync(join(ws, 'a.txt'), 'two');
  const latest = await store.snapshot('runs/r2/steps/1', 'latest');
  assert.equal(await store.prune(14 * 86_400_000), 0, 'nothing is old yet');
  const day = 86_400_000;
  assert.equal(await store.prune(14 * day, Date.now() + 15 * day), 2);
  assert.equal((await store.show(latest.commit, 'a.txt'))?.toString(), 'two', 'the latest checkpoint is kept');
  await assert.rejects(store.preview(old.commit), /no checkpoint/, 'an old step says it is gone, clearly');
  assert.equal(await store.prune(14 * day, Date.now() + 15 * day), 0);
});
