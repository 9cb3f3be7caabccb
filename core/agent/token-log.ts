/**
 * A run's token ids as the trajectory keeps them (`--record-tokens`): one `tokens` line per model
 * turn, its prompt's repeat of the turn before left out (`promptShared`), so the file grows with the
 * turns and not with their square. core/export/token-turns.ts puts them back for a reader.
 */
import type { ModelReply } from '../model/reply';
import { sharedPrefix } from '../export/token-turns';
import type { TokensEvent } from '../schema/trajectory';

/** Builds each turn's `tokens` line; keeps only the turn before's ids. */
export class TokenLog {
  private turn = 0;
  /** The turn before's prompt followed by its completion: what the next prompt usually begins with. */
  private before: number[] = [];

  /** The line for a reply, or none when the reply was not asked for tokens. */
  event(reply: ModelReply): TokensEvent | undefined {
    if (!reply.tokens && reply.tokensMissing === undefined) return undefined;
    const turn = ++this.turn;
    const at = new Date().toISOString();
    if (!reply.tokens) {
      this.before = [];
      return { type: 'tokens', turn, missing: reply.tokensMissing ?? 'the server returned no token ids', at };
    }
    const { promptIds, completionIds, logprobs } = reply.tokens;
    const shared = sharedPrefix(this.before, promptIds);
    this.before = promptIds.concat(completionIds);
    return {
      type: 'tokens',
      turn,
      ...(shared ? { promptShared: shared } : {}),
      promptIds: promptIds.slice(shared),
      completionIds,
      logprobs,
      at,
    };
  }
}
