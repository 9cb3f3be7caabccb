/**
 * A group as one SkyRL `GeneratorOutput` (skyrl/train/generators/base.py, skyrl 0.4.0): per rollout the
 * first prompt's ids, then one unbroken response — each turn's completion (loss mask 1, its advantage
 * as the reward of each of its tokens) and what came between two turns, tool results and the
 * template's markers (loss mask 0, reward 0). SkyRL's own checks (`validate_generator_output`,
 * skyrl/train/utils/trainer_utils.py) need torch and ray, so the shape is checked against that
 * function's rules in test/core/training/skyrl.test.ts.
 *
 * One segment needs each prompt to begin with the turn before's prompt and completion, as a chat
 * template that renders earlier turns unchanged gives. A rollout where it does not is refused, naming
 * the turn; `step` mode writes one row per turn instead (SkyRL's step-wise training, `is_last_step`).
 */
import { sharedPrefix } from '../export/token-turns';
import type { TrainingRollout } from './turns';

export type SkyrlMode = 'segment' | 'step';

/** One row of the batch: a rollout (segment) or one turn of it (step). */
interface Row {
  prompt: number[];
  response: number[];
  rewards: number[];
  masks: number[];
  logprobs: number[];
  stop: string;
  id: { instance_id: string; repetition_id: number };
  last: boolean;
}

function segmentRow(r: TrainingRollout, stop: string): Row {
  const [first, ...rest] = r.turns;
  const row: Row = {
    prompt: first!.promptIds,
    response: [],
    rewards: [],
    masks: [],
    logprobs: [],
    stop,
    id: { instance_id: r.taskId, repetition_id: r.index },
    last: true,
  };
  let before = first!.promptIds;
  let turn = first!;
  const add = (ids: readonly number[], reward: number, mask: number, lps?: readonly number[]) => {
    ids.forEach((id, i) => {
      row.response.push(id);
      row.rewards.push(reward);
      row.masks.push(mask);
      row.logprobs.push(lps ? lps[i]! : 0);
    });
  };
  add(turn.completionIds, turn.advantage, 1, turn.logprobs);
  for (const next of rest) {
    const sent = before.concat(turn.completionIds);
    const at = sharedPrefix(sent, next.promptIds);
    if (at < sent.length)
      throw new Error(
        `${r.source}: turn ${next.turn}'s prompt does not continue turn ${turn.turn} (they part at id ${at} of ${sent.length}): the chat template rendered an earlier turn anew, so the rollout is not one segment; export it with --skyrl-rows step`,
      );
    add(next.promptIds.slice(sent.length), 0, 0);
    add(next.completionIds, next.advantage, 1, next.logprobs);
    before = next.promptIds;
    turn = next;
  }
  return row;
}

function stepRows(r: TrainingRollout, stop: string): Row[] {
  return r.turns.map((t, i) => ({
    prompt: t.promptIds,
    response: t.completionIds,
    rewards: t.completionIds.map(() => t.advantage),
    masks: t.completionIds.map(() => 1),
    logprobs: t.logprobs,
    stop: i === r.turns.length - 1 ? stop : 'tool_calls',
    id: { instance_id: r.taskId, repetition_id: r.index },
    last: i === r.turns.length - 1,
  }));
}

/** How the run ended, as a stop reason. */
function stopOf(r: TrainingRollout): string {
  if (r.end?.reason === 'submitted') return 'stop';
  return /context window/.test(r.end?.detail ?? '') ? 'length' : (r.end?.reason ?? 'unknown');
}

/** The group as SkyRL's `GeneratorOutput`; throws when a rollout has no ids or (segment mode) is not one segment. */
export function skyrlOutput(
  rollouts: readonly TrainingRollout[],
  mode: SkyrlMode = 'segment',
): Record<string, unknown> {
  const rows: Row[] = [];
  for (const r of rollouts) {
    if (!r.hasTokens)
      throw new Error(`${r.source}: has no token ids on some turn: SkyRL trains on ids (run with --record-tokens)`);
    const stop = stopOf(r);
    if (mode === 'segment') rows.push(segmentRow(r, stop));
    else rows.push(...stepRows(r, stop));
  }
  return {
    prompt_token_ids: rows.map((r) => r.prompt),
    response_ids: rows.map((r) => r.response),
    rewards: rows.map((r) => r.rewards),
    loss_masks: rows.map((r) => r.masks),
    stop_reasons: rows.map((r) => r.stop),
    rollout_metrics: {
      'lar/mean_return': rollouts.reduce((a, r) => a + r.return, 0) / Math.max(1, rollouts.length),
      'lar/pass_rate': rollouts.filter((r) => r.outcome === 1).length / Math.max(1, rollouts.length),
    },
    rollout_logprobs: rows.map((r) => r.logprobs),
    trajectory_ids: rows.map((r) => r.id),
    trajectory_generation_times: null,
    trajectory_time_splits: null,
    rollout_expert_indices: null,
    rollout_sample_support: null,
    is_last_step: mode === 'step' ? rows.map((r) => r.last) : null,
    env_metrics: null,
    pixel_values: null,
    image_grid_thw: null,
  };
}
