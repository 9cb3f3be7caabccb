import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedStdioTransport } from '../../../core/mcp/stdio';

/** A process that writes `script`'s output to stdout, pieces apart in time, then waits to be closed. */
function writer(pieces: string[]): string {
  return `const p = ${JSON.stringify(pieces)}; let i = 0;
const next = () => { if (i < p.length) process.stdout.write(p[i++], () => setTimeout(next, 5)); };
next(); process.stderr.write('x'.repeat(5000) + 'the tail'); setInterval(() => {}, 1000);`;
}

test('a line past the bound is skipped unread and said; messages before and after it, cut anywhere, arrive', async () => {
  const ok = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, result: {} });
  const big = JSON.stringify({ jsonrpc: '2.0', id: 2, result: { text: 'y'.repeat(3000) } });
  const pieces = [
    ok(1).slice(0, 10),
    `${ok(1).slice(10)}\n${big.slice(0, 1500)}`,
    `${big.slice(1500)}\r\n`,
    'not json\n',
    `${ok(3)}\r\n`,
  ];
  const t = new BoundedStdioTransport(
    { file: process.execPath, args: ['-e', writer(pieces)], env: { PATH: process.env.PATH ?? '' }, cwd: process.cwd() },
    { maxMessageBytes: 1024, onOversized: (n) => oversized.push(n) },
  );
  const oversized: number[] = [];
  const ids: unknown[] = [];
  const errors: string[] = [];
  t.onmessage = (m) => ids.push((m as { id: unknown }).id);
  t.onerror = (e) => errors.push(e.message);
  let closed = false;
  t.onclose = () => (closed = true);
  await t.start();
  for (let i = 0; i < 200 && ids.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(ids, [1, 3]);
  assert.equal(oversized.length, 1);
  assert.ok(oversized[0]! > 1024);
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /^the server wrote a line that is not JSON/);
  assert.ok(t.stderr.endsWith('the tail') && t.stderr.length <= 4096, 'stderr is kept as a bounded tail');
  await t.close();
  assert.ok(closed);
  assert.match(t.exited ?? '', /signal SIGTERM|exit code/);
});

test('a program that does not exist: start fails with why, and the transport says it closed', async () => {
  const t = new BoundedStdioTransport(
    { file: '/nonexistent/server', args: [], env: {}, cwd: process.cwd() },
    { maxMessageBytes: 1024, onOversized: () => undefined },
  );
  let closed = false;
  t.onclose = () => (closed = true);
  t.onerror = () => undefined;
  await assert.rejects(t.start(), /ENOENT/);
  assert.ok(closed);
  await assert.rejects(t.send({ jsonrpc: '2.0', method: 'ping', id: 1 }), /not running/);
});
