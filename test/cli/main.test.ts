import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { AtifTrajectory } from '../../core/export/atif-schema';
import type { RolloutAdvantages } from '../../core/rewards/advantages';
import type { TrajectoryReport } from '../../core/verifier/verify';
import { DEFAULT_WORKFLOW_FILE, defaultWorkflowJson } from '../support/workflow-json';

const root = resolve(__dirname, '../../..');
const lar = resolve(root, 'dist/lar.js');
const fixture = resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl');
const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [lar, ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const tmp = () => mkdtempSync(join(tmpdir(), 'lar-cli-'));

test('lar verify prints the per-step table, stage rewards, outcome and return', () => {
  const r = run('verify', fixture);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /line\s+step\s+stage\s+tool\s+reward\s+failed checks/);
  assert.match(
    r.out,
    /\n\s+6\s+4\s+explore\s+write_file\s+-1\s+tool\.permitted: write_file is not permitted in stage "explore"/,
  );
  assert.match(r.out, /explore\s+lines 1–7\s+steps\s+5\/30\s+\+1/);
  assert.match(r.out, /outcome\s+1/);
  assert.match(r.out, /return\s+1\.694 = 1 \+ 0\.5·mean\(stage\) 1 \+ 0\.25·mean\(tool\) 0\.778/);
});

test('lar verify --format json gives the full report', () => {
  const r = run('verify', fixture, '--format', 'json');
  assert.equal(r.code, 0);
  const report = JSON.parse(r.out) as TrajectoryReport;
  assert.equal(report.backend, 'builtin');
  assert.equal(report.summary!.outcome.reward, 1);
  assert.equal(report.steps.length, 12);
});

test('lar verify exits 1 with the position of a malformed line and still verifies the rest', () => {
  const dir = tmp();
  const file = join(dir, 'bad.lar.jsonl');
  const lines = readFileSync(fixture, 'utf8').trimEnd().split('\n');
  lines[3] = '{"type":"tool_call","tool":"read_file" "args":{}}';
  writeFileSync(file, lines.join('\n'));
  const r = run('verify', file);
  assert.equal(r.code, 1);
  assert.match(
    r.out,
    /bad\.lar\.jsonl:4:40: invalid JSON: unexpected '"': expected ',' or '}' after the value of "tool"/,
  );
  assert.match(r.out, /\n\s+5\s+2\s+explore\s+read_file\s+\+1/);
});

test('lar verify: usage errors and an unusable --workflow exit 2 with a message', () => {
  assert.equal(run('verify').code, 2);
  assert.equal(run('verify', fixture, '--backend', 'z3').code, 2);
  assert.equal(run('frobnicate').code, 2);
  const missing = run('verify', 'nope.lar.jsonl');
  assert.equal(missing.code, 2);
  assert.match(missing.err, /nope\.lar\.jsonl: no such file/);
  const dir = tmp();
  const wf = join(dir, 'w.larflow.json');
  writeFileSync(wf, '{"lar": 1, "id": "w", "stages": []}');
  const r = run('verify', fixture, '--workflow', wf);
  assert.equal(r.code, 2);
  assert.match(r.err, /not well-formed/);
});

test('lar advantages writes one line per trajectory', () => {
  const dir = tmp();
  const out = join(dir, 'adv.jsonl');
  const r = run('advantages', fixture, fixture, '--out', out);
  assert.equal(r.code, 0, r.err);
  const lines = readFileSync(out, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as RolloutAdvantages);
  assert.equal(lines.length, 2);
  assert.equal(lines[0]!.steps.length, 9);
  // Identical rollouts: no outcome advantage, and identical step advantages.
  assert.equal(lines[0]!.outcomeAdvantage, 0);
  assert.deepEqual(lines[0]!.steps, lines[1]!.steps);
  const blocked = lines[0]!.steps.find((s) => s.line === 6)!;
  assert.equal(blocked.toolReward, -1);
  assert.ok(blocked.advantage < 0, 'the blocked call is pushed down against the other explore calls');
  assert.equal(run('advantages', fixture).code, 2);
});

test('lar export --format atif writes a valid ATIF document', () => {
  const dir = tmp();
  const out = join(dir, 'run.atif.json');
  const r = run('export', fixture, '--format', 'atif', '--out', out);
  assert.equal(r.code, 0, r.err);
  const doc = AtifTrajectory.parse(JSON.parse(readFileSync(out, 'utf8')));
  assert.equal(doc.schema_version, 'ATIF-v1.7');
  assert.equal(run('export', fixture, '--format', 'csv').code, 2);
});

test('lar workflow check reports problems with line and column', () => {
  const dir = tmp();
  const wf = join(dir, 'w.larflow.json');
  const value = defaultWorkflowJson();
  value.stages[0]!.tools.push('teleport');
  writeFileSync(wf, JSON.stringify(value, null, 2));
  const r = run('workflow', 'check', wf);
  assert.equal(r.code, 1);
  assert.match(r.out, /w\.larflow\.json:\d+:\d+: error: "teleport" is not a tool.*\[workflow\.unknown_tool\]/);
  assert.equal(run('workflow', 'check', DEFAULT_WORKFLOW_FILE).code, 0);
});

test('lar verify --backend lean without a toolchain says why and lets the builtin backend decide', () => {
  const home = tmp();
  const r = spawnSync(process.execPath, [lar, 'verify', fixture, '--backend', 'lean', '--format', 'json'], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: dirname(process.execPath), HOME: home, NO_COLOR: '1' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /the lean backend is unavailable: No Lean toolchain found/);
  assert.match(r.stderr, /elan/);
  assert.match(r.stderr, /using the builtin backend/);
  assert.equal((JSON.parse(r.stdout) as TrajectoryReport).backend, 'builtin');
});

test('lar verify says an outcome judged outside the run is pending, and shows the running return', () => {
  const judged = resolve(root, 'test-fixtures/conformance/089-outcome-judged-outside.lar.jsonl');
  const r = run('verify', judged);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /outcome\s+pending \(judged by Harbor's verifier\)/);
  assert.match(r.out, /return\s+0\.700 = 0\.5·mean\(stage\) 1 \+ 0\.25·mean\(tool\) 0\.800 .*outcome not counted yet/);
  const json = JSON.parse(run('verify', judged, '--format', 'json').out) as TrajectoryReport;
  assert.equal(json.summary!.outcome.pending, true);
  assert.equal(json.summary!.outcome.external, "Harbor's verifier");
  assert.equal(json.summary!.return, 0.7);
});

test('lar workflow check takes a builtin workflow by its name, and says which exist', () => {
  const r = run('workflow', 'check', 'builtin:terminal-task');
  assert.equal(r.code, 0, r.err + r.out);
  assert.match(r.out, /builtin:terminal-task: workflow "terminal-task" is well-formed \(3 stages\)/);
  const none = run('workflow', 'check', 'builtin:nope');
  assert.equal(none.code, 1);
  assert.match(none.err, /there is no builtin workflow "nope" \(builtin: default-coding, terminal-task\)/);
});
