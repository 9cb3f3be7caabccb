/**
 * The table `lar verify` prints, written as the verdicts come (core/verifier/stream.ts); its JSON
 * forms are core/verifier/verdict-json.ts. Nothing per step is kept but the stage visits' rows,
 * printed after the steps.
 */
import { severityOf, signed, type Verdict } from '../core/verifier/checks';
import type { StreamStart, TrajectorySink } from '../core/verifier/stream';
import type { StageVisitResult, StepResult, TrajectorySummary } from '../core/verifier/types';
import { outcomeText } from '../core/verifier/score';
import { LineBuffer, failures, type VerifyOutcome } from '../core/verifier/verdict-json';
import { formatLineError, type LineError } from '../core/schema/jsonl';

export interface Style {
  good(this: void, s: string): string;
  bad(this: void, s: string): string;
  warn(this: void, s: string): string;
  dim(this: void, s: string): string;
  bold(this: void, s: string): string;
}

const paint = (code: number) => (s: string) => `\u001b[${code}m${s}\u001b[0m`;
export const COLOR: Style = { good: paint(32), bad: paint(31), warn: paint(33), dim: paint(2), bold: paint(1) };
export const PLAIN: Style = { good: (s) => s, bad: (s) => s, warn: (s) => s, dim: (s) => s, bold: (s) => s };

