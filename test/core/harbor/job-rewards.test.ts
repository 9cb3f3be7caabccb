import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Trial } from '../../../core/harbor/job-folder';
import { jobRewards, passAtK } from '../../../core/harbor/job-rewards';
import { BuiltinBackend } from '../../../core/verifier/backend';
import { verifyTrajectoryTextWith, type TrajectoryReport } from '../../../core/verifier/verify';

const FIXTURE = join(__dirname, '../../../../test-fixtures/conformance/089-outcome-judged-outside.lar.jsonl');
// Its run: T = [1, 1, 1, 0, 1], S = [1, 1], submitted; α = 0.5, β = 0.25 (the fixture's expected.json).
const PROCESS = 0.5 * 1 + 0.25 * (4 / 5);

async function judgedOutside(): Promise<TrajectoryReport> {
  return verifyTrajectoryTextWith(new BuiltinBackend(), readFileSync(FIXTURE, 'utf8'), {});
}

function trial(name: string, task: string, extra: Partial<Trial> = {}): Trial {
  return { dir: `/job/${name}`, name, task, trajectory: { path: 'agent/lar.lar.jsonl', text: '' }, ...extra };
}

describe('pass@k', () => {
  test('is the chance that k attempts drawn from n hold a pass', () => {
    assert.equal(passAtK(2, 0, 2), 0);
    assert.equal(passAtK(2, 1, 2), 1);
    assert.ok(Math.abs(passAtK(5, 1, 1) - 0.2) < 1e-12);
    assert.ok(Math.abs(passAtK(5, 2, 2) - (1 - 3 / 10)) < 1e-12); // 1 − C(3,2)/C(5,2)
  });
});

describe("a Harbor job's rewards", () => {
  test("Harbor's reward becomes the outcome of a submitted run; the return adds the process levels", async () => {
    const report = await judgedOutside();
    const trials = [trial('a', 't', { reward: 1 }), trial('b', 't', { reward: 0 })];
    const r = jobRewards(trials, new Map(trials.map((t) => [t.dir, report])));
    assert.deepEqual(
      r.trials.map((t) => [t.outcome, t.return]),
      [
        [1, 1 + PROCESS],
        [0, PROCESS],
      ],
    );
    assert.deepEqual(r.tasks[0], {
      task: 't',
      attempts: 2,
      passes: 1,
      pass1: 0.5,
      passK: 1,
      meanReturn: 0.5 + PROCESS,
      meanOutcome: 0.5,
      meanStage: 1,
      meanTool: 0.8,
    });
    const group = r.groups[0]!;
    assert.equal(group.advantages?.length, 2);
    assert.ok(group.advantages[0]!.outcomeAdvantage > 0 && group.advantages[1]!.outcomeAdvantage < 0);
  });

  test('every attempt counts: one without a usable reward is a failure with outcome 0, and masks its group', async () => {
    const report = await judgedOutside();
    const trials = [
      trial('a', 't', { reward: 1 }),
      trial('b', 't', { noReward: 'no verifier result', exception: 'RewardFileNotFoundError' }),
      trial('c', 'u', { reward: 3 }),
      trial('d', 'u', { reward: 0.5, trajectory: undefined }),
    ];
    const r = jobRewards(trials, new Map(trials.filter((t) => t.trajectory).map((t) => [t.dir, report])));
    const [a, b, c, d] = r.trials;
    assert.deepEqual([a!.outcome, b!.outcome, b!.return, b!.noReward], [1, 0, PROCESS, 'no verifier result']);
    // A reward above 1 is the verifier's fault: not a pass, counted as 0.
    assert.match(c!.problem!, /outside \[0, 1\]: counted as 0/);
    assert.deepEqual([c!.outcome, c!.return], [0, PROCESS]);
    assert.deepEqual([d!.outcome, d!.return, d!.trajectory], [0.5, 0.5, null]);
    // The means take every attempt, as pass@1 does: the summary never reads better than the runs earned.
    assert.deepEqual(
      r.tasks.map((t) => [t.task, t.passes, t.pass1, t.meanOutcome, t.meanReturn]),
      [
        ['t', 1, 0.5, 0.5, (1 + PROCESS + PROCESS) / 2],
        ['u', 0, 0, 0.25, (PROCESS + 0.5) / 2],
      ],
    );
    assert.match(r.groups[0]!.leftOut!, /^b: no verifier result/);
    assert.match(r.groups[1]!.leftOut!, /^c: Harbor's reward 3/);
  });

  test('a trajectory that cannot be verified gives no process levels, and says why', () => {
    const broken: TrajectoryReport = {
      backend: 'builtin',
      workflowProblems: [],
      lineErrors: [],
      steps: [],
      fatal: 'no header',
    };
    const r = jobRewards([trial('a', 't', { reward: 1 })], new Map([['/job/a', broken]]));
    assert.deepEqual(
      [r.trials[0]!.outcome, r.trials[0]!.return, r.trials[0]!.stageMean, r.trials[0]!.problem],
      [1, 1, undefined, 'the trajectory could not be verified: no header'],
    );
    assert.equal(r.tasks[0]!.pass1, 1);
  });
});
