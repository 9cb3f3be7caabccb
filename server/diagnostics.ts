import { Diagnostic, DiagnosticSeverity, type Range } from 'vscode-languageserver';
import { locateJsonValue, type JsonPath } from '../core/json/position';
import { CHECKS, signed, type Verdict } from '../core/verifier/checks';
import type { StageVisitResult, StepResult, TrajectorySummary } from '../core/verifier/types';
import { outcomeText } from '../core/verifier/score';
import type { LocatedProblem } from '../core/workflow/load';
import { lineColumn } from '../core/workflow/load';
import type { LineEntry, TrajectoryModel } from './trajectory-model';

/** `lar (builtin)` or `lar (lean)`: every diagnostic says which backend decided. */
export type DiagnosticSource = `lar (${'builtin' | 'lean'})`;

const SEVERITY = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
} as const;

/** The range of the JSON value at `path` on line `line` (0-based), or the whole line. */
export function rangeOf(text: string, line: number, path: JsonPath | undefined): Range {
  const span = path ? locateJsonValue(text, path) : undefined;
  if (!span) {
    const start = text.length - text.trimStart().length;
    return { start: { line, character: start }, end: { line, character: Math.max(start, text.trimEnd().length) } };
  }
  return { start: { line, character: span.start }, end: { line, character: span.end } };
}

function verdictDiagnostic(
  entry: LineEntry,
  line: number,
  v: Verdict,
  source: DiagnosticSource,
  fallback: JsonPath,
): Diagnostic {
  const d = Diagnostic.create(
    rangeOf(entry.text, line, v.path ?? fallback),
    v.reason,
    SEVERITY[CHECKS[v.check].severity],
    v.check,
    source,
  );
  return d;
}

/** Where stage-level findings are drawn: the stage named by an enter_stage, else the tool. */
const STAGE_PATH: JsonPath = ['args', 'stage'];

function visitLabel(v: StageVisitResult): string {
  return `stage "${v.stage}" (visit ${v.visit + 1}): reward ${signed(v.reward)}, ${v.steps}/${v.budget} steps`;
}

/** The diagnostics of one line: one per failed check, and a summary when it closed a stage visit. */
export function lineDiagnostics(entry: LineEntry, line: number, source: DiagnosticSource): Diagnostic[] {
  const p = entry.parsed;
  if (p.kind === 'malformed') {
    const e = p.error;
    return [
      Diagnostic.create(
        {
          start: { line, character: e.column - 1 },
          end: {
            line,
            character: Math.min(Math.max(e.endColumn - 1, e.column), Math.max(entry.text.length, e.column)),
          },
        },
        e.message,
        DiagnosticSeverity.Error,
        'trajectory.malformed',
        source,
      ),
    ];
  }
  const r: StepResult | undefined = entry.result;
  if (!r) return [];
  const out: Diagnostic[] = [];
  // A call that was blocked or rejected did not run: "it did not succeed" only restates why it was
  // blocked, already listed (the reward is the same either way; the Problems panel lists it once).
  const status = p.kind === 'event' && p.event.type === 'tool_call' ? p.event.status : undefined;
  const notRun = status === 'blocked' || status === 'denied';
  for (const v of r.verdicts)
    if (!v.ok && !(notRun && v.check === 'tool.succeeded'))
      out.push(verdictDiagnostic(entry, line, v, source, ['tool']));
  const visit = r.stageVisit;
  if (visit) {
    for (const v of visit.verdicts) if (!v.ok) out.push(verdictDiagnostic(entry, line, v, source, STAGE_PATH));
    // A visit that scored +1 needs no entry in the Problems panel: its code lens
    // and hover say so. One that did not gets its summary next to the reasons.
    if (visit.reward < 1)
      out.push(
        Diagnostic.create(
          rangeOf(entry.text, line, STAGE_PATH),
          visitLabel(visit),
          DiagnosticSeverity.Information,
          'stage.summary',
          source,
        ),
      );
  }
  return out;
}

