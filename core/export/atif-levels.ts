/** The three reward levels and the token counts of one ATIF agent step, apart from the step-building walk in atif.ts. */
import type { TurnUsage } from '../schema/trajectory';
import type { StepResult, TrajectorySummary } from '../verifier/types';
import type { AtifTrajectory } from './atif-schema';

type Metrics = NonNullable<NonNullable<AtifTrajectory['steps'][number]['metrics']>>;
type FinalMetrics = NonNullable<AtifTrajectory['final_metrics']>;

/**
 * The run's outcome level as a reader should take it: the reward, or, while the workflow's outside
 * judge (Harbor's verifier) has not given its value, `null` with `outcomePending` — never a 0 that
 * looks like a failure. `judgedBy` names the outside judge whenever there is one.
 */
export interface OutcomeLevel {
  outcome: number | null;
  outcomePending?: true;
  judgedBy?: string;
}

export function outcomeLevel(summary: TrajectorySummary | undefined): OutcomeLevel {
  const o = summary?.outcome;
  if (!o) return { outcome: null };
  const judge = o.external !== undefined ? { judgedBy: o.external } : {};
  return o.pending ? { outcome: null, outcomePending: true, ...judge } : { outcome: o.reward, ...judge };
}

/** What the verifier gave one agent step: its calls' tool rewards, its stage visit's reward, the run's outcome. */
export interface StepLevels extends OutcomeLevel {
  toolRewards: (number | null)[];
  stage: string | null;
  visit: number | null;
  /** The reward of the stage visit the step belongs to (its first event's), once the verifier scored it. */
  stageReward: number | null;
}

/** The levels of a step whose first event had result `first` and whose calls had `calls` (in order). */
export function stepLevels(
  first: StepResult | undefined,
  calls: readonly (StepResult | undefined)[],
  summary: TrajectorySummary | undefined,
): StepLevels {
  const visit = first?.visit ?? null;
  const scored = visit === null ? undefined : summary?.stages.find((v) => v.visit === visit);
  return {
    toolRewards: calls.map((r) => r?.toolReward ?? null),
    stage: first?.stage ?? null,
    visit,
    stageReward: scored?.reward ?? null,
    ...outcomeLevel(summary),
  };
}

/** A turn's token counts in ATIF's names. */
export function stepMetrics(usage: TurnUsage): Metrics {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    ...(usage.cached !== undefined ? { cached_tokens: usage.cached } : {}),
  };
}

/** The run's totals: token sums only over the turns that reported them, absent when none did (never invented). */
export function finalMetrics(steps: readonly { metrics?: Metrics }[]): FinalMetrics {
  const measured = steps.flatMap((s) => (s.metrics ? [s.metrics] : []));
  const sum = (key: 'prompt_tokens' | 'completion_tokens' | 'cached_tokens') =>
    measured.reduce((n, m) => n + (m[key] ?? 0), 0);
  return {
    ...(measured.length
      ? { total_prompt_tokens: sum('prompt_tokens'), total_completion_tokens: sum('completion_tokens') }
      : {}),
    ...(measured.some((m) => m.cached_tokens !== undefined) ? { total_cached_tokens: sum('cached_tokens') } : {}),
    total_steps: steps.length,
  };
}
