/**
 * Token ids and logprobs of one model turn, as vLLM or SGLang send them, for a trainer: read from
 * the wire in each engine's shape (docs/agent.md, "Token ids from the server") and checked, never trusted.
 */
import { MAX_TURN_IDS } from '../schema/trajectory';

/** Which server's fields ask for ids: vLLM and SGLang spell and stream them differently. */
export type TokenEngine = 'vllm' | 'sglang';

/** One turn's tokens exactly as the server sent them. */
export interface TurnTokens {
  promptIds: number[];
  completionIds: number[];
  /** The logprob of each completion token, in order. */
  logprobs: number[];
}

/** What a turn recorded: the tokens, or why there are none (for the caller to show). */
export type TokenRecord = { tokens: TurnTokens } | { missing: string };

const MAX_ID = 2 ** 31;

/**
 * The request fields that ask for ids and logprobs, and whether the request may stream: vLLM streams
 * them (prompt ids in the first chunk, each chunk its own ids); SGLang refuses `return_token_ids` and
 * `return_prompt_token_ids` with `stream: true`, so its turns are asked for unstreamed. An unknown
 * server is asked unstreamed with both engines' fields (a server ignores fields it does not know).
 */
export function tokenRequest(engine: TokenEngine | undefined): { stream: boolean; fields: Record<string, boolean> } {
  if (engine === 'vllm') return { stream: true, fields: { logprobs: true, return_token_ids: true } };
  return { stream: false, fields: { logprobs: true, return_token_ids: true, return_prompt_token_ids: true } };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The first choice of a chunk or body (index 0, or the first one without an index). */
function firstChoice(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const choices = Array.isArray(body.choices) ? (body.choices as unknown[]) : [];
  return choices.filter(isObject).find((c) => (c.index ?? 0) === 0);
}

/**
 * Gathers a turn's ids and logprobs as they come: chunk by chunk from a vLLM stream, or at once from an
 * unstreamed body (vLLM puts `prompt_token_ids` at the top, SGLang on the choice). Anything of the
 * wrong shape is kept as it came, to be refused by `result`, never silently mended.
 */
export class TokenCollector {
  private prompt: unknown[] | undefined;
  private completion: unknown[] | undefined;
  private logprobs: unknown[] | undefined;
  private bad: string | undefined;

  /** One streamed chunk or a whole body. */
  push(body: unknown): void {
    if (!isObject(body)) return;
    const choice = firstChoice(body);
    this.add('prompt', body.prompt_token_ids ?? choice?.prompt_token_ids, 'prompt_token_ids');
    this.add('completion', choice?.token_ids, 'token_ids');
    const lp = choice?.logprobs;
    if (isObject(lp)) {
      if (!Array.isArray(lp.content)) return this.refuse('logprobs.content is not a list');
      this.add(
        'logprobs',
        (lp.content as unknown[]).map((c) => (isObject(c) ? c.logprob : c)),
        'logprobs.content',
      );
    }
  }

  private add(which: 'prompt' | 'completion' | 'logprobs', value: unknown, field: string): void {
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) return this.refuse(`${field} is not a list`);
    const list = (this[which] ??= []);
    // Counted before copying: a server cannot make the client hold more than the bound.
    if (list.length + value.length > MAX_TURN_IDS)
      return this.refuse(`${field} holds more than ${MAX_TURN_IDS} entries`);
    for (const v of value as unknown[]) list.push(v);
  }

  private refuse(reason: string): void {
    this.bad ??= reason;
  }

  /** The checked tokens, or why there are none. */
  result(): TokenRecord {
    return checkTokens({ promptIds: this.prompt, completionIds: this.completion, logprobs: this.logprobs }, this.bad);
  }
}

/** Checks what a server sent for a turn: ids integers in [0, 2^31), logprobs finite and ≤ 0, counts bounded and matching. */
export function checkTokens(
  raw: { promptIds?: unknown[]; completionIds?: unknown[]; logprobs?: unknown[] },
  refused?: string,
): TokenRecord {
  const why = (reason: string): TokenRecord => ({ missing: `the server's token ids were dropped: ${reason}` });
  if (refused) return why(refused);
  const { promptIds, completionIds, logprobs } = raw;
  if (!promptIds && !completionIds) return { missing: 'the server returned no token ids' };
  if (!promptIds) return why('no prompt token ids came with the completion ids');
  if (!completionIds) return why('no completion token ids came with the prompt ids');
  if (!logprobs) return why('the server returned no logprobs');
  for (const [name, list] of [
    ['prompt', promptIds],
    ['completion', completionIds],
  ] as const) {
    if (list.length > MAX_TURN_IDS) return why(`${name} ids hold more than ${MAX_TURN_IDS} entries`);
    const at = list.findIndex((v) => typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= MAX_ID);
    if (at >= 0) return why(`${name} id ${at} is ${JSON.stringify(list[at])}, not an integer in [0, 2^31)`);
  }
  const at = logprobs.findIndex((v) => typeof v !== 'number' || !Number.isFinite(v) || v > 0);
  if (at >= 0) return why(`logprob ${at} is ${JSON.stringify(logprobs[at])}, not a finite number ≤ 0`);
  if (logprobs.length !== completionIds.length)
    return why(`${completionIds.length} completion ids but ${logprobs.length} logprobs`);
  return {
    tokens: {
      promptIds: promptIds as number[],
      completionIds: completionIds as number[],
      logprobs: logprobs as number[],
    },
  };
}
