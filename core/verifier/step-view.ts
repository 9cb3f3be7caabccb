/** The step view VerifierState.judge reuses, and a step's result of its own made from it. */
import type { Verdict } from './checks';
import type { ProposedCall, StepResult, StepView } from './types';

const NO_VERDICTS: Verdict[] = Object.freeze([]) as unknown as Verdict[];

/**
 * The verdicts of one step, in an array reused by the next: it never shrinks to empty, which
 * would drop its storage and cost a new one on every step (a step without verdicts gets a shared
 * empty array instead).
 */
export class VerdictBuffer {
  private readonly items: Verdict[] = [];
  private n = 0;

  push(v: Verdict): void {
    this.items[this.n++] = v;
  }

  /** The verdicts pushed since the last take, valid until the next push. */
  take(): Verdict[] {
    if (this.n === 0) return NO_VERDICTS;
    this.items.length = this.n;
    this.n = 0;
    return this.items;
  }
}

/** What judge() reuses: the verdicts, the view, and the call the pre-checks read. */
export interface Scratch {
  verdicts: VerdictBuffer;
  view: StepView;
  call: ProposedCall;
}

export function newScratch(): Scratch {
  // Every member set from the start, so the view keeps one shape however it is filled.
  const view: StepView = {
    line: 0,
    type: 'tool_call',
    step: undefined,
    tool: undefined,
    stage: undefined,
    visit: undefined,
    verdicts: [],
    toolReward: undefined,
    runningReturn: 0,
    stageVisit: undefined,
  };
  return { verdicts: new VerdictBuffer(), view, call: { tool: '', args: undefined, argsError: undefined } };
}

/** A step's result of its own, in the shape append always gave (members absent, not undefined). */
export function stepResultOf(v: StepView): StepResult {
  const verdicts = v.verdicts.slice();
  const { line, type, stage, visit, runningReturn } = v;
  if (v.step === undefined)
    return stage === undefined
      ? { line, type, verdicts, runningReturn }
      : { line, type, stage, visit, verdicts, runningReturn };
  const { step, tool, toolReward } = v;
  const r: StepResult =
    stage === undefined
      ? { line, type, step, tool, verdicts, toolReward, runningReturn }
      : { line, type, step, tool, stage, visit, verdicts, toolReward, runningReturn };
  if (v.stageVisit) r.stageVisit = v.stageVisit;
  return r;
}
