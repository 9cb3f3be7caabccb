import { z } from 'zod';

const IsoTime = z.string().min(1);

/** The most ids (or logprobs) one turn's list may hold: a prompt of over a million tokens is not a real turn. */
export const MAX_TURN_IDS = 1_048_576;
const TokenIds = z
  .array(
    z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1),
  )
  .max(MAX_TURN_IDS);

/**
 * One model turn's token ids and the logprob of each completion token, exactly as the inference
 * server returned them (`--record-tokens`), for a trainer; or, when it returned none or what it
 * returned was refused, why (`missing`). `promptShared`: the prompt's first n ids are the first n of
 * the turn before's prompt followed by its completion (not written again; readers put them back),
 * so a long run's file grows with its turns, not with their square. Never scored by the verifier.
 */
export const TokensEvent = z
  .object({
    type: z.literal('tokens'),
    /** The model turn (1, 2, … in the run) these are of; the turn's message or calls follow this line. */
    turn: z.number().int().positive(),
    promptShared: z.number().int().nonnegative().max(MAX_TURN_IDS).optional(),
    promptIds: TokenIds.optional(),
    completionIds: TokenIds.optional(),
    logprobs: z.array(z.number().max(0)).max(MAX_TURN_IDS).optional(),
    missing: z.string().optional(),
    at: IsoTime.optional(),
  })
  .refine(
    (t) =>
      t.missing === undefined
        ? t.promptIds !== undefined && t.completionIds !== undefined && t.logprobs !== undefined
        : t.promptIds === undefined &&
          t.completionIds === undefined &&
          t.logprobs === undefined &&
          t.promptShared === undefined,
    { message: 'a tokens line has promptIds, completionIds and logprobs, or only missing' },
  )
  .refine((t) => t.logprobs === undefined || t.logprobs.length === t.completionIds?.length, {
    message: 'one logprob per completion id',
    path: ['logprobs'],
  });
export type TokensEvent = z.infer<typeof TokensEvent>;