/** The signed reward, right-aligned to `width`, coloured by sign. */
function rewardText(r: number, st: Style, width = 0): string {
  const s = padStart(signed(r), width);
  return r > 0 ? st.good(s) : r < 0 ? st.bad(s) : st.warn(s);
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function padStart(s: string, n: number): string {
  return s.length >= n ? s : ' '.repeat(n - s.length) + s;
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(3));

function describe(v: Verdict, st: Style): string {
  return `${(severityOf(v.check) === 'error' ? st.bad : st.warn)(v.check)}: ${v.reason}`;
}

/**
 * The human report of `lar verify`: one row per tool call (and per other event with a failed
 * check) as it is judged, then stage visits with their rewards, outcome and return. Malformed
 * lines are said where they are. Column widths come from the workflow (its stage ids and tool
 * names) and grow if a longer tool name turns up, since rows are printed before the end is known.
 */
export class TableSink implements TrajectorySink, VerifyOutcome {
  lineErrors = 0;
  fatal: string | undefined;
  private readonly out: LineBuffer;
  private stageW = 5;
  private toolW = 4;
  /** Stage visits as rows, printed after the steps. */
  private readonly visits: string[] = [];
  /**
   * The end of a row after its line and step (stage, tool and reward cells, padded): the same few
   * texts on every row, made once for each stage, tool and reward (−1, 0, +1, none).
   */
  private readonly tails = new Map<string, Map<string, (string | undefined)[]>>();
  private readonly visitRewards = new Map<number, string>();
  private readonly described = new Map<string, { check: string; text: string }>();

  constructor(
    private readonly file: string,
    private readonly st: Style,
    write: (s: string) => void,
  ) {
    this.out = new LineBuffer(write);
  }

  start(s: StreamStart): void {
    const { out, st } = this;
    out.add(st.bold(this.file));
    if (s.header) out.add(`task: ${s.header.task}`);
    if (s.workflow) out.add(`workflow: ${s.workflow.id} (${s.workflowSource})   backend: ${s.backend}`);
    for (const p of s.workflowProblems)
      out.add((p.severity === 'error' ? st.bad : st.warn)(`workflow ${p.severity}: ${p.message} [${p.code}]`));
    this.fatal = s.fatal;
    if (!s.workflow) return;
    this.stageW = Math.max(5, '(ended)'.length, ...s.workflow.stages.map((x) => x.id.length));
    this.toolW = Math.max('outcome'.length, ...s.workflow.stages.flatMap((x) => x.tools.map((t) => t.length)));
    out.add('');
    out.add(
      st.dim(
        `${padStart('line', 5)}  ${padStart('step', 4)}  ${pad('stage', this.stageW)}  ${pad('tool', this.toolW)}  reward  failed checks`,
      ),
    );
  }

  step(s: StepResult): void {
    const failed = failures(s);
    if (s.type === 'tool_call' || failed > 0) this.row(s, failed);
    if (s.stageVisit) this.visits.push(this.visitRow(s.stageVisit));
  }

  private tail(stage: string, tool: string, reward: number | undefined): string {
    let byTool = this.tails.get(stage);
    if (!byTool) this.tails.set(stage, (byTool = new Map<string, (string | undefined)[]>()));
    let byReward = byTool.get(tool);
    if (!byReward) {
      // Tool names are the model's: bounded, so a run of ever-new names cannot grow this without end.
      if (byTool.size >= 1024) byTool.clear();
      byTool.set(tool, (byReward = []));
    }
    const i = reward === undefined ? 3 : reward + 1;
    return (byReward[i] ??=
      `  ${pad(stage, this.stageW)}  ${pad(tool, this.toolW)}  ${reward === undefined ? '      ' : rewardText(reward, this.st, 6)}`);
  }

  private row(s: StepResult, failed: number): void {
    const name = s.tool ?? s.type;
    if (name.length > this.toolW) {
      this.toolW = name.length;
      this.tails.clear();
    }
    const step = s.step === undefined ? '    ' : s.step > 999 ? String(s.step) : padStart(String(s.step), 4);
    const line = s.line > 9999 ? String(s.line) : padStart(String(s.line), 5);
    const head = `${line}  ${step}${this.tail(s.stage ?? '(ended)', name, s.toolReward)}`;
    if (failed === 0) {
      this.out.add(head);
      return;
    }
    const indent = ' '.repeat(5 + 2 + 4 + 2 + this.stageW + 2 + this.toolW + 2 + 6 + 2);
    let first = true;
    for (const v of s.verdicts) {
      if (v.ok) continue;
      this.out.add(`${first ? `${head}  ` : indent}${this.describe(v)}`);
      first = false;
    }
  }

  private visitRow(v: StageVisitResult): string {
    const { st } = this;
    let fails = '';
    for (const x of v.verdicts) if (!x.ok) fails = fails ? `${fails}; ${this.describe(x)}` : `  ${this.describe(x)}`;
    const lines = v.endLine === undefined ? `lines ${v.startLine}–end` : `lines ${v.startLine}–${v.endLine}`;
    const reward = this.visitRewards.get(v.reward) ?? rewardText(v.reward, st);
    this.visitRewards.set(v.reward, reward);
    // Joined, not concatenated: a row is kept until the end, and a concatenation is a tree of its pieces.
    return [
      '  ',
      pad(v.stage, this.stageW),
      '  ',
      pad(lines, 15),
      '  steps ',
      padStart(`${v.steps}/${v.budget}`, 7),
      '  ',
      reward,
      fails,
    ].join('');
  }

  /** A failed check as rows print it, made once per distinct reason (runs fail the same few ways). */
  private describe(v: Verdict): string {
    const hit = this.described.get(v.reason);
    if (hit?.check === v.check) return hit.text;
    const text = describe(v, this.st);
    if (this.described.size >= 4096) this.described.clear();
    this.described.set(v.reason, { check: v.check, text });
    return text;
  }

  lineError(e: LineError): void {
    this.lineErrors++;
    this.out.add(this.st.bad(`malformed: ${formatLineError(e, this.file)}`));
  }

  userContext(): void {}

  end(summary: TrajectorySummary | undefined): void {
    const { out, st } = this;
    if (!summary) {
      if (this.fatal !== undefined) out.add(st.bad(`cannot verify: ${this.fatal}`));
      out.flush();
      return;
    }
    // The visit still open (the stream gave the closed ones on their steps; a backend that keeps them lists them again).
    for (const v of summary.stages) if (v.endedBy === 'run_end') this.visits.push(this.visitRow(v));
    out.add('');
    out.add(st.bold('stages'));
    for (const row of this.visits) out.add(row);
    if (this.visits.length === 0) out.add('  (none)');
    out.add('');
    const o = summary.outcome;
    const why = o.verdicts.find((v) => !v.ok) ?? o.verdicts[o.verdicts.length - 1];
    out.add(
      o.pending
        ? `${st.bold('outcome')}  ${st.warn(outcomeText(o))}`
        : `${st.bold('outcome')}  ${o.reward ? st.good(String(o.reward)) : st.bad('0')}${why ? `  (${why.reason})` : ''}`,
    );
    out.add(
      `${st.bold('return')}   ${fmt(summary.return)} = ${o.pending ? '' : `${o.reward} + `}${summary.alpha}·mean(stage) ${fmt(summary.stageRewards.mean)} + ${summary.beta}·mean(tool) ${fmt(summary.toolRewards.mean)}   (${summary.steps} steps, ${summary.stageRewards.count} stage visits${o.pending ? '; the running return: outcome not counted yet' : ''})`,
    );
    out.flush();
  }
}
