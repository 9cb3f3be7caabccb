/**
 * A run's record cannot be changed after it ended without `lar verify`
 * saying so: the digest the writer computed is kept outside the workspace
 * (LAR_STATE_DIR here, the user's state folder otherwise), under the file's
 * path and under its header, and compared with the file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModelServer } from '../../../testkit/scripted-server';
import { checkDigest, recordDigest, type DigestCheck } from '../../../core/agent/run-digests';
import { lar } from '../../support/lar-cli';

async function unconfinedRun(): Promise<{ ws: string; file: string }> {
  const ws = mkdtempSync(join(tmpdir(), 'lar-digest-'));
  writeFileSync(join(ws, 'a.txt'), 'x\n');
  writeFileSync(
    join(ws, 'wf.larflow.json'),
    JSON.stringify({
      lar: 1,
      id: 'one',
      stages: [{ id: 'work', tools: ['read_file', 'submit'], budget: 5 }],
      transitions: {},
      start: 'work',
      terminal: ['work'],
      outcome: { command: 'false' },
      sandbox: {},
    }),
  );
  const server = new ScriptedModelServer({
    script: [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
      { toolCalls: [{ name: 'submit', arguments: {} }] },
    ],
  });
  const endpoint = await server.start();
  try {
    const r = await lar([
      'run',
      '--task',
      'read a.txt',
      '--endpoint',
      endpoint,
      '--workspace',
      ws,
      '--workflow',
      join(ws, 'wf.larflow.json'),
      '--sandbox',
      'off',
    ]);
    assert.match(r.out, /outcome 0/, r.err + r.out);
  } finally {
    await server.stop();
  }
  const runs = join(ws, '.lar', 'runs');
  return { ws, file: join(runs, readdirSync(runs)[0]!) };
}

/** What `lar verify --json` says, in its last line (the summary), of whether the file changed after its run ended. */
async function integrityState(file: string): Promise<DigestCheck['state']> {
  const last = (await lar(['verify', file, '--json'])).out.trimEnd().split('\n').at(-1)!;
  return (JSON.parse(last) as { integrity: DigestCheck }).integrity.state;
}

test('lar verify says when a trajectory changed after its run ended (an outcome flipped), and fails; untouched, it says nothing more', async () => {
  const { file } = await unconfinedRun();
  const clean = await lar(['verify', file]);
  assert.doesNotMatch(clean.err, /changed after its run ended/);
  assert.equal(await integrityState(file), 'unchanged');
  // The check's failure turned into a pass, as a helper left by an unconfined run could do.
  const text = readFileSync(file, 'utf8');
  writeFileSync(
    file,
    text.replace(/"type":"outcome","command":"false","exitCode":1/, '"type":"outcome","command":"false","exitCode":0'),
  );
  assert.notEqual(readFileSync(file, 'utf8'), text, 'the outcome line was there to flip');
  const forged = await lar(['verify', file]);
  assert.equal(forged.code, 1);
  assert.match(
    forged.err,
    /changed after its run ended .*: it held \d+ bytes with sha-256 [0-9a-f]{64}, it now holds \d+ with [0-9a-f]{64}\. Its rewards are not the run's\./,
  );
  assert.equal(await integrityState(file), 'changed');
});

test('a trajectory moved elsewhere is still found by its header; one no run of this machine wrote is just verified', async () => {
  const { ws, file } = await unconfinedRun();
  const moved = join(ws, 'elsewhere.lar.jsonl');
  renameSync(file, moved);
  writeFileSync(moved, readFileSync(moved, 'utf8') + '{"type":"message","role":"user","content":"appended"}\n');
  assert.match((await lar(['verify', moved])).err, /changed after its run ended/);
  const foreign = join(ws, 'foreign.lar.jsonl');
  writeFileSync(foreign, readFileSync(moved, 'utf8').replace(/"task":"[^"]*"/, '"task":"another"'));
  const r = await lar(['verify', foreign]);
  assert.doesNotMatch(r.err, /changed after its run ended/);
  assert.equal(checkDigest(foreign, readFileSync(foreign)).state, 'unrecorded');
});

test('a state folder that cannot be written costs the record, never the run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-state-'));
  // A file where the folder should be: no one, root included, can make the records there.
  writeFileSync(join(dir, 'digests'), 'not a folder');
  const f = join(dir, 't.lar.jsonl');
  writeFileSync(f, '{"lar":1}\n');
  assert.doesNotThrow(() => recordDigest(f, 'a'.repeat(64), { LAR_STATE_DIR: dir }));
  assert.equal(checkDigest(f, readFileSync(f), { LAR_STATE_DIR: dir }).state, 'unrecorded');
});

test('lar advantages leaves out, and lar export refuses, a trajectory changed after its run ended; a header reformatted still finds its record', async () => {
  const { ws, file } = await unconfinedRun();
  const text = readFileSync(file, 'utf8');
  const [header, ...rest] = text.split('\n');
  // The header's line rewritten with other spacing, and the outcome flipped.
  writeFileSync(
    file,
    [JSON.stringify(JSON.parse(header!), null, 0).replace(/,/g, ', '), ...rest]
      .join('\n')
      .replace(/"exitCode":1/, '"exitCode":0'),
  );
  renameSync(file, join(ws, 'moved.lar.jsonl'));
  const moved = join(ws, 'moved.lar.jsonl');
  assert.match((await lar(['verify', moved])).err, /changed after its run ended/);
  const adv = await lar(['advantages', moved, '--out', join(ws, 'adv.jsonl')]);
  assert.equal(adv.code, 1);
  assert.match(adv.err, /changed after its run ended .*: left out/);
  const ex = await lar(['export', moved, '--format', 'atif']);
  assert.equal(ex.code, 1);
  assert.match(ex.err, /is not the run's record, and is not exported/);
});
