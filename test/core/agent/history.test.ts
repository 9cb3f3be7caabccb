// The chat's run history: what listRuns reports for the files in .lar/runs,
// and the bounded before/after store behind the Diff buttons.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { runBadge } from '../../../extension/trajectory/run-badges';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { listRuns, markInterruptedRuns } from '../../../core/agent/history';
import { newRunId } from '../../../core/agent/run-id';
import { RUN_FILE } from '../../../core/schema/trajectory';
import { FileChanges } from '../../../extension/checkpoints/file-changes';
import { root } from '../../support/lsp-client';

const demo = readFileSync(resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl'), 'utf8');

function workspace(): { ws: string; runs: string; done: () => void } {
  const ws = mkdtempSync(join(tmpdir(), 'lar-history-'));
  const runs = join(ws, '.lar', 'runs');
  mkdirSync(runs, { recursive: true });
  return { ws, runs, done: () => rmSync(ws, { recursive: true, force: true }) };
}

function write(dir: string, name: string, text: string, ageSeconds: number): void {
  const p = join(dir, name);
  writeFileSync(p, text);
  const t = Date.now() / 1000 - ageSeconds;
  utimesSync(p, t, t);
}

test('listRuns: newest first, with task, status and rewards; a run without an end line is unfinished', async () => {
  const { ws, runs, done } = workspace();
  try {
    write(runs, 'run-old.lar.jsonl', demo, 300);
    // The editor died after two lines: no end line.
    write(runs, 'run-cut.lar.jsonl', demo.split('\n').slice(0, 4).join('\n') + '\n', 100);
    write(runs, 'run-garbage.lar.jsonl', '\u0000\u0001 not json\n{"lar":1', 200);
    write(runs, 'notes.txt', 'not a run', 0);
    write(runs, '..hidden.lar.jsonl', demo, 0);
    const list = await listRuns(ws);
    assert.deepEqual(
      list.map((r) => r.file),
      ['run-cut.lar.jsonl', 'run-garbage.lar.jsonl', 'run-old.lar.jsonl'],
    );
    const [cut, garbage, old] = list;
    assert.equal(old!.task, 'Make the failing test in test/sum.test.js pass');
    assert.equal(old!.status, 'submitted');
    assert.equal(old!.model, 'LAR-9B');
    assert.equal(old!.started, '2026-11-30T09:00:00Z');
    assert.equal(old!.outcome, 1);
    assert.ok(old!.return! > 1, `return ${old!.return}`);
    assert.equal(cut!.status, 'unfinished');
    assert.notEqual(cut!.outcome, 1, 'an unfinished run never shows a passed outcome');
    assert.equal(garbage!.status, 'unfinished');
    assert.equal(garbage!.return, undefined);
    assert.match(garbage!.note ?? '', /workflow|header/);
  } finally {
    done();
  }
});

test('listRuns: limit, huge files listed unverified, no runs folder is an empty list', async () => {
  const { ws, runs, done } = workspace();
  try {
    for (let i = 0; i < 5; i++) write(runs, `run-${i}.lar.jsonl`, demo, 100 - i);
    assert.deepEqual(
      (await listRuns(ws, { limit: 2 })).map((r) => r.file),
      ['run-4.lar.jsonl', 'run-3.lar.jsonl'],
    );
    const big = await listRuns(ws, { limit: 1, maxVerifyBytes: 100 });
    assert.equal(big[0]!.task, 'Make the failing test in test/sum.test.js pass', 'the header is still read');
    assert.equal(big[0]!.return, undefined);
    assert.match(big[0]!.note ?? '', /open it to verify/);
    assert.deepEqual(await listRuns(join(ws, 'nowhere')), []);
  } finally {
    done();
  }
});

test('run ids make file names the history accepts', () => {
  const id = newRunId(new Date('2026-11-30T10:20:30.456Z'));
  assert.equal(id, 'run-2026-11-30T10-20-30-456Z');
  assert.ok(RUN_FILE.test(`${id}.lar.jsonl`));
});

test('FileChanges keeps before/after per write and drops the oldest past its budget', () => {
  const changes = new FileChanges(100);
  const a = changes.add('src/a.js', 'old', 'new');
  const b = changes.add('src/b.js', undefined, 'x'.repeat(20));
  assert.equal(changes.get(a.id)?.before, 'old');
  assert.equal(b.created, true);
  assert.equal(changes.get(b.id)?.before, '');
  const c = changes.add('src/c.js', 'y'.repeat(20), 'z'.repeat(10));
  assert.equal(changes.get(a.id), undefined, 'the oldest went');
  assert.equal(changes.get(b.id)?.after.length, 20, 'only as many as needed went');
  assert.equal(changes.get(c.id)?.after, 'z'.repeat(10));
  const huge = changes.add('big.txt', '', 'w'.repeat(1000));
  assert.equal(changes.get(huge.id)?.after.length, 1000, 'the newest change is kept even when alone over budget');
  assert.equal(changes.get(b.id), undefined);
  assert.equal(changes.get(c.id), undefined);
});

test('markInterruptedRuns ends old, quiet unfinished runs as interrupted, and leaves finished, young and still-written ones alone', async () => {
  const { ws, runs, done } = workspace();
  try {
    const now = Date.now();
    const ago = (min: number) => new Date(now - min * 60_000).toISOString();
    const started = (iso: string) => demo.split('\n')[0]!.replace('"2026-11-30T09:00:00Z"', JSON.stringify(iso));
    const unfinished = (iso: string) => [started(iso), ...demo.split('\n').slice(1, 4)].join('\n') + '\n';
    write(runs, 'run-old-cut.lar.jsonl', unfinished(ago(120)), 110 * 60);
    write(runs, 'run-young-cut.lar.jsonl', unfinished(ago(1)), 0);
    // Started long ago but written a minute ago: a run that outlived its limit is still live.
    write(runs, 'run-old-but-busy.lar.jsonl', unfinished(ago(120)), 60);
    write(runs, 'run-done.lar.jsonl', demo, 110 * 60);
    // Cut inside a line: the broken line stays, the end goes on its own line.
    write(runs, 'run-torn.lar.jsonl', unfinished(ago(120)) + '{"type":"tool_ca', 110 * 60);
    const marked = await markInterruptedRuns(ws, 65 * 60_000, now);
    assert.deepEqual(marked.sort(), ['run-old-cut.lar.jsonl', 'run-torn.lar.jsonl']);
    const old = readFileSync(join(runs, 'run-old-cut.lar.jsonl'), 'utf8');
    assert.match(old.trimEnd().split('\n').at(-1)!, /"type":"end","reason":"interrupted"/);
    const torn = readFileSync(join(runs, 'run-torn.lar.jsonl'), 'utf8').trimEnd().split('\n');
    assert.equal(torn.at(-2), '{"type":"tool_ca');
    assert.match(torn.at(-1)!, /"reason":"interrupted"/);
    assert.equal(readFileSync(join(runs, 'run-done.lar.jsonl'), 'utf8'), demo, 'a finished run is not touched');
    assert.doesNotMatch(
      readFileSync(join(runs, 'run-young-cut.lar.jsonl'), 'utf8'),
      /interrupted/,
      'a young run may still be live elsewhere',
    );
    assert.doesNotMatch(
      readFileSync(join(runs, 'run-old-but-busy.lar.jsonl'), 'utf8'),
      /interrupted/,
      'a run still being written is live',
    );
    const list = await listRuns(ws);
    assert.equal(list.find((r) => r.file === 'run-old-cut.lar.jsonl')!.status, 'interrupted');
    assert.deepEqual(await markInterruptedRuns(ws, 65 * 60_000, now + 1000), [], 'marking twice changes nothing');
  } finally {
    done();
  }
});

test('each way a run can end has its own explorer mark; a failed submit is not marked as passed', () => {
  const statuses = ['submitted', 'answered', 'interrupted', 'cancelled', 'limit', 'error', 'unfinished'] as const;
  const marks = statuses.map((status) => runBadge({ status, outcome: 0, steps: 3, return: 0.25 }));
  for (const m of marks) assert.ok(m.badge.length >= 1 && [...m.badge].length <= 2 && m.tooltip.includes('3 steps'));
  assert.deepEqual(runBadge({ status: 'submitted', outcome: 1, steps: 8, return: 1.2 }), {
    badge: '✓',
    tone: 'pass',
    tooltip: 'Submitted, outcome check passed (8 steps, return 1.200)',
  });
  assert.equal(marks[0]!.tone, 'fail', 'submitted with outcome 0');
  assert.equal(marks[2]!.tone, 'warn');
  assert.notEqual(marks[1]!.badge, '✓', 'an answered chat is not a passed task');
});
