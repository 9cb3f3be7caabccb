import { z } from 'zod';

/**
 * ATIF, the Agent Trajectory Interchange Format (Harbor RFC 0001), version
 * ATIF-v1.7, as its reference models define it: every object rejects unknown
 * keys, custom data goes only in `extra` objects, step ids run 1, 2, 3, …,
 * agent-only fields stay on agent steps, and every observation result refers
 * to a tool call of its own step. We write v1.7: every reader from Harbor's
 * v1.7 models on accepts it (v1.8 only adds audio content, which we never emit).
 */
export const ATIF_VERSION = 'ATIF-v1.7' as const;

const Extra = z.record(z.string(), z.unknown());

const ImageSource = z.strictObject({
  media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  path: z.string(),
});

const ContentPart = z.union([
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({ type: z.literal('image'), source: ImageSource }),
]);

const Message = z.union([z.string(), z.array(ContentPart)]);

const IsoTimestamp = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 timestamp');

export const AtifToolCall = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  extra: Extra.optional(),
});

export const AtifObservationResult = z.strictObject({
  source_call_id: z.string().nullable().optional(),
  content: Message.nullable().optional(),
  extra: Extra.optional(),
});

export const AtifMetrics = z.strictObject({
  prompt_tokens: z.number().int().optional(),
  completion_tokens: z.number().int().optional(),
  cached_tokens: z.number().int().optional(),
  cost_usd: z.number().optional(),
  prompt_token_ids: z.array(z.number().int()).optional(),
  completion_token_ids: z.array(z.number().int()).optional(),
  logprobs: z.array(z.number()).optional(),
  extra: Extra.optional(),
});
export type AtifMetrics = z.infer<typeof AtifMetrics>;

const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

export const AtifStep = z
  .strictObject({
    step_id: z.number().int().min(1),
    timestamp: IsoTimestamp.optional(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().optional(),
    reasoning_effort: z.union([z.string(), z.number()]).optional(),
    message: Message,
    reasoning_content: z.string().optional(),
    tool_calls: z.array(AtifToolCall).optional(),
    observation: z.strictObject({ results: z.array(AtifObservationResult) }).optional(),
    metrics: AtifMetrics.optional(),
    is_copied_context: z.boolean().optional(),
    llm_call_count: z.number().int().min(0).nullable().optional(),
    extra: Extra.optional(),
  })
  .superRefine((step, ctx) => {
    if (step.source !== 'agent') {
      for (const f of AGENT_ONLY) {
        if (step[f] !== undefined)
          ctx.addIssue({ code: 'custom', path: [f], message: `"${f}" is only allowed on agent steps` });
      }
    }
    if (step.source === 'agent' && step.llm_call_count === 0) {
      for (const f of ['metrics', 'reasoning_content'] as const) {
        if (step[f] !== undefined)
          ctx.addIssue({ code: 'custom', path: [f], message: `"${f}" must be absent when llm_call_count is 0` });
      }
    }
    const ids = new Set<string>();
    for (const [i, c] of (step.tool_calls ?? []).entries()) {
      if (ids.has(c.tool_call_id))
        ctx.addIssue({
          code: 'custom',
          path: ['tool_calls', i, 'tool_call_id'],
          message: `duplicate tool_call_id "${c.tool_call_id}"`,
        });
      ids.add(c.tool_call_id);
    }
    for (const [i, r] of (step.observation?.results ?? []).entries()) {
      if (r.source_call_id != null && !ids.has(r.source_call_id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['observation', 'results', i, 'source_call_id'],
          message: `"${r.source_call_id}" is not a tool_call_id of this step`,
        });
      }
    }
  });

export const AtifTrajectory = z
  .strictObject({
    schema_version: z.literal(ATIF_VERSION),
    session_id: z.string().optional(),
    trajectory_id: z.string().optional(),
    agent: z.strictObject({
      name: z.string(),
      version: z.string(),
      model_name: z.string().optional(),
      tool_definitions: z.array(z.record(z.string(), z.unknown())).optional(),
      extra: Extra.optional(),
    }),
    steps: z.array(AtifStep).min(1),
    notes: z.string().optional(),
    final_metrics: z
      .strictObject({
        total_prompt_tokens: z.number().int().optional(),
        total_completion_tokens: z.number().int().optional(),
        total_cached_tokens: z.number().int().optional(),
        total_cost_usd: z.number().optional(),
        total_steps: z.number().int().min(0).optional(),
        extra: Extra.optional(),
      })
      .optional(),
    continued_trajectory_ref: z.string().optional(),
    extra: Extra.optional(),
  })
  .superRefine((t, ctx) => {
    t.steps.forEach((s, i) => {
      if (s.step_id !== i + 1)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'step_id'],
          message: `expected ${i + 1} (sequential from 1), got ${s.step_id}`,
        });
    });
  });

export type AtifTrajectory = z.infer<typeof AtifTrajectory>;
export type AtifStep = z.infer<typeof AtifStep>;
