/**
 * Rewards: of a call, of a stage visit, of the outcome, and the return that weighs them (docs/rewards.md).
 * Lean counterpart: lean/Lar/Rewards.lean.
 */
import { externalJudge, outcomeCommand, type OutcomeCheck, type Workflow } from '../schema/workflow';
import type { OutcomeEvent } from '../schema/trajectory';
import { CHECKS, fail, pass, type StageReward, type ToolReward, type Verdict } from './checks';
import type { OutcomeResult, RecordedOutcome, StageVisitResult, TrajectorySummary, VerdictOut } from './types';

/** −1 if any violation failed, else 0 if any other tool check failed, else +1. */
export function toolRewardOf(verdicts: readonly Verdict[]): ToolReward {
  let reward: ToolReward = 1;
  for (const v of verdicts) {
    if (v.ok || CHECKS[v.check].level !== 'tool') continue;
    if (CHECKS[v.check].severity === 'error') return -1;
    reward = 0;
  }
  return reward;
}

/** −1 if the transition out was illegal, else 0 if any other stage check failed, else +1. */
export function stageRewardOf(verdicts: readonly Verdict[]): StageReward {
  let reward: StageReward = 1;
  for (const v of verdicts) {
    if (v.ok || CHECKS[v.check].level !== 'stage') continue;
    if (v.check === 'stage.transition') return -1;
    reward = 0;
  }
  return reward;
}

/** α·mean(closed stage rewards) + β·mean(tool rewards); the outcome is not counted. */
export function runningReturn(
  wf: Workflow,
  stageSum: number,
  stageCount: number,
  toolSum: number,
  steps: number,
): number {
  const { alpha, beta } = wf.rewards;
  return alpha * (stageCount ? stageSum / stageCount : 0) + beta * (steps ? toolSum / steps : 0);
}

/** `outcome.check_passed`, from the outcome event that counted. */
export function outcomeCheckVerdict(check: OutcomeCheck, rec: RecordedOutcome | undefined): Verdict {
  const expected = check.expectExitCode;
  if (!rec) return fail('outcome.check_passed', 'no outcome check result was recorded after the submit');
  const e = rec.event;
  if (e.completion === 'timeout' || e.completion === 'unobserved' || e.exitCode === null) {
    return fail(
      'outcome.check_passed',
      `the outcome check "${e.command}" did not finish (${e.completion ?? 'no exit code'})`,
      ['exitCode'],
    );
  }
  if (e.exitCode !== expected)
    return fail('outcome.check_passed', `"${e.command}" exited ${e.exitCode}; expected ${expected}`, ['exitCode']);
  if (e.testsRan === 0)
    return fail(
      'outcome.check_passed',
      `"${e.command}" exited ${e.exitCode} but ran no tests: a check that runs no tests is not a pass`,
      ['testsRan'],
    );
  return pass('outcome.check_passed', `"${e.command}" exited ${e.exitCode} as expected`);
}

/**
 * The verdicts of an outcome event, onto `verdicts`: it counts only after a submit, once, and only
 * when the outcome is judged in the run. Returns the outcome recorded when this one counts.
 */
export function outcomeEventVerdicts(
  wf: Workflow,
  check: OutcomeCheck | undefined,
  ended: boolean,
  recorded: RecordedOutcome | undefined,
  e: OutcomeEvent,
  line: number,
  verdicts: VerdictOut,
): RecordedOutcome | undefined {
  const judge = externalJudge(wf);
  if (judge !== undefined) {
    verdicts.push(
      fail('outcome.external', `the outcome is judged outside the run (${judge}): this outcome event is ignored`, [
        'type',
      ]),
    );
  } else if (!ended) {
    verdicts.push(fail('outcome.after_submit', 'an outcome check result before any submit is ignored', ['type']));
  } else if (recorded) {
    verdicts.push(
      fail('outcome.single', `the outcome was already recorded on line ${recorded.line}; this one is ignored`, [
        'type',
      ]),
    );
  } else {
    verdicts.push(pass('outcome.after_submit'));
    verdicts.push(pass('outcome.single'));
    const counted = { event: e, line };
    verdicts.push(outcomeCheckVerdict(check!, counted));
    return counted;
  }
  return undefined;
}

/** The outcome as people read it: o, or "pending (judged by …)" while a judge outside the run has not given it. */
export function outcomeText(o: OutcomeResult): string {
  if (o.pending) return `pending (judged by ${o.external})`;
  return o.judged !== undefined ? `${o.reward} (judged by ${o.external})` : String(o.reward);
}

/** What a run comes to, as the summary reports it. */
export interface RunTotals {
  steps: number;
  toolSum: number;
  /** Every visit kept (all but in a stream, which drops closed ones), the one still open (if any) scored as if the run stopped now. */
  stages: StageVisitResult[];
  /** How many visits there were, the open one included (more than `stages` in a stream). */
  stageCount: number;
  stageSum: number;
  ended: boolean;
  submittedFromTerminal: boolean;
  outcome: RecordedOutcome | undefined;
  finalStage: string | undefined;
}

/** The trajectory's scores: outcome + α·mean(stage rewards) + β·mean(tool rewards). */
export function summarize(wf: Workflow, t: RunTotals): TrajectorySummary {
  const outcomeVerdicts: Verdict[] = [
    t.submittedFromTerminal
      ? pass('outcome.submitted')
      : fail(
          'outcome.submitted',
          t.ended ? 'the run submitted from a stage that is not terminal' : 'the run never submitted',
        ),
  ];
  const check = outcomeCommand(wf);
  if (t.ended && check) outcomeVerdicts.push(outcomeCheckVerdict(check, t.outcome));
  // Judged outside the run: 0 here, the judge's value joined later (external.ts); pending only after a submit.
  const outcomeReward: 0 | 1 = check && outcomeVerdicts.every((v) => v.ok) && t.ended ? 1 : 0;
  const outcome: OutcomeResult = { reward: outcomeReward, verdicts: outcomeVerdicts };
  const judge = externalJudge(wf);
  if (judge !== undefined) Object.assign(outcome, { external: judge, pending: t.submittedFromTerminal });
  if (t.outcome) outcome.line = t.outcome.line;
  const { alpha, beta } = wf.rewards;
  const stages = t.stages;
  const stageMean = t.stageCount ? t.stageSum / t.stageCount : 0;
  const toolMean = t.steps ? t.toolSum / t.steps : 0;
  const summary: TrajectorySummary = {
    steps: t.steps,
    toolRewards: { sum: t.toolSum, count: t.steps, mean: toolMean },
    stages,
    stageRewards: { sum: t.stageSum, count: t.stageCount, mean: stageMean },
    outcome,
    return: outcomeReward + alpha * stageMean + beta * toolMean,
    alpha,
    beta,
    ended: t.ended,
  };
  if (t.finalStage !== undefined) summary.finalStage = t.finalStage;
  return summary;
}
