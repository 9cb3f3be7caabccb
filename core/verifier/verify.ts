import type { Header, TrajectoryEvent } from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import { splitLines, type LineError } from '../schema/jsonl';
import type { LocatedProblem } from '../workflow/load';
import { VerifierState } from './state';
import type { StepResult, TrajectorySummary } from './types';
import type { BackendName, VerifierBackend } from './backend';
import type { WorkflowResolver } from '../workflow/resolve';
import {
  resolveWorkflow,
  verifyLines,
  verifyLinesWith,
  type StreamStart,
  type TrajectorySink,
  type UserContext,
  type VerifyOptions,
} from './stream';

export type { BackendName, UserContext, VerifyOptions, WorkflowResolver };
export { resolveWorkflow };

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

/** A sink that keeps everything: the whole report, each step a result of its own. */
class ReportSink implements TrajectorySink {
  readonly report: TrajectoryReport;

  constructor(backend: BackendName) {
    this.report = { backend, workflowProblems: [], lineErrors: [], steps: [] };
  }

  start(s: StreamStart): void {
    if (s.header) this.report.header = s.header;
    this.report.workflowProblems = s.workflowProblems;
    if (s.fatal !== undefined) this.report.fatal = s.fatal;
    else {
      this.report.workflow = s.workflow;
      this.report.workflowSource = s.workflowSource;
    }
  }

  step(s: StepResult): void {
    this.report.steps.push(s);
  }

  lineError(e: LineError): void {
    this.report.lineErrors.push(e);
  }

  userContext(c: UserContext): void {
    (this.report.userContext ??= []).push(c);
  }

  end(summary: TrajectorySummary | undefined): void {
    if (summary) this.report.summary = summary;
  }
}

/** Verifies trajectory text with the builtin verifier: parse every line, resolve the workflow, judge every well-formed event. */
export function verifyTrajectoryText(text: string, opts: VerifyOptions = {}): TrajectoryReport {
  const sink = new ReportSink('builtin');
  verifyLines(splitLines(text), opts, sink);
  return sink.report;
}

/** The same with any backend (builtin or Lean): only the judging differs, so malformed lines are reported identically. */
export function verifyTrajectoryTextWith(
  backend: VerifierBackend,
  text: string,
  opts: VerifyOptions = {},
): Promise<TrajectoryReport> {
  return verifyLinesToReport(backend, splitLines(text), opts);
}

/** The whole report of a trajectory's lines as they are read (a file's, a chunk at a time). */
export async function verifyLinesToReport(
  backend: VerifierBackend,
  lines: Iterable<string>,
  opts: VerifyOptions = {},
): Promise<TrajectoryReport> {
  const sink = new ReportSink(backend.name);
  await verifyLinesWith(backend, lines, opts, sink);
  return sink.report;
}
