import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../../support/fc';
import { VerifierState } from '../../../core/verifier/state';
import { verifyEvents, verifyTrajectoryText } from '../../../core/verifier/verify';
import { defaultWorkflow } from '../../../core/workflow/load';
import type { TrajectoryEvent } from '../../../core/schema/trajectory';
import { events } from '../../support/arbitrary';

const wf = defaultWorkflow();
const at = (list: TrajectoryEvent[]) => list.map((event, i) => ({ event, line: i + 2 }));
const call = (tool: string, args: unknown, status = 'ok', result: Record<string, unknown> = {}): TrajectoryEvent =>
  ({ type: 'tool_call', tool, args, status, result }) as TrajectoryEvent;
const failed = (s: { verdicts: { ok: boolean; check: string }[] }) =>
  s.verdicts.filter((v) => !v.ok).map((v) => v.check);

test('incremental verification equals batch verification for random trajectories', () => {
  fc.assert(
    fc.property(events, fc.nat(40), (list, cut) => {
      const batch = verifyEvents(wf, at(list));
      // Feed a prefix, clone, feed the rest to the clone: the same as one pass.
      const state = new VerifierState(wf);
      const steps = [];
      const k = Math.min(cut, list.length);
      for (const { event, line } of at(list).slice(0, k)) steps.push(state.append(event, line));
      const copy = state.clone();
      for (const { event, line } of at(list).slice(k)) steps.push(copy.append(event, line));
      assert.deepEqual(steps, batch.steps);
      assert.deepEqual(copy.summary(), batch.summary);
    }),
    { numRuns: 300 },
  );
});

test('a clone is independent of the state it was taken from', () => {
  const state = new VerifierState(wf);
  state.append(call('read_file', { path: 'a' }), 2);
  const copy = state.clone();
  copy.append(call('enter_stage', { stage: 'edit' }), 3);
  assert.equal(state.currentStage, 'explore');
  assert.equal(copy.currentStage, 'edit');
  assert.equal(state.summary().steps, 1);
});

test('the gate decides every violation exactly as the post-hoc verdict does', () => {
  fc.assert(
    fc.property(events, (list) => {
      const state = new VerifierState(wf);
      list.forEach((event, i) => {
        if (event.type === 'tool_call') {
          const gate = state.gate({ tool: event.tool, args: event.args });
          const after = state.append(event, i + 2);
          const gateFailed = gate.verdicts.filter((v) => !v.ok).map((v) => v.check);
          const postFailed = failed(after).filter((c) => c !== 'tool.succeeded' && c !== 'tool.approved');
          assert.deepEqual(postFailed, gateFailed);
          assert.equal(gate.decision === 'block', after.toolReward === -1);
        } else {
          state.append(event, i + 2);
        }
      });
    }),
    { numRuns: 300 },
  );
});

test('the verifier never throws and rewards stay in range on any event sequence', () => {
  fc.assert(
    fc.property(events, (list) => {
      const { steps, summary } = verifyEvents(wf, at(list));
      for (const s of steps) if (s.toolReward !== undefined) assert.ok([-1, 0, 1].includes(s.toolReward));
      for (const v of summary.stages) assert.ok([-1, 0, 1].includes(v.reward));
      assert.ok(summary.outcome.reward === 0 || summary.outcome.reward === 1);
      const { alpha, beta } = wf.rewards;
      assert.ok(summary.return >= -(alpha + beta) - 1e-12 && summary.return <= 1 + alpha + beta + 1e-12);
    }),
    { numRuns: 300 },
  );
});

test('the gate blocks what the workflow forbids and says why', () => {
  const state = new VerifierState(wf);
  const write = state.gate({ tool: 'write_file', args: { path: 'src/a.ts', content: 'x' } });
  assert.equal(write.decision, 'block');
  assert.match(write.reason, /not permitted in stage "explore"/);
  assert.equal(state.gate({ tool: 'read_file', args: { path: '../secret' } }).decision, 'block');
  assert.match(
    state.gate({ tool: 'run_command', args: { command: 'ls && rm -rf /' } }).reason,
    /deny pattern "rm -rf \/"/,
  );
  const ask = state.gate({ tool: 'run_command', args: { command: 'git push origin main' } });
  assert.equal(ask.decision, 'ask');
  assert.equal(ask.askPattern, 'git push*');
  assert.equal(state.gate({ tool: 'enter_stage', args: { stage: 'verify' } }).decision, 'block');
  assert.equal(state.gate({ tool: 'enter_stage', args: { stage: 'edit' } }).decision, 'allow');
  assert.equal(state.gate({ tool: 'read_file', args: { path: 'a', extra: 1 } }).decision, 'block');
  assert.equal(state.gate({ tool: 'launch_rockets', args: {} }).decision, 'block');
  assert.equal(state.gate({ tool: 'read_file', args: null, argsError: 'Unexpected token' }).decision, 'block');
  // The gate does not change the state.
  assert.equal(state.steps, 0);
});

