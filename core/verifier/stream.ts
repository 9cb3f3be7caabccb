/**
 * Verifying a trajectory line by line as it is read: each line is parsed, the workflow resolved
 * from the header, and each event judged and handed to a sink at once, so nothing per step is
 * kept unless the sink keeps it (a whole report does; `lar verify` keeps nothing).
 */
import { attachmentsOf } from '../schema/message-parts';
import type { Header, TrajectoryEvent, WorkflowRef } from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import { parseEventLine, parseLine, type LineError } from '../schema/jsonl';
import { builtinWorkflow, loadWorkflow, type LocatedProblem } from '../workflow/load';
import type { WorkflowResolver } from '../workflow/resolve';
import { VerifierState } from './state';
import type { StepResult, TrajectorySummary } from './types';
import type { BackendName, VerifierBackend, VerifierSession } from './backend';

export interface VerifyOptions {
  /** Use this workflow whatever the header says. */
  workflow?: Workflow;
  workflowSource?: string;
  resolve?: WorkflowResolver;
}

/** One attachment of a user's message, without its content. */
export interface UserContext {
  line: number;
  kind: string;
  label: string;
  source: string;
  truncated?: boolean;
}

/** What is known once the header line is read (or the file ended without one). */
export interface StreamStart {
  backend: BackendName;
  header?: Header;
  workflow?: Workflow;
  /** Where the workflow came from: inline, builtin:ID, a path, or the caller's override. */
  workflowSource?: string;
  workflowProblems: LocatedProblem[];
  /** Why nothing can be verified (no header and no workflow, a workflow that is not well-formed). */
  fatal?: string;
}

/** Where the verdicts go, in the order of the file. */
export interface TrajectorySink {
  start(s: StreamStart): void;
  /** A judged event; with `reuse` a view that the next step overwrites (read or copy it now). */
  step(s: StepResult): void;
  /** A malformed line: the lines after it are still verified. */
  lineError(e: LineError): void;
  /** An attachment of a user's message: the user's context, never a step and never scored. */
  userContext(c: UserContext): void;
  /** Undefined when nothing could be verified (see StreamStart.fatal). */
  end(summary: TrajectorySummary | undefined): void;
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
 * Reads lines one at a time (header, workflow, malformed lines, the user's context) and gives the
 * events to judge, so that parsing and workflow resolution are the same whichever backend decides.
 */
class Intake {
  /** Number of the line last taken. */
  line = 0;
  headerLine = 1;
  header: Header | undefined;
  workflow: Workflow | undefined;
  private first = true;
  private started = false;

  constructor(
    private readonly opts: VerifyOptions,
    private readonly backend: BackendName,
    private readonly sink: TrajectorySink,
  ) {}

  /** The event the next line holds, when it is one to judge. */
  take(text: string): TrajectoryEvent | undefined {
    const line = ++this.line;
    if (this.first) return this.takeFirst(text, line);
    const p = parseEventLine(text, line);
    if (!('kind' in p)) return this.event(p, line);
    if (p.kind === 'malformed') this.sink.lineError(p.error);
    else if (p.kind === 'event') return this.event(p.event, line);
    return undefined;
  }

  /** Up to and including the first non-blank line, which must be the header. */
  private takeFirst(text: string, line: number): undefined {
    const p = parseLine(text, line, true);
    if (p.kind === 'blank') return undefined;
    this.first = false;
    if (p.kind === 'header') {
      this.header = p.header;
      this.headerLine = p.line;
    }
    this.begin();
    if (p.kind === 'malformed') this.sink.lineError(p.error);
    return undefined;
  }

  private event(e: TrajectoryEvent, line: number): TrajectoryEvent | undefined {
    if (!this.workflow) return undefined;
    if (e.type === 'message' && e.role === 'user')
      for (const a of attachmentsOf(e.parts))
        this.sink.userContext({
          line,
          kind: a.kind,
          label: a.label,
          source: a.source,
          ...(a.truncated ? { truncated: true } : {}),
        });
    return e;
  }

  /** Resolves the workflow, once: after the header line, or at the end of a file without one. */
  begin(): void {
    if (this.started) return;
    this.started = true;
    const wf = resolveWorkflow(this.header?.workflow, this.opts);
    const s: StreamStart = { backend: this.backend, workflowProblems: wf.problems };
    if (this.header) s.header = this.header;
    if ('error' in wf) s.fatal = wf.error;
    else {
      this.workflow = s.workflow = wf.workflow;
      s.workflowSource = wf.source;
    }
    this.sink.start(s);
  }
}

export interface StreamOptions extends VerifyOptions {
  /** Hand the sink a view that the next step reuses (nothing allocated per step); else a result of its own. */
  reuse?: boolean;
  /** Keep closed stage visits for the summary (default true); a stream gives each on its step only. */
  keepVisits?: boolean;
}

/**
 * The builtin verifier fed one line at a time, telling `sink` each verdict as it is made: lines
 * are pushed, so a caller can stop between two (to let its output drain) and go on.
 */
export class LineVerifier {
  private readonly intake: Intake;
  private state: VerifierState | undefined;

  constructor(
    private readonly opts: StreamOptions,
    private readonly sink: TrajectorySink,
  ) {
    this.intake = new Intake(opts, 'builtin', sink);
  }

  line(text: string): void {
    const e = this.intake.take(text);
    if (e === undefined) return;
    const state = (this.state ??= this.newState());
    this.sink.step(this.opts.reuse ? state.judge(e, this.intake.line) : state.append(e, this.intake.line));
  }

  /** After the last line: the summary (or why nothing could be verified). */
  end(): void {
    this.intake.begin();
    this.sink.end(this.intake.workflow ? (this.state ?? this.newState()).summary() : undefined);
  }

  private newState(): VerifierState {
    const { workflow, headerLine, header } = this.intake;
    return new VerifierState(workflow!, headerLine, header?.sandbox, { keepVisits: this.opts.keepVisits });
  }
}

/** Verifies `lines` with the builtin verifier, telling `sink` each verdict as it is made. */
export function verifyLines(lines: Iterable<string>, opts: StreamOptions, sink: TrajectorySink): void {
  const v = new LineVerifier(opts, sink);
  for (const text of lines) v.line(text);
  v.end();
}

/** The same with any backend (builtin or Lean): only the judging differs, so malformed lines are reported identically. */
export async function verifyLinesWith(
  backend: VerifierBackend,
  lines: Iterable<string>,
  opts: VerifyOptions,
  sink: TrajectorySink,
): Promise<void> {
  const intake = new Intake(opts, backend.name, sink);
  let session: VerifierSession | undefined;
  try {
    for (const text of lines) {
      const e = intake.take(text);
      if (e === undefined) continue;
      session ??= await backend.open(intake.workflow!, intake.headerLine, intake.header?.sandbox);
      sink.step(await session.append(e, intake.line));
    }
    intake.begin();
    if (intake.workflow) {
      session ??= await backend.open(intake.workflow, intake.headerLine, intake.header?.sandbox);
      sink.end(await session.summary());
    } else sink.end(undefined);
  } finally {
    session?.close();
  }
}
