/**
 * The JSON forms of `lar verify`, written as the verdicts come (core/verifier/stream.ts): JSON Lines
 * (`--json`, docs/formats.md) and the whole report as one document (`--format json`). Output is
 * gathered into large pieces (one write per ~64 KB, not per line), and nothing per step is kept
 * except what is printed after the steps (the line errors of the document).
 */
import type { LineError } from '../schema/jsonl';
import type { Verdict } from './checks';
import type { StreamStart, TrajectorySink, UserContext } from './stream';
import type { StageVisitResult, StepResult, TrajectorySummary } from './types';

/**
 * How many checks of a step failed. A call's checks are all tool checks, so a reward of +1 says
 * none failed without reading them (most steps); other events are counted.
 */
export function failures(s: StepResult): number {
  if (s.toolReward === 1) return 0;
  let n = 0;
  for (const v of s.verdicts) if (!v.ok) n++;
  return n;
}

/** Lines gathered into pieces of ~64 KB for `write`, which ends each piece with a newline (Io.out). */
export class LineBuffer {
  private readonly lines: string[] = [];
  private chars = 0;

  constructor(private readonly write: (s: string) => void) {}

  add(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= 65_536) this.flush();
  }

  flush(): void {
    if (this.lines.length === 0) return;
    // One join: a flat string made in one copy, where `+=` would build a tree of every piece.
    this.write(this.lines.join('\n'));
    this.lines.length = 0;
    this.chars = 0;
  }
}

/** Whether a sink's file fails `lar verify` (exit 1): a malformed line, or nothing verifiable. */
export interface VerifyOutcome {
  lineErrors: number;
  fatal?: string;
}

/** JSON text of a string that repeats (tool names, stage ids), made once per distinct one. */
class Quoted {
  private readonly known = new Map<string, string>();

  of(s: string): string {
    let q = this.known.get(s);
    if (q === undefined) {
      q = JSON.stringify(s);
      if (this.known.size < 4096) this.known.set(s, q);
    }
    return q;
  }
}

/**
 * JSON text of failed verdicts, made once per distinct one: a run fails the same few ways again
 * and again ("the command exited with code 1"), and JSON.stringify of each cost more than judging.
 */
class FailedJson {
  private readonly known = new Map<string, { v: Verdict; json: string }>();

  of(v: Verdict): string {
    const hit = this.known.get(v.reason);
    if (hit && hit.v.check === v.check && samePath(hit.v.path, v.path)) return hit.json;
    const json = JSON.stringify(v);
    if (this.known.size >= 4096) this.known.clear();
    this.known.set(v.reason, { v, json });
    return json;
  }

  /** The failed verdicts as a JSON array: `[]` when none failed. */
  list(verdicts: readonly Verdict[]): string {
    let out: string | undefined;
    for (const v of verdicts) if (!v.ok) out = out === undefined ? this.of(v) : `${out},${this.of(v)}`;
    return out === undefined ? '[]' : `[${out}]`;
  }
}

function samePath(a: Verdict['path'], b: Verdict['path']): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A `visit` line, by hand as a step's (one every few steps in a stage-heavy run). */
function visitJson(v: StageVisitResult, q: Quoted, failed: FailedJson): string {
  const end = v.endLine === undefined ? '' : `,"endLine":${v.endLine}`;
  return `{"visit":{"stage":${q.of(v.stage)},"visit":${v.visit},"startLine":${v.startLine}${end},"endedBy":"${v.endedBy}","steps":${v.steps},"budget":${v.budget},"reward":${v.reward},"failed":${failed.list(v.verdicts)}}}`;
}

/**
 * `lar verify --json`: JSON Lines, written as the verdicts are made (docs/formats.md, "lar verify
 * --json"): a `start` line, then in file order a `step` line per judged event (its failed checks
 * only: every check not listed passed), a `visit` line after the step that ended a stage visit, a
 * `lineError` line where a line is malformed, a `userContext` line per attachment; the visit still
 * open when the file ends, then the `summary` line (with the integrity of the file) last.
 */
