import { withJudgedOutcome } from '../core/verifier/external';
import { parseLine, splitLines, type ParsedLine } from '../core/schema/jsonl';
import type { CallStatus, EndEvent, Header, TrajectoryEvent } from '../core/schema/trajectory';
import type { Workflow } from '../core/schema/workflow';
import { VerifierState } from '../core/verifier/state';
import type { StepResult, TrajectorySummary } from '../core/verifier/types';
import { resolveWorkflow, type TrajectoryReport, type VerifyOptions } from '../core/verifier/verify';
import type { LocatedProblem } from '../core/workflow/load';

/**
 * What is kept of an event once it is judged: what hovers, code lenses, rewards and diagnostics read. Its
 * arguments and output stay in the line's text, parsed again only when a change re-judges the line.
 */
export interface EventGist {
  type: TrajectoryEvent['type'];
  status?: CallStatus;
  checkpoint?: string;
  filesChanged?: string[];
  reason?: EndEvent['reason'];
  detail?: string;
}

/** A parsed line as kept: an event as its gist once judged (`gist: true`), every other kind as parsed. */
export type KeptLine =
  | Exclude<ParsedLine, { kind: 'event' }>
  | { kind: 'event'; line: number; text: string; event: TrajectoryEvent; gist?: false }
  | { kind: 'event'; line: number; event: EventGist; gist: true };

/** One line of a trajectory document and what the verifier said of it. */
export interface LineEntry {
  text: string;
  parsed: KeptLine;
  /** The verifier's result for an event line (absent for blank, header and malformed lines). */
  result?: StepResult;
}

/** How much of the document the last update re-verified: for tests and the benchmark. */
export interface UpdateStats {
  /** 0-based index of the first line that was re-verified (lines before it were reused). */
  from: number;
  /** Lines parsed and judged by this update. */
  verified: number;
  /** The text was the same as before: nothing changed. */
  same?: boolean;
}

/** A checkpoint every this many lines: a change re-verifies at most this many lines before it. */
const CHECKPOINT_EVERY = 256;

/** Parses lines starting at 0-based index `offset`; `first` while no non-blank line came before. */
function parseAll(texts: readonly string[], offset: number, first: boolean): LineEntry[] {
  return texts.map((text, i) => {
    const parsed = parseLine(text, offset + i + 1, first);
    if (parsed.kind !== 'blank') first = false;
    return { text, parsed };
  });
}

/**
 * A trajectory document, verified incrementally. The verifier state before
 * every CHECKPOINT_EVERY-th line is kept, so an edit at line N re-verifies
 * from the last checkpoint at or before N, and appending a line (a live run)
 * judges just that line. Lines are 0-based here, as in LSP.
 */
export class TrajectoryModel {
  private entries: LineEntry[] = [];
  /** The text of the last setText, while the lines are exactly its lines. */
  private text: string | undefined;
  private headerIndex: number | undefined;
  private header: Header | undefined;
  private workflowKey = '';
  private workflow: Workflow | undefined;
  private workflowSource: string | undefined;
  private workflowProblems: LocatedProblem[] = [];
  private fatal: string | undefined;
  /** State before line i, for i in the keys (multiples of CHECKPOINT_EVERY past the header). */
  private checkpoints = new Map<number, VerifierState>();
  /** State after the last line. */
  private state: VerifierState | undefined;
  private cachedSummary: TrajectorySummary | undefined;
  lastUpdate: UpdateStats = { from: 0, verified: 0 };

  /** `judged`: the value an outside judge gave the run (Harbor's verifier), looked up when its outcome is pending. */
  constructor(
    private readonly opts: VerifyOptions = {},
    private readonly judged?: (header: Header | undefined) => number | undefined,
  ) {}

  get lines(): readonly LineEntry[] {
    return this.entries;
  }

