import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import type { ScriptedTurn } from '../../testkit/scripted-turns';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { lar } from '../support/lar-cli';
import { defaultWorkflowJson } from '../support/workflow-json';

/** A workspace whose `node test.js` fails until sum.js adds, with the default workflow checking that command. */
function failingWorkspace(prefix: string): string {
  const ws = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(ws, 'sum.js'), 'module.exports = (a, b) => a - b;\n');
  writeFileSync(join(ws, 'test.js'), "if (require('./sum')(2, 3) !== 5) process.exit(1);\nconsole.log('PASS');\n");
  const wf = defaultWorkflowJson();
  wf.outcome.command = 'node test.js';
  writeFileSync(join(ws, 'fix.larflow.json'), JSON.stringify(wf));
  return ws;
}

/** The model's side of fixing failingWorkspace: read, edit, run the check, submit. */
const fixSum = (): ScriptedTurn[] => [
  { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
  { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit' } }] },
  { toolCalls: [{ name: 'edit_file', arguments: { path: 'sum.js', search: 'a - b', replace: 'a + b' } }] },
  { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
  { toolCalls: [{ name: 'run_command', arguments: { command: 'node test.js' } }] },
  { toolCalls: [{ name: 'submit', arguments: {} }] },
];

test('lar run drives the agent from the terminal against an OpenAI-compatible server', async () => {
  const ws = failingWorkspace('lar-run-');
  const server = new ScriptedModelServer({
    apiKey: 'sk-test-secret-123456',
    script: fixSum(),
  });
  const endpoint = await server.start();
  try {
    const r = await lar(
      [
        'run',
        '--task',
        'make node test.js pass',
        '--endpoint',
        endpoint,
        '--workspace',
        ws,
        '--workflow',
        join(ws, 'fix.larflow.json'),
      ],
      { LAR_API_KEY: 'sk-test-secret-123456' },
    );
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.out, /\+1 \[explore\] read_file/);
    assert.match(r.out, /stage explore: \+1/);
    assert.match(r.out, /outcome check: node test.js → exit 0/);
    assert.match(r.out, /outcome 1 · return 1\.750/);
    const runs = readdirSync(join(ws, '.lar', 'runs'));
    assert.equal(runs.length, 1);
    const text = readFileSync(join(ws, '.lar', 'runs', runs[0]!), 'utf8');
    assert.doesNotMatch(text, /sk-test-secret/, 'the key never reaches the trajectory');
    // The header carries the workflow inline, so the file verifies on its own.
    assert.equal(verifyTrajectoryText(text).summary!.outcome.reward, 1);
    // And the sandbox's bounds: how memory and tasks were bounded, and to what.
    const header = JSON.parse(text.slice(0, text.indexOf('\n'))) as {
      sandbox?: { confined: boolean; limits?: { mechanism: string; memory: number; tmp: number } };
    };
    if (header.sandbox?.confined)
      assert.ok(
        header.sandbox.limits && header.sandbox.limits.memory > 0 && header.sandbox.limits.tmp === 2 ** 30,
        JSON.stringify(header.sandbox),
      );
  } finally {
    await server.stop();
  }
});

test('lar run says clearly when the server is down, and usage errors exit 2', async () => {
  const down = await lar(['run', '--task', 'x', '--endpoint', 'http://127.0.0.1:9/v1', '--workspace', tmpdir()], {});
  assert.equal(down.code, 1);
  assert.match(down.err, /cannot reach the inference server at http:\/\/127\.0\.0\.1:9\/v1/);
  assert.equal((await lar(['run'], {})).code, 2);
  assert.equal((await lar(['run', '--task', 'x', '--enforcement', 'maybe'], {})).code, 2);
});

test('lar run --rollouts runs a group in copies of the workspace and writes its advantages', async () => {
  const ws = failingWorkspace('lar-rollouts-');
  const fix = fixSum();
  // The second rollout submits without fixing anything: it must start from the
  // unfixed workspace (not the first rollout's edit), so its outcome is 0.
  const giveUp = [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
    { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit' } }] },
    { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
    { toolCalls: [{ name: 'run_command', arguments: { command: 'node test.js' } }] },
    { toolCalls: [{ name: 'submit', arguments: {} }] },
  ];
  const server = new ScriptedModelServer({ script: [...fix, ...giveUp] });
  const endpoint = await server.start();
  try {
    const r = await lar(
      [
        'run',
        '--task',
        'make node test.js pass',
        '--endpoint',
        endpoint,
        '--workspace',
        ws,
        '--workflow',
        join(ws, 'fix.larflow.json'),
        '--rollouts',
        '2',
      ],
      {},
    );
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.out, /\[1\] \+1 \[explore\] read_file/);
    assert.match(r.out, /rollout 1: submitted, outcome 1/);
    assert.match(r.out, /rollout 2: submitted, outcome 0/);
    assert.equal(
      readFileSync(join(ws, 'sum.js'), 'utf8'),
      'module.exports = (a, b) => a - b;\n',
      'the workspace itself is left as it was',
    );
    const groups = readdirSync(join(ws, '.lar', 'runs'));
    assert.equal(groups.length, 1);
    assert.match(groups[0]!, /^group-/);
    const dir = join(ws, '.lar', 'runs', groups[0]!);
    assert.deepEqual(
      readdirSync(dir)
        .filter((f) => f.endsWith('.jsonl'))
        .sort(),
      ['advantages.jsonl', 'rollout-1.lar.jsonl', 'rollout-2.lar.jsonl'],
    );
    const adv = readFileSync(join(dir, 'advantages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { source: string; outcomeAdvantage: number });
    assert.equal(adv.length, 2);
    assert.ok(
      adv[0]!.outcomeAdvantage > 0 && adv[1]!.outcomeAdvantage < 0,
      `the fixing rollout is advantaged: ${adv.map((a) => a.outcomeAdvantage).join(',')}`,
    );
    assert.match(adv[0]!.source, /rollout-1\.lar\.jsonl$/);
  } finally {
    await server.stop();
  }
});

test('lar run --rollouts rejects nonsense counts', async () => {
  for (const n of ['0', '-1', 'two', '65'])
    assert.equal((await lar(['run', '--task', 'x', '--rollouts', n], {})).code, 2, n);
  for (const n of ['0', '1', 'x'])
    assert.equal((await lar(['run', '--task', 'x', '--max-repeated-failures', n], {})).code, 2, n);
});

test('lar run --sandbox container: commands run without bubblewrap, and the header says the container held them', async () => {
  const ws = failingWorkspace('lar-run-container-');
  // A workflow that requires a sandbox: the container the user vouched for is taken as it.
  const wf = { ...defaultWorkflowJson(), sandbox: { required: true } };
  wf.outcome.command = 'node test.js';
  writeFileSync(join(ws, 'fix.larflow.json'), JSON.stringify(wf));
  const server = new ScriptedModelServer({
    script: fixSum(),
  });
  const endpoint = await server.start();
  try {
    const args = ['run', '--task', 'make node test.js pass', '--endpoint', endpoint, '--workspace', ws];
    const r = await lar([...args, '--workflow', join(ws, 'fix.larflow.json'), '--sandbox', 'container'], {});
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.err, /in a container that is its sandbox/);
    assert.doesNotMatch(r.err, /NOT confined/);
    const runs = readdirSync(join(ws, '.lar', 'runs'));
    const text = readFileSync(join(ws, '.lar', 'runs', runs[0]!), 'utf8');
    const header = JSON.parse(text.slice(0, text.indexOf('\n'))) as { sandbox?: Record<string, unknown> };
    assert.equal(header.sandbox?.confined, false);
    assert.equal(header.sandbox?.container, true);
    assert.equal(header.sandbox?.required, true);
    assert.match(String(header.sandbox?.reason), /inside a container that is its sandbox.*the workflow requires/);
    const report = verifyTrajectoryText(text);
    const command = report.steps.find((s) => s.tool === 'run_command')!;
    assert.deepEqual(
      command.verdicts
        .filter((v) => v.check === 'tool.sandboxed' || v.check === 'tool.sandbox_required')
        .map((v) => [v.check, v.ok]),
      [
        ['tool.sandbox_required', true],
        ['tool.sandboxed', true],
      ],
    );
    assert.match(command.verdicts.find((v) => v.check === 'tool.sandboxed')!.reason, /container/);
    assert.equal(report.summary!.outcome.reward, 1);
    assert.equal(report.summary!.return, 1.75);
    const bad = await lar([...args, '--sandbox', 'podman'], {});
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--sandbox must be auto, required, off or container/);
  } finally {
    await server.stop();
  }
});

test('lar run with builtin:terminal-task in a container: submit ends the run, the outcome waits for Harbor', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-run-terminal-'));
  writeFileSync(join(ws, 'run.sh'), 'echo $((2-3))\n');
  const server = new ScriptedModelServer({
    script: [
      { toolCalls: [{ name: 'run_command', arguments: { command: 'ls' } }] },
      { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'work' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'run.sh', search: '2-3', replace: '2+3' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'sh run.sh' } }] },
      { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'sh run.sh | grep -x 5' } }] },
      { toolCalls: [{ name: 'submit', arguments: { summary: 'run.sh prints the sum' } }] },
    ],
  });
  const endpoint = await server.start();
  try {
    const r = await lar(
      [
        ...['run', '--task', 'make run.sh print the sum of 2 and 3', '--endpoint', endpoint, '--workspace', ws],
        ...['--workflow', 'builtin:terminal-task', '--sandbox', 'container'],
      ],
      {},
    );
    assert.equal(r.code, 0, r.err + r.out);
    // T = 7 × +1, S = [1, 1, 1]: the running return 0.5 + 0.25.
    assert.match(r.out, /outcome pending \(judged by Harbor's verifier\) · return 0\.750 · 7 steps/);
    assert.doesNotMatch(r.out, /outcome check:/);
    assert.equal(readFileSync(join(ws, 'run.sh'), 'utf8'), 'echo $((2+3))\n');
    const runs = readdirSync(join(ws, '.lar', 'runs'));
    const text = readFileSync(join(ws, '.lar', 'runs', runs[0]!), 'utf8');
    assert.doesNotMatch(text, /"type":"outcome"/);
    const report = verifyTrajectoryText(text);
    assert.equal(report.workflowSource, 'builtin:terminal-task');
    assert.equal(report.summary!.outcome.pending, true);
    assert.deepEqual(
      report.summary!.stages.map((s) => [s.stage, s.reward]),
      [
        ['explore', 1],
        ['work', 1],
        ['verify', 1],
      ],
    );
  } finally {
    await server.stop();
  }
});

