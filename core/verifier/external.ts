/**
 * An outcome judged outside the run (Harbor's verifier runs after the agent) joined to the rewards
 * the verifier gave: pure, so a command over a job folder and the tests compute the same return.
 */
import type { TrajectoryReport } from './verify';
import type { TrajectorySummary } from './types';

/**
 * The summary with the judge's value `judged` (in [0, 1]) as the outcome: o = judged when the run
 * submitted from a terminal stage (the summary's outcome is pending), otherwise 0 as for every run
 * that never submitted; R = o + α·mean(S) + β·mean(T). Throws when the workflow's outcome is not
 * judged outside the run, or already was, or `judged` is not a number in [0, 1].
 */
export function withJudgedOutcome(summary: TrajectorySummary, judged: number): TrajectorySummary {
  const o = summary.outcome;
  if (o.external === undefined)
    throw new Error("the workflow's outcome is its own command's: there is no outside judge to join");
  if (o.judged !== undefined) throw new Error(`the outcome was already judged (${o.judged})`);
  if (!(typeof judged === 'number' && judged >= 0 && judged <= 1))
    throw new Error(`the judged outcome must be a number from 0 to 1, not ${String(judged)}`);
  const reward = o.pending ? judged : 0;
  return {
    ...summary,
    outcome: { ...o, reward, pending: false, judged },
    return: reward + summary.alpha * summary.stageRewards.mean + summary.beta * summary.toolRewards.mean,
  };
}

/** The report with its summary completed (withJudgedOutcome): what groupAdvantages reads as the outcome. */
export function reportWithJudgedOutcome(report: TrajectoryReport, judged: number): TrajectoryReport {
  if (!report.summary)
    throw new Error(`the trajectory could not be verified${report.fatal ? `: ${report.fatal}` : ''}`);
  return { ...report, summary: withJudgedOutcome(report.summary, judged) };
}
