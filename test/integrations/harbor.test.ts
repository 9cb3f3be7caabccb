/**
 * The real Harbor (setup's venv) over our task set, through our environment:
 * the oracle solves every task, nop none, the failure paths end as Harbor
 * records them, and LarAgent against the scripted model solves the tasks it
 * has scripts for, with trajectories Harbor's validator accepts and rewards
 * `lar harbor` joins as a computation by hand does.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HARBOR_MODEL, HARBOR_SCRIPTS, harborModelServer } from '../../devtools/harbor-model';
import { writeCliPackage } from '../../devtools/cli-package';
import { REPO_ROOT, harborStatus } from '../../devtools/paths';
import { harborRun, python, trialsOf, type HarborTrial } from '../support/harbor-job';
import { lar } from '../support/lar-cli';

const ENV = 'lar_harbor:LocalSandboxEnvironment';
const TASKS = 'test-fixtures/harbor';
const TASK_COUNT = 10;
const status = harborStatus();
const skip = 'skip' in status ? status.skip : false;
const venv = 'venv' in status ? status.venv : '';

const PARSES = `
import sys, pathlib
from harbor.models.job.result import JobResult
from harbor.models.trial.result import TrialResult
JobResult.model_validate_json(pathlib.Path(sys.argv[1]).read_text())
for p in sys.argv[2:]:
    TrialResult.model_validate_json(pathlib.Path(p).read_text())
print("parsed", len(sys.argv) - 1)
`;

async function assertResultsParse(job: string, trials: readonly HarborTrial[]): Promise<void> {
  const r = await python(venv, PARSES, [join(job, 'result.json'), ...trials.map((t) => join(t.dir, 'result.json'))]);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`parsed ${trials.length + 1}`));
}

describe('Harbor through LocalSandboxEnvironment', { skip }, () => {
  let scratch = '';
  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'lar-harbor-jobs-'));
    // LarAgent installs the CLI tarball `npm run package` writes; `npm run test:unit` does not package.
    if (
      !existsSync(join(REPO_ROOT, 'out', 'cli')) ||
      !readdirSync(join(REPO_ROOT, 'out', 'cli')).some((f) => f.endsWith('.tgz'))
    )
      await writeCliPackage(join(REPO_ROOT, 'out', 'cli'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  test("lar-harbor's own tests pass (the Dockerfile reader, the sandbox, the forwarder)", async () => {
    const r = await python(
      venv,
      'import sys, unittest; sys.argv = ["unittest", "discover", "-s", "integrations/harbor/tests"]; unittest.main(module=None)',
    );
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /\nOK/);
  });

  test('lar-harbor is type-checked (mypy --strict) and formatted and linted (ruff)', async () => {
    const dir = 'integrations/harbor';
    for (const [tool, args] of [
      ['mypy', ['--config-file', `${dir}/pyproject.toml`, `${dir}/src`]],
      ['ruff', ['format', '--check', '--config', `${dir}/pyproject.toml`, `${dir}/src`, `${dir}/tests`]],
      ['ruff', ['check', '--config', `${dir}/pyproject.toml`, `${dir}/src`, `${dir}/tests`]],
    ] as const) {
      const r = await python(
        venv,
        `import runpy, sys; sys.argv = ${JSON.stringify([tool, ...args])}; runpy.run_module(${JSON.stringify(tool)}, run_name="__main__")`,
      );
      assert.equal(r.code, 0, `${tool} ${args.join(' ')}:\n${r.out}`);
    }
  });

  test('the oracle gets reward 1 on every task, and Harbor parses every result', async () => {
    const { job } = await harborRun(venv, join(scratch, 'oracle'), ['-p', TASKS, '-a', 'oracle', '-e', ENV, '-n', '4']);
    const trials = trialsOf(job);
    assert.equal(trials.length, TASK_COUNT);
    for (const t of trials) assert.deepEqual([t.task, t.reward, t.exception], [t.task, 1, null]);
    await assertResultsParse(job, trials);
  });

  test('nop gets reward 0 on every task', async () => {
    const { job } = await harborRun(venv, join(scratch, 'nop'), ['-p', TASKS, '-a', 'nop', '-e', ENV, '-n', '4']);
    const trials = trialsOf(job);
    assert.equal(trials.length, TASK_COUNT);
    for (const t of trials) assert.deepEqual([t.task, t.reward, t.exception], [t.task, 0, null]);
  });

  test('each failure path ends the trial as Harbor records it, refusals before the agent starts', async () => {
    const { job } = await harborRun(venv, join(scratch, 'faults'), [
      '-p',
      'test-fixtures/harbor-faults',
      '-a',
      'oracle',
      '-e',
      ENV,
      '-n',
      '3',
    ]);
    const byTask = new Map(trialsOf(job).map((t) => [t.task, t]));
    const expect: Record<string, [string, number | null]> = {
      'fault-agent-timeout': ['AgentTimeoutError', 0],
      'fault-crash': ['VerifierOutputParseError', null],
      'fault-no-reward': ['RewardFileNotFoundError', null],
      'fault-docker-image': ['SandboxBuildFailedError', null],
      'fault-refused-instruction': ['SandboxBuildFailedError', null],
      'fault-refused-run': ['SandboxBuildFailedError', null],
    };
    for (const [task, [exception, reward]] of Object.entries(expect)) {
      const t = byTask.get(task);
      assert.ok(t, `no trial of ${task}`);
      assert.deepEqual([t.exception, t.reward], [exception, reward], task);
    }
    const refused = readFileSync(join(byTask.get('fault-refused-run')!.dir, 'result.json'), 'utf8');
    assert.match(refused, /Dockerfile line \d+: RUN apt-get/);
    assert.equal(
      (JSON.parse(refused) as { agent_execution: unknown }).agent_execution,
      null,
      'the agent must not start',
    );
  });

  test('LarAgent against the scripted model: -n 4 -k 2, validated trajectories, rewards joined as by hand', async () => {
    const model = harborModelServer();
    const url = await model.start();
    let job: string;
    try {
      ({ job } = await harborRun(venv, join(scratch, 'lar'), [
        '-p', TASKS, '-a', 'lar_harbor:LarAgent', '-m', `hosted_vllm/${HARBOR_MODEL}`, '--ak', `api_base=${url}`,
        '-e', ENV, '-n', '4', '-k', '2',
      ])); // prettier-ignore
    } finally {
      await model.stop();
    }
    const trials = trialsOf(job);
    assert.equal(trials.length, TASK_COUNT * 2);
    const scripted = new Set(HARBOR_SCRIPTS.map((s) => s.task));
    for (const t of trials)
      assert.deepEqual([t.task, t.exception, t.reward], [t.task, null, scripted.has(t.task) ? 1 : 0]);
    await assertResultsParse(job, trials);
    await assertTrajectories(trials);
    await assertRewardsByHand(job, trials, scripted);
  });

  test('--ak collect_rollout_details=true: the trial’s rollout_details is one segment of the ids the server sent', async () => {
    const model = harborModelServer();
    const url = await model.start();
    let job: string;
    try {
      ({ job } = await harborRun(venv, join(scratch, 'details'), [
        '-p', TASKS, '-i', HARBOR_SCRIPTS[0]!.task, '-a', 'lar_harbor:LarAgent', '-m', `hosted_vllm/${HARBOR_MODEL}`,
        '--ak', `api_base=${url}`, '--ak', 'collect_rollout_details=true', '-e', ENV,
      ])); // prettier-ignore
    } finally {
      await model.stop();
    }
    const [t] = trialsOf(job);
    const output = join(t!.dir, 'agent', 'lar-output.txt');
    assert.deepEqual([t?.exception, t?.reward], [null, 1], existsSync(output) ? readFileSync(output, 'utf8') : '');
    const result = JSON.parse(readFileSync(join(t!.dir, 'result.json'), 'utf8')) as {
      agent_result: {
        rollout_details: { prompt_token_ids: number[][]; completion_token_ids: number[][]; logprobs: number[][] }[];
      };
    };
    const details = result.agent_result.rollout_details;
    assert.equal(details.length, 1);
    assert.deepEqual(details[0], {
      prompt_token_ids: model.sentTokens.map((s) => s.promptIds),
      completion_token_ids: model.sentTokens.map((s) => s.completionIds),
      logprobs: model.sentTokens.map((s) => s.logprobs),
    });
    assert.ok(model.sentTokens.length > 1);
  });

  test("a run the context window cannot hold is Harbor's context-length error, scored 0 rather than dropped", async () => {
    const model = harborModelServer(600);
    const url = await model.start();
    try {
      const { job } = await harborRun(venv, join(scratch, 'window'), [
        '-p', TASKS, '-i', 'csv-report', '-a', 'lar_harbor:LarAgent', '-m', `hosted_vllm/${HARBOR_MODEL}`,
        '--ak', `api_base=${url}`, '-e', ENV,
      ]); // prettier-ignore
      const [t] = trialsOf(job);
      assert.deepEqual([t?.exception, t?.reward], ['ContextWindowExceededError', 0]);
    } finally {
      await model.stop();
    }
  });
});

async function assertTrajectories(trials: readonly HarborTrial[]): Promise<void> {
  for (const t of trials) {
    const header = JSON.parse(readFileSync(join(t.dir, 'agent', 'lar.lar.jsonl'), 'utf8').split('\n')[0]!) as {
      workflow: unknown;
      sandbox?: { confined: boolean; container?: boolean };
    };
    assert.equal(header.workflow, 'builtin:terminal-task');
    assert.equal(header.sandbox?.container, true, `${t.name}: the container is recorded as the sandbox`);
    const atif = join(t.dir, 'agent', 'trajectory.json');
    const v = await python(
      venv,
      'import runpy, sys; sys.argv = ["validator", sys.argv[1]]; runpy.run_module("harbor.utils.trajectory_validator", run_name="__main__")',
      [atif],
    );
    assert.equal(v.code, 0, `${t.name}: Harbor's validator refuses trajectory.json:\n${v.out}`);
    const doc = JSON.parse(readFileSync(atif, 'utf8')) as { steps: { extra?: { lar?: Record<string, unknown> } }[] };
    assert.ok(
      doc.steps.some((s) => s.extra?.lar !== undefined),
      `${t.name}: no rewards in the steps' extra`,
    );
  }
}

interface Summary {
  outcome: { pending?: boolean };
  stageRewards: { mean: number };
  toolRewards: { mean: number };
  alpha: number;
  beta: number;
  ended: boolean;
}

async function assertRewardsByHand(
  job: string,
  trials: readonly HarborTrial[],
  scripted: ReadonlySet<string>,
): Promise<void> {
  const run = await lar(['harbor', job, '--json']);
  assert.equal(run.code, 0, run.err);
  const out = JSON.parse(run.out) as {
    tasks: { task: string; attempts: number; passes: number; pass1: number; passK: number; meanReturn: number }[];
    overall: { pass1: number; passK: number; meanReturn: number };
    k: number;
  };
  const returns = new Map<string, number[]>();
  for (const t of trials) {
    const v = await lar([
      'verify',
      join(t.dir, 'agent', 'lar.lar.jsonl'),
      '--workflow',
      'builtin:terminal-task',
      '--json',
    ]);
    const s = (JSON.parse(v.out.trimEnd().split('\n').at(-1)!) as { summary: Summary }).summary;
    assert.equal(s.outcome.pending, true, `${t.name}: the outcome waits for Harbor's verifier`);
    const o = s.ended ? t.reward! : 0;
    const r = o + s.alpha * s.stageRewards.mean + s.beta * s.toolRewards.mean;
    const written = JSON.parse(readFileSync(join(t.dir, 'lar-rewards.json'), 'utf8')) as {
      outcome: number;
      return: number;
    };
    assert.equal(written.outcome, o, t.name);
    assert.ok(Math.abs(written.return - r) < 1e-9, `${t.name}: ${written.return} ≠ ${r}`);
    returns.set(t.task, [...(returns.get(t.task) ?? []), r]);
  }
  assert.equal(out.k, 2);
  for (const task of out.tasks) {
    const short = task.task.replace(/^.*\//, '');
    const passes = scripted.has(short) ? 2 : 0;
    assert.deepEqual(
      [task.attempts, task.passes, task.pass1, task.passK],
      [2, passes, passes / 2, passes ? 1 : 0],
      short,
    );
    const rs = returns.get(short)!;
    assert.ok(Math.abs(task.meanReturn - (rs[0]! + rs[1]!) / 2) < 1e-9, short);
  }
  assert.ok(Math.abs(out.overall.pass1 - scripted.size / TASK_COUNT) < 1e-9);
  const advantages = readFileSync(join(job, 'lar-advantages', `lean4-agentic_csv-report.jsonl`), 'utf8')
    .trim()
    .split('\n');
  assert.equal(advantages.length, 2);
}
