import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import type { ChatRequestBody, ScriptedToolCall, ScriptedTurn } from '../../testkit/scripted-turns';
import { lar } from '../support/lar-cli';

const cmd = (command: string): ScriptedToolCall => ({ name: 'run_command', arguments: { command } });
const stage = (to: string): ScriptedToolCall => ({ name: 'enter_stage', arguments: { stage: to } });

/**
 * A model for concurrent rollouts: each conversation gets a number at its first request and says it in its
 * first command's output, so later requests (any order, any rollout) find their own script again.
 */
function groupModel(plan: (n: number) => { sleep: number; failAt?: number }): ScriptedModelServer {
  let conversations = 0;
  return new ScriptedModelServer({
    script: [],
    respond: (body: ChatRequestBody): ScriptedTurn => {
      const messages = body.messages ?? [];
      const answered = messages.filter((m) => m.role === 'assistant').length;
      const n = answered === 0 ? ++conversations : Number(/conv-(\d+)/.exec(JSON.stringify(messages))?.[1]);
      const { sleep, failAt } = plan(n);
      if (answered === failAt) return { kind: 'http_error', status: 400, body: { error: { message: 'bad request' } } };
      const turns: ScriptedTurn[] = [
        { toolCalls: [cmd(`echo conv-${n}; sleep ${sleep}`)] },
        { toolCalls: [stage('work')] },
        { toolCalls: [cmd('true')] },
        { toolCalls: [stage('verify')] },
        { toolCalls: [cmd('true')] },
        { toolCalls: [{ name: 'submit', arguments: {} }] },
      ];
      return turns[Math.min(answered, turns.length - 1)]!;
    },
  });
}

async function group(
  server: ScriptedModelServer,
  rollouts: number,
  extra: string[],
): Promise<{
  code: number | null;
  out: string;
  err: string;
  spans: [number, number][];
  dir: string;
  models: { seed?: number; temperature?: number }[];
}> {
  const ws = mkdtempSync(join(tmpdir(), 'lar-group-'));
  writeFileSync(join(ws, 'README'), 'a task\n');
  const endpoint = await server.start();
  try {
    const r = await lar(
      [
        ...[
          'run',
          '--task',
          'a task',
          '--endpoint',
          endpoint,
          '--workspace',
          ws,
          '--workflow',
          'builtin:terminal-task',
        ],
        ...['--sandbox', 'off', '--rollouts', String(rollouts), ...extra],
      ],
      {},
    );
    const groups = readdirSync(join(ws, '.lar', 'runs'));
    const dir = join(ws, '.lar', 'runs', groups[0]!);
    const spans: [number, number][] = [];
    const models: { seed?: number; temperature?: number }[] = [];
    for (let k = 1; k <= rollouts; k++) {
      const lines = readFileSync(join(dir, `rollout-${k}.lar.jsonl`), 'utf8')
        .trim()
        .split('\n');
      const header = JSON.parse(lines[0]!) as { started: string; model: { seed?: number; temperature?: number } };
      models.push(header.model);
      const start = Date.parse(header.started);
      const end = Date.parse((JSON.parse(lines[lines.length - 1]!) as { at: string }).at);
      spans.push([start, end]);
    }
    return { ...r, spans, dir, models };
  } finally {
    await server.stop();
  }
}

test('--concurrency runs rollouts at the same time, and a slow one holds only itself', async () => {
  // Conversation 1 is slow (6 s: a wide margin on a loaded machine); the others are quick.
  const r = await group(
    groupModel((n) => ({ sleep: n === 1 ? 6 : 0.2 })),
    4,
    ['--concurrency', '2'],
  );
  assert.equal(r.code, 0, r.err + r.out);
  // Whichever rollout drew the slow conversation: the other worker went through the rest while it ran.
  const slow = r.spans.reduce((a, b) => (b[1] - b[0] > a[1] - a[0] ? b : a));
  const others = r.spans.filter((s) => s !== slow);
  assert.ok(
    others.every(([start, end]) => start < slow[1] && end < slow[1]),
    `spans ${JSON.stringify(r.spans)}`,
  );
  assert.match(r.err, /group 4\/4 done, 0 running, 0 passed, 0 left out/);
  assert.match(r.out, /group: 4 of 4 rollouts in the group/);
});

test('without --concurrency rollouts run one after the other; each header records its seed and temperature, which every request carried', async () => {
  const server = groupModel(() => ({ sleep: 0.2 }));
  const r = await group(server, 2, ['--seed', '100', '--temperature', '0.5']);
  assert.equal(r.code, 0, r.err + r.out);
  assert.ok(r.spans[1]![0] >= r.spans[0]![1], `spans ${JSON.stringify(r.spans)}`);
  assert.deepEqual(
    r.models.map((m) => [m.seed, m.temperature]),
    [
      [100, 0.5],
      [101, 0.5],
    ],
  );
  const chats = server.requests.filter((q) => q.path.endsWith('/chat/completions'));
  const sampled = new Set(
    chats.map((q) =>
      JSON.stringify([(q.body as { seed?: number }).seed, (q.body as { temperature?: number }).temperature]),
    ),
  );
  assert.deepEqual([...sampled].sort(), ['[100,0.5]', '[101,0.5]']);
});

test('a rollout the server breaks off is left out of the group, which says so; --keep keeps the copies', async () => {
  const r = await group(
    groupModel((n) => ({ sleep: 0.1, ...(n === 2 ? { failAt: 2 } : {}) })),
    3,
    ['--concurrency', '3', '--keep'],
  );
  assert.equal(r.code, 1, 'not every rollout joined the group');
  assert.match(r.out, /group: 2 of 3 rollouts in the group/);
  assert.match(r.out, /left out: it ended on an error/);
  const advantages = readFileSync(join(r.dir, 'advantages.jsonl'), 'utf8').trim().split('\n');
  assert.equal(advantages.length, 2);
  const kept = [...r.out.matchAll(/── rollout \d\/3 in (\S+) ──/g)].map((m) => m[1]!);
  assert.equal(kept.length, 3);
  for (const dir of kept) assert.ok(existsSync(join(dir, 'README')), dir);
});

test('a rollout that runs out of time ends on its limit and stays in the group, scored; the others go on', async () => {
  const r = await group(
    groupModel((n) => ({ sleep: n === 1 ? 6 : 0.1 })),
    3,
    // Margins wide enough for a loaded machine: the quick ones need well under a second of the 4.
    ['--concurrency', '3', '--max-time', '4'],
  );
  assert.equal(r.code, 0, r.err + r.out);
  assert.match(r.out, /rollout \d: limit, outcome 0/);
  assert.equal((r.out.match(/rollout \d: submitted/g) ?? []).length, 2);
  assert.match(r.out, /group: 3 of 3 rollouts in the group/);
});

test('--concurrency and --keep need --rollouts, and counts, seeds and temperatures must be sane', async () => {
  for (const args of [
    ['--seed', '-1'],
    ['--seed', 'x'],
    ['--temperature', '3'],
    ['--temperature', '-0.1'],
    ['--max-time', '0'],
    ['--concurrency', '2'],
    ['--keep'],
    ['--rollouts', '2', '--concurrency', '0'],
    ['--rollouts', '2', '--concurrency', '17'],
  ])
    assert.equal((await lar(['run', '--task', 'x', ...args], {})).code, 2, args.join(' '));
});
