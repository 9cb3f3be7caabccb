// History by conversation: how groupThreads groups and orders runs (table and property tests), and what
// listThreads reads from a real runs folder (malformed, unfinished, huge, shared ids, many files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { groupThreads, listThreads, threadIdOf, type ThreadRunHead } from '../../../core/agent/threads';
import { fc } from '../../support/fc';
import { root } from '../../support/lsp-client';

const demo = readFileSync(resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl'), 'utf8');
const demoLines = demo.trimEnd().split('\n');
const T0 = Date.parse('2026-12-01T10:00:00Z');

/** A head as readRunHead gives it. */
function head(file: string, minutes: number, extra: Partial<ThreadRunHead> = {}): ThreadRunHead {
  return {
    file: `${file}.lar.jsonl`,
    task: `task of ${file}`,
    started: new Date(T0 + minutes * 60_000).toISOString(),
    status: 'answered',
    mtimeMs: T0 + minutes * 60_000 + 30_000,
    ...extra,
  };
}
const inThread = (id: string, turn: number) => ({ thread: { id, turn } });

test('groupThreads: one row per conversation, runs in order, newest activity first, figures of the latest run', () => {
  const threads = groupThreads([
    head('run-a2', 5, { ...inThread('run-a1', 2), status: 'submitted', task: 'follow-up' }),
    head('run-b1', 3, inThread('run-b1', 1)),
    head('run-a1', 1, inThread('run-a1', 1)),
    // A run from before threads were recorded is a conversation of its own.
    head('run-old', 0),
  ]);
  assert.deepEqual(
    threads.map((t) => [t.id, t.task, t.runs.map((r) => r.file), t.status]),
    [
      ['run-a1', 'task of run-a1', ['run-a1.lar.jsonl', 'run-a2.lar.jsonl'], 'submitted'],
      ['run-b1', 'task of run-b1', ['run-b1.lar.jsonl'], 'answered'],
      ['run-old', 'task of run-old', ['run-old.lar.jsonl'], 'answered'],
    ],
  );
  assert.equal(threads[0]!.started, new Date(T0 + 60_000).toISOString(), 'started: its first run');
  assert.equal(threads[0]!.lastActive, new Date(T0 + 5 * 60_000 + 30_000).toISOString(), 'active: its last write');
});

const cases: { name: string; heads: ThreadRunHead[]; expect: [string, string, string[], string][] }[] = [
  {
    name: 'files sharing an id without being a chain read in the order their headers give, then by name',
    heads: [
      head('run-z', 2, inThread('shared', 1)),
      head('run-y', 2, inThread('shared', 1)),
      head('run-x', 1, { ...inThread('shared', 7), started: 'not a time', mtimeMs: T0 }),
    ],
    expect: [['shared', 'task of run-x', ['run-x.lar.jsonl', 'run-y.lar.jsonl', 'run-z.lar.jsonl'], 'answered']],
  },
  {
    name: 'an unfinished latest run makes the conversation unfinished, an interrupted earlier one does not',
    heads: [
      head('run-1', 1, { ...inThread('c', 1), status: 'interrupted' }),
      head('run-2', 2, { ...inThread('c', 2), status: 'unfinished' }),
    ],
    expect: [['c', 'task of run-1', ['run-1.lar.jsonl', 'run-2.lar.jsonl'], 'unfinished']],
  },
  {
    name: 'a first run that lost its task gives way to the next one that has it; unreadable files stand alone',
    heads: [
      head('run-1', 1, { ...inThread('c', 1), task: '' }),
      head('run-2', 2, { ...inThread('c', 2), task: 'second' }),
      head('run-bad', 3, { task: '', status: 'unfinished', note: 'not readable: EACCES' }),
    ],
    expect: [
      ['run-bad', '', ['run-bad.lar.jsonl'], 'unfinished'],
      ['c', 'second', ['run-1.lar.jsonl', 'run-2.lar.jsonl'], 'answered'],
    ],
  },
  { name: 'no runs, no conversations', heads: [], expect: [] },
];
for (const c of cases)
  test(`groupThreads: ${c.name}`, () => {
    assert.deepEqual(
      groupThreads(c.heads).map((t) => [t.id, t.task, t.runs.map((r) => r.file), t.status]),
      c.expect,
    );
  });

const headArb = fc
  .record({
    n: fc.integer({ min: 0, max: 999 }),
    thread: fc.option(fc.constantFrom('t1', 't2', 't3', 'run-7'), { nil: undefined }),
    minutes: fc.integer({ min: 0, max: 50 }),
    write: fc.integer({ min: 0, max: 50 }),
    badTime: fc.boolean(),
  })
  .map(({ n, thread, minutes, write, badTime }) =>
    head(`run-${n}`, minutes, {
      ...(thread ? inThread(thread, 1) : {}),
      ...(badTime ? { started: 'garbage' } : {}),
      mtimeMs: T0 + write * 60_000,
    }),
  );

test('groupThreads (property): every run in exactly one row, rows newest activity first, runs in time order', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(headArb, { selector: (h) => h.file, maxLength: 30 }),
      fc.integer({ min: 0, max: 1000 }),
      (heads, shuffle) => {
        const threads = groupThreads(heads);
        const files = threads.flatMap((t) => t.runs.map((r) => r.file));
        assert.deepEqual([...files].sort(), heads.map((h) => h.file).sort(), 'each run listed once');
        assert.equal(new Set(threads.map((t) => t.id)).size, threads.length, 'one row per conversation');
        for (const t of threads) {
          for (const r of t.runs) assert.equal(threadIdOf(heads.find((h) => h.file === r.file)!), t.id);
          const times = t.runs.map((r) => {
            const h = heads.find((x) => x.file === r.file)!;
            return Number.isFinite(Date.parse(h.started)) ? Date.parse(h.started) : h.mtimeMs;
          });
          assert.deepEqual(
            times,
            [...times].sort((a, b) => a - b),
          );
          assert.equal(t.status, t.runs.at(-1)!.status);
        }
        const active = threads.map((t) => Date.parse(t.lastActive));
        assert.deepEqual(
          active,
          [...active].sort((a, b) => b - a),
        );
        // The input's order does not matter.
        const rotated = [
          ...heads.slice(shuffle % (heads.length || 1)),
          ...heads.slice(0, shuffle % (heads.length || 1)),
        ];
        assert.deepEqual(groupThreads(rotated), threads);
      },
    ),
  );
});

