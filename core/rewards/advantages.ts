import type { TrajectoryReport } from '../verifier/verify';

/** The stage id pooled for steps made after the run ended (no visit). */
export const ENDED_STAGE = '(ended)';
export const EPSILON = 1e-6;

export interface RolloutInput {
  /** Where the trajectory came from (a file path), echoed in the output. */
  source: string;
  report: TrajectoryReport;
}

export interface StepAdvantage {
  line: number;
  step: number;
  stage: string;
  tool?: string;
  toolReward: number;
  /** Reward of the visit this step belongs to; null after the run ended. */
  stageReward: number | null;
  toolAdvantage: number;
  stageAdvantage: number;
  /** A^o + α·Â^s + β·Â^t, what a GRPO trainer weights this step's tokens by. */
  advantage: number;
}

export interface RolloutAdvantages {
  source: string;
  task: string;
  trajectoryId?: string;
  outcome: number;
  return: number;
  outcomeAdvantage: number;
  alpha: number;
  beta: number;
  stages: { stage: string; visit: number; reward: number; advantage: number }[];
  steps: StepAdvantage[];
}

class Pool {
  private readonly values = new Map<string, number[]>();
  add(key: string, v: number): void {
    const list = this.values.get(key);
    if (list) list.push(v);
    else this.values.set(key, [v]);
  }
  normalizer(): (key: string, v: number) => number {
    const stats = new Map<string, { mean: number; std: number }>();
    for (const [k, list] of this.values) stats.set(k, meanStd(list));
    return (key, v) => {
      const s = stats.get(key)!;
      return (v - s.mean) / (s.std + EPSILON);
    };
  }
}

function meanStd(values: readonly number[]): { mean: number; std: number } {
  const n = values.length;
  if (n === 0) return { mean: 0, std: 0 };
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / n;
  let sq = 0;
  for (const v of values) sq += (v - mean) * (v - mean);
  return { mean, std: Math.sqrt(sq / n) };
}

/**
 * Stage-normalized GRPO advantages for a group of rollouts of one task, as
 * defined in docs/rewards.md. Throws when the group mixes tasks or a
 * trajectory could not be verified: advantages over such a group mean nothing.
 */
export function groupAdvantages(group: readonly RolloutInput[]): RolloutAdvantages[] {
  if (group.length === 0) throw new Error('a group needs at least one trajectory');
  const tasks = new Set<string>();
  for (const { source, report } of group) {
    if (!report.summary || !report.workflow)
      throw new Error(`${source}: cannot be verified${report.fatal ? `: ${report.fatal}` : ''}`);
    tasks.add(report.header?.task ?? '');
  }
  if (tasks.size > 1) {
    throw new Error(
      `the trajectories are not rollouts of one task (${tasks.size} different tasks: ${[...tasks].map((t) => JSON.stringify(t.slice(0, 60))).join(', ')})`,
    );
  }

  const outcomes = meanStd(group.map((g) => g.report.summary!.outcome.reward));
  const stagePool = new Pool();
  const toolPool = new Pool();
  for (const { report } of group) {
    for (const v of report.summary!.stages) stagePool.add(v.stage, v.reward);
    for (const s of report.steps) if (s.toolReward !== undefined) toolPool.add(s.stage ?? ENDED_STAGE, s.toolReward);
  }
  const stageNorm = stagePool.normalizer();
  const toolNorm = toolPool.normalizer();

  return group.map(({ source, report }) => {
    const summary = report.summary!;
    const { alpha, beta } = summary;
    const outcomeAdvantage = (summary.outcome.reward - outcomes.mean) / (outcomes.std + EPSILON);
    const visits = new Map(summary.stages.map((v) => [v.visit, v]));
    const stages = summary.stages.map((v) => ({
      stage: v.stage,
      visit: v.visit,
      reward: v.reward,
      advantage: stageNorm(v.stage, v.reward),
    }));
    const steps: StepAdvantage[] = [];
    for (const s of report.steps) {
      if (s.toolReward === undefined || s.step === undefined) continue;
      const stage = s.stage ?? ENDED_STAGE;
      const visit = s.visit === undefined ? undefined : visits.get(s.visit);
      const stageAdvantage = visit ? stageNorm(visit.stage, visit.reward) : 0;
      const toolAdvantage = toolNorm(stage, s.toolReward);
      const step: StepAdvantage = {
        line: s.line,
        step: s.step,
        stage,
        ...(s.tool !== undefined ? { tool: s.tool } : {}),
        toolReward: s.toolReward,
        stageReward: visit ? visit.reward : null,
        toolAdvantage,
        stageAdvantage,
        advantage: outcomeAdvantage + alpha * stageAdvantage + beta * toolAdvantage,
      };
      steps.push(step);
    }
    const out: RolloutAdvantages = {
      source,
      task: report.header?.task ?? '',
      outcome: summary.outcome.reward,
      return: summary.return,
      outcomeAdvantage,
      alpha,
      beta,
      stages,
      steps,
    };
    if (report.header?.id !== undefined) out.trajectoryId = report.header.id;
    return out;
  });
}
