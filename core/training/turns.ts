/**
 * A group of rollouts as a trainer sees it: each rollout's model turns, with the ids the server sampled
 * them on (`tokens` lines) and the stage-normalized advantage of what each turn did. The shapes of
 * rLLM and SkyRL (rllm.ts, skyrl.ts) are made from this.
 */
import { createHash } from 'node:crypto';
import { TokenTurns } from '../export/token-turns';
import type { RolloutAdvantages } from '../rewards/advantages';
import type { ParsedTrajectory } from '../schema/jsonl';
import type { EndEvent, ToolCallEvent } from '../schema/trajectory';
import type { TrajectoryReport } from '../verifier/verify';

/** One model turn: its ids (empty when none were recorded), what it said and called, and its advantage. */
export interface TrainingTurn {
  turn: number;
  /** The trajectory line of the turn's `tokens` line, or of its first message or call. */
  line: number;
  promptIds: number[];
  completionIds: number[];
  logprobs: number[];
  text: string;
  reasoning: string;
  calls: { name: string; args: unknown }[];
  stage: string | undefined;
  /** The mean tool reward of its calls (0 without calls). */
  reward: number;
  /**
   * The mean step advantage of its calls (docs/training.md); a turn without calls gets the outcome's
   * advantage plus α times its stage visit's.
   */
  advantage: number;
}

export interface TrainingRollout {
  source: string;
  /** The rollout's place in the group, from 0. */
  index: number;
  task: string;
  /** A stable id of the task: the first 16 hex digits of its text's SHA-256. */
  taskId: string;
  runId: string | undefined;
  outcome: number;
  return: number;
  end: EndEvent | undefined;
  /** Whether every turn has ids. */
  hasTokens: boolean;
  turns: TrainingTurn[];
  advantages: RolloutAdvantages;
}

export const taskIdOf = (task: string): string => createHash('sha256').update(task).digest('hex').slice(0, 16);

const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** One rollout's turns; throws when its `tokens` lines cannot be put back (a file no run wrote). */
export function trainingRollout(
  parsed: ParsedTrajectory,
  report: TrajectoryReport,
  adv: RolloutAdvantages,
  index: number,
): TrainingRollout {
  const results = new Map(report.steps.map((s) => [s.line, s]));
  const ids = new TokenTurns();
  const turns: (TrainingTurn & { callLines: number[] })[] = [];
  let open: (TrainingTurn & { callLines: number[] }) | undefined;
  let reply: number | undefined;
  /** The reply of the last call seen, in any turn. */
  let lastReply: number | undefined;
  let end: EndEvent | undefined;
  const start = (line: number, full?: ReturnType<TokenTurns['push']>, turn?: number) => {
    open = {
      turn: turn ?? turns.length + 1,
      line,
      promptIds: full?.promptIds ?? [],
      completionIds: full?.completionIds ?? [],
      logprobs: full?.logprobs ?? [],
      text: '',
      reasoning: '',
      calls: [],
      stage: results.get(line)?.stage,
      reward: 0,
      advantage: 0,
      callLines: [],
    };
    turns.push(open);
    return open;
  };
  for (const l of parsed.lines) {
    if (l.kind !== 'event') continue;
    const e = l.event;
    if (e.type === 'tokens') {
      let full: ReturnType<TokenTurns['push']>;
      try {
        full = ids.push(e, l.line);
      } catch (err) {
        throw new Error(`${adv.source}: ${(err as Error).message}`);
      }
      start(l.line, full, e.turn);
      reply = undefined;
    } else if (e.type === 'message' && e.role === 'assistant') {
      // Without tokens lines a message opens its own turn; with them it joins the turn just opened.
      const t = open && open.text === '' && open.callLines.length === 0 ? open : start(l.line);
      t.text = e.content;
      t.reasoning = e.reasoning ?? '';
      t.stage ??= results.get(l.line)?.stage;
    } else if (e.type === 'tool_call') {
      // A tokens line between two calls of one reply would give the second another turn's advantage.
      if (open && open.callLines.length === 0 && e.reply !== undefined && e.reply === lastReply)
        throw new Error(`${adv.source}:${l.line}: a tokens line splits the calls of reply ${e.reply}`);
      const t = open && (open.callLines.length === 0 || e.reply === reply) ? open : start(l.line);
      reply = e.reply;
      lastReply = e.reply;
      addCall(t, e, l.line);
      t.stage ??= results.get(l.line)?.stage;
    } else if (e.type === 'message' || e.type === 'outcome') {
      open = undefined;
    } else if (e.type === 'end') end = e;
  }
  score(turns, adv, (line) => results.get(line)?.visit);
  const task = report.header?.task ?? '';
  return {
    source: adv.source,
    index,
    task,
    taskId: taskIdOf(task),
    runId: report.header?.id,
    outcome: adv.outcome,
    return: adv.return,
    end,
    hasTokens: turns.length > 0 && turns.every((t) => t.completionIds.length > 0 || t.promptIds.length > 0),
    turns: turns.map(({ callLines: _c, ...t }) => t),
    advantages: adv,
  };
}

/** Each turn's reward and advantage from its calls' steps (docs/training.md). */
function score(
  turns: (TrainingTurn & { callLines: number[] })[],
  adv: RolloutAdvantages,
  visitAt: (line: number) => number | undefined,
): void {
  const steps = new Map(adv.steps.map((s) => [s.line, s]));
  const stageAdv = new Map(adv.stages.map((s) => [s.visit, s.advantage]));
  for (const t of turns) {
    const called = t.callLines.flatMap((line) => steps.get(line) ?? []);
    t.reward = mean(called.map((s) => s.toolReward));
    if (called.length) t.advantage = mean(called.map((s) => s.advantage));
    else {
      const visit = visitAt(t.line);
      t.advantage = adv.outcomeAdvantage + adv.alpha * (visit === undefined ? 0 : (stageAdv.get(visit) ?? 0));
    }
  }
}

function addCall(t: TrainingTurn & { callLines: number[] }, e: ToolCallEvent, line: number): void {
  t.calls.push({ name: e.tool, args: e.args });
  t.callLines.push(line);
}
