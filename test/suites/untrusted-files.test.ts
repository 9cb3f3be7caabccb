/**
 * Files the verifier, the language server and the CLI open because a
 * document names them, and replies a model sends: regular files only,
 * bounded in size, never waited on, and nothing recursive over their depth.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LspClient, root } from '../support/lsp-client';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { fileResolver } from '../../core/workflow/resolve';
import { parseArguments } from '../../core/model/assemble';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import { MAX_JSON_DEPTH } from '../../core/json/depth';

const dir = mkdtempSync(join(tmpdir(), 'lar-untrusted-'));
const header = (workflow: string) =>
  JSON.stringify({ lar: 1, type: 'header', task: 't', workflow, started: '2026-12-01T00:00:00Z' });
const deep = (n: number, leaf = '"x"') => {
  let s = leaf;
  for (let i = 0; i < n; i++) s = `{"a":${s}}`;
  return s;
};

function lar(args: string[], timeoutMs = 60_000): { code: number | null; out: string; timedOut: boolean } {
  const r = spawnSync(process.execPath, [join(root, 'dist/lar.js'), ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return {
    code: r.status,
    out: `${r.stdout}${r.stderr}`,
    timedOut: r.error !== undefined && /ETIMEDOUT/.test(String(r.error)),
  };
}

let client: LspClient;
before(async () => {
  spawnSync('mkfifo', [join(dir, 'fifo.larflow.json')]);
  spawnSync('mkfifo', [join(dir, 'fifo.lar.jsonl')]);
  writeFileSync(join(dir, 'zero.lar.jsonl'), `${header('/dev/zero')}\n`);
  writeFileSync(join(dir, 'via-fifo.lar.jsonl'), `${header('fifo.larflow.json')}\n`);
  client = await LspClient.start();
});
after(async () => {
  await client.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('lar verify: a header naming /dev/zero or a FIFO as its workflow is refused at once, with the reason', () => {
  for (const f of ['zero.lar.jsonl', 'via-fifo.lar.jsonl']) {
    const r = lar(['verify', join(dir, f)], 20_000);
    assert.equal(r.timedOut, false, `${f} hung`);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /is not a regular file \(a device, a FIFO or a socket\): it is not read/);
  }
});

test('lar verify: a trajectory that is itself a FIFO is refused, not waited on', () => {
  const r = lar(['verify', join(dir, 'fifo.lar.jsonl')], 20_000);
  assert.equal(r.timedOut, false);
  assert.equal(r.code, 2, r.out);
  assert.match(r.out, /not a regular file/);
});

test('lar verify: 150 000 ordinary steps are verified and reported', () => {
  const lines = [header('builtin:default-coding')];
  for (let i = 0; i < 150_000; i++)
    lines.push(
      JSON.stringify({
        type: 'tool_call',
        tool: 'read_file',
        args: { path: `src/f${i % 50}.js` },
        status: 'ok',
        result: { output: 'x'.repeat(120) },
      }),
    );
  const file = join(dir, 'long.lar.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const r = lar(['verify', file], 120_000);
  assert.equal(r.timedOut, false);
  assert.match(r.out, /150000 steps/, r.out.slice(-2000));
});

test('the language server (Restricted Mode included) refuses the same workflows and stays up', async () => {
  for (const f of ['zero.lar.jsonl', 'via-fifo.lar.jsonl']) {
    const { diagnostics } = await client.open(
      pathToFileURL(join(dir, f)).toString(),
      readFileSync(join(dir, f), 'utf8'),
    );
    const text = diagnostics.map((d) => (typeof d.message === 'string' ? d.message : d.message.value)).join('\n');
    assert.match(text, /not a regular file/, text);
  }
  // Still answering.
  const ok = await client.open(
    pathToFileURL(join(dir, 'fine.lar.jsonl')).toString(),
    `${header('builtin:default-coding')}\n`,
  );
  assert.ok(Array.isArray(ok.diagnostics));
});

test('arguments nested 5 000 deep (10 KB of valid JSON) are a malformed call, not a crash', () => {
  const p = parseArguments(`{"path":${deep(5000)}}`);
  assert.ok('error' in p);
  assert.match(p.error, /nested 5001 levels deep, more than the 64 accepted/);
  // Up to the limit they are parsed as usual; strings with brackets do not count.
  assert.ok('value' in parseArguments(`{"path":${deep(MAX_JSON_DEPTH - 2)},"s":"[[[[{{{{"}`));
});

test('a trajectory line nested 5 000 deep is a malformed line; the lines around it are verified', () => {
  const text = [
    header('builtin:default-coding'),
    JSON.stringify({ type: 'tool_call', tool: 'read_file', args: { path: 'a' }, status: 'ok' }),
    `{"type":"tool_call","tool":"read_file","args":${deep(5000)},"status":"ok"}`,
    JSON.stringify({ type: 'tool_call', tool: 'read_file', args: { path: 'b' }, status: 'ok' }),
  ].join('\n');
  const report = verifyTrajectoryText(text, { resolve: fileResolver(join(dir, 'x.lar.jsonl')) });
  assert.equal(report.lineErrors.length, 1);
  assert.match(report.lineErrors[0]!.message, /nested 500\d levels deep/);
  assert.equal(report.steps.filter((s) => s.type === 'tool_call').length, 2);
});

test('lar run: a model sending arguments nested 5 000 deep gets a blocked call and the run goes on', async () => {
  const ws = mkdtempSync(join(dir, 'ws-'));
  writeFileSync(join(ws, 'a.txt'), 'hello\n');
  const server = new ScriptedModelServer({
    script: [
      { toolCalls: [{ name: 'read_file', arguments: `{"path":${deep(5000)}}` }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
    ],
    whenDone: 'error',
  });
  const endpoint = await server.start();
  try {
    const r = await new Promise<{ code: number | null; out: string }>((res) => {
      const child = spawn(
        process.execPath,
        [
          join(root, 'dist/lar.js'),
          'run',
          '--task',
          't',
          '--endpoint',
          endpoint,
          '--workspace',
          ws,
          '--max-steps',
          '2',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => res({ code, out }));
    });
    assert.doesNotMatch(r.out, /Maximum call stack/);
    const runs = readdirSync(join(ws, '.lar', 'runs'));
    const lines = readFileSync(join(ws, '.lar', 'runs', runs[0]!), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; status?: string; argsError?: string });
    const calls = lines.filter((l) => l.type === 'tool_call');
    assert.equal(calls.length, 2, r.out);
    assert.equal(calls[0]!.status, 'blocked');
    assert.match(calls[0]!.argsError!, /nested/);
    assert.equal(calls[1]!.status, 'ok');
  } finally {
    await server.stop();
  }
});
