import { RUN_FILE } from '../core/schema/trajectory';
import { COMMANDS } from '../core/protocol/commands';
import { Command, DocumentSymbol, type CodeLens, SymbolKind, type Hover, type Range } from 'vscode-languageserver';
import { signed } from '../core/verifier/checks';
import type { StageVisitResult } from '../core/verifier/types';
import { outcomeText } from '../core/verifier/score';
import type {
  BackendLabel,
  LineRewardInput as LineReward,
  RewardsParamsInput as RewardsParams,
} from '../core/protocol/lsp';
import { rangeOf } from './diagnostics';
import type { TrajectoryModel } from './trajectory-model';

const mark = (ok: boolean) => (ok ? '✓' : '✗');

function visitOf(model: TrajectoryModel, visit: number | undefined): StageVisitResult | undefined {
  return visit === undefined ? undefined : model.summary()?.stages.find((v) => v.visit === visit);
}

/** Hover on a step: the three levels, every check with its reason, the stage, the running return. */
export function hoverAt(model: TrajectoryModel, line: number, source: string): Hover | undefined {
  const entry = model.lines[line];
  if (!entry) return undefined;
  const p = entry.parsed;
  if (p.kind === 'malformed')
    return { contents: { kind: 'markdown', value: `**Malformed line** — ${p.error.message}\n\n_${source}_` } };
  if (p.kind === 'header') {
    const s = model.summary();
    const ctx = model.context;
    const lines = [
      `**Trajectory** — ${p.header.task}`,
      '',
      `workflow: \`${ctx.workflow?.id ?? '—'}\` (${ctx.workflowSource ?? ctx.fatal ?? ''})`,
    ];
    if (s)
      lines.push(
        `return **${s.return.toFixed(3)}** = ${s.outcome.pending ? `(outcome ${outcomeText(s.outcome)}) ` : `outcome ${s.outcome.reward} + `}${s.alpha}·mean(stage) ${s.stageRewards.mean.toFixed(3)} + ${s.beta}·mean(tool) ${s.toolRewards.mean.toFixed(3)}`,
        `${s.steps} steps, ${s.stages.length} stage visits`,
      );
    lines.push('', `_${source}_`);
    return { contents: { kind: 'markdown', value: lines.join('\n') } };
  }
  const r = entry.result;
  if (!r) return undefined;
  const md: string[] = [];
  if (r.type === 'tool_call') {
    md.push(`**Step ${r.step}** · \`${r.tool}\` · tool reward **${signed(r.toolReward ?? 0)}**`);
  } else {
    md.push(`**${r.type}** event`);
  }
  const visit = visitOf(model, r.visit);
  if (r.stage !== undefined) {
    md.push(
      `stage \`${r.stage}\` (visit ${(r.visit ?? 0) + 1})${visit ? ` · stage reward ${signed(visit.reward)}${visit.endLine === undefined && !model.endReason ? ' so far' : ''}` : ''}`,
    );
  } else {
    md.push('after the run ended');
  }
  if (r.verdicts.length) {
    md.push('', '| | check | reason |', '|---|---|---|');
    for (const v of r.verdicts) md.push(`| ${mark(v.ok)} | \`${v.check}\` | ${escapeCell(v.reason)} |`);
  }
  if (r.stageVisit) {
    const sv = r.stageVisit;
    md.push(
      '',
      `**Stage visit ended:** \`${sv.stage}\` · reward **${signed(sv.reward)}** · ${sv.steps}/${sv.budget} steps`,
      '',
      '| | check | reason |',
      '|---|---|---|',
    );
    for (const v of sv.verdicts) md.push(`| ${mark(v.ok)} | \`${v.check}\` | ${escapeCell(v.reason)} |`);
  }
  const s = model.summary();
  md.push(
    '',
    `running return ${r.runningReturn.toFixed(3)}${s?.ended ? ` · final return ${s.return.toFixed(3)} (outcome ${outcomeText(s.outcome)})` : ''}`,
    '',
    `_${source}_`,
  );
  const range: Range = rangeOf(entry.text, line, undefined);
  return { contents: { kind: 'markdown', value: md.join('\n') }, range };
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** A lens above each stage visit: stage, reward, steps against the budget. */
/** The commands the "Restore to here" and "Branch from here" lenses run (the extension registers them). */
export const RESTORE_COMMAND = COMMANDS.restoreCheckpoint;
export const BRANCH_COMMAND = COMMANDS.branchFromCheckpoint;

export function codeLenses(model: TrajectoryModel, file?: string): CodeLens[] {
  const s = model.summary();
  if (!s) return [];
  // A step that has a checkpoint can be gone back to: the workspace as it was just before it.
  const restores: CodeLens[] = [];
  model.lines.forEach((entry, i) => {
    const p = entry.parsed;
    if (p.kind !== 'event' || p.event.type !== 'tool_call' || !p.event.checkpoint) return;
    const step = entry.result?.step;
    const range = { start: { line: i, character: 0 }, end: { line: i, character: 0 } };
    const args = {
      commit: p.event.checkpoint,
      ...(step ? { step } : {}),
      ...(file && RUN_FILE.test(file) ? { run: file } : {}),
    };
    restores.push({ range, command: Command.create(`↺ Restore to before step ${step ?? '?'}`, RESTORE_COMMAND, args) });
    if (step && args.run) restores.push({ range, command: Command.create('⑂ Branch from here', BRANCH_COMMAND, args) });
  });
  return [
    ...restores,
    ...s.stages.map((v) => {
      // startLine is 1-based and is the line that opened the visit (the header for the first).
      const line = Math.max(0, v.startLine - 1);
      const open = v.endLine === undefined;
      // A visit still open in a run that has stopped did not end by a move: say how the run stopped.
      const stopped = open ? model.endReason : undefined;
      const title = `${v.stage} · ${open ? (stopped ? `${stopped === 'submitted' ? 'ended' : stopped} · reward ${signed(v.reward)}` : 'in progress') : `reward ${signed(v.reward)}`} · ${v.steps}/${v.budget} steps`;
      return {
        range: { start: { line, character: 0 }, end: { line, character: 0 } },
        command: Command.create(title, ''),
      };
    }),
  ];
}

/** Outline: stages (one per visit) with their steps. */
export function documentSymbols(model: TrajectoryModel): DocumentSymbol[] {
  const s = model.summary();
  if (!s) return [];
  const lines = model.lines;
  const last = Math.max(0, lines.length - 1);
  return s.stages.map((v) => {
    const start = Math.max(0, v.startLine - 1);
    const end = v.endLine === undefined ? last : v.endLine - 1;
    const range: Range = {
      start: { line: start, character: 0 },
      end: { line: end, character: lines[end]?.text.length ?? 0 },
    };
    const children: DocumentSymbol[] = [];
    for (let i = start; i <= end; i++) {
      const r = lines[i]?.result;
      if (!r || r.type !== 'tool_call' || r.visit !== v.visit) continue;
      const lineRange: Range = { start: { line: i, character: 0 }, end: { line: i, character: lines[i]!.text.length } };
      children.push(
        DocumentSymbol.create(
          `${r.step}. ${r.tool}`,
          `reward ${signed(r.toolReward ?? 0)}`,
          SymbolKind.Event,
          lineRange,
          lineRange,
        ),
      );
    }
    return DocumentSymbol.create(
      v.stage,
      `visit ${v.visit + 1} · reward ${signed(v.reward)}${v.endLine === undefined ? (model.endReason ? ` (${model.endReason})` : ' (open)') : ''}`,
      SymbolKind.Namespace,
      range,
      { start: range.start, end: { line: start, character: lines[start]?.text.length ?? 0 } },
      children,
    );
  });
}

/** One line's reward record for the client's gutter. */
export function lineReward(model: TrajectoryModel, line: number): LineReward | undefined {
  const entry = model.lines[line];
  if (!entry) return undefined;
  const p = entry.parsed;
  if (p.kind === 'malformed') return { line, kind: 'malformed', failed: ['trajectory.malformed'] };
  if (p.kind === 'header') return { line, kind: 'header' };
  const r = entry.result;
  if (!r || (r.type !== 'tool_call' && r.type !== 'outcome')) return undefined;
  const out: LineReward = { line, kind: r.type === 'tool_call' ? 'step' : 'outcome' };
  // Most lines pass everything: leaving out the empty list keeps a full notification small.
  const failed = r.verdicts.filter((v) => !v.ok).map((v) => v.check);
  if (failed.length) out.failed = failed;
  if (r.step !== undefined) out.step = r.step;
  if (r.tool !== undefined) out.tool = r.tool;
  if (r.stage !== undefined) out.stage = r.stage;
  if (r.toolReward !== undefined) out.toolReward = r.toolReward;
  if (r.stageVisit) out.stageEnd = { stage: r.stageVisit.stage, reward: r.stageVisit.reward };
  if (p.kind === 'event' && p.event.type === 'tool_call') {
    out.status = p.event.status;
    const files = p.gist ? p.event.filesChanged : p.event.result?.filesChanged;
    if (files?.length) out.filesChanged = files;
  }
  return out;
}

/** The `lar/rewards` notification for a document: every line, or only `from` onwards. */
export function rewardsParams(
  model: TrajectoryModel,
  uri: string,
  backend: BackendLabel,
  version: number | undefined,
  from = 0,
): RewardsParams {
  const lines: LineReward[] = [];
  for (let i = from; i < model.lineCount; i++) {
    const r = lineReward(model, i);
    if (r) lines.push(r);
  }
  const s = model.summary();
  const ctx = model.context;
  const params: RewardsParams = {
    uri,
    backend,
    full: from === 0,
    ...(from > 0 ? { from } : {}),
    lineCount: model.lineCount,
    lines,
    // A partial update carries only the visits that can have changed: those
    // ending at or after the first changed line, and the open one.
    stages: (s?.stages ?? [])
      .filter((v) => from === 0 || v.endLine === undefined || v.endLine - 1 >= from)
      .map((v) => ({
        stage: v.stage,
        visit: v.visit,
        startLine: Math.max(0, v.startLine - 1),
        ...(v.endLine !== undefined ? { endLine: v.endLine - 1 } : {}),
        steps: v.steps,
        budget: v.budget,
        reward: v.reward,
      })),
  };
  if (version !== undefined) params.version = version;
  const stopped = model.endReason;
  if (s)
    params.summary = {
      return: s.return,
      // The live verifier judges o as 0 or 1; a value judged outside the run is joined later (external.ts).
      outcome: s.outcome.reward === 1 ? 1 : 0,
      steps: s.steps,
      ended: s.ended,
      ...(stopped ? { endReason: stopped } : {}),
      ...(s.finalStage !== undefined ? { finalStage: s.finalStage } : {}),
    };
  if (ctx.fatal !== undefined) params.fatal = ctx.fatal;
  return params;
}
