import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupAdvantages } from '../../../core/rewards/advantages';
import { Workflow } from '../../../core/schema/workflow';
import type { TrajectoryEvent } from '../../../core/schema/trajectory';
import { reportWithJudgedOutcome, withJudgedOutcome } from '../../../core/verifier/external';
import { verifyEvents, verifyTrajectoryText } from '../../../core/verifier/verify';

const wf = Workflow.parse({
  lar: 1,
  id: 'judged-outside',
  stages: [{ id: 'work', tools: ['read_file', 'write_file', 'run_command', 'enter_stage', 'submit'], budget: 10 }],
  transitions: {},
  start: 'work',
  terminal: ['work'],
  outcome: { external: "Harbor's verifier" },
});
const at = (list: TrajectoryEvent[]) => list.map((event, i) => ({ event, line: i + 2 }));
const call = (tool: string, args: unknown, result: Record<string, unknown> = {}): TrajectoryEvent => ({
  type: 'tool_call',
  tool,
  args,
  status: 'ok',
  result,
});
const submitted = [
  call('write_file', { path: 'a.txt', content: 'x' }, { filesChanged: ['a.txt'] }),
  call('submit', { summary: 'done' }),
];

test('a run judged outside ends at submit with its outcome pending and the running return', () => {
  const { summary } = verifyEvents(wf, at(submitted));
  assert.equal(summary.ended, true);
  assert.equal(summary.outcome.reward, 0);
  assert.equal(summary.outcome.pending, true);
  assert.equal(summary.outcome.external, "Harbor's verifier");
  assert.deepEqual(
    summary.outcome.verdicts.map((v) => [v.check, v.ok]),
    [['outcome.submitted', true]],
  );
  // S = [1], T = [1, 1]: α·1 + β·1.
  assert.equal(summary.return, 0.75);
});

test('a run judged outside that never submitted is not pending: its outcome is 0 as for any run', () => {
  const { summary } = verifyEvents(wf, at(submitted.slice(0, 1)));
  assert.equal(summary.outcome.pending, false);
  assert.throws(() => withJudgedOutcome(summary, 2), /from 0 to 1/);
  const judged = withJudgedOutcome(summary, 1);
  assert.equal(judged.outcome.reward, 0);
  assert.equal(judged.outcome.judged, 1);
});

test('an outcome event in a run judged outside is an error and changes nothing', () => {
  const stray = { type: 'outcome', command: 'bash /tests/test.sh', exitCode: 0, completion: 'exit' } as TrajectoryEvent;
  for (const list of [
    [stray, ...submitted],
    [...submitted, stray],
  ]) {
    const { steps, summary } = verifyEvents(wf, at(list));
    const event = steps.find((s) => s.type === 'outcome')!;
    assert.deepEqual(
      event.verdicts.map((v) => [v.check, v.ok]),
      [['outcome.external', false]],
    );
    assert.equal(summary.outcome.pending, true);
    assert.equal(summary.outcome.reward, 0);
    assert.equal(summary.outcome.line, undefined);
  }
});

test("the judge's value completes the return, and a group's outcome advantages follow it", () => {
  const { summary } = verifyEvents(wf, at(submitted));
  const half = withJudgedOutcome(summary, 0.5);
  assert.equal(half.outcome.reward, 0.5);
  assert.equal(half.outcome.pending, false);
  assert.equal(half.return, 1.25);
  assert.equal(summary.outcome.pending, true, 'the summary given is not changed');
  assert.throws(() => withJudgedOutcome(half, 1), /already judged/);
  for (const bad of [NaN, -0.1, 1.5, Infinity])
    assert.throws(() => withJudgedOutcome(summary, bad), /from 0 to 1/, String(bad));

  const header = JSON.stringify({ lar: 1, type: 'header', task: 't', workflow: wf, started: '2026-12-01T00:00:00Z' });
  const text = [header, ...submitted.map((e) => JSON.stringify(e))].join('\n');
  const group = [1, 0].map((o, i) => ({
    source: `t${i}`,
    report: reportWithJudgedOutcome(verifyTrajectoryText(text), o),
  }));
  const [pass, fail] = groupAdvantages(group);
  assert.equal(pass!.outcome, 1);
  assert.equal(fail!.outcome, 0);
  assert.ok(pass!.outcomeAdvantage > 0.99 && fail!.outcomeAdvantage < -0.99);
  assert.equal(pass!.return, 1.75);
});

test('an outcome command is not an outside judge: joining a value to it is refused', () => {
  const command = Workflow.parse({ ...wf, outcome: { command: 'npm test' } });
  const { summary } = verifyEvents(command, at(submitted));
  assert.equal(summary.outcome.external, undefined);
  assert.throws(() => withJudgedOutcome(summary, 1), /no outside judge/);
});