function workspace(): { ws: string; runs: string; done: () => void } {
  const ws = mkdtempSync(join(tmpdir(), 'lar-threads-'));
  const runs = join(ws, '.lar', 'runs');
  mkdirSync(runs, { recursive: true });
  return { ws, runs, done: () => rmSync(ws, { recursive: true, force: true }) };
}

/** The demo trajectory as run `name` of a chat (its header's task, start and thread), written `ageSeconds` ago. */
function writeRun(
  dir: string,
  name: string,
  o: { task: string; started: string; thread?: object; ageSeconds: number; cut?: boolean },
): void {
  const header = { ...(JSON.parse(demoLines[0]!) as object), task: o.task, started: o.started, thread: o.thread };
  const lines = [JSON.stringify(header), ...demoLines.slice(1, o.cut ? 3 : undefined)];
  const p = join(dir, `${name}.lar.jsonl`);
  writeFileSync(p, `${lines.join('\n')}\n`);
  const t = Date.now() / 1000 - o.ageSeconds;
  utimesSync(p, t, t);
}

test('listThreads: conversations from a runs folder, with the latest run verified; broken files do not break it', async () => {
  const { ws, runs, done } = workspace();
  try {
    writeRun(runs, 'run-1', {
      task: 'First question',
      started: '2026-12-01T10:00:00Z',
      thread: { id: 'run-1', turn: 1 },
      ageSeconds: 500,
    });
    writeRun(runs, 'run-2', {
      task: 'Other chat',
      started: '2026-12-01T10:05:00Z',
      thread: { id: 'run-2', turn: 1 },
      ageSeconds: 400,
    });
    writeRun(runs, 'run-3', {
      task: 'Follow-up',
      started: '2026-12-01T10:10:00Z',
      thread: { id: 'run-1', turn: 2, previous: 'run-1.lar.jsonl' },
      ageSeconds: 300,
      cut: true,
    });
    writeFileSync(join(runs, 'run-garbage.lar.jsonl'), '\u0000 not json\n{"lar":1');
    utimesSync(join(runs, 'run-garbage.lar.jsonl'), Date.now() / 1000 - 1000, Date.now() / 1000 - 1000);
    writeFileSync(join(runs, 'notes.txt'), 'not a run');
    const threads = await listThreads(ws);
    assert.deepEqual(
      threads.map((t) => [t.id, t.task, t.runs.length, t.status]),
      [
        ['run-1', 'First question', 2, 'unfinished'],
        ['run-2', 'Other chat', 1, 'submitted'],
        ['run-garbage', '', 1, 'unfinished'],
      ],
    );
    const [chat, other, garbage] = threads;
    assert.notEqual(chat!.outcome, 1, 'an unfinished latest run never shows a passed outcome');
    assert.equal(other!.outcome, 1);
    assert.ok(other!.return! > 1, `the latest run's return: ${other!.return}`);
    assert.equal(garbage!.return, undefined);
    assert.match(garbage!.note ?? '', /workflow|header/);
    // Huge files: listed from their first and last lines, not verified.
    const big = await listThreads(ws, { maxVerifyBytes: 100 });
    assert.equal(big[1]!.task, 'Other chat');
    assert.equal(big[1]!.status, 'submitted');
    assert.equal(big[1]!.return, undefined);
    assert.match(big[1]!.note ?? '', /open it to verify/);
    // Limits: the conversations with the newest activity, from the newest files.
    assert.deepEqual(
      (await listThreads(ws, { limit: 1 })).map((t) => t.id),
      ['run-1'],
    );
    assert.deepEqual(
      (await listThreads(ws, { maxFiles: 2 })).map((t) => [t.id, t.runs.length]),
      [
        ['run-1', 1],
        ['run-2', 1],
      ],
    );
    assert.deepEqual(await listThreads(join(ws, 'nowhere')), []);
  } finally {
    done();
  }
});

test('a run whose header is longer than a read (a long message, its attachments) stays in its conversation', async () => {
  const { ws, runs, done } = workspace();
  try {
    writeRun(runs, 'run-1', {
      task: 'Short start',
      started: '2026-12-01T10:00:00Z',
      thread: { id: 'run-1', turn: 1 },
      ageSeconds: 500,
    });
    // 35 000 two-byte characters: a header line of about 70 KB, past one 64 KB read.
    const long = `Follow-up ${'é'.repeat(35_000)}`;
    writeRun(runs, 'run-2', {
      task: long,
      started: '2026-12-01T10:10:00Z',
      thread: { id: 'run-1', turn: 2, previous: 'run-1.lar.jsonl' },
      ageSeconds: 300,
    });
    const threads = await listThreads(ws);
    assert.deepEqual(
      threads.map((t) => [t.id, t.runs.length, t.status]),
      [['run-1', 2, 'submitted']],
    );
    assert.equal(threads[0]!.runs[1]!.task.slice(0, 10), 'Follow-up ');
  } finally {
    done();
  }
});
