/**
 * Every check the verifier makes, with a stable id, the level it scores and
 * what a failure means. Ids never change meaning; docs/rewards.md explains each
 * one and the Lean checker (lean/Lar/Checks.lean) uses the same ids.
 */

export type Level = 'tool' | 'stage' | 'outcome';
/** error: a violation (reward −1); warning: unproductive / unmet (reward 0); info: summaries. */
export type Severity = 'error' | 'warning' | 'info';

export interface CheckInfo {
  level: Level;
  severity: Severity;
  /** What passing means, as the hover shows it. */
  title: string;
}

export const CHECKS = {
  'tool.run_open': { level: 'tool', severity: 'error', title: 'the run has not ended (no call after a submit)' },
  'tool.known': { level: 'tool', severity: 'error', title: 'the tool is one of the agent tools' },
  'tool.args': { level: 'tool', severity: 'error', title: "the arguments match the tool's schema" },
  'tool.permitted': { level: 'tool', severity: 'error', title: 'the tool is permitted in the current stage' },
  'tool.transition': {
    level: 'tool',
    severity: 'error',
    title: 'enter_stage names a stage reachable by a legal transition',
  },
  'tool.submit_terminal': { level: 'tool', severity: 'error', title: 'submit is called from a terminal stage' },
  'tool.command_policy': { level: 'tool', severity: 'error', title: 'the command matches no deny pattern' },
  'tool.path_policy': {
    level: 'tool',
    severity: 'error',
    title: 'every path stays inside the workspace and off the deny list',
  },
  'tool.sandbox_required': {
    level: 'tool',
    severity: 'error',
    title: 'no command runs unconfined where the sandbox is required (by the workflow or the user)',
  },
  'tool.sandboxed': { level: 'tool', severity: 'warning', title: 'the command ran in the OS sandbox' },
  'tool.approved': { level: 'tool', severity: 'warning', title: 'the call was not rejected at the approval prompt' },
  'tool.succeeded': { level: 'tool', severity: 'warning', title: 'the call ran and succeeded' },
  'tool.not_repeated': {
    level: 'tool',
    severity: 'warning',
    title: 'the call does not repeat a failed call with nothing changed since',
  },
  'stage.transition': {
    level: 'stage',
    severity: 'error',
    title: 'the visit ended by a legal transition (or a submit from a terminal stage)',
  },
  'stage.closed': {
    level: 'stage',
    severity: 'warning',
    title: 'the visit ended by a transition or a submit, not by the run stopping',
  },
  'stage.budget': { level: 'stage', severity: 'warning', title: "the visit stayed within the stage's step budget" },
  'stage.exit.tool_succeeded': {
    level: 'stage',
    severity: 'warning',
    title: 'a tool succeeded the required number of times in the visit',
  },
  'stage.exit.command_succeeded': {
    level: 'stage',
    severity: 'warning',
    title: 'a matching command succeeded in the visit',
  },
  'stage.exit.command_ran': {
    level: 'stage',
    severity: 'warning',
    title: 'a matching command ran to an observed end in the visit',
  },
  'stage.exit.file_changed': { level: 'stage', severity: 'warning', title: 'a (matching) file changed in the visit' },
  'stage.exit.outcome_ran': {
    level: 'stage',
    severity: 'warning',
    title: "the workflow's outcome command itself ran its tests in the visit",
  },
  'outcome.external': {
    level: 'outcome',
    severity: 'error',
    title: 'an outcome check result is recorded only when the outcome is judged in the run',
  },
  'outcome.after_submit': { level: 'outcome', severity: 'error', title: 'the outcome check result follows a submit' },
  'outcome.single': { level: 'outcome', severity: 'error', title: 'the outcome check result is recorded once' },
  'outcome.submitted': { level: 'outcome', severity: 'info', title: 'the run submitted from a terminal stage' },
  'outcome.check_passed': { level: 'outcome', severity: 'info', title: "the workflow's outcome check passed" },
} as const satisfies Record<string, CheckInfo>;

export type CheckId = keyof typeof CHECKS;
export const CHECK_IDS = Object.keys(CHECKS) as CheckId[];

export type JsonPathStep = string | number;

export interface Verdict {
  check: CheckId;
  ok: boolean;
  /** Why it passed or failed, for this very event. */
  reason: string;
  /** Where in the event's JSON the fault lies (e.g. ["args", "path"]), for ranging a diagnostic. */
  path?: JsonPathStep[];
}

/** Passing verdicts with the standard reason are shared: most checks pass, and allocating each is the verifier's main cost. */
const STANDARD_PASS = Object.fromEntries(
  (Object.keys(CHECKS) as CheckId[]).map((check) => [
    check,
    Object.freeze({ check, ok: true, reason: CHECKS[check].title }) as Verdict,
  ]),
) as Record<CheckId, Verdict>;

export function pass(check: CheckId, reason?: string): Verdict {
  return reason === undefined ? STANDARD_PASS[check] : { check, ok: true, reason };
}

export function fail(check: CheckId, reason: string, path?: JsonPathStep[]): Verdict {
  return path ? { check, ok: false, reason, path } : { check, ok: false, reason };
}

export function severityOf(check: CheckId): Severity {
  return CHECKS[check].severity;
}

/** A reward with its sign, `+1`, `0`, `-1`, as reports and hovers print it. */
export function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

export type ToolReward = -1 | 0 | 1;
export type StageReward = -1 | 0 | 1;