  /**
   * How the run stopped, read from its last event (`end` and its reason), or
   * undefined while it has not: the verifier's `ended` says only whether it
   * submitted, which a run that stopped on an error never did.
   */
  get endReason(): EndEvent['reason'] | undefined {
    const lines = this.lines;
    for (let i = lines.length - 1; i >= 0; i--) {
      const p = lines[i]!.parsed;
      if (p.kind !== 'event') continue;
      return p.event.type === 'end' ? p.event.reason : undefined;
    }
    return undefined;
  }

  get lineCount(): number {
    return this.entries.length;
  }

  /** The parsed header, the workflow in use and where it came from. */
  get context(): {
    header?: Header;
    workflow?: Workflow;
    workflowSource?: string;
    workflowProblems: LocatedProblem[];
    fatal?: string;
  } {
    return {
      workflowProblems: this.workflowProblems,
      ...(this.header ? { header: this.header } : {}),
      ...(this.workflow ? { workflow: this.workflow, workflowSource: this.workflowSource ?? '' } : {}),
      ...(this.fatal !== undefined ? { fatal: this.fatal } : {}),
    };
  }

  /** The summary as if the run stopped after the last line. */
  summary(): TrajectorySummary | undefined {
    if (!this.state) return undefined;
    this.cachedSummary ??= this.withJudge(this.state.summary());
    return this.cachedSummary;
  }

  /** The current state after the last line (for the gate). */
  get liveState(): VerifierState | undefined {
    return this.state;
  }

  /** Replaces the text; only lines from the first difference on are re-verified. */
  setText(text: string): UpdateStats {
    const before = this.text;
    this.text = text;
    // Lines added after a text that ended its last line (a live run's file reloaded, a step typed at the
    // end): only the new text is split, not the megabytes before it.
    if (before && before.endsWith('\n') && text.length > before.length && text.startsWith(before))
      return this.reverify(this.entries.length, linesAfter(text.slice(before.length)));
    const next = splitLines(text);
    if (text === '') next.length = 0;
    let first = 0;
    const old = this.entries;
    while (first < next.length && first < old.length && next[first] === old[first]!.text) first++;
    if (first === next.length && first === old.length) {
      this.lastUpdate = { from: first, verified: 0, same: true };
      return this.lastUpdate;
    }
    return this.reverify(first, next.slice(first));
  }

  /** Appends one line (a live run wrote it). */
  append(text: string): UpdateStats {
    this.text = undefined; // the lines are no longer a text an editor sent
    return this.reverify(this.entries.length, [text]);
  }

  /**
   * Keeps lines before `from`, replaces the rest with `tail`, and verifies
   * from the nearest checkpoint. A change at or before the header line
   * verifies everything again (the workflow may have changed).
   */
  private reverify(from: number, tail: readonly string[]): UpdateStats {
    this.cachedSummary = undefined;
    const appending = from === this.entries.length && this.state !== undefined;
    if (this.headerIndex === undefined || from <= this.headerIndex) {
      const texts = [...this.entries.slice(0, from).map((e) => e.text), ...tail];
      this.entries = parseAll(texts, 0, true);
      this.setHeader();
      this.checkpoints.clear();
      this.state = undefined;
      return this.judge(0, 0, undefined);
    }
    this.entries = this.entries.slice(0, from).concat(parseAll(tail, from, false));
    if (!this.workflow) return (this.lastUpdate = { from, verified: tail.length });
    if (appending) return this.judge(from, from, this.state);
    for (const k of this.checkpoints.keys()) if (k > from) this.checkpoints.delete(k);
    let resume = -Infinity;
    for (const k of this.checkpoints.keys()) resume = Math.max(resume, k);
    return this.judge(from, resume, this.checkpoints.get(resume)!.clone());
  }

