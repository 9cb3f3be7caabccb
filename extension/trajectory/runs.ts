/**
 * The runs the extension has heard of (every trajectory the server sent
 * rewards for), which one is current, and what the status bar says about it.
 * Pure, no `vscode` (tested under `node --test`); status-bar.ts shows it.
 */
import type { BackendLabel, RewardsParams } from '../../core/protocol/lsp';
import { code, escapeMarkdown } from './decorations';
import { formatNumber } from '../../core/protocol/display';
import { describeSandbox, type SandboxSummary } from '../../core/sandbox/plan';

interface Entry {
  params: RewardsParams;
  seq: number;
}

/**
 * The latest rewards per trajectory. The current run is the most recently
 * updated trajectory that is still live (not ended); when none is live, the
 * most recently updated one.
 */
export class RunRegistry {
  private readonly runs = new Map<string, Entry>();
  private seq = 0;

  /** Takes a notification in (merging a partial one into what is known) and returns the whole picture. */
  update(params: RewardsParams): RewardsParams {
    const merged = mergeRewards(this.runs.get(params.uri)?.params, params);
    this.runs.set(params.uri, { params: merged, seq: ++this.seq });
    return merged;
  }

  get(uri: string): RewardsParams | undefined {
    return this.runs.get(uri)?.params;
  }

  forget(uri: string): void {
    this.runs.delete(uri);
  }

  current(): RewardsParams | undefined {
    let live: Entry | undefined;
    let any: Entry | undefined;
    for (const e of this.runs.values()) {
      if (!any || e.seq > any.seq) any = e;
      // Live: verified and no `end` yet (a run that stopped on an error is not live, though it never submitted).
      if (
        e.params.summary &&
        !e.params.summary.ended &&
        e.params.summary.endReason === undefined &&
        (!live || e.seq > live.seq)
      )
        live = e;
    }
    return (live ?? any)?.params;
  }
}

/**
 * The whole document's rewards after a notification. A full one replaces what
 * was known; a partial one (`full: false`, a live append or an edit further
 * down) keeps the known lines before `from` and replaces the rest by its
 * lines, so a line it does not list has no reward any more (without `from`:
 * from the first line it lists). Lines past `lineCount` are dropped either way. Stage visits listed replace the known ones with the
 * same `visit` index; known visits past the last one listed go (a partial
 * notification lists the visits ending at or after the changed line and the
 * open one; listing all of them works the same).
 */
export function mergeRewards(prev: RewardsParams | undefined, next: RewardsParams): RewardsParams {
  const inDoc = (l: { line: number }) => l.line < next.lineCount;
  if (next.full !== false || !prev) return { ...next, lines: next.lines.filter(inDoc) };
  const cut = next.from ?? next.lines[0]?.line ?? next.lineCount;
  const kept = prev.lines.filter((l) => l.line < cut && inDoc(l));
  return {
    ...next,
    full: true,
    lines: [...kept, ...next.lines.filter((l) => l.line >= cut && inDoc(l))],
    stages: mergeStages(prev.stages, next.stages),
  };
}

type Visit = RewardsParams['stages'][number];

function mergeStages(prev: readonly Visit[], next: readonly Visit[]): Visit[] {
  if (next.length === 0) return [...prev];
  const listed = new Set(next.map((v) => v.visit));
  let last = -Infinity;
  for (const v of listed) last = Math.max(last, v);
  return [...prev.filter((v) => !listed.has(v.visit) && v.visit < last), ...next].sort((a, b) => a.visit - b.visit);
}

