import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { readRules, rulesPrompt, MAX_RULES_BYTES } from '../../../core/agent/rules';
import { outcomePasses, runWith } from '../../../testkit/agent-run';
import { ScriptedModelServer } from '../../../testkit/scripted-server';
import type { Header } from '../../../core/schema/trajectory';

test('AGENTS.md goes into the prompt; a missing file is no rule; named files are read once, in order', () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-rules-'));
  assert.deepEqual(readRules(ws), { files: [], problems: [] });
  writeFileSync(join(ws, 'AGENTS.md'), '# Rules\n- run npm test before submitting\n');
  mkdirSync(join(ws, 'docs'));
  writeFileSync(join(ws, 'docs', 'style.md'), 'Use two spaces.');
  const r = readRules(ws, ['AGENTS.md', 'docs/style.md', './AGENTS.md', 'missing.md']);
  assert.deepEqual(
    r.files.map((f) => f.path),
    ['AGENTS.md', 'docs/style.md'],
  );
  assert.deepEqual(r.problems, []);
  assert.match(
    rulesPrompt(r),
    /--- AGENTS\.md ---\n# Rules\n- run npm test before submitting\n\n--- docs\/style\.md ---\nUse two spaces\./,
  );
});

test('a rule file that leads out of the workspace, is not a regular file, or is too big is not read, and says why', () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-rules-bad-'));
  const outside = mkdtempSync(join(tmpdir(), 'lar-secret-'));
  writeFileSync(join(outside, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----');
  symlinkSync(join(outside, 'id_rsa'), join(ws, 'AGENTS.md'));
  execFileSync('mkfifo', [join(ws, 'fifo.md')]);
  writeFileSync(join(ws, 'big.md'), 'x'.repeat(MAX_RULES_BYTES + 1));
  const r = readRules(ws, ['AGENTS.md', 'fifo.md', 'big.md', '../etc/passwd', '/etc/passwd']);
  assert.deepEqual(r.files, []);
  assert.equal(r.problems.length, 5, r.problems.join('\n'));
  assert.match(r.problems[0]!, /AGENTS\.md leads out of the workspace/);
  assert.match(r.problems[1]!, /fifo\.md is not a regular file/);
  assert.match(r.problems[2]!, /^the rule file big\.md is 65537 bytes, more than the 65536 read at most$/);
  assert.ok(!JSON.stringify(r).includes('PRIVATE KEY'), 'the secret never reaches the prompt');
});

test('a run carries the rules in its system prompt and names them in its header', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-rules-run-'));
  writeFileSync(join(ws, 'AGENTS.md'), 'Never touch vendor/.');
  const server = new ScriptedModelServer({
    contextLength: 32768,
    script: [{ content: 'Done reading.' }],
    whenDone: 'repeat',
  });
  const endpoint = await server.start();
  try {
    const { trajectoryPath } = await runWith({
      endpoint,
      workspace: ws,
      rules: readRules(ws),
      runOutcomeCheck: outcomePasses,
      limits: { maxIdleTurns: 1 },
    });
    const first = server.requests.find((q) => q.path === '/v1/chat/completions')!.body as {
      messages: { content: string }[];
    };
    assert.match(
      first.messages[0]!.content,
      /Rules of this workspace[\s\S]*--- AGENTS\.md ---\nNever touch vendor\/\./,
    );
    assert.deepEqual((JSON.parse(readFileSync(trajectoryPath, 'utf8').split('\n')[0]!) as Header).rules, ['AGENTS.md']);
  } finally {
    await server.stop();
  }
});

test('the .lar folder ignores itself in git; a .gitignore the user put there is kept', async () => {
  const { ensureLarDir } = await import('../../../core/workspace/lar-layout.js');
  const ws = mkdtempSync(join(tmpdir(), 'lar-dir-'));
  execFileSync('git', ['init', '-q', ws]);
  ensureLarDir(ws);
  mkdirSync(join(ws, '.lar', 'runs'));
  writeFileSync(join(ws, '.lar', 'runs', 'r.lar.jsonl'), '{}\n');
  writeFileSync(join(ws, 'work.js'), '1');
  const status = execFileSync('git', ['-C', ws, 'status', '--porcelain', '--untracked-files=all'], {
    encoding: 'utf8',
  });
  assert.equal(status, '?? work.js\n', "only the user's own file is untracked");
  writeFileSync(join(ws, '.lar', '.gitignore'), 'output/\n');
  ensureLarDir(ws);
  assert.equal(readFileSync(join(ws, '.lar', '.gitignore'), 'utf8'), 'output/\n');
});
