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

/** A terminal-task run (outcome judged by Harbor) with the server's token counts on its turns. */
const judgedOutside = (submitted: boolean) =>
  [
    { lar: 1, type: 'header', task: 't', workflow: 'builtin:terminal-task', started: '2026-11-30T00:00:00Z' },
    { type: 'message', role: 'assistant', content: 'Look first.', usage: { prompt: 900, completion: 40, cached: 0 } },
    { type: 'tool_call', id: 'a', tool: 'run_command', args: { command: 'ls' }, reply: 1, status: 'ok', result: { exitCode: 0, completion: 'exit' } },
    { type: 'tool_call', id: 'b', tool: 'write_file', args: { path: 'x', content: 'y' }, reply: 1, status: 'blocked' },
    // A reply without words: its counts are on its first call, and it is a turn of its own.
    { type: 'tool_call', id: 'c', tool: 'enter_stage', args: { stage: 'work' }, reply: 2, usage: { prompt: 1000, completion: 20, cached: 900 }, status: 'ok' },
    { type: 'tool_call', id: 'd', tool: 'run_command', args: { command: 'make' }, reply: 3, usage: { prompt: 1100, completion: 30 }, status: 'ok', result: { exitCode: 0, completion: 'exit' } },
    { type: 'tool_call', id: 'e', tool: 'enter_stage', args: { stage: 'verify' }, reply: 3, status: 'ok' },
    { type: 'tool_call', id: 'f', tool: 'run_command', args: { command: 'make test' }, reply: 4, usage: { prompt: 1200, completion: 25, cached: 1100 }, status: 'ok', result: { exitCode: 0, completion: 'exit' } },
    ...(submitted
      ? [{ type: 'tool_call', id: 'g', tool: 'submit', args: { summary: 'done' }, reply: 5, status: 'ok' }, { type: 'end', reason: 'submitted' }]
      : [{ type: 'end', reason: 'limit' }]),
  ]
    .map((l) => JSON.stringify(l))
    .join('\n'); // prettier-ignore

interface StepLar {
  toolRewards: (number | null)[];
  stage: string | null;
  stageReward: number | null;
  outcome: number | null;
  outcomePending?: boolean;
  judgedBy?: string;
}
const larOf = (s: { extra?: Record<string, unknown> }) => (s.extra as { lar: StepLar }).lar;

test("each model turn is an agent step with the server's token counts as metrics, and the totals in final_metrics", () => {
  const doc = exportText(judgedOutside(true));
  const agents = doc.steps.filter((s) => s.source === 'agent');
  // Five replies, five turns: calls of another reply start a step of their own.
  assert.deepEqual(
    agents.map((s) => s.tool_calls?.map((c) => c.tool_call_id)),
    [['a', 'b'], ['c'], ['d', 'e'], ['f'], ['g']],
  );
  assert.deepEqual(
    agents.map((s) => s.metrics),
    [
      { prompt_tokens: 900, completion_tokens: 40, cached_tokens: 0 },
      { prompt_tokens: 1000, completion_tokens: 20, cached_tokens: 900 },
      { prompt_tokens: 1100, completion_tokens: 30 },
      { prompt_tokens: 1200, completion_tokens: 25, cached_tokens: 1100 },
      undefined,
    ],
  );
  assert.deepEqual(doc.final_metrics, {
    total_prompt_tokens: 4200,
    total_completion_tokens: 115,
    total_cached_tokens: 2000,
    total_steps: doc.steps.length,
  });
});

test('a trajectory without token counts exports no token totals, rather than zeros', () => {
  assert.deepEqual(exportText(fixture).final_metrics, { total_steps: exportText(fixture).steps.length });
});

test("every agent step carries the three levels: its calls' tool rewards, its stage visit's reward, the run's outcome", () => {
  const doc = exportText(judgedOutside(true));
  const levels = doc.steps.filter((s) => s.source === 'agent').map(larOf);
  assert.deepEqual(
    levels.map((l) => [l.stage, l.toolRewards, l.stageReward]),
    [
      ['explore', [1, -1], 1],
      ['explore', [1], 1],
      ['work', [1, 1], 1],
      ['verify', [1], 1],
      ['verify', [1], 1],
    ],
  );
  // Harbor's verifier has not judged yet: the outcome says so and who judges, never a 0.
  for (const l of levels)
    assert.deepEqual([l.outcome, l.outcomePending, l.judgedBy], [null, true, "Harbor's verifier"]);
  const root = (doc.extra as { lar: Record<string, unknown> }).lar;
  assert.deepEqual(
    [root.outcome, root.outcomePending, root.judgedBy, root.return],
    [null, true, "Harbor's verifier", null],
  );
  assert.equal(typeof root.returnWithoutOutcome, 'number');
});

test('a run that never submitted has outcome 0 on every step even with an outside judge, and a return', () => {
  const doc = exportText(judgedOutside(false));
  for (const l of doc.steps.filter((s) => s.source === 'agent').map(larOf)) {
    assert.deepEqual([l.outcome, l.outcomePending, l.judgedBy], [0, undefined, "Harbor's verifier"]);
  }
  const root = (doc.extra as { lar: Record<string, unknown> }).lar;
  assert.deepEqual([root.outcome, root.outcomePending, typeof root.return], [0, undefined, 'number']);
});

test('an outcome judged in the run is its reward on every agent step', () => {
  const doc = exportText(fixture);
  const levels = doc.steps.filter((s) => s.source === 'agent').map(larOf);
  assert.ok(levels.length > 0);
  for (const l of levels) assert.deepEqual([l.outcome, l.outcomePending, l.judgedBy], [1, undefined, undefined]);
});
