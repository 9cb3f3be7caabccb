import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_RUN_PROMPT_IDS, TokenTurns, fullTurns } from '../../../core/export/token-turns';
import type { TokensEvent } from '../../../core/schema/trajectory';

const ids = (turn: number, promptIds: number[], completionIds: number[], promptShared?: number): TokensEvent => ({
  type: 'tokens',
  turn,
  ...(promptShared !== undefined ? { promptShared } : {}),
  promptIds,
  completionIds,
  logprobs: completionIds.map(() => -1),
});

test('prompts are put back whole from the turn before; a turn without ids starts over', () => {
  const turns = fullTurns([
    { line: 2, event: ids(1, [1, 2], [3]) },
    { line: 4, event: ids(2, [9], [4], 3) },
    { line: 6, event: { type: 'tokens', turn: 3, missing: 'none' } },
    { line: 8, event: ids(4, [5, 6], [7]) },
  ]);
  assert.deepEqual(
    turns.map((t) => [t.turn, t.promptIds, t.completionIds]),
    [
      [1, [1, 2], [3]],
      [2, [1, 2, 3, 9], [4]],
      [4, [5, 6], [7]],
    ],
  );
});

test('a promptShared past the turn before is refused, and so is every later line built on it', () => {
  const walk = new TokenTurns();
  walk.push(ids(1, [1, 2], [3]), 2);
  assert.throws(() => walk.push(ids(2, [9], [4], 4), 4), /line 4: promptShared is 4, but the turn before has 3 ids/);
  assert.throws(() => walk.push(ids(3, [9], [4], 1), 6), /line 6: its prompt builds on line 4/);
  // After a missing turn nothing is shared.
  assert.throws(
    () => fullTurns([{ line: 2, event: ids(1, [1], [2], 1) }]),
    /promptShared is 1, but the turn before has 0/,
  );
});

test('a file whose prompts would take gigabytes once put back is refused', () => {
  const walk = new TokenTurns();
  const big = Array.from({ length: 2 ** 20 }, (_, i) => i % 1000);
  walk.push(ids(1, big, [1]), 2);
  let line = 2;
  assert.throws(
    () => {
      for (let turn = 2; turn < 200; turn++) walk.push(ids(turn, [], [1], 2 ** 20), (line += 2));
    },
    new RegExp(`the run's prompts hold more than ${MAX_RUN_PROMPT_IDS} token ids in all`),
  );
  assert.ok(line < 2 + 2 * 70, `refused at line ${line}`);
});
