import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupAdvantages, EPSILON } from '../../../core/rewards/advantages';
import { verifyTrajectoryText } from '../../../core/verifier/verify';

const header = (task = 'fix the test') =>
  JSON.stringify({ lar: 1, type: 'header', task, workflow: 'builtin:default-coding', started: '2026-11-30T00:00:00Z' });
const line = (tool: string, args: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'tool_call', tool, args, status: 'ok', ...extra });
const good = [
  header(),
  line('read_file', { path: 'a' }),
  line('enter_stage', { stage: 'edit' }),
  line('edit_file', { path: 'a', search: 'x', replace: 'y' }),
  line('enter_stage', { stage: 'verify' }),
  line('run_command', { command: 'npm test' }, { result: { exitCode: 0, completion: 'marker' } }),
  line('submit', {}),
  JSON.stringify({ type: 'outcome', command: 'npm test', exitCode: 0 }),
].join('\n');
const bad = [header(), line('write_file', { path: 'a', content: '' }, { status: 'blocked' })].join('\n');

test('advantages follow the stage-normalized GRPO definition', () => {
  const [g, b] = groupAdvantages([
    { source: 'good', report: verifyTrajectoryText(good) },
    { source: 'bad', report: verifyTrajectoryText(bad) },
  ]);
  // Outcomes 1 and 0: mean 0.5, std 0.5.
  assert.ok(Math.abs(g!.outcomeAdvantage - 0.5 / (0.5 + EPSILON)) < 1e-12);
  assert.ok(Math.abs(b!.outcomeAdvantage + 0.5 / (0.5 + EPSILON)) < 1e-12);
  // explore tool rewards pooled over the group: good has +1,+1 and bad has -1.
  const mean = 1 / 3;
  const std = Math.sqrt(((1 - mean) ** 2 * 2 + (-1 - mean) ** 2) / 3);
  const writeStep = b!.steps[0]!;
  assert.equal(writeStep.stage, 'explore');
  assert.equal(writeStep.toolReward, -1);
  assert.ok(Math.abs(writeStep.toolAdvantage - (-1 - mean) / (std + EPSILON)) < 1e-12);
  // explore visits: good +1, bad 0 (unclosed): mean 0.5, std 0.5.
  assert.ok(Math.abs(writeStep.stageAdvantage - (0 - 0.5) / (0.5 + EPSILON)) < 1e-12);
  assert.ok(
    Math.abs(
      writeStep.advantage - (b!.outcomeAdvantage + 0.5 * writeStep.stageAdvantage + 0.25 * writeStep.toolAdvantage),
    ) < 1e-12,
  );
  // edit and verify visits exist only in the good run: zero variance, zero advantage.
  const editStep = g!.steps.find((s) => s.stage === 'edit')!;
  assert.equal(editStep.stageAdvantage, 0);
  assert.equal(g!.steps.length, 6);
  assert.equal(g!.task, 'fix the test');
});

test('a group of one has zero advantages everywhere', () => {
  const [only] = groupAdvantages([{ source: 'good', report: verifyTrajectoryText(good) }]);
  assert.equal(only!.outcomeAdvantage, 0);
  for (const s of only!.steps) assert.equal(s.advantage, 0);
});

test('mixed tasks and unverifiable trajectories are refused with a reason', () => {
  assert.throws(
    () =>
      groupAdvantages([
        { source: 'a', report: verifyTrajectoryText(good) },
        {
          source: 'b',
          report: verifyTrajectoryText([header('another task'), line('read_file', { path: 'a' })].join('\n')),
        },
      ]),
    /not rollouts of one task/,
  );
  assert.throws(
    () => groupAdvantages([{ source: 'x', report: verifyTrajectoryText('not json') }]),
    /x: cannot be verified/,
  );
  assert.throws(() => groupAdvantages([]), /at least one/);
});
