/**
 * Stage visits: their exit conditions kept up to date as calls arrive, and the stage-level verdicts
 * when a visit ends. Lean counterpart: the "Visits" part of lean/Lar/Verifier.lean.
 */
import type { ToolCallEvent } from '../schema/trajectory';
import type { ExitCondition, OutcomeCheck, Stage } from '../schema/workflow';
import { normalizeSpaces } from '../policy/command';
import { globMatch } from '../policy/glob';
import { normalizeWorkspacePath } from '../policy/path';
import { fail, pass, type CheckId, type Verdict } from './checks';
import { commandOf, ranCheck, ranToEnd } from './events';
import type { VerdictCache, Visit, VisitEnd } from './types';

/** The `visit`-th visit of `stage`, beginning on `line`, with none of its exit conditions met. */
export function newVisit(stage: Stage, visit: number, line: number): Visit {
  return {
    stage,
    visit,
    startLine: line,
    steps: 0,
    conditions: stage.exit.map((cond) => ({ cond, count: 0 })),
  };
}

/** Counts one call toward each exit condition of the visit (O(1) per condition, not a rescan). */
export function trackConditions(
  visit: Visit,
  /** The outcome command; undefined when the outcome is judged outside the run (no call runs it). */
  outcome: OutcomeCheck | undefined,
  e: ToolCallEvent,
  ok: boolean,
  changed: readonly string[],
): void {
  for (const c of visit.conditions) {
    const cond = c.cond;
    switch (cond.kind) {
      case 'tool_succeeded':
        if (ok && e.tool === cond.tool) c.count++;
        break;
      case 'file_changed':
        if (changed.length && (cond.pattern === undefined || changed.some((f) => matchesPath(cond.pattern!, f))))
          c.count = 1;
        break;
      case 'command_succeeded':
      case 'command_ran': {
        // A change invalidates an earlier run before this call's own run counts:
        // a command that changes files and succeeds has still run after the change.
        if (changed.length && cond.afterLastChange) c.count = 0;
        const command = e.tool === 'run_command' ? commandOf(e.args) : undefined;
        const counts = cond.kind === 'command_succeeded' ? ok : ranToEnd(e);
        if (command !== undefined && counts && globMatchCommand(cond.pattern, command)) c.count = 1;
        break;
      }
      case 'outcome_ran':
        if (changed.length && cond.afterLastChange) c.count = 0;
        if (outcome && ranCheck(outcome, e)) c.count = 1;
        break;
    }
  }
}

/** The stage-level verdicts of a visit that ends now (toward `target` for a transition). */
export function scoreVisit(
  visit: Visit,
  outcome: OutcomeCheck | undefined,
  cache: VerdictCache,
  endedBy: VisitEnd,
  legal: boolean,
  target?: string,
): Verdict[] {
  const verdicts: Verdict[] = [];
  const from = visit.stage.id;
  if (endedBy === 'run_end') {
    verdicts.push(fail('stage.closed', `the run stopped in "${from}" without a transition or a submit`));
  } else {
    verdicts.push(pass('stage.closed'));
    if (legal) {
      verdicts.push(
        endedBy === 'submit'
          ? cache.pass('stage.transition', visit.stage, submittedReason)
          : cache.pass('stage.transition', visit.stage, legalReason, target),
      );
    } else {
      verdicts.push(
        fail(
          'stage.transition',
          endedBy === 'submit'
            ? `the run ended by a submit from "${from}", which is not a terminal stage`
            : `left "${from}" for "${target}", which is not a legal transition`,
        ),
      );
    }
  }
  const budget = visit.stage.budget;
  verdicts.push(
    visit.steps <= budget
      ? cache.pass('stage.budget', visit.stage, budgetReason)
      : fail('stage.budget', `${visit.steps} steps in this visit; the budget of "${from}" is ${budget}`),
  );
  pushConditionVerdicts(visit, outcome, cache, verdicts);
  return verdicts;
}

