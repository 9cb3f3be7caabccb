// The scripted server's token ids on the wire, in vLLM's and SGLang's own shapes, read with plain HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../testkit/scripted-server';

async function withServer(opts: ScriptedServerOptions, run: (url: string, s: ScriptedModelServer) => Promise<void>) {
  const s = new ScriptedModelServer(opts);
  const url = await s.start();
  try {
    await run(url, s);
  } finally {
    await s.stop();
  }
}

const ask = (extra: object) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'LAR-9B', messages: [{ role: 'user', content: 'fix the test' }], ...extra }),
});

/** The data chunks of a streamed answer. */
async function chunks(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .map((e) => e.replace(/^data: /, ''))
    .filter((d) => d && d !== '[DONE]')
    .map((d) => JSON.parse(d) as Record<string, unknown>);
}

type Choice = { token_ids?: number[]; prompt_token_ids?: number[]; logprobs?: { content: { logprob: number }[] } };

test('vLLM streamed: prompt ids once in the first chunk, each chunk its own ids and logprobs', async () => {
  await withServer({ flavor: 'vllm', script: [{ content: 'All tests pass now.', fragment: 6 }] }, async (url, s) => {
    const res = await fetch(`${url}/chat/completions`, ask({ stream: true, logprobs: true, return_token_ids: true }));
    const all = await chunks(res);
    const sent = s.sentTokens[0]!;
    assert.deepEqual(all[0]!.prompt_token_ids, sent.promptIds);
    assert.ok(
      all.slice(1).every((c) => c.prompt_token_ids === undefined),
      'the prompt ids come once',
    );
    const choices = all.slice(1).map((c) => (c.choices as Choice[])[0]!);
    assert.ok(choices.filter((c) => c.token_ids!.length > 0).length > 1, 'ids spread over the chunks');
    assert.deepEqual(
      choices.flatMap((c) => c.token_ids),
      sent.completionIds,
    );
    assert.deepEqual(
      choices.flatMap((c) => c.logprobs!.content.map((l) => l.logprob)),
      sent.logprobs,
    );
  });
});

test('vLLM unstreamed: prompt ids beside the choices; SGLang unstreamed: on the choice', async () => {
  for (const flavor of ['vllm', 'sglang'] as const) {
    await withServer({ flavor, script: [{ content: 'Done.' }] }, async (url, s) => {
      const body = (await (
        await fetch(`${url}/chat/completions`, ask({ logprobs: true, return_token_ids: true }))
      ).json()) as Record<string, unknown> & { choices: Choice[]; usage: { prompt_tokens: number } };
      const sent = s.sentTokens[0]!;
      const choice = body.choices[0]!;
      assert.deepEqual(flavor === 'vllm' ? body.prompt_token_ids : choice.prompt_token_ids, sent.promptIds);
      assert.equal(flavor === 'vllm' ? choice.prompt_token_ids : body.prompt_token_ids, undefined);
      assert.deepEqual(choice.token_ids, sent.completionIds);
      assert.deepEqual(
        choice.logprobs!.content.map((l) => l.logprob),
        sent.logprobs,
      );
      assert.equal(sent.promptIds.length, body.usage.prompt_tokens, 'as many prompt ids as usage counts');
    });
  }
});

test('SGLang refuses ids on a stream, as it does; a server that ignores the fields sends none', async () => {
  await withServer({ flavor: 'sglang', script: [{ content: 'Done.' }] }, async (url) => {
    const res = await fetch(`${url}/chat/completions`, ask({ stream: true, return_token_ids: true }));
    assert.equal(res.status, 400);
    assert.match(
      ((await res.json()) as { message: string }).message,
      /return_token_ids is not supported with streaming/,
    );
  });
  await withServer({ flavor: 'sglang', tokenIds: 'ignore', script: [{ content: 'Done.' }] }, async (url, s) => {
    const body = (await (await fetch(`${url}/chat/completions`, ask({ return_token_ids: true }))).json()) as {
      choices: Choice[];
    };
    assert.equal(body.choices[0]!.token_ids, undefined);
    assert.equal(body.choices[0]!.prompt_token_ids, undefined);
    assert.equal(s.sentTokens.length, 0);
  });
});
