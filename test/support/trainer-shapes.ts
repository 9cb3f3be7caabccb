/** What rLLM and SkyRL read, as field lists and rules from their sources (neither installs here without a GPU stack). */
import assert from 'node:assert/strict';

/** The keys of rLLM's `to_dict()` shapes (rllm/types.py, rllm-org/rllm main, read 2026-12-03). */
const RLLM_EPISODE = [
  'id',
  'task',
  'termination_reason',
  'is_correct',
  'session_id',
  'trajectories',
  'metrics',
  'info',
];
const RLLM_TRAJECTORY = ['uid', 'name', 'task', 'steps', 'reward', 'info'];
const RLLM_STEP = [
  'prompt_ids',
  'response_ids',
  'logprobs',
  'routing_matrices',
  'chat_completions',
  'observation',
  'thought',
  'action',
  'model_response',
  'model_output',
  'info',
  'reward',
  'done',
  'mc_return',
  'advantage',
  'weight_version',
];
/** rLLM's TerminationReason values (rllm/workflows/workflow.py). */
const RLLM_TERMINATIONS = [
  'max_prompt_length_exceeded',
  'max_response_length_exceeded',
  'env_done',
  'max_turns_exceeded',
  'timeout',
  'unknown',
  'error',
];
/** The keys of SkyRL's GeneratorOutput (skyrl 0.4.0, skyrl/train/generators/base.py). */
const SKYRL_KEYS = [
  'prompt_token_ids',
  'response_ids',
  'rewards',
  'loss_masks',
  'stop_reasons',
  'rollout_metrics',
  'rollout_logprobs',
  'trajectory_ids',
  'trajectory_generation_times',
  'trajectory_time_splits',
  'rollout_expert_indices',
  'rollout_sample_support',
  'is_last_step',
  'env_metrics',
  'pixel_values',
  'image_grid_thw',
];

export type Episode = Record<string, unknown> & {
  id: string;
  termination_reason: string;
  is_correct: boolean;
  trajectories: (Record<string, unknown> & { steps: (Record<string, unknown> & { advantage: number | number[] })[] })[];
};

/** An rLLM episode as `Episode.from_dict` reads it: every key it indexes present, with its type. */
export function checkRllmEpisode(e: Episode): void {
  assert.deepEqual(Object.keys(e).sort(), [...RLLM_EPISODE].sort());
  assert.match(e.id, /^[^:]+:\d+$/, 'Episode.task_id and rollout_idx split the id at ":"');
  assert.ok(RLLM_TERMINATIONS.includes(e.termination_reason), e.termination_reason);
  assert.equal(typeof e.is_correct, 'boolean');
  for (const t of e.trajectories) {
    assert.deepEqual(Object.keys(t).sort(), [...RLLM_TRAJECTORY].sort());
    for (const s of t.steps) {
      assert.deepEqual(Object.keys(s).sort(), [...RLLM_STEP].sort());
      const ids = s.response_ids as unknown[];
      // Step.model_post_init asserts one logprob per response id when there are logprobs.
      assert.ok((s.logprobs as unknown[]).length === 0 || (s.logprobs as unknown[]).length === ids.length);
      assert.ok(typeof s.advantage === 'number' || (s.advantage as unknown[]).length === ids.length);
    }
  }
}

/** SkyRL's `validate_generator_output` rules (skyrl/train/utils/trainer_utils.py, 0.4.0), as a test can run them. */
export function checkSkyrlOutput(o: Record<string, unknown[] | null>, prompts: number, stepWise: boolean): void {
  assert.deepEqual(Object.keys(o).sort(), [...SKYRL_KEYS].sort());
  const responses = o.response_ids!;
  assert.ok(responses.length > 0, 'No outputs generated');
  if (!stepWise) assert.equal(responses.length, prompts);
  assert.equal(o.prompt_token_ids!.length, responses.length);
  for (const k of ['loss_masks', 'rewards', 'rollout_logprobs', 'stop_reasons', 'trajectory_ids', 'is_last_step'])
    if (Array.isArray(o[k])) assert.equal(o[k].length, responses.length, k);
  responses.forEach((r, i) => {
    const n = (r as unknown[]).length;
    assert.equal((o.loss_masks![i] as unknown[]).length, n);
    assert.equal((o.rewards![i] as unknown[]).length, n);
    assert.equal((o.rollout_logprobs![i] as unknown[]).length, n);
  });
  assert.ok(
    o.loss_masks!.flat().some((m) => m === 1),
    'some token is trained on',
  );
  if (stepWise) assert.ok(Array.isArray(o.is_last_step));
}

/** The episodes `lar export --format rllm` printed, one per line. */
export const episodesOf = (out: string): Episode[] =>
  out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Episode);
