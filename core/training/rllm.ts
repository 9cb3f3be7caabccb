/**
 * A group as rLLM episodes: one `Episode.to_dict()`-shaped object per rollout (rllm/types.py,
 * rllm-org/rllm), each with one Trajectory whose Steps are the model turns, our stage-normalized
 * advantage in `Step.advantage` (used as given with `algorithm.use_precomputed_advantage=True`):
 * a scalar per step, or the same value for each response token. rLLM is not on the Python registry,
 * so the shape is checked against the field names of its source (test/core/training/rllm.test.ts).
 */
import type { TrainingRollout, TrainingTurn } from './turns';

/** rLLM's `TerminationReason` values (rllm/workflows/workflow.py). */
export type RllmTermination =
  | 'max_prompt_length_exceeded'
  | 'max_response_length_exceeded'
  | 'env_done'
  | 'max_turns_exceeded'
  | 'timeout'
  | 'unknown'
  | 'error';

/** How a run's end reads as rLLM's termination reason. */
export function terminationOf(r: TrainingRollout): RllmTermination {
  const end = r.end;
  if (!end) return 'unknown';
  if (end.reason === 'submitted' || end.reason === 'answered') return 'env_done';
  const detail = end.detail ?? '';
  if (/context window/.test(detail)) return 'max_prompt_length_exceeded';
  if (end.reason === 'limit') return /time limit/.test(detail) ? 'timeout' : 'max_turns_exceeded';
  return end.reason === 'error' ? 'error' : 'unknown';
}

export type AdvantageShape = 'step' | 'token';

function step(t: TrainingTurn, last: boolean, shape: AdvantageShape): Record<string, unknown> {
  return {
    prompt_ids: t.promptIds,
    response_ids: t.completionIds,
    logprobs: t.logprobs,
    routing_matrices: null,
    // The ids are the conversation; the messages would repeat every earlier turn in every step.
    chat_completions: [],
    observation: null,
    thought: t.reasoning,
    action: t.calls,
    model_response: t.text,
    model_output: null,
    info: { lar: { turn: t.turn, line: t.line, stage: t.stage ?? null } },
    reward: t.reward,
    done: last,
    mc_return: 0,
    advantage: shape === 'token' ? t.completionIds.map(() => t.advantage) : t.advantage,
    weight_version: null,
  };
}

/** The rollout as an rLLM Episode (its `to_dict()` shape, read back by `Episode.from_dict`). */
export function rllmEpisode(r: TrainingRollout, shape: AdvantageShape = 'step'): Record<string, unknown> {
  const task = { id: r.taskId, instruction: r.task };
  const lar = {
    source: r.source,
    outcome: r.outcome,
    return: r.return,
    outcomeAdvantage: r.advantages.outcomeAdvantage,
    alpha: r.advantages.alpha,
    beta: r.advantages.beta,
    stages: r.advantages.stages,
  };
  return {
    id: `${r.taskId}:${r.index}`,
    task,
    termination_reason: terminationOf(r),
    is_correct: r.outcome === 1,
    session_id: r.runId ?? null,
    trajectories: [
      {
        uid: r.runId ?? `${r.taskId}-${r.index}`,
        name: 'lar',
        task,
        steps: r.turns.map((t, i) => step(t, i === r.turns.length - 1, shape)),
        reward: r.return,
        info: { lar },
      },
    ],
    metrics: { return: r.return, outcome: r.outcome, turns: r.turns.length },
    info: { lar },
  };
}
