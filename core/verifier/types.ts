/**
 * What the verifier answers (the JSON shapes the CLI, the server and the Lean checker share), kept
 * apart from how it decides. Lean counterpart: the "Results" structures of lean/Lar/Verifier.lean.
 */
import type { OutcomeEvent, TrajectoryEvent } from '../schema/trajectory';
import type { ExitCondition, Stage } from '../schema/workflow';
import type { CheckId, StageReward, ToolReward, Verdict } from './checks';

/** A call the model proposes, before it runs. */
export interface ProposedCall {
  tool: string;
  args: unknown;
  /** Set when the model's argument text was not JSON. */
  argsError?: string;
}

export type GateDecision = 'allow' | 'ask' | 'block';

export interface GateResult {
  decision: GateDecision;
  /** The checks that can be decided before the call runs. */
  verdicts: Verdict[];
  /** The reason to show the model or the user (the first failed check, or the approval rule). */
  reason: string;
  /**
   * The `ask` pattern the call matches: it needs approval — when decision is
   * `ask`, and also when it is `block` (with enforcement `warn` such a call may
   * still run, and then only if the user approves it).
   */
  askPattern?: string;
  /** Why the user must approve a call that is not `ask` (set by the per-tool approval setting on a blocked call). */
  askReason?: string;
  /** The reward the call gets if it is made anyway and then succeeds (−1 when blocked). */
  toolReward: ToolReward;
}

export type VisitEnd = 'transition' | 'submit' | 'run_end';

/** One visit of a stage, scored when it ends. */
export interface StageVisitResult {
  stage: string;
  /** 0-based ordinal of this visit in the run. */
  visit: number;
  /** Line of the first event in the visit (of the header for the start stage). */
  startLine: number;
  /** Line of the event that ended it; undefined when the run stopped inside it. */
  endLine?: number;
  endedBy: VisitEnd;
  steps: number;
  budget: number;
  verdicts: Verdict[];
  reward: StageReward;
}

export interface StepResult {
  line: number;
  type: TrajectoryEvent['type'];
  /** 1-based ordinal among tool calls; undefined for other events. */
  step?: number;
  /** The tool named by a tool call, as written (it may not be a known tool). */
  tool?: string;
  /** The stage the event happened in; undefined once the run has ended. */
  stage?: string;
  visit?: number;
  verdicts: Verdict[];
  toolReward?: ToolReward;
  /** The stage visit this event ended, scored. */
  stageVisit?: StageVisitResult;
  /** Return so far: rewards of closed visits and all calls up to here, outcome not yet counted. */
  runningReturn: number;
}

/**
 * A StepResult that VerifierState.judge reuses for the next step (every member always there,
 * undefined when it does not apply): read it, or copy it, before judging the next event.
 */
export interface StepView {
  line: number;
  type: TrajectoryEvent['type'];
  step: number | undefined;
  tool: string | undefined;
  stage: string | undefined;
  visit: number | undefined;
  /** Every verdict, passing ones included (those are shared, frozen objects). */
  verdicts: Verdict[];
  toolReward: ToolReward | undefined;
  runningReturn: number;
  stageVisit: StageVisitResult | undefined;
}

export interface OutcomeResult {
  /** o: 0 or 1 when judged in the run; the judge's value in [0, 1] once an outside outcome is joined (external.ts). */
  reward: number;
  verdicts: Verdict[];
  /** Who judges the outcome outside the run (the workflow's `outcome.external`); absent for an outcome command. */
  external?: string;
  /** With `external`: the run submitted and the judge's value is not joined yet, so `reward` is 0 for now. */
  pending?: boolean;
  /** With `external`: the value the judge gave, once joined (the reward is 0 when the run never submitted). */
  judged?: number;
  /** Line of the outcome event that counted, if any. */
  line?: number;
}

export interface TrajectorySummary {
  steps: number;
  toolRewards: { sum: number; count: number; mean: number };
  stages: StageVisitResult[];
  stageRewards: { sum: number; count: number; mean: number };
  outcome: OutcomeResult;
  /** outcome + α·mean(stage rewards) + β·mean(tool rewards); a mean over nothing is 0. */
  return: number;
  alpha: number;
  beta: number;
  /** Whether the run ended by a submit. */
  ended: boolean;
  finalStage?: string;
}

export interface ConditionState {
  cond: ExitCondition;
  /** Successes counted (tool_succeeded) or 1 once met (the others). */
  count: number;
}

/** The visit in progress. */
export interface Visit {
  stage: Stage;
  visit: number;
  startLine: number;
  steps: number;
  conditions: ConditionState[];
}

/** The outcome event that counted, with its line. */
export interface RecordedOutcome {
  event: OutcomeEvent;
  line: number;
}

/** Where checks push their verdicts: an array, or the buffer the verifier's hot path reuses. */
export interface VerdictOut {
  push(v: Verdict): unknown;
}

/**
 * Shared passing verdicts: `check` for `key` (a workflow object such as a stage or an exit
 * condition, or a pattern or stage id), with the reason built from the key only the first time.
 */
export interface VerdictCache {
  pass<K>(check: CheckId, key: K, reason: (key: K, subkey: string) => string, subkey?: string): Verdict;
}
