/**
 * What a recorded call did (ran, succeeded, changed files), read the same way by every check.
 * Lean counterpart: the call predicates of lean/Lar/Checks.lean (`succeededB`, `ranToEndB`, `ranCheckB`).
 */
import type { ToolCallEvent } from '../schema/trajectory';
import type { OutcomeCheck } from '../schema/workflow';
import { normalizeSpaces } from '../policy/command';

/** The call ran (it was not blocked, rejected, or refused before it started). */
export function ran(e: ToolCallEvent): boolean {
  return e.status === 'ok' || e.status === 'timeout' || e.status === 'interrupted';
}

/** The call ran to a successful end. */
export function succeeded(e: ToolCallEvent): boolean {
  if (e.status !== 'ok') return false;
  if (e.tool !== 'run_command') return true;
  const r = e.result;
  return (
    r !== undefined &&
    r.exitCode === 0 &&
    (r.completion === undefined || r.completion === 'marker' || r.completion === 'exit')
  );
}

/** A command whose end was observed, whatever its exit code. */
export function ranToEnd(e: ToolCallEvent): boolean {
  if (e.status !== 'ok' || e.tool !== 'run_command') return false;
  const r = e.result;
  return (
    r !== undefined && typeof r.exitCode === 'number' && r.completion !== 'timeout' && r.completion !== 'unobserved'
  );
}

/**
 * `outcome_ran`: the call ran the workflow's outcome command itself (the same
 * command line after `norm`, and no `cwd`: the host runs only such a call as
 * the check runs it, any other in the agent's terminal, where a function or an
 * alias could fake the output) to an observed end, and its tests ran: the count
 * its output gives is positive or, with no test runner recognised, the exit
 * code is the one the check expects.
 */
export function ranCheck(check: OutcomeCheck, e: ToolCallEvent): boolean {
  if (!ranToEnd(e) || hasCwd(e.args)) return false;
  const command = commandOf(e.args);
  // The same text is the same after normalizing (the usual case, and no need to normalize).
  if (
    command === undefined ||
    (command !== check.command && normalizeSpaces(command) !== normalizeSpaces(check.command))
  )
    return false;
  const tests = e.result?.testsRan;
  return tests !== undefined ? tests > 0 : e.result?.exitCode === check.expectExitCode;
}

const NONE: readonly string[] = Object.freeze([]);

/** Files a call changed: as recorded, or the written/edited path of a successful write or edit. */
export function changedFiles(e: ToolCallEvent): readonly string[] {
  const recorded = e.result?.filesChanged;
  if (recorded) return recorded;
  if (e.status === 'ok' && (e.tool === 'write_file' || e.tool === 'edit_file')) {
    const path = (e.args as { path?: unknown } | null)?.path;
    if (typeof path === 'string') return [path];
  }
  return NONE; // shared: most calls change nothing, and this is asked of every call
}

/** The call names a `cwd` (whatever its value): the host then runs it in the agent's terminal. */
function hasCwd(args: unknown): boolean {
  return typeof args === 'object' && args !== null && 'cwd' in args;
}

/** The `command` argument, when it is a string. */
export function commandOf(args: unknown): string | undefined {
  const c = (args as { command?: unknown } | null)?.command;
  return typeof c === 'string' ? c : undefined;
}

/** Why a call did not succeed, for the `tool.succeeded` verdict. */
export function failureReason(e: ToolCallEvent): string {
  const r = e.result;
  switch (e.status) {
    case 'ok':
      if (r?.completion === 'timeout' || r?.completion === 'unobserved')
        return `the command's end was not observed (${r.completion}), so it does not count as a success`;
      if (r?.exitCode === undefined || r.exitCode === null) return 'the command has no recorded exit code';
      return `the command exited with code ${r.exitCode}`;
    case 'error':
      return `the tool failed${r?.error ? `: ${r.error}` : ''}`;
    case 'blocked':
      return 'the call was blocked by the verifier and did not run';
    case 'denied':
      return 'the user rejected the call; it did not run';
    case 'timeout':
      return 'the call timed out and was stopped';
    case 'interrupted':
      return 'the call was interrupted before it finished';
  }
}