/**
 * Diagnostics that depend on the whole run: the workflow's problems and why
 * nothing could be verified (on the header), the visit still open, and the
 * outcome and return (on the outcome line, or the last line).
 */
export function runDiagnostics(model: TrajectoryModel, source: DiagnosticSource): Diagnostic[] {
  const out = headerDiagnostics(model, source);
  const summary = model.summary();
  if (!summary) return out;

  const lines = model.lines;
  // Only the end of the document matters here: walk back to its last event.
  let lastEvent = lines.length - 1;
  while (lastEvent >= 0 && lines[lastEvent]!.parsed.kind !== 'event') lastEvent--;
  const last = lastEvent >= 0 ? lines[lastEvent]!.parsed : undefined;
  // The run has stopped when its last event says so (`end`) or it submitted.
  const end = last?.kind === 'event' && last.event.type === 'end' ? last.event : undefined;
  const ended = end !== undefined;
  const outcomeLine = summary.outcome.line !== undefined ? summary.outcome.line - 1 : -1;
  const open = summary.stages.find((v) => v.endLine === undefined);
  const scored: Diagnostic[] = [];
  if (open && lastEvent >= 0)
    scored.push(
      ...openVisitDiagnostics(
        lines[lastEvent]!,
        lastEvent,
        open,
        { ended, detail: end?.detail, steps: summary.steps },
        source,
      ),
    );
  const at = outcomeLine >= 0 ? outcomeLine : lastEvent;
  if (at >= 0 && (summary.ended || ended))
    scored.push(outcomeDiagnostic(summary, lines[at]!.text, at, outcomeLine >= 0 ? ['exitCode'] : ['type'], source));
  // A chat turn answered without submitting was never a task to pass: its outcome 0 and the criteria of the
  // stage it stopped in stay in the editor's hover and lenses, out of the Problems panel (Hint is not listed).
  if (end?.reason === 'answered') for (const d of scored) d.severity = DiagnosticSeverity.Hint;
  return out.concat(scored);
}

/**
 * Every diagnostic of a run: its lines' and its whole-run ones. Once the run passed (outcome +1), what its
 * steps did wrong is history, not a problem to fix now: errors become warnings, so a passed run leaves no red.
 */
export function allDiagnostics(
  lineDiags: readonly Diagnostic[],
  model: TrajectoryModel,
  source: DiagnosticSource,
): Diagnostic[] {
  return asHistory(lineDiags, model).concat(runDiagnostics(model, source));
}

/**
 * The diagnostics of lines [start, end), and the whole-run ones when `withRun`: one part of a run that a
 * client pulls under its own identifier (server/partitions.ts).
 */
export function rangeDiagnostics(
  model: TrajectoryModel,
  [start, end]: readonly [number, number],
  withRun: boolean,
  source: DiagnosticSource,
): Diagnostic[] {
  const lines = model.lines;
  const out: Diagnostic[] = [];
  for (let i = start; i < end; i++) for (const d of lineDiagnostics(lines[i]!, i, source)) out.push(d);
  const history = asHistory(out, model);
  return withRun ? history.concat(runDiagnostics(model, source)) : history;
}

/** A passed run's line diagnostics with errors as warnings; a line that is not valid JSON stays an error (it is wrong in the file now). */
function asHistory(lineDiags: readonly Diagnostic[], model: TrajectoryModel): Diagnostic[] {
  if (model.summary()?.outcome.reward !== 1) return lineDiags as Diagnostic[];
  return lineDiags.map((d) =>
    d.severity === DiagnosticSeverity.Error && d.code !== 'trajectory.malformed'
      ? { ...d, severity: DiagnosticSeverity.Warning }
      : d,
  );
}

