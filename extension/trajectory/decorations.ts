/**
 * What the gutter of a trajectory document shows, as a pure function of the
 * server's `lar/rewards` notification: which decoration kind goes on which
 * line, with the hover text. No `vscode` here (tested under `node --test`);
 * gutter.ts applies the result with the editor API.
 */
import type { LineReward, RewardsParams } from '../../core/protocol/lsp';
import { formatNumber, formatReward } from '../../core/protocol/display';

export type Reward = -1 | 0 | 1;

/** Every kind of mark, one decoration type (icon, ruler colour) each. */
export const DECORATION_KINDS = [
  'stepPass',
  'stepZero',
  'stepFail',
  'stagePass',
  'stageZero',
  'stageFail',
  'outcomePass',
  'outcomeFail',
  'malformed',
] as const;
export type DecorationKind = (typeof DECORATION_KINDS)[number];

export interface LineDecoration {
  /** 0-based line. */
  line: number;
  /** Markdown (untrusted: no command links). */
  hover: string;
}

export function stepKind(reward: Reward): DecorationKind {
  return reward === 1 ? 'stepPass' : reward === 0 ? 'stepZero' : 'stepFail';
}

export function stageKind(reward: Reward): DecorationKind {
  return reward === 1 ? 'stagePass' : reward === 0 ? 'stageZero' : 'stageFail';
}

/** Inline code that survives backticks and line breaks in the text (ids and paths come from the file). */
export function code(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  let fence = '`';
  while (flat.includes(fence)) fence += '`';
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** Escapes Markdown syntax in plain text. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}

const STATUS_WORDS: Record<string, string> = {
  error: 'the tool failed',
  blocked: 'blocked by the verifier gate (did not run)',
  denied: 'rejected at the approval prompt (did not run)',
  timeout: 'timed out',
  interrupted: 'interrupted',
};

type StageVisit = RewardsParams['stages'][number];

/** The failed check ids, short (the server's hover gives each with its reason). A malformed line's pseudo-check is left out. */
function failedText(failed: readonly string[]): string {
  const ids = failed.filter((id) => id !== 'trajectory.malformed');
  return ids.length ? ` · failed ${ids.map(code).join(', ')}` : '';
}

function stepText(l: LineReward): string {
  const parts = [l.step !== undefined ? `**Step ${l.step}**` : '**Step**'];
  if (l.tool !== undefined) parts.push(code(l.tool));
  if (l.stage !== undefined) parts.push(`stage ${code(l.stage)}`);
  if (l.toolReward !== undefined) parts.push(`tool reward **${formatReward(l.toolReward)}**`);
  const status = l.status !== undefined && l.status !== 'ok' ? ` — ${STATUS_WORDS[l.status] ?? l.status}` : '';
  const files = l.filesChanged?.length ? `  \nchanged ${l.filesChanged.map(code).join(', ')}` : '';
  return `${parts.join(' · ')}${status}${failedText(l.failed)}${files}`;
}

function stageText(end: { stage: string; reward: Reward }, visit: StageVisit | undefined): string {
  const budget = visit ? ` · ${visit.steps}/${visit.budget} steps` : '';
  return `**Stage ${code(end.stage)} closed** · stage reward **${formatReward(end.reward)}**${budget}`;
}

/**
 * The decoration kind of one line, or none (a header, a message, a step line
 * without a reward yet). One mark per line, by priority: a malformed line, the
 * outcome, a stage boundary (a line that closed a stage visit, coloured by the
 * stage reward; its own tool reward is in the hover), then the step's reward.
 */
export function kindOf(l: LineReward, outcome: 0 | 1 | undefined): DecorationKind | undefined {
  if (l.kind === 'malformed') return 'malformed';
  if (l.kind === 'outcome') return (outcome ?? (l.failed.length === 0 ? 1 : 0)) === 1 ? 'outcomePass' : 'outcomeFail';
  if (l.stageEnd) return stageKind(l.stageEnd.reward);
  if (l.kind === 'step' && l.toolReward !== undefined) return stepKind(l.toolReward);
  return undefined;
}

/**
 * Hover Markdown for one decorated line: what its mark says, in a line or two.
 * It shows under the server's hover for the line (a gutter icon cannot have
 * a hover of its own: the gutter's context menu, Explain This Line's Reward,
 * opens this one), which gives every check with its reason.
 */
export function hoverFor(l: LineReward, params: RewardsParams, visit?: StageVisit): string {
  const outcome = params.summary?.outcome;
  switch (kindOf(l, outcome)) {
    case 'malformed':
      return `**Malformed line** — not verified; the rest of the file still is (the Problems view says where and what was expected)${failedText(l.failed)}`;
    case 'outcomePass':
    case 'outcomeFail': {
      const o = outcome ?? (l.failed.length === 0 ? 1 : 0);
      const what = o === 1 ? 'the run submitted from a terminal stage and the outcome check passed' : 'no success';
      const ret = params.summary
        ? ` · return **${formatNumber(params.summary.return)}** over ${params.summary.steps} steps`
        : '';
      const lines = [`**Outcome ${o}** — ${what}${ret}${failedText(l.failed)}`];
      if (l.stageEnd) lines.push(stageText(l.stageEnd, visit));
      return lines.join('  \n');
    }
    case undefined:
      return '';
    default:
      return l.stageEnd ? `${stageText(l.stageEnd, visit)}  \n${stepText(l)}` : stepText(l);
  }
}

/**
 * Every decoration kind (all of them, so kinds with nothing left are cleared)
 * with its lines and hovers. Lines listed twice keep the last entry.
 */
export function decorationsFor(params: RewardsParams): Map<DecorationKind, LineDecoration[]> {
  const out = new Map<DecorationKind, LineDecoration[]>(DECORATION_KINDS.map((k) => [k, []]));
  const byLine = new Map<number, LineReward>();
  for (const l of params.lines) byLine.set(l.line, l);
  const visitsByEnd = new Map<number, StageVisit>();
  for (const v of params.stages) if (v.endLine !== undefined) visitsByEnd.set(v.endLine, v);
  const visitOf = (l: LineReward): StageVisit | undefined => {
    const v = l.stageEnd ? visitsByEnd.get(l.line) : undefined;
    return v && v.stage === l.stageEnd?.stage ? v : undefined;
  };
  const outcome = params.summary?.outcome;
  for (const l of [...byLine.values()].sort((a, b) => a.line - b.line)) {
    const kind = kindOf(l, outcome);
    if (kind === undefined) continue;
    out.get(kind)!.push({ line: l.line, hover: hoverFor(l, params, visitOf(l)) });
  }
  // A visit that ended on a line with no reward of its own (the run's `end` line): the boundary still shows.
  for (const [line, v] of visitsByEnd) {
    if (byLine.has(line)) continue;
    out.get(stageKind(v.reward))!.push({ line, hover: stageText({ stage: v.stage, reward: v.reward }, v) });
  }
  for (const marks of out.values()) marks.sort((a, b) => a.line - b.line);
  return out;
}