export class JsonLinesSink implements TrajectorySink, VerifyOutcome {
  lineErrors = 0;
  fatal: string | undefined;
  private readonly out: LineBuffer;
  private readonly quoted = new Quoted();
  private readonly failed = new FailedJson();
  private summary: TrajectorySummary | undefined;

  constructor(write: (s: string) => void) {
    this.out = new LineBuffer(write);
  }

  start(s: StreamStart): void {
    this.fatal = s.fatal;
    this.out.add(JSON.stringify({ start: s }));
  }

  step(s: StepResult): void {
    // By hand: the most frequent line, and JSON.stringify of the object cost more than judging it.
    const q = this.quoted;
    let l = `{"step":{"line":${s.line},"type":"${s.type}"`;
    if (s.step !== undefined) l += `,"step":${s.step},"tool":${q.of(s.tool!)}`;
    if (s.stage !== undefined) l += `,"stage":${q.of(s.stage)},"visit":${s.visit ?? null}`;
    if (s.toolReward !== undefined) l += `,"toolReward":${s.toolReward}`;
    const failed = failures(s) === 0 ? '[]' : this.failed.list(s.verdicts);
    this.out.add(`${l},"runningReturn":${JSON.stringify(s.runningReturn)},"failed":${failed}}}`);
    if (s.stageVisit) this.out.add(visitJson(s.stageVisit, q, this.failed));
  }

  lineError(e: LineError): void {
    this.lineErrors++;
    this.out.add(JSON.stringify({ lineError: e }));
  }

  userContext(c: UserContext): void {
    this.out.add(JSON.stringify({ userContext: c }));
  }

  end(summary: TrajectorySummary | undefined): void {
    this.summary = summary;
  }

  /** The last lines, once the file's integrity is known: the visit still open, then the summary. */
  finish(integrity: unknown): void {
    const s = this.summary;
    const last: Record<string, unknown> = {};
    if (s) {
      for (const v of s.stages) if (v.endedBy === 'run_end') this.out.add(visitJson(v, this.quoted, this.failed));
      const { stages: _listed, ...summary } = s;
      last.summary = summary;
    }
    last.lineErrors = this.lineErrors;
    if (this.fatal !== undefined) last.fatal = this.fatal;
    last.integrity = integrity;
    this.out.add(JSON.stringify(last));
    this.out.flush();
  }
}

/**
 * `lar verify --format json`: the whole report as one JSON document, as `--json` printed it before
 * JSON Lines (every verdict, passing ones included), written step by step rather than built whole.
 */
export class ReportJsonSink implements TrajectorySink, VerifyOutcome {
  fatal: string | undefined;
  private readonly out: LineBuffer;
  private steps = 0;
  private readonly errors: LineError[] = [];
  private readonly context: UserContext[] = [];
  private summary: TrajectorySummary | undefined;

  constructor(write: (s: string) => void) {
    this.out = new LineBuffer(write);
  }

  get lineErrors(): number {
    return this.errors.length;
  }

  start(s: StreamStart): void {
    this.fatal = s.fatal;
    const { backend, header, workflow, workflowSource, workflowProblems, fatal } = s;
    const head = JSON.stringify({ backend, header, workflow, workflowSource, workflowProblems, fatal });
    this.out.add(`${head.slice(0, -1)},"steps":[`);
  }

  step(s: StepResult): void {
    this.out.add(`${this.steps++ ? ',' : ''}${JSON.stringify(s)}`);
  }

  lineError(e: LineError): void {
    this.errors.push(e);
  }

  userContext(c: UserContext): void {
    this.context.push(c);
  }

  end(summary: TrajectorySummary | undefined): void {
    this.summary = summary;
  }

  finish(integrity: unknown): void {
    const tail = {
      lineErrors: this.errors,
      userContext: this.context.length ? this.context : undefined,
      summary: this.summary,
      integrity,
    };
    this.out.add(`],${JSON.stringify(tail).slice(1)}`);
    this.out.flush();
  }
}
