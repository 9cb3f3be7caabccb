// Token ids and logprobs recorded per turn, against the scripted server in vLLM's and SGLang's shapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelClient } from '../../../core/model/client';
import type { ModelClientOptions } from '../../../core/model/options';
import { MAX_TURN_IDS } from '../../../core/schema/trajectory';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../../testkit/scripted-server';
import type { ScriptedTurn } from '../../../testkit/scripted-turns';
import { withModelClient } from '../../support/model-server';

const withClient = (
  server: ScriptedServerOptions,
  client: Partial<ModelClientOptions>,
  run: (c: ModelClient, s: ScriptedModelServer) => Promise<void>,
) => withModelClient(server, { retries: 0, recordTokens: true, ...client }, run);

const tools = [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object' } } }];

const script: ScriptedTurn[] = [
  {
    reasoning: 'The test reads a file first.',
    content: 'Reading the test.',
    toolCalls: [{ name: 'read_file', arguments: { path: 't.js' } }],
    fragment: 4,
  },
  { content: 'The test expects 42; the code returns 41.', fragment: 5 },
];

/** Two turns of one conversation; each reply with what the server was asked. */
async function twoTurns(c: ModelClient, s: ScriptedModelServer) {
  const messages: Parameters<ModelClient['complete']>[0]['messages'] = [
    { role: 'user', content: 'fix the failing test' },
  ];
  const shown: string[] = [];
  const first = await c.complete({ messages, tools, onText: (d) => shown.push(d) });
  messages.push(
    {
      role: 'assistant',
      content: first.text,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"t.js"}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'expect(f()).toBe(42)' },
  );
  const second = await c.complete({ messages, tools, onText: (d) => shown.push(d) });
  const bodies = s.requests
    .filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body as Record<string, unknown>);
  return { replies: [first, second], bodies, shown: shown.join('') };
}

for (const flavor of ['vllm', 'sglang'] as const) {
  test(`${flavor}: the ids and logprobs recorded each turn are exactly the ones the server sent`, async () => {
    await withClient({ flavor, script }, {}, async (c, s) => {
      const { replies, bodies, shown } = await twoTurns(c, s);
      assert.equal(s.sentTokens.length, 2, 'the server was asked for ids on both turns');
      replies.forEach((r, i) => {
        assert.equal(r.tokensMissing, undefined);
        assert.deepEqual(r.tokens, s.sentTokens[i], `turn ${i + 1}`);
        assert.ok(r.tokens!.completionIds.length > 0 && r.tokens!.promptIds.length > 0);
      });
      assert.ok(replies[1]!.tokens!.promptIds.length > replies[0]!.tokens!.promptIds.length, 'the prompt grew');
      // The answer itself is read as before: text, reasoning and the call.
      assert.equal(replies[0]!.text, 'Reading the test.');
      assert.equal(replies[0]!.reasoning, 'The test reads a file first.');
      assert.deepEqual(
        replies[0]!.toolCalls.map((t) => [t.name, t.args]),
        [['read_file', { path: 't.js' }]],
      );
      assert.equal(shown, 'Reading the test.The test expects 42; the code returns 41.');
      for (const b of bodies) {
        assert.equal(b.logprobs, true);
        assert.equal(b.return_token_ids, true);
        // vLLM streams the ids; SGLang refuses them on a stream, so each turn is one unstreamed request.
        assert.equal(b.stream === true, flavor === 'vllm');
      }
    });
  });
}

test('a server of unknown make (a gateway in front of vLLM): unstreamed, vLLM top-level prompt ids read', async () => {
  await withClient({ flavor: 'vllm', ownedBy: 'gateway', script }, {}, async (c, s) => {
    const { replies, bodies } = await twoTurns(c, s);
    assert.deepEqual(
      replies.map((r) => r.tokens),
      s.sentTokens,
    );
    assert.ok(bodies.every((b) => b.stream !== true && b.return_prompt_token_ids === true));
  });
});