test('re-running a failing test after an edit is not a loop; re-running it unchanged is', () => {
  const fail = { exitCode: 1, completion: 'marker' };
  const { steps } = verifyEvents(
    wf,
    at([
      call('read_file', { path: 'a' }),
      call('enter_stage', { stage: 'edit' }),
      call('run_command', { command: 'npm test' }, 'ok', fail),
      call('run_command', { command: 'npm test' }, 'ok', fail),
      call('edit_file', { path: 'a', search: 'x', replace: 'y' }, 'ok', { filesChanged: ['a'] }),
      call('run_command', { command: 'npm test' }, 'ok', fail),
    ]),
  );
  assert.deepEqual(failed(steps[2]!), ['tool.succeeded']);
  assert.deepEqual(failed(steps[3]!), ['tool.not_repeated', 'tool.succeeded']);
  assert.deepEqual(failed(steps[5]!), ['tool.succeeded']);
});

test('a bad line never hides the lines after it', () => {
  const text = [
    JSON.stringify({
      lar: 1,
      type: 'header',
      task: 't',
      workflow: 'builtin:default-coding',
      started: '2026-11-30T00:00:00Z',
    }),
    '{"type":"tool_call","tool":"read_file","args":{"path":"a"},"status":"ok"',
    '{"type":"tool_call","tool":"write_file","args":{"path":"a","content":""},"status":"ok"}',
  ].join('\n');
  const report = verifyTrajectoryText(text);
  assert.equal(report.lineErrors.length, 1);
  assert.equal(report.lineErrors[0]!.line, 2);
  assert.equal(report.steps.length, 1);
  assert.equal(report.steps[0]!.line, 3);
  assert.deepEqual(failed(report.steps[0]!), ['tool.permitted']);
});

test('without a header or a workflow nothing is verified, and the reason is given', () => {
  const report = verifyTrajectoryText('{"type":"tool_call","tool":"read_file","args":{"path":"a"},"status":"ok"}\n');
  assert.equal(report.lineErrors[0]!.line, 1);
  assert.match(report.lineErrors[0]!.message, /expected the header on the first line/);
  assert.match(report.fatal ?? '', /no header names a workflow/);
});

test("the default workflow's verify stage: no command cheaper than the tests scores above an honest failing run of them", () => {
  const run = (command: string, result: Record<string, unknown>, more: Record<string, unknown> = {}) =>
    verifyEvents(
      wf,
      at([
        call('read_file', { path: 'src/a.js' }),
        call('enter_stage', { stage: 'edit' }),
        call('edit_file', { path: 'src/a.js', search: 'a', replace: 'b' }, 'ok', { filesChanged: ['src/a.js'] }),
        call('enter_stage', { stage: 'verify' }),
        call('run_command', { command, ...more }, 'ok', { completion: 'marker', ...result }),
        call('submit', { summary: 'done' }),
        { type: 'outcome', command: 'npm test', exitCode: 1, completion: 'exit', testsRan: 1 },
      ]),
    ).summary.return;
  const honest = run('npm test', { exitCode: 1, testsRan: 4, output: '# tests 4\n# fail 1' });
  const cheap: [string, Record<string, unknown>, Record<string, unknown>?][] = [
    ['echo test', { exitCode: 0 }],
    ['true', { exitCode: 0 }],
    ['npm test || true', { exitCode: 0, testsRan: 4 }],
    ['true && npm test', { exitCode: 0, testsRan: 4 }],
    ['npm test -- --testNamePattern=nothing', { exitCode: 0, testsRan: 0 }],
    ['npm test', { exitCode: 0, testsRan: 0 }], // the suite emptied: ran, but no tests
    ['npm test', { exitCode: null }], // never ended
    ['echo "# tests 9"', { exitCode: 0, testsRan: 9 }],
    // With a cwd the host runs it in the agent's terminal, where a function named npm can print anything.
    ['npm test', { exitCode: 0, testsRan: 4 }, { cwd: '.' }],
    ['npm test', { exitCode: 0, testsRan: 4 }, { cwd: 'src' }],
    ['npm  test', { exitCode: 1, testsRan: 4 }, { cwd: './' }],
  ];
  for (const [command, result, more] of cheap) {
    const r = run(command, result, more);
    assert.ok(
      r < honest,
      `${command} ${JSON.stringify(more ?? {})} ${JSON.stringify(result)} scores ${r}, the honest failing run ${honest}`,
    );
  }
});
