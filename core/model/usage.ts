/** The server's `usage` made into the trajectory's token counts, so a reader never sees a count the server did not give. */
import { MAX_TURN_TOKENS, type TurnUsage } from '../schema/trajectory';
import type { Usage } from './assemble';

const count = (n: unknown): number | undefined =>
  typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_TURN_TOKENS ? n : undefined;

/**
 * A turn's token counts from the server's `usage`: undefined when it sent none or its prompt and
 * completion counts are not plausible integers (nothing is invented); the cached count only when
 * the server gave one that fits inside the prompt (`prompt_tokens_details.cached_tokens`).
 */
export function turnUsage(usage: Usage | undefined): TurnUsage | undefined {
  const prompt = count(usage?.prompt_tokens);
  const completion = count(usage?.completion_tokens);
  if (prompt === undefined || completion === undefined) return undefined;
  const cached = count(usage?.prompt_tokens_details?.cached_tokens);
  return { prompt, completion, ...(cached !== undefined && cached <= prompt ? { cached } : {}) };
}
