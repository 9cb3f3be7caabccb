/** The token ids of a run's `tokens` lines put back whole (core/agent/token-log.ts leaves out the prompt's repeats). */
import type { TokensEvent } from '../schema/trajectory';

/** One turn's ids in full, as the server returned them. */
export interface FullTurn {
  turn: number;
  /** The trajectory line of the `tokens` event. */
  line: number;
  promptIds: number[];
  completionIds: number[];
  logprobs: number[];
}

/** Puts each `tokens` line's prompt back whole, line after line; throws on a `promptShared` no run could write. */
export class TokenTurns {
  private before: number[] = [];

  /** The turn in full, or none when the line says why it has no ids (`missing`). */
  push(e: TokensEvent, line: number): FullTurn | undefined {
    if (!e.promptIds || !e.completionIds || !e.logprobs) {
      this.before = [];
      return undefined;
    }
    const shared = e.promptShared ?? 0;
    if (shared > this.before.length)
      throw new Error(
        `line ${line}: promptShared is ${shared}, but the turn before has ${this.before.length} ids (prompt and completion)`,
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