/** The last path segment of a URI, decoded. */
export function fileNameOf(uri: string): string {
  const last =
    uri
      .replace(/[?#].*$/, '')
      .split('/')
      .pop() ?? uri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

export interface StatusView {
  /** Status bar text, with `$(codicon)` icons. */
  text: string;
  /** Markdown. */
  tooltip: string;
  /** Show on a warning background. */
  warning: boolean;
}

const BACKEND_ICON: Record<BackendLabel['backend'], string> = { lean: '$(verified)', builtin: '$(checklist)' };

/** Where the long versions of the reasons are (the server logs its backend's reason there in full). */
const DETAILS = 'details in the Lean4 Agentic output';

/**
 * A reason in one short sentence for the tooltip: its first sentence, clipped. The reasons can be long (where Lean
 * was looked for lists the whole PATH); the tooltip then points to the output channel, which has them in full.
 */
export function briefReason(reason: string, max = 160): string {
  const flat = reason.replace(/\s+/g, ' ').trim();
  const end = /\.\s/.exec(flat);
  const first = end ? flat.slice(0, end.index) : flat.replace(/\.$/, '');
  const short = first.length > max ? `${first.slice(0, max - 1)}…` : first;
  if (/^No Lean toolchain/.test(short)) return `${short}: install elan or set "lean4Agentic.leanPath" (${DETAILS})`;
  return short.length < flat.replace(/\.$/, '').length ? `${short} (${DETAILS})` : short;
}

const CLICK = 'Click to open the trajectory.';

/** A line added to a tooltip, above what a click does (which stays last). */
function beforeClick(tooltip: string, line: string): string {
  const lines = tooltip.split('\n\n');
  const at = lines[lines.length - 1] === CLICK ? lines.length - 1 : lines.length;
  lines.splice(at, 0, line);
  return lines.join('\n\n');
}

/** The status with the running agent's sandbox: a shield when its commands are confined, a warning when not. */
export function withSandbox(view: StatusView, s: SandboxSummary | undefined): StatusView {
  if (!s) return view;
  return {
    text: `${view.text} · ${s.confined ? '$(shield) sandboxed' : '$(warning) unconfined'}`,
    tooltip: beforeClick(view.tooltip, `Agent commands: ${escapeMarkdown(briefReason(describeSandbox(s)))}`),
    warning: view.warning || !s.confined,
  };
}

/**
 * What the status bar shows: the backend that decided and the current run's return; the tooltip one short line each
 * for the backend (and why), the latest run (its state, outcome and return) and, from withSandbox, the sandbox.
 * `backend` is what the server announced before any run, if anything; `problem` a client-side failure (the server
 * did not start).
 */
export function statusView(run: RewardsParams | undefined, backend?: BackendLabel, problem?: string): StatusView {
  if (problem) {
    return {
      text: '$(error) lar',
      tooltip: `**Lean4 Agentic**: the verifier is not running: ${escapeMarkdown(briefReason(problem))}.`,
      warning: true,
    };
  }
  const label = run?.backend ?? backend;
  const tip = ['**Lean4 Agentic**'];
  if (label) tip.push(`Backend: **${label.backend}** — ${escapeMarkdown(briefReason(label.reason))}`);
  else tip.push('Backend: not known until the server verifies a document.');
  if (!run) {
    tip.push('No run yet: open a trajectory (`*.lar.jsonl`) or start the agent.');
    return {
      text: label ? `${BACKEND_ICON[label.backend]} lar ${label.backend}` : '$(checklist) lar',
      tooltip: tip.join('\n\n'),
      warning: false,
    };
  }
  const name = fileNameOf(run.uri);
  if (run.fatal) {
    tip.push(`Latest run ${code(name)} could not be verified: ${escapeMarkdown(briefReason(run.fatal))}`);
    tip.push(CLICK);
    return { text: `$(warning) lar ${run.backend.backend} · not verified`, tooltip: tip.join('\n\n'), warning: true };
  }
  const s = run.summary;
  const ret = s ? ` · R ${formatNumber(s.return)}` : '';
  const state = !s ? '' : (s.endReason ?? (s.ended ? 'submitted' : undefined));
  // A submitted run whose outcome check failed says so: a return alone reads like a pass.
  // (Only once the run's end is written: between the submit and the outcome check's result it is not known.)
  const live =
    s && state === undefined
      ? ' (live)'
      : s && state !== 'submitted'
        ? ` (${state})`
        : s && s.endReason === 'submitted' && s.outcome !== 1
          ? ' (outcome failed)'
          : '';
  if (s) {
    const where = s.finalStage !== undefined ? `, stage ${code(s.finalStage)}` : '';
    tip.push(
      `Latest run ${code(name)}: ${state ?? 'live'}, ${s.steps} steps${where} · outcome **${s.outcome}** · return **${formatNumber(s.return)}**`,
    );
  } else {
    tip.push(`Latest run ${code(name)}: no steps verified yet`);
  }
  tip.push(CLICK);
  return {
    text: `${BACKEND_ICON[run.backend.backend]} lar ${run.backend.backend}${ret}${live}`,
    tooltip: tip.join('\n\n'),
    warning: false,
  };
}