function pushConditionVerdicts(
  visit: Visit,
  outcome: OutcomeCheck | undefined,
  cache: VerdictCache,
  out: Verdict[],
): void {
  for (const { cond, count } of visit.conditions) {
    const id = EXIT_CHECK[cond.kind];
    switch (cond.kind) {
      case 'tool_succeeded':
        out.push(
          count >= cond.atLeast
            ? cache.pass(id, cond, toolSucceededReason)
            : fail(
                id,
                `${cond.tool} succeeded ${count} time${count === 1 ? '' : 's'} in this visit; at least ${cond.atLeast} required`,
              ),
        );
        break;
      case 'file_changed':
        out.push(
          count
            ? cache.pass(id, cond, fileChangedReason)
            : fail(
                id,
                cond.pattern
                  ? `no file matching "${cond.pattern}" changed in this visit`
                  : 'no file changed in this visit',
              ),
        );
        break;
      case 'command_succeeded':
      case 'command_ran': {
        const verb = cond.kind === 'command_succeeded' ? 'succeeded' : 'ran to an observed end';
        const after = cond.afterLastChange ? ' after the last file change' : '';
        out.push(
          count
            ? cache.pass(id, cond, commandReason)
            : fail(id, `no command matching "${cond.pattern}" ${verb} in this visit${after}`),
        );
        break;
      }
      case 'outcome_ran': {
        const after = cond.afterLastChange ? ' after the last file change' : '';
        if (!outcome) {
          out.push(fail(id, 'the outcome is judged outside the run: no command of the run is its check'));
          break;
        }
        const command = outcome.command;
        out.push(
          count
            ? cache.pass(id, cond, outcomeRanReason, command)
            : fail(id, `the outcome command "${command}" did not run tests in this visit${after}`),
        );
        break;
      }
    }
  }
}

/** Each exit condition's check id (a constant, not a string built per visit). */
const EXIT_CHECK = {
  tool_succeeded: 'stage.exit.tool_succeeded',
  file_changed: 'stage.exit.file_changed',
  command_succeeded: 'stage.exit.command_succeeded',
  command_ran: 'stage.exit.command_ran',
  outcome_ran: 'stage.exit.outcome_ran',
} as const satisfies Record<ExitCondition['kind'], CheckId>;

// The reasons of shared passing verdicts, functions of their key that capture nothing (PassCache).
const submittedReason = (stage: Stage) => `submitted from terminal stage "${stage.id}"`;
// A stage id is never empty, so the target as subkey cannot be the submit's ''.
const legalReason = (stage: Stage, target: string) => `"${stage.id}" → "${target}" is legal`;
const budgetReason = (stage: Stage) => `within the budget of ${stage.budget} steps`;
const toolSucceededReason = (c: Extract<ExitCondition, { kind: 'tool_succeeded' }>) =>
  `${c.tool} succeeded at least ${c.atLeast} time${c.atLeast === 1 ? '' : 's'}`;
const fileChangedReason = (c: Extract<ExitCondition, { kind: 'file_changed' }>) =>
  c.pattern ? `a file matching "${c.pattern}" changed` : 'a file changed';
const commandReason = (c: Extract<ExitCondition, { kind: 'command_succeeded' | 'command_ran' }>) =>
  `a command matching "${c.pattern}" ${c.kind === 'command_succeeded' ? 'succeeded' : 'ran to an observed end'}${c.afterLastChange ? ' after the last file change' : ''}`;
const outcomeRanReason = (c: Extract<ExitCondition, { kind: 'outcome_ran' }>, command: string) =>
  `the outcome command "${command}" ran tests${c.afterLastChange ? ' after the last file change' : ''}`;

function matchesPath(pattern: string, file: string): boolean {
  const n = normalizeWorkspacePath(file);
  return globMatch(pattern, n.ok ? n.normalized : file);
}

function globMatchCommand(pattern: string, command: string): boolean {
  // Exit conditions match the whole command line (normalized), not its parts:
  // `npm test` must be what ran, not something chained after `true &&`.
  return globMatch(pattern, normalizeSpaces(command));
}
