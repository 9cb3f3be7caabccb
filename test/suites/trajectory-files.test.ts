// Trajectory files as users have them: huge, binary, changed on disk while
// open. The CLI and the language server report what they can and never fall
// over; nothing in the file is changed by reading it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { LspClient, root } from '../support/lsp-client';
import { lar } from '../support/lar-cli';
import { textOf } from '../../testkit/text';

const dir = mkdtempSync(join(tmpdir(), 'lar-files-'));
let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** About 50 MB: 10,000 reads of distinct files with 5 KB of output each, then a clean finish. */
function fiftyMegabytes(): string {
  const pad = 'x'.repeat(5000);
  const lines = [
    JSON.stringify({
      lar: 1,
      type: 'header',
      task: 'read everything',
      workflow: 'builtin:default-coding',
      started: '2026-11-30T00:00:00Z',
    }),
  ];
  for (let i = 0; i < 10_000; i++)
    lines.push(
      JSON.stringify({
        type: 'tool_call',
        id: `c${i}`,
        tool: 'read_file',
        args: { path: `src/f${i}.ts` },
        status: 'ok',
        result: { output: pad },
      }),
    );
  return lines.join('\n') + '\n';
}

const hover = (uri: string, line: number) =>
  client.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character: 2 } });

test('a 50 MB trajectory: the CLI verifies it and the language server publishes its diagnostics and still answers', async () => {
  const text = fiftyMegabytes();
  assert.ok(text.length > 50_000_000, `${text.length} bytes`);
  const file = join(dir, 'big.lar.jsonl');
  writeFileSync(file, text);
  const cli = await lar(['verify', file]);
  assert.equal(cli.code, 0, cli.err);
  assert.match(cli.out, /10000 steps|10,000 steps|steps\s+10000/);
  const uri = pathToFileURL(file).toString();
  const published = await client.open(uri, text);
  // All 10,000 steps were judged (the visit in progress counts them), without a diagnostic per clean step.
  assert.ok(
    published.diagnostics.some((d) => d.code === 'stage.progress' && /10000\/30 steps/.test(textOf(d.message))),
    JSON.stringify(published.diagnostics.slice(0, 3)),
  );
  assert.ok(published.diagnostics.length < 100, `${published.diagnostics.length} diagnostics`);
  const h = (await hover(uri, 10_000)) as { contents: { value: string } } | null;
  assert.match(h?.contents.value ?? '', /read_file/);
  assert.equal(readFileSync(file, 'utf8').length, text.length, 'reading changes nothing');
});

test('binary junk in a trajectory: each broken line is reported where it is, the rest is verified, nothing crashes', async () => {
  const good = readFileSync(resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl'), 'utf8').split('\n');
  const junk = randomBytes(200_000).toString('latin1').replace(/\n/g, ' ');
  const text = [good[0], good[1], junk, '\u0000\u0001\u0002', ...good.slice(2)].join('\n');
  const file = join(dir, 'junk.lar.jsonl');
  writeFileSync(file, text, 'latin1');
  const cli = await lar(['verify', file]);
  assert.equal(cli.code, 1, 'a malformed line makes the exit code 1');
  assert.match(cli.out + cli.err, /junk\.lar\.jsonl:3:\d+: invalid JSON/);
  assert.match(cli.out + cli.err, /junk\.lar\.jsonl:4:\d+: invalid JSON/);
  assert.match(cli.out, /outcome\s+1/, 'the good lines are still verified');
  const uri = pathToFileURL(file).toString();
  const published = await client.open(uri, readFileSync(file, 'utf8'));
  const malformed = published.diagnostics.filter(
    (d) => d.code === 'line.malformed' || /invalid JSON/.test(textOf(d.message)),
  );
  assert.deepEqual([...new Set(malformed.map((d) => d.range.start.line))].sort(), [2, 3]);
  assert.ok((await hover(uri, 5)) !== undefined, 'the server still answers');
});

test('a trajectory changed on disk while open: the new text is verified, the old verdicts go', async () => {
  const original = readFileSync(resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl'), 'utf8');
  const file = join(dir, 'changing.lar.jsonl');
  writeFileSync(file, original);
  const uri = pathToFileURL(file).toString();
  const first = await client.open(uri, original);
  assert.ok(first.diagnostics.some((d) => d.code === 'outcome.summary'));
  // The editor reloads the file from disk after another program rewrote it: one full change.
  const rewritten = original.replace(/"exitCode":0,"completion":"exit"/, '"exitCode":1,"completion":"exit"');
  assert.notEqual(rewritten, original);
  writeFileSync(file, rewritten);
  const next = await client.next(uri, () =>
    client.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ text: rewritten }],
    }),
  );
  const failed = next.diagnostics.filter((d) => d.code === 'outcome.check_passed');
  assert.ok(failed.length >= 1, JSON.stringify(next.diagnostics.map((d) => d.code)));
  const summary = next.diagnostics.find((d) => d.code === 'outcome.summary');
  assert.match(textOf(summary?.message), /outcome 0/);
});
