import { test } from 'node:test';
import assert from 'node:assert/strict';
import { turnUsage } from '../../../core/model/usage';
import { MAX_TURN_TOKENS, TurnUsage } from '../../../core/schema/trajectory';
import type { Usage } from '../../../core/model/assemble';

test("a turn's token counts are the server's usage, cached tokens from prompt_tokens_details", () => {
  assert.deepEqual(turnUsage({ prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280 }), {
    prompt: 1200,
    completion: 80,
  });
  assert.deepEqual(
    turnUsage({ prompt_tokens: 1200, completion_tokens: 80, prompt_tokens_details: { cached_tokens: 1024 } }),
    { prompt: 1200, completion: 80, cached: 1024 },
  );
  // vLLM without --enable-prompt-tokens-details sends null details.
  assert.deepEqual(turnUsage({ prompt_tokens: 5, completion_tokens: 0, prompt_tokens_details: null }), {
    prompt: 5,
    completion: 0,
  });
});

test('counts a server did not give, or gave implausibly, are never recorded', () => {
  assert.equal(turnUsage(undefined), undefined);
  const bad: unknown[] = [{}, { prompt_tokens: 10 }, { completion_tokens: 3 }];
  for (const n of [-1, 1.5, Number.NaN, Infinity, MAX_TURN_TOKENS + 1, '10', null]) {
    bad.push({ prompt_tokens: n, completion_tokens: 3 }, { prompt_tokens: 10, completion_tokens: n });
  }
  for (const u of bad) assert.equal(turnUsage(u as Usage), undefined, JSON.stringify(u));
  // A cached count that is not a plausible part of the prompt is left out; the rest stays.
  for (const cached of [11, -1, 2.5, 'x', null]) {
    const u = { prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: cached } };
    assert.deepEqual(turnUsage(u as Usage), { prompt: 10, completion: 3 }, JSON.stringify(cached));
  }
  assert.deepEqual(turnUsage({ prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: 'x' } as Usage), {
    prompt: 10,
    completion: 3,
  });
});

test('the trajectory refuses token counts no server could have sent', () => {
  assert.equal(TurnUsage.safeParse({ prompt: 10, completion: 3, cached: 10 }).success, true);
  for (const u of [
    { prompt: 10, completion: 3, cached: 11 },
    { prompt: -1, completion: 3 },
    { prompt: 10, completion: 0.5 },
    { prompt: MAX_TURN_TOKENS + 1, completion: 0 },
    { prompt: 10 },
  ])
    assert.equal(TurnUsage.safeParse(u).success, false, JSON.stringify(u));
});