test('in its own container a run leaves its background jobs running and its repositories in place; elsewhere not', async () => {
  const tag = `lar-bg-${process.pid}-${Date.now()}`;
  const turns = (): ScriptedTurn[] => [
    { toolCalls: [{ name: 'run_command', arguments: { command: 'ls' } }] },
    { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'work' } }] },
    // A server the task's tests will query after the agent, started the way agents do.
    {
      toolCalls: [
        {
          name: 'run_command',
          arguments: { command: `(exec -a ${tag} sleep 600) > /dev/null 2>&1 & git init -q made-repo` },
        },
      ],
    },
    { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
    { toolCalls: [{ name: 'run_command', arguments: { command: 'true' } }] },
    { toolCalls: [{ name: 'submit', arguments: { summary: 'started' } }] },
  ];
  const alive = (): boolean => spawnSync('pgrep', ['-f', tag]).status === 0;
  try {
    for (const [mode, survives] of [
      ['container', true],
      ['off', false],
    ] as const) {
      const ws = mkdtempSync(join(tmpdir(), `lar-run-bg-${mode}-`));
      const server = new ScriptedModelServer({ script: turns() });
      const endpoint = await server.start();
      try {
        const r = await lar(
          [
            ...['run', '--task', 'start the server', '--endpoint', endpoint, '--workspace', ws],
            ...['--workflow', 'builtin:terminal-task', '--sandbox', mode],
          ],
          {},
        );
        assert.equal(r.code, 0, r.err + r.out);
        assert.equal(alive(), survives, `--sandbox ${mode}`);
        // A repository the task asked for stays in a container; elsewhere its config could run in the editor's git.
        assert.equal(existsSync(join(ws, 'made-repo', '.git')), survives, `--sandbox ${mode}: made-repo`);
      } finally {
        await server.stop();
        spawnSync('pkill', ['-f', tag]);
      }
    }
  } finally {
    spawnSync('pkill', ['-f', tag]);
  }
});

test('lar run exits 3 when the model context window cannot hold the run, so a harness can score it', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-run-window-'));
  // 600 tokens: less than the system prompt and the tools take, whatever is compacted.
  const server = new ScriptedModelServer({ contextLength: 600, enforceWindow: true, script: [{ content: 'hi' }] });
  const endpoint = await server.start();
  try {
    const r = await lar(['run', '--task', 'anything', '--endpoint', endpoint, '--workspace', ws], {});
    assert.equal(r.code, 3, r.err + r.out);
    assert.match(r.out, /run ended: error \(.*context/);
  } finally {
    await server.stop();
  }
});