/** The workflow's problems and why nothing could be verified, on the header line. */
function headerDiagnostics(model: TrajectoryModel, source: DiagnosticSource): Diagnostic[] {
  const out: Diagnostic[] = [];
  const ctx = model.context;
  const lines = model.lines;
  let headerLine = lines.findIndex((e) => e.parsed.kind !== 'blank');
  if (headerLine < 0) headerLine = 0;
  const headerText = lines[headerLine]?.text ?? '';
  for (const p of ctx.workflowProblems) out.push(workflowProblemOnHeader(p, headerText, headerLine, source));
  if (ctx.fatal)
    out.push(
      Diagnostic.create(
        rangeOf(headerText, headerLine, ['workflow']),
        `cannot verify: ${ctx.fatal}`,
        DiagnosticSeverity.Error,
        'trajectory.workflow',
        source,
      ),
    );
  return out;
}

/** The visit still open, on the run's last event: a run with no step, a visit the run stopped in, or one in progress. */
function openVisitDiagnostics(
  entry: LineEntry,
  line: number,
  open: StageVisitResult,
  run: { ended: boolean; detail: string | undefined; steps: number },
  source: DiagnosticSource,
): Diagnostic[] {
  if (run.ended && run.steps === 0)
    // It never got as far as a tool call (the server was down, the user stopped it at once): no stage to score.
    return [
      Diagnostic.create(
        rangeOf(entry.text, line, ['type']),
        `the run ended before any tool call${run.detail ? `: ${run.detail}` : ''}`,
        DiagnosticSeverity.Information,
        'run.no_steps',
        source,
      ),
    ];
  if (run.ended) {
    // The run is over: the visit it stopped in is scored like any other.
    const out: Diagnostic[] = [];
    for (const v of open.verdicts) if (!v.ok) out.push(verdictDiagnostic(entry, line, v, source, ['type']));
    out.push(
      Diagnostic.create(
        rangeOf(entry.text, line, ['type']),
        `${visitLabel(open)} (the run stopped in it)`,
        DiagnosticSeverity.Information,
        'stage.summary',
        source,
      ),
    );
    return out;
  }
  return [
    Diagnostic.create(
      rangeOf(entry.text, line, ['tool']),
      `stage "${open.stage}" in progress: ${open.steps}/${open.budget} steps`,
      DiagnosticSeverity.Information,
      'stage.progress',
      source,
    ),
  ];
}

/** The outcome and how the return adds up, on the outcome line (or the last event). */
function outcomeDiagnostic(
  summary: TrajectorySummary,
  text: string,
  line: number,
  path: JsonPath,
  source: DiagnosticSource,
): Diagnostic {
  const failed = summary.outcome.verdicts.find((v) => !v.ok);
  const o = summary.outcome;
  const message = `outcome ${outcomeText(o)}${failed ? ` (${failed.reason})` : ''} · return ${summary.return.toFixed(3)} = ${o.pending ? '' : `${o.reward} + `}${summary.alpha}·${summary.stageRewards.mean.toFixed(3)} + ${summary.beta}·${summary.toolRewards.mean.toFixed(3)}`;
  return Diagnostic.create(
    rangeOf(text, line, path),
    message,
    DiagnosticSeverity.Information,
    'outcome.summary',
    source,
  );
}

function workflowProblemOnHeader(
  p: LocatedProblem,
  headerText: string,
  line: number,
  source: DiagnosticSource,
): Diagnostic {
  const path = p.path.length && p.path[0] === 'workflow' ? p.path : ['workflow', ...p.path];
  return Diagnostic.create(
    rangeOf(headerText, line, path),
    p.message,
    p.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    p.code,
    source,
  );
}

/** Diagnostics of a workflow document (`*.larflow.json`), from its located problems. */
export function workflowDiagnostics(
  text: string,
  problems: readonly LocatedProblem[],
  source: DiagnosticSource,
): Diagnostic[] {
  return problems.map((p) => {
    const start = p.start ?? 0;
    const end = p.end ?? start + 1;
    const a = lineColumn(text, start);
    const b = lineColumn(text, end);
    return Diagnostic.create(
      { start: { line: a.line - 1, character: a.column - 1 }, end: { line: b.line - 1, character: b.column - 1 } },
      p.message,
      p.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
      p.code,
      source,
    );
  });
}
