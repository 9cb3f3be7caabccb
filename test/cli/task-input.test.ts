/** `lar run --task -`: the task Harbor's adapters pipe in arrives byte for byte, and bad input runs nothing. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import { MAX_TASK_BYTES } from '../../cli/task-input';
import { lar } from '../support/lar-cli';

function workspace(): string {
  const ws = mkdtempSync(join(tmpdir(), 'lar-stdin-'));
  writeFileSync(join(ws, 'notes.txt'), 'hello\n');
  return ws;
}

const runArgs = (endpoint: string, ws: string): string[] => [
  ...'run --task - --max-steps 1 --endpoint'.split(' '),
  endpoint,
  '--workspace',
  ws,
];

test('lar run --task - takes quotes, newlines, $(…) and non-ASCII from stdin byte for byte', async () => {
  const task =
    'Fix the "parser" & don\'t touch `id` or $(rm -rf ~) or ${HOME}\n' +
    '\tsecond line\\n stays literal; Ünïcødé — 日本語 🚀\r\n' +
    'ends without a newline';
  const ws = workspace();
  const server = new ScriptedModelServer({
    script: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }],
  });
  const endpoint = await server.start();
  try {
    const r = await lar(runArgs(endpoint, ws), {}, Buffer.from(task, 'utf8'));
    const runs = readdirSync(join(ws, '.lar', 'runs')).filter((f) => f.endsWith('.lar.jsonl'));
    assert.equal(runs.length, 1, r.err + r.out);
    const text = readFileSync(join(ws, '.lar', 'runs', runs[0]!), 'utf8');
    const header = JSON.parse(text.slice(0, text.indexOf('\n'))) as { task: string };
    assert.equal(header.task, task);
    const asked = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(asked.includes(JSON.stringify(task).slice(1, -1)), 'the model is given the same task');
    assert.ok(!existsSync(join(ws, 'rm')), 'nothing in the task was run by a shell');
  } finally {
    await server.stop();
  }
});

test('lar run --task - refuses an empty, blank, oversized or non-UTF-8 stdin with exit 2, running nothing', async () => {
  const server = new ScriptedModelServer({
    script: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }],
  });
  const endpoint = await server.start();
  try {
    const cases: [string, Buffer, RegExp][] = [
      ['empty', Buffer.alloc(0), /--task -: the task on standard input is empty/],
      ['blank', Buffer.from(' \n\t\r\n'), /--task -: the task on standard input is empty \(only white space\)/],
      ['over the bound', Buffer.alloc(MAX_TASK_BYTES + 1, 'a'), /--task -: .* longer than 1048576 bytes/],
      ['far over the bound', Buffer.alloc(8 * MAX_TASK_BYTES, 'a'), /--task -: .* longer than 1048576 bytes/],
      ['a stray byte', Buffer.from([0x66, 0x69, 0x78, 0xff, 0x0a]), /--task -: .* not valid UTF-8/],
      ['an overlong slash', Buffer.from([0x61, 0xc0, 0xaf]), /--task -: .* not valid UTF-8/],
      ['an encoded surrogate', Buffer.from([0x61, 0xed, 0xa0, 0x80]), /--task -: .* not valid UTF-8/],
      ['cut mid-character', Buffer.from('fix é', 'utf8').subarray(0, 5), /--task -: .* not valid UTF-8/],
    ];
    for (const [what, input, message] of cases) {
      const ws = workspace();
      const r = await lar(runArgs(endpoint, ws), {}, input);
      assert.equal(r.code, 2, `${what}: ${r.err}`);
      assert.match(r.err, message, what);
      assert.match(r.err, /nothing was run/, what);
      assert.ok(!existsSync(join(ws, '.lar')), `${what}: no run was started`);
    }
    assert.equal(server.requests.length, 0, 'the model was never asked');
  } finally {
    await server.stop();
  }
});

test('exactly the bound is accepted', async () => {
  const ws = workspace();
  const server = new ScriptedModelServer({
    script: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }],
  });
  const endpoint = await server.start();
  try {
    const task = 'é'.repeat(MAX_TASK_BYTES / 2);
    const r = await lar(runArgs(endpoint, ws), {}, Buffer.from(task, 'utf8'));
    assert.notEqual(r.code, 2, r.err);
    const runs = readdirSync(join(ws, '.lar', 'runs')).filter((f) => f.endsWith('.lar.jsonl'));
    const text = readFileSync(join(ws, '.lar', 'runs', runs[0]!), 'utf8');
    assert.equal((JSON.parse(text.slice(0, text.indexOf('\n'))) as { task: string }).task, task);
  } finally {
    await server.stop();
  }
});
