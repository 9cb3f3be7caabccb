import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseTrajectory } from '../../../core/schema/jsonl';
import { verifyTrajectoryText } from '../../../core/verifier/verify';
import { exportAtif } from '../../../core/export/atif';
import { AtifTrajectory } from '../../../core/export/atif-schema';
import { textOf } from '../../../testkit/text';

const root = resolve(__dirname, '../../../..');
const fixture = readFileSync(resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl'), 'utf8');
const exportText = (text: string) =>
  exportAtif(parseTrajectory(text), verifyTrajectoryText(text), { agentVersion: '0.1.0', fallbackId: 'x' });

test('a trajectory exports as valid ATIF-v1.7 with verifier results per call, per step and per run', () => {
  const doc = exportText(fixture);
  assert.equal(doc.schema_version, 'ATIF-v1.7');
  assert.equal(doc.session_id, 'demo-1');
  assert.equal(doc.agent.model_name, 'LAR-9B');
  assert.equal(doc.agent.tool_definitions?.length, 8);
  assert.deepEqual(
    doc.steps.map((s) => s.step_id),
    doc.steps.map((_, i) => i + 1),
  );
  assert.equal(doc.steps[0]!.source, 'user');
  assert.equal(doc.steps[0]!.message, 'Make the failing test in test/sum.test.js pass');
  // The blocked write carries its -1 and the reason on its observation result.
  const blocked = doc.steps.flatMap((s) => s.observation?.results ?? []).find((r) => r.source_call_id === 'call_4')!;
  const lar = (blocked.extra as { lar: { toolReward: number; failedChecks: { check: string }[] } }).lar;
  assert.equal(lar.toolReward, -1);
  assert.deepEqual(
    lar.failedChecks.map((c) => c.check),
    ['tool.permitted', 'tool.succeeded'],
  );
  const run = (doc.extra as { lar: { outcome: number; return: number } }).lar;
  assert.equal(run.outcome, 1);
  assert.ok(Math.abs(run.return - (1 + 0.5 + 0.25 * (7 / 9))) < 1e-12);
  // The outcome check is a system step.
  assert.ok(doc.steps.some((s) => s.source === 'system' && /npm test/.test(textOf(s.message))));
  // Round trip through JSON stays valid.
  assert.equal(AtifTrajectory.safeParse(JSON.parse(JSON.stringify(doc))).success, true);
});

test('an assistant message and the calls that follow it form one agent step', () => {
  const text = [
    JSON.stringify({
      lar: 1,
      type: 'header',
      task: 't',
      workflow: 'builtin:default-coding',
      started: '2026-11-30T00:00:00Z',
    }),
    JSON.stringify({ type: 'message', role: 'assistant', content: 'Let me look around.' }),
    JSON.stringify({ type: 'tool_call', id: 'c1', tool: 'list_files', args: {}, status: 'ok' }),
    JSON.stringify({ type: 'tool_call', id: 'c1', tool: 'read_file', args: { path: 'a' }, status: 'ok' }),
    JSON.stringify({
      type: 'tool_call',
      tool: 'read_file',
      args: null,
      argsError: 'Unexpected end of JSON input',
      status: 'blocked',
    }),
  ].join('\n');
  const doc = exportText(text);
  assert.equal(doc.steps.length, 2);
  const agent = doc.steps[1]!;
  assert.equal(agent.message, 'Let me look around.');
  assert.equal(agent.tool_calls?.length, 3);
  const ids = agent.tool_calls.map((c) => c.tool_call_id);
  assert.equal(new Set(ids).size, 3, 'a reused id is made unique within the step');
  assert.deepEqual(agent.tool_calls[2]!.arguments, {});
  assert.deepEqual(
    (agent.tool_calls[2]!.extra as { lar: { argsError: string } }).lar.argsError,
    'Unexpected end of JSON input',
  );
});

/** An exported document as JSON, typed loosely enough for a test to break it. */
interface LooseAtif {
  schema_version: string;
  steps: {
    step_id: number;
    reward?: number;
    tool_calls?: unknown[];
    observation: { results: { source_call_id: string }[]; extra?: unknown };
  }[];
}

test('the ATIF schema refuses what Harbor refuses', () => {
  const doc = exportText(fixture);
  const broken = (mutate: (d: LooseAtif) => void) => {
    const d = JSON.parse(JSON.stringify(doc)) as LooseAtif;
    mutate(d);
    return AtifTrajectory.safeParse(d).success;
  };
  assert.equal(
    broken(() => {}),
    true,
  );
  assert.equal(
    broken((d) => (d.steps[0]!.reward = 1)),
    false,
  );
  const agent = doc.steps.findIndex((s) => s.source === 'agent');
  assert.equal(
    broken((d) => (d.steps[1]!.step_id = 7)),
    false,
  );
  assert.equal(
    broken((d) => (d.steps[0]!.tool_calls = [])),
    false,
  );
  assert.equal(
    broken((d) => (d.steps[agent]!.observation.results[0]!.source_call_id = 'nope')),
    false,
  );
  assert.equal(
    broken((d) => (d.steps[agent]!.observation.extra = {})),
    false,
  );
  assert.equal(
    broken((d) => (d.schema_version = 'ATIF-v1.9')),
    false,
  );
  assert.equal(
    broken((d) => (d.steps = [])),
    false,
  );
});

test('a restore exports as a system step that says what the user did to the workspace', () => {
  const text = readFileSync(resolve(root, 'test-fixtures/conformance/084-restore-never-scored.lar.jsonl'), 'utf8');
  const doc = exportText(text);
  assert.ok(AtifTrajectory.safeParse(doc).success);
  const restores = doc.steps.filter(
    (s) => (s.extra as { lar?: { kind?: string } } | undefined)?.lar?.kind === 'restore',
  );
  assert.equal(restores.length, 2);
  assert.match(
    textOf(restores[0]!.message),
    /restored the workspace to how it was before step 3 of run-1\.lar\.jsonl \(1 files changed back, 1 deleted, 0 brought back\)/,
  );
  assert.equal(restores[0]!.source, 'system');
});
