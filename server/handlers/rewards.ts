/**
 * lar/rewards, sent after each update. A whole document's rewards (1.5 MB for 10k lines) wait until the
 * client has pulled the document's diagnostics, so they do not hold those up: the gutter follows the Problems.
 */
import { RewardsMethod } from '../../core/protocol/lsp';
import { rewardsParams } from '../presentation';
import type { Run, ServerState } from '../server-state';

/** How long whole rewards wait for a pull that may never come (a document opened with no editor). */
const WAIT_FOR_PULL_MS = 200;

/** Sends the rewards of lines from `from` on, after any whole rewards still waiting for the same document. */
export function sendRewards(state: ServerState, uri: string, run: Run, from: number): void {
  flushRewards(state, uri);
  void state.connection.sendNotification(RewardsMethod, rewardsParams(run.model, uri, state.label, run.version, from));
}

/** Holds a whole document's rewards until its diagnostics are pulled (or WAIT_FOR_PULL_MS passed). */
export function rewardsAfterPull(state: ServerState, uri: string): void {
  clearTimeout(state.rewardsAfterPull.get(uri));
  const timer = setTimeout(() => flushRewards(state, uri), WAIT_FOR_PULL_MS);
  timer.unref?.();
  state.rewardsAfterPull.set(uri, timer);
}

/** The client pulled the document's last part: its whole rewards go out right after the answer. */
export function pulled(state: ServerState, uri: string): void {
  if (state.rewardsAfterPull.has(uri)) setImmediate(() => flushRewards(state, uri));
}

function flushRewards(state: ServerState, uri: string): void {
  const timer = state.rewardsAfterPull.get(uri);
  if (timer === undefined) return;
  clearTimeout(timer);
  state.rewardsAfterPull.delete(uri);
  const run = state.runs.get(uri);
  if (run) sendRewards(state, uri, run, 0);
}
