/**
 * A Harbor job's rewards at the three levels: Harbor's verifier reward joined
 * to each lar trajectory as its outcome (docs/rewards.md, "An outcome judged
 * outside the run"), the stage-normalized advantages of each task's group of
 * attempts, and pass@1 / pass@k. Pure: the command and its tests compute the same.
 */
import { groupAdvantages, type RolloutAdvantages } from '../rewards/advantages';
import { reportWithJudgedOutcome } from '../verifier/external';
import type { TrajectoryReport } from '../verifier/verify';
import type { Trial } from './job-folder';

/** Written beside each trial's result.json. */
export interface TrialRewards {
  lar: 1;
  trial: string;
  task: string;
  agent?: string;
  /** Harbor's verifier reward; null when it gave none that counts (noReward says why). */
  harborReward: number | null;
  noReward?: string;
  exception?: string;
  /** The lar trajectory, relative to the trial's folder; null for an agent that leaves none (oracle, nop). */
  trajectory: string | null;
  /** Why the process levels are missing although a trajectory is there. */
  problem?: string;
  /** The outcome level o (0 without a usable reward); the return R = o + α·mean(S) + β·mean(T) (o alone without a trajectory). */
  outcome: number;
  return: number;
  submitted?: boolean;
  stageMean?: number;
  toolMean?: number;
  steps?: number;
  alpha?: number;
  beta?: number;
}

export interface TaskSummary {
  task: string;
  attempts: number;
  passes: number;
  pass1: number;
  /** pass@k for the job's k (the fewest attempts any task has), unbiased (Chen et al. 2021). */
  passK: number;
  meanReturn: number | null;
  meanOutcome: number | null;
  meanStage: number | null;
  meanTool: number | null;
}

export interface JobRewards {
  trials: TrialRewards[];
  tasks: TaskSummary[];
  /** Each task's number weighs the same in the overall row. */
  overall: Omit<TaskSummary, 'task'> & { tasks: number };
  k: number;
  /** Per task with at least two attempts: the group's advantages, or why they were left out. */
  groups: { task: string; advantages?: RolloutAdvantages[]; leftOut?: string }[];
}

/** A trial passes when Harbor's verifier gave it the full reward, 1 (a reward above 1 is a verifier's fault, not a pass). */
export const passed = (t: TrialRewards): boolean => t.harborReward === 1;

/**
 * One trial's levels. Every attempt counts, as in pass@1: one without a usable reward from Harbor (none, invalid,
 * outside [0, 1]) has outcome 0, and its return is its process levels alone (0 without a trajectory).
 */
function joined(
  trial: Trial,
  report: TrajectoryReport | undefined,
): { rewards: TrialRewards; report?: TrajectoryReport; usable: boolean } {
  const base: TrialRewards = {
    lar: 1,
    trial: trial.name,
    task: trial.task,
    harborReward: trial.reward ?? null,
    trajectory: trial.trajectory?.path ?? null,
    outcome: 0,
    return: 0,
  };
  if (trial.agent) base.agent = trial.agent;
  if (trial.noReward) base.noReward = trial.noReward;
  if (trial.exception) base.exception = trial.exception;
  if (trial.trajectoryProblem) base.problem = trial.trajectoryProblem;
  const reward = trial.reward;
  const usable = reward !== undefined && reward >= 0 && reward <= 1;
  if (reward !== undefined && !usable) base.problem = `Harbor's reward ${reward} is outside [0, 1]: counted as 0`;
  const judged = usable ? reward : 0;
  if (!report?.summary) {
    if (report) base.problem = `the trajectory could not be verified${report.fatal ? `: ${report.fatal}` : ''}`;
    // No process levels: the outcome alone (an agent that leaves no trajectory, like the oracle).
    base.outcome = judged;
    base.return = judged;
    return { rewards: base, usable: usable && !trial.trajectory };
  }
  let done = report;
  if (report.summary.outcome.external !== undefined) done = reportWithJudgedOutcome(report, judged);
  else base.problem = "the run's workflow judges its own outcome: Harbor's reward is not joined";
  const s = done.summary!;
  return {
    rewards: {
      ...base,
      outcome: s.outcome.reward,
      return: s.return,
      submitted: s.ended,
      stageMean: s.stageRewards.mean,
      toolMean: s.toolRewards.mean,
      steps: s.steps,
      alpha: s.alpha,
      beta: s.beta,
    },
    report: done,
    usable,
  };
}

function mean(values: readonly (number | null | undefined)[]): number | null {
  const xs = values.filter((v): v is number => typeof v === 'number');
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

/** 1 − C(n−c, k)/C(n, k): the chance that k of the n attempts, drawn at random, hold a pass. */
export function passAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

function summarizeTask(task: string, trials: readonly TrialRewards[], k: number): TaskSummary {
  const passes = trials.filter(passed).length;
  return {
    task,
    attempts: trials.length,
    passes,
    pass1: passes / trials.length,
    passK: passAtK(trials.length, passes, k),
    meanReturn: mean(trials.map((t) => t.return)),
    meanOutcome: mean(trials.map((t) => t.outcome)),
    meanStage: mean(trials.map((t) => t.stageMean)),
    meanTool: mean(trials.map((t) => t.toolMean)),
  };
}

function groupOf(
  task: string,
  members: { rewards: TrialRewards; report?: TrajectoryReport; usable: boolean }[],
): JobRewards['groups'][number] {
  // As trainers do: one attempt without a usable reward or trajectory masks the whole group.
  const missing = members.find((m) => !m.report || !m.usable);
  if (missing) {
    const why =
      missing.rewards.problem ??
      missing.rewards.noReward ??
      (missing.rewards.trajectory ? 'no summary' : 'no lar trajectory');
    return { task, leftOut: `${missing.rewards.trial}: ${why}` };
  }
  try {
    return {
      task,
      advantages: groupAdvantages(
        members.map((m) => ({ source: `${m.rewards.trial}/${m.rewards.trajectory}`, report: m.report! })),
      ),
    };
  } catch (e) {
    return { task, leftOut: e instanceof Error ? e.message : String(e) };
  }
}

/** The job's rewards, from its trials and each trajectory's report (by trial folder; absent without one). */
export function jobRewards(trials: readonly Trial[], reports: ReadonlyMap<string, TrajectoryReport>): JobRewards {
  const all = trials.map((t) => joined(t, reports.get(t.dir)));
  const byTask = new Map<string, typeof all>();
  for (const j of all) byTask.set(j.rewards.task, [...(byTask.get(j.rewards.task) ?? []), j]);
  const k = Math.min(...[...byTask.values()].map((g) => g.length));
  const tasks = [...byTask].map(([task, g]) =>
    summarizeTask(
      task,
      g.map((j) => j.rewards),
      k,
    ),
  );
  const groups = [...byTask].filter(([, g]) => g.length >= 2).map(([task, g]) => groupOf(task, g));
  const overall = {
    tasks: tasks.length,
    attempts: tasks.reduce((a, t) => a + t.attempts, 0),
    passes: tasks.reduce((a, t) => a + t.passes, 0),
    pass1: mean(tasks.map((t) => t.pass1)) ?? 0,
    passK: mean(tasks.map((t) => t.passK)) ?? 0,
    meanReturn: mean(tasks.map((t) => t.meanReturn)),
    meanOutcome: mean(tasks.map((t) => t.meanOutcome)),
    meanStage: mean(tasks.map((t) => t.meanStage)),
    meanTool: mean(tasks.map((t) => t.meanTool)),
  };
  return { trials: all.map((j) => j.rewards), tasks, overall, k, groups };
}
