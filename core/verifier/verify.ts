import type { Header, TrajectoryEvent, WorkflowRef } from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import { parseLine, parseTrajectory, splitLines, type LineError, type ParsedLine } from '../schema/jsonl';
import { builtinWorkflow, loadWorkflow, type LocatedProblem } from '../workflow/load';
import { VerifierState, type StepResult, type TrajectorySummary } from './state';
import type { VerifierBackend } from './backend';

export type BackendName = 'builtin' | 'lean';

export interface TrajectoryReport {
  backend: BackendName;
  header?: Header;
  workflow?: Workflow;
  /** Where the workflow came from: inline, builtin:ID, a path, or the caller's override. */
  workflowSource?: string;
  workflowProblems: LocatedProblem[];
  /** Malformed lines, each with its position; the lines after them are still verified. */
  lineErrors: LineError[];
  steps: StepResult[];
  summary?: TrajectorySummary;
  /** Why nothing could be verified (no header and no workflow, a workflow that is not well-formed). */
  fatal?: string;
}

/** Resolves a workflow named by path in a header; the CLI and the server read files, the core does not. */
export type WorkflowResolver = (ref: string) => { workflow: Workflow; source: string } | { error: string; problems?: LocatedProblem[] };

export interface VerifyOptions {
  /** Use this workflow whatever the header says. */
  workflow?: Workflow;
  workflowSource?: string;
  resolve?: WorkflowResolver;
}

export interface EventAt {
  event: TrajectoryEvent;
  line: number;
}

/** Batch verification of parsed events: the same as feeding them one by one. */
export function verifyEvents(workflow: Workflow, events: Iterable<EventAt>, headerLine = 1): { steps: StepResult[]; summary: TrajectorySummary } {
  const state = new VerifierState(workflow, headerLine);
  const steps: StepResult[] = [];
  for (const { event, line } of events) steps.push(state.append(event, line));
  return { steps, summary: state.summary() };
}

/** Picks the workflow for a trajectory: the override, else the header's reference. */
export function resolveWorkflow(
  ref: WorkflowRef | undefined,
  opts: VerifyOptions,
): { workflow: Workflow; source: string; problems: LocatedProblem[] } | { error: string; problems: LocatedProblem[] } {
  if (opts.workflow) return { workflow: opts.workflow, source: opts.workflowSource ?? 'given', problems: [] };
  if (ref === undefined) return { error: 'no header names a workflow; pass one explicitly', problems: [] };
  if (typeof ref !== 'string') {
    const load = loadWorkflow(ref);
    return load.ok
      ? { workflow: load.workflow, source: 'inline', problems: load.problems }
      : { error: 'the inline workflow is not well-formed', problems: load.problems.map((p) => ({ ...p, path: ['workflow', ...p.path] })) };
  }
  if (ref.startsWith('builtin:')) {
    try {
      return { workflow: builtinWorkflow(ref.slice('builtin:'.length)), source: ref, problems: [] };
    } catch (e) {
      return { error: (e as Error).message, problems: [] };
    }
  }
  if (!opts.resolve) return { error: `the workflow "${ref}" is a path and no file access was given to resolve it`, problems: [] };
  const r = opts.resolve(ref);
  return 'error' in r ? { error: r.error, problems: r.problems ?? [] } : { ...r, problems: [] };
}

/**
 * Verifies trajectory text: parse every line, resolve the workflow from the
 * header, verify every well-formed event. Lines are parsed and verified in one
 * pass, so a parsed event is garbage as soon as it is judged instead of being
 * held for the whole file (which made long files slow).
 */
export function verifyTrajectoryText(text: string, opts: VerifyOptions = {}): TrajectoryReport {
  const lines = splitLines(text);
  const report: TrajectoryReport = { backend: 'builtin', workflowProblems: [], lineErrors: [], steps: [] };
  let i = 0;
  let headerLine = 1;
  // Up to and including the first non-blank line, which must be the header.
  for (; i < lines.length; i++) {
    const p = parseLine(lines[i]!, i + 1, true);
    if (p.kind === 'blank') continue;
    if (p.kind === 'header') {
      report.header = p.header;
      headerLine = p.line;
    } else if (p.kind === 'malformed') {
      report.lineErrors.push(p.error);
    }
    i++;
    break;
  }
  const wf = resolveWorkflow(report.header?.workflow, opts);
  report.workflowProblems = wf.problems;
  const state = 'error' in wf ? undefined : new VerifierState(wf.workflow, headerLine);
  if ('error' in wf) report.fatal = wf.error;
  else {
    report.workflow = wf.workflow;
    report.workflowSource = wf.source;
  }
  for (; i < lines.length; i++) {
    const p = parseLine(lines[i]!, i + 1, false);
    if (p.kind === 'malformed') report.lineErrors.push(p.error);
    else if (p.kind === 'event' && state) report.steps.push(state.append(p.event, p.line));
  }
  if (state) report.summary = state.summary();
  return report;
}

function* eventsOf(lines: readonly ParsedLine[]): Iterable<EventAt> {
  for (const l of lines) if (l.kind === 'event') yield { event: l.event, line: l.line };
}

/**
 * Verifies trajectory text with any backend (builtin or Lean). Parsing and
 * workflow resolution are shared; only the judging differs, so malformed lines
 * are reported identically whichever backend decides.
 */
export async function verifyTrajectoryTextWith(backend: VerifierBackend, text: string, opts: VerifyOptions = {}): Promise<TrajectoryReport> {
  const parsed = parseTrajectory(text);
  const lineErrors = parsed.lines.flatMap((l) => (l.kind === 'malformed' ? [l.error] : []));
  const report: TrajectoryReport = { backend: backend.name, workflowProblems: [], lineErrors, steps: [] };
  if (parsed.header) report.header = parsed.header;
  const wf = resolveWorkflow(parsed.header?.workflow, opts);
  report.workflowProblems = wf.problems;
  if ('error' in wf) {
    report.fatal = wf.error;
    return report;
  }
  report.workflow = wf.workflow;
  report.workflowSource = wf.source;
  const session = await backend.open(wf.workflow, parsed.headerLine ?? 1);
  try {
    for (const { event, line } of eventsOf(parsed.lines)) report.steps.push(await session.append(event, line));
    report.summary = await session.summary();
  } finally {
    session.close();
  }
  return report;
}
