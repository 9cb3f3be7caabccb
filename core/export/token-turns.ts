/** The token ids of a run's `tokens` lines put back whole (core/agent/token-log.ts leaves out the prompt's repeats). */
import type { TokensEvent } from '../schema/trajectory';

/** How many leading ids `a` and `b` have in common. */
export function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** One turn's ids in full, as the server returned them. */
export interface FullTurn {
  turn: number;
  /** The trajectory line of the `tokens` event. */
  line: number;
  promptIds: number[];
  completionIds: number[];
  logprobs: number[];
}

/**
 * The most ids a run's prompts may hold in all once put back whole: a long real run holds a few million;
 * a file crafted so that every line repeats a million-id prompt would otherwise take gigabytes.
 */
export const MAX_RUN_PROMPT_IDS = 16 * 2 ** 20;

/** Puts each `tokens` line's prompt back whole, line after line; throws on a `promptShared` no run could write. */
export class TokenTurns {
  private before: number[] = [];
  private total = 0;
  private turn = 0;
  /** Why a line could not be put back: every later prompt builds on it, so none can be either. */
  private broken: string | undefined;

  /** The turn in full, or none when the line says why it has no ids (`missing`). */
  push(e: TokensEvent, line: number): FullTurn | undefined {
    if (this.broken) throw new Error(`line ${line}: its prompt builds on ${this.broken}`);
    try {
      return this.next(e, line);
    } catch (err) {
      this.broken = `line ${(err as Error).message.replace(/^line /, '')}`;
      throw err;
    }
  }

  private next(e: TokensEvent, line: number): FullTurn | undefined {
    // Turns are numbered 1, 2, … with none left out: a line missing or moved would share the wrong prefix.
    if (e.turn !== this.turn + 1)
      throw new Error(
        `line ${line}: turn ${e.turn} follows turn ${this.turn}: a tokens line is missing or out of place`,
      );
    this.turn = e.turn;
    if (!e.promptIds || !e.completionIds || !e.logprobs) {
      this.before = [];
      return undefined;
    }
    const shared = e.promptShared ?? 0;
    if (shared > this.before.length)
      throw new Error(
        `line ${line}: promptShared is ${shared}, but the turn before has ${this.before.length} ids (prompt and completion)`,
      );
    this.total += shared + e.promptIds.length;
    if (this.total > MAX_RUN_PROMPT_IDS)
      throw new Error(
        `line ${line}: the run's prompts hold more than ${MAX_RUN_PROMPT_IDS} token ids in all once put back whole; it is not exported`,
      );
    const promptIds = this.before.slice(0, shared).concat(e.promptIds);
    this.before = promptIds.concat(e.completionIds);
    return { turn: e.turn, line, promptIds, completionIds: e.completionIds, logprobs: e.logprobs };
  }
}

/**
 * The turns of a run's `tokens` lines with their prompts put back whole; a turn without ids
 * (`missing`) is left out. Throws when a line's `promptShared` reaches past the turn before's ids:
 * such a file was not written by a run, and its ids cannot be trusted.
 */
export function fullTurns(events: readonly { line: number; event: TokensEvent }[]): FullTurn[] {
  const walk = new TokenTurns();
  return events.flatMap(({ line, event }) => walk.push(event, line) ?? []);
}