  /**
   * Judges lines from `resume` to the end, starting from `state` (the state
   * before line `resume`; a fresh one when undefined). Lines before `from` are
   * unchanged and are judged again only to rebuild the state.
   */
  private judge(from: number, resume: number, state: VerifierState | undefined): UpdateStats {
    if (!this.workflow) {
      this.state = undefined;
      return (this.lastUpdate = { from, verified: this.entries.length - from });
    }
    if (!state) {
      resume = (this.headerIndex ?? -1) + 1;
      state = new VerifierState(this.workflow, resume, this.header?.sandbox);
      this.checkpoints.set(resume, state.clone());
    }
    for (let i = resume; i < this.entries.length; i++) {
      if (i % CHECKPOINT_EVERY === 0 && !this.checkpoints.has(i)) this.checkpoints.set(i, state.clone());
      const entry = this.entries[i]!;
      const p = entry.parsed;
      if (p.kind === 'event') {
        const event = p.gist ? eventOf(entry.text, i) : p.event;
        entry.result = state.append(event, i + 1);
        entry.parsed = { kind: 'event', line: p.line, event: gistOf(event), gist: true };
      } else delete entry.result;
    }
    this.state = state;
    return (this.lastUpdate = { from, verified: this.entries.length - from });
  }

  /**
   * Takes another backend's verdicts for the current text (the Lean checker's):
   * they replace the builtin results line by line until the next change.
   */
  adopt(report: TrajectoryReport): void {
    const byLine = new Map(report.steps.map((r) => [r.line, r]));
    this.entries.forEach((e, i) => {
      const r = byLine.get(i + 1);
      if (r) e.result = r;
    });
    if (report.summary) this.cachedSummary = this.withJudge(report.summary);
  }

  /** The summary with the outside judge's value as its outcome, once there is one (docs/harbor.md). */
  private withJudge(s: TrajectorySummary): TrajectorySummary {
    const value = s.outcome.pending ? this.judged?.(this.header) : undefined;
    return value === undefined ? s : withJudgedOutcome(s, value);
  }

  private setHeader(): void {
    this.headerIndex = undefined;
    this.header = undefined;
    for (let i = 0; i < this.entries.length; i++) {
      const p = this.entries[i]!.parsed;
      if (p.kind === 'blank') continue;
      if (p.kind === 'header') {
        this.headerIndex = i;
        this.header = p.header;
      } else {
        this.headerIndex = i; // the first non-blank line stands where the header should
      }
      break;
    }
    const key = JSON.stringify(this.header?.workflow ?? null);
    if (key === this.workflowKey && this.workflow) return;
    this.workflowKey = key;
    const wf = resolveWorkflow(this.header?.workflow, this.opts);
    this.workflowProblems = wf.problems;
    if ('error' in wf) {
      this.workflow = undefined;
      this.workflowSource = undefined;
      this.fatal = wf.error;
    } else {
      this.workflow = wf.workflow;
      this.workflowSource = wf.source;
      this.fatal = undefined;
    }
  }
}

/**
 * The lines a text ending in a newline gains from `added`, as splitLines would count the whole: `\r` dropped
 * from each end of line, and a final empty piece (the text's final newline) is no line.
 */
function linesAfter(added: string): string[] {
  const lines = added.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function gistOf(e: TrajectoryEvent): EventGist {
  const g: EventGist = { type: e.type };
  if (e.type === 'tool_call') {
    g.status = e.status;
    if (e.checkpoint !== undefined) g.checkpoint = e.checkpoint;
    if (e.result?.filesChanged !== undefined) g.filesChanged = e.result.filesChanged;
  } else if (e.type === 'end') {
    g.reason = e.reason;
    if (e.detail !== undefined) g.detail = e.detail;
  }
  return g;
}

/** A judged event's line parsed again (it parsed as an event before, and its text did not change). */
function eventOf(text: string, i: number): TrajectoryEvent {
  const p = parseLine(text, i + 1, false);
  if (p.kind !== 'event') throw new Error(`line ${i + 1} no longer parses as an event`);
  return p.event;
}
