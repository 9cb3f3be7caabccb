import { attachmentsOf, type MessagePart } from '../schema/message-parts';
import type { Header, TrajectoryEvent, WorkflowRef } from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import { parseLine, splitLines, type LineError } from '../schema/jsonl';
import { builtinWorkflow, loadWorkflow, type LocatedProblem } from '../workflow/load';
import { VerifierState } from './state';
import type { StepResult, TrajectorySummary } from './types';
import type { BackendName, VerifierBackend, VerifierSession } from './backend';
import type { WorkflowResolver } from '../workflow/resolve';

export type { BackendName, WorkflowResolver };

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
  /**
   * What the user attached to the task and to later messages (`@`, the parts of the user's message
   * events; the header repeats the task's): the user's context, never a step and never scored.
   */
  userContext?: UserContext[];
}

/** One attachment of a user's message, without its content. */
export interface UserContext {
  line: number;
  kind: string;
  label: string;
  source: string;
  truncated?: boolean;
}

function noteUserContext(report: TrajectoryReport, parts: readonly MessagePart[] | undefined, line: number): void {
  for (const a of attachmentsOf(parts)) {
    (report.userContext ??= []).push({
      line,
      kind: a.kind,
      label: a.label,
      source: a.source,
      ...(a.truncated ? { truncated: true } : {}),
    });
  }
}

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
export function verifyEvents(
  workflow: Workflow,
  events: Iterable<EventAt>,
  headerLine = 1,
): { steps: StepResult[]; summary: TrajectorySummary } {
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
      : {
          error: 'the inline workflow is not well-formed',
          problems: load.problems.map((p) => ({ ...p, path: ['workflow', ...p.path] })),
        };
  }
  if (ref.startsWith('builtin:')) {
    try {
      return { workflow: builtinWorkflow(ref.slice('builtin:'.length)), source: ref, problems: [] };
    } catch (e) {
      return { error: (e as Error).message, problems: [] };
    }
  }
  if (!opts.resolve)
    return { error: `the workflow "${ref}" is a path and no file access was given to resolve it`, problems: [] };
  const r = opts.resolve(ref);
  return 'error' in r ? { error: r.error, problems: r.problems ?? [] } : { ...r, problems: [] };
}

/**
 * Reads trajectory text line by line into `report` (header, workflow and its
 * problems, malformed lines, why nothing can be verified) and yields the
 * events to judge, in order, once a workflow is known. Both verifiers below
 * judge what this yields, so parsing and workflow resolution are the same
 * whichever backend decides; an event is garbage as soon as it is judged
 * (holding every parsed event made long files slow).
 */
function* readTrajectory(
  text: string,
  opts: VerifyOptions,
  report: TrajectoryReport,
  at: { headerLine: number },
): Generator<EventAt> {
  const lines = splitLines(text);
  let i = 0;
  // Up to and including the first non-blank line, which must be the header.
  for (; i < lines.length; i++) {
    const p = parseLine(lines[i]!, i + 1, true);
    if (p.kind === 'blank') continue;
    if (p.kind === 'header') {
      report.header = p.header;
      at.headerLine = p.line;
    } else if (p.kind === 'malformed') {
      report.lineErrors.push(p.error);
    }
    i++;
    break;
  }
  const wf = resolveWorkflow(report.header?.workflow, opts);
  report.workflowProblems = wf.problems;
  if ('error' in wf) report.fatal = wf.error;
  else {
    report.workflow = wf.workflow;
    report.workflowSource = wf.source;
  }
  for (; i < lines.length; i++) {
    const p = parseLine(lines[i]!, i + 1, false);
    if (p.kind === 'malformed') report.lineErrors.push(p.error);
    else if (p.kind === 'event' && report.workflow) {
      if (p.event.type === 'message' && p.event.role === 'user') noteUserContext(report, p.event.parts, p.line);
      yield { event: p.event, line: p.line };
    }
  }
}

/** Verifies trajectory text with the builtin verifier: parse every line, resolve the workflow, judge every well-formed event. */
export function verifyTrajectoryText(text: string, opts: VerifyOptions = {}): TrajectoryReport {
  const report: TrajectoryReport = { backend: 'builtin', workflowProblems: [], lineErrors: [], steps: [] };
  const at = { headerLine: 1 };
  let state: VerifierState | undefined;
  for (const { event, line } of readTrajectory(text, opts, report, at)) {
    state ??= new VerifierState(report.workflow!, at.headerLine, report.header?.sandbox);
    report.steps.push(state.append(event, line));
  }
  if (report.workflow)
    report.summary = (state ?? new VerifierState(report.workflow, at.headerLine, report.header?.sandbox)).summary();
  return report;
}

/** The same with any backend (builtin or Lean): only the judging differs, so malformed lines are reported identically. */
export async function verifyTrajectoryTextWith(
  backend: VerifierBackend,
  text: string,
  opts: VerifyOptions = {},
): Promise<TrajectoryReport> {
  const report: TrajectoryReport = { backend: backend.name, workflowProblems: [], lineErrors: [], steps: [] };
  const at = { headerLine: 1 };
  let session: VerifierSession | undefined;
  try {
    for (const { event, line } of readTrajectory(text, opts, report, at)) {
      session ??= await backend.open(report.workflow!, at.headerLine, report.header?.sandbox);
      report.steps.push(await session.append(event, line));
    }
    if (report.workflow) {
      session ??= await backend.open(report.workflow, at.headerLine, report.header?.sandbox);
      report.summary = await session.summary();
    }
  } finally {
    session?.close();
  }
  return report;
}