test('an unstreamed turn slower than the stream idle limit is waited for, not cut as stalled', async () => {
  await withClient({ flavor: 'sglang', answerDelayMs: 400, script }, { idleTimeoutMs: 100 }, async (c, s) => {
    const reply = await c.complete({ messages: [{ role: 'user', content: 'go' }], tools });
    assert.equal(reply.text, 'Reading the test.');
    assert.deepEqual(reply.tokens, s.sentTokens[0]);
  });
});

test('a server that returns no ids (an older SGLang): no tokens, the reason said, the answer still read', async () => {
  await withClient({ flavor: 'sglang', tokenIds: 'ignore', script }, {}, async (c, s) => {
    const { replies } = await twoTurns(c, s);
    for (const r of replies) {
      assert.equal(r.tokens, undefined);
      assert.equal(r.tokensMissing, 'the server returned no token ids');
    }
    assert.equal(replies[1]!.text, 'The test expects 42; the code returns 41.');
    assert.equal(s.sentTokens.length, 0);
  });
});

test('without recordTokens nothing is asked for and nothing recorded', async () => {
  await withClient({ flavor: 'vllm', script }, { recordTokens: false }, async (c, s) => {
    const { replies, bodies } = await twoTurns(c, s);
    assert.ok(replies.every((r) => r.tokens === undefined && r.tokensMissing === undefined));
    assert.ok(bodies.every((b) => b.return_token_ids === undefined && b.logprobs === undefined && b.stream === true));
  });
});

/** A vLLM stream carrying the given ids and logprobs. */
function vllmStream(prompt: unknown, completion: unknown, logprobs: unknown[]): ScriptedTurn {
  return {
    kind: 'raw',
    chunks: [
      {
        id: 'x',
        model: 'LAR-9B',
        prompt_token_ids: prompt,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' } }],
      },
      {
        id: 'x',
        model: 'LAR-9B',
        choices: [
          {
            index: 0,
            delta: { content: 'done' },
            token_ids: completion,
            logprobs: { content: logprobs.map((logprob) => ({ token: 't', logprob, bytes: [], top_logprobs: [] })) },
            finish_reason: 'stop',
          },
        ],
      },
    ],
  };
}

const malformed: [string, ScriptedTurn, RegExp][] = [
  ['a negative id', vllmStream([1, -2, 3], [4], [-0.5]), /prompt id 1 is -2/],
  ['a float id', vllmStream([1, 2], [4.5], [-0.5]), /completion id 0 is 4.5/],
  ['an id of 2^31', vllmStream([2 ** 31], [4], [-0.5]), /prompt id 0 is 2147483648/],
  ['an id as a string', vllmStream([1], ['4'], [-0.5]), /completion id 0 is "4"/],
  ['a positive logprob', vllmStream([1], [4], [0.25]), /logprob 0 is 0.25/],
  ['a logprob that is not a number', vllmStream([1], [4], [null]), /logprob 0 is null/],
  ['fewer logprobs than ids', vllmStream([1], [4, 5], [-0.5]), /2 completion ids but 1 logprobs/],
  ['ids that are not a list', vllmStream({ 0: 1 }, [4], [-0.5]), /prompt_token_ids is not a list/],
  ['no prompt ids', vllmStream(undefined, [4], [-0.5]), /no prompt token ids/],
  [
    'more ids than any turn holds',
    vllmStream(new Array<number>(MAX_TURN_IDS + 1).fill(7), [4], [-0.5]),
    /more than 1048576 entries/,
  ],
];

for (const [what, turn, reason] of malformed) {
  test(`${what}: the ids are dropped with the reason, the answer kept`, async () => {
    await withClient({ flavor: 'vllm', script: [turn] }, {}, async (c) => {
      const reply = await c.complete({ messages: [{ role: 'user', content: 'go' }] });
      assert.equal(reply.tokens, undefined);
      assert.match(reply.tokensMissing ?? '', /^the server's token ids were dropped: /);
      assert.match(reply.tokensMissing ?? '', reason);
      assert.equal(reply.text, 'done');
    });
  });
}
