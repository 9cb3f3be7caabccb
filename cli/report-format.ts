import { severityOf, signed, type Verdict } from '../core/verifier/checks';
import type { TrajectoryReport } from '../core/verifier/verify';
import { outcomeText } from '../core/verifier/score';
import { formatLineError } from '../core/schema/jsonl';

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

/** The human report of `lar verify`: a per-step table, stage rewards, outcome and return. */
export function formatReport(file: string, report: TrajectoryReport, st: Style): string {
  const out: string[] = [];
  out.push(st.bold(file));
  if (report.header) out.push(`task: ${report.header.task}`);
  if (report.workflow)
    out.push(`workflow: ${report.workflow.id} (${report.workflowSource})   backend: ${report.backend}`);
  for (const e of report.lineErrors) out.push(st.bad(`malformed: ${formatLineError(e, file)}`));
  for (const p of report.workflowProblems)
    out.push((p.severity === 'error' ? st.bad : st.warn)(`workflow ${p.severity}: ${p.message} [${p.code}]`));
  if (report.fatal) {
    out.push(st.bad(`cannot verify: ${report.fatal}`));
    return out.join('\n');
  }
  const calls = report.steps.filter((s) => s.type === 'tool_call' || s.verdicts.some((v) => !v.ok));
  // A loop, not Math.max(...xs): a spread of 150 000 steps overflows the call stack.
  let stageW = 5;
  let toolW = 4;
  for (const s of calls) {
    stageW = Math.max(stageW, (s.stage ?? '(ended)').length);
    toolW = Math.max(toolW, (s.tool ?? s.type).length);
  }
  out.push('');
  out.push(
    st.dim(
      `${padStart('line', 5)}  ${padStart('step', 4)}  ${pad('stage', stageW)}  ${pad('tool', toolW)}  reward  failed checks`,
    ),
  );
  for (const s of calls) {
    const failed = s.verdicts.filter((v) => !v.ok);
    const head = `${padStart(String(s.line), 5)}  ${padStart(s.step === undefined ? '' : String(s.step), 4)}  ${pad(s.stage ?? '(ended)', stageW)}  ${pad(s.tool ?? s.type, toolW)}  ${s.toolReward === undefined ? '      ' : rewardText(s.toolReward, st, 6)}`;
    const indent = ' '.repeat(5 + 2 + 4 + 2 + stageW + 2 + toolW + 2 + 6 + 2);
    if (failed.length === 0) {
      out.push(head);
    } else {
      failed.forEach((v, i) => out.push(`${i === 0 ? `${head}  ` : indent}${describe(v, st)}`));
    }
  }
  const summary = report.summary!;
  out.push('');
  out.push(st.bold('stages'));
  for (const v of summary.stages) {
    const failed = v.verdicts.filter((x) => !x.ok);
    const lines = v.endLine === undefined ? `lines ${v.startLine}–end` : `lines ${v.startLine}–${v.endLine}`;
    out.push(
      `  ${pad(v.stage, stageW)}  ${pad(lines, 15)}  steps ${padStart(`${v.steps}/${v.budget}`, 7)}  ${rewardText(v.reward, st)}${failed.length ? `  ${failed.map((x) => describe(x, st)).join('; ')}` : ''}`,
    );
  }
  if (summary.stages.length === 0) out.push('  (none)');
  out.push('');
  const o = summary.outcome;
  const why = o.verdicts.find((v) => !v.ok) ?? o.verdicts[o.verdicts.length - 1];
  out.push(
    o.pending
      ? `${st.bold('outcome')}  ${st.warn(outcomeText(o))}`
      : `${st.bold('outcome')}  ${o.reward ? st.good(String(o.reward)) : st.bad('0')}${why ? `  (${why.reason})` : ''}`,
  );
  out.push(
    `${st.bold('return')}   ${fmt(summary.return)} = ${o.pending ? '' : `${o.reward} + `}${summary.alpha}·mean(stage) ${fmt(summary.stageRewards.mean)} + ${summary.beta}·mean(tool) ${fmt(summary.toolRewards.mean)}   (${summary.steps} steps, ${summary.stages.length} stage visits${o.pending ? '; the running return: outcome not counted yet' : ''})`,
  );
  return out.join('\n');
}

function describe(v: Verdict, st: Style): string {
  return `${(severityOf(v.check) === 'error' ? st.bad : st.warn)(v.check)}: ${v.reason}`;
}
