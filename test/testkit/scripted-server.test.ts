import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { CompletionAssembler, ModelServerError } from '../../core/model/assemble';
import { FORMATS } from '../../core/model/formats';

/** The Hermes reader, as the agent's format module has it. */
const extractTextToolCalls = (content: string) => FORMATS.hermes.parse(content, []);
import { ScriptedModelServer, type ScriptedServerOptions } from '../../testkit/scripted-server';

/** The real openai client over real HTTP against the scripted server. */
async function withServer(
  opts: ScriptedServerOptions,
  run: (client: OpenAI, server: ScriptedModelServer) => Promise<void>,
): Promise<void> {
  const server = new ScriptedModelServer(opts);
  const baseURL = await server.start();
  try {
    await run(new OpenAI({ apiKey: opts.apiKey ?? 'none', baseURL, maxRetries: 0, timeout: 5000 }), server);
  } finally {
    await server.stop();
  }
}

async function streamed(client: OpenAI, model = 'LAR-9B') {
  const stream = await client.chat.completions.create({
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'fix the test' }],
    tools: [
      {
        type: 'function',
        function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
    ],
  });
  const a = new CompletionAssembler();
  for await (const chunk of stream) a.push(chunk);
  return a;
}

test('streamed tool calls reach the assembler through the real openai client', async () => {
  await withServer(
    {
      script: [
        {
          content: 'Reading the test first.',
          toolCalls: [
            { name: 'read_file', arguments: { path: 'test/sum.test.js' } },
            { name: 'list_files', arguments: {} },
          ],
          fragment: 3,
        },
      ],
    },
    async (client, server) => {
      const a = await streamed(client);
      assert.equal(a.finished, true);
      const r = a.result();
      assert.equal(r.choices[0]!.content, 'Reading the test first.');
      assert.deepEqual(
        r.choices[0]!.toolCalls.map((c) => [c.name, c.args]),
        [
          ['read_file', { path: 'test/sum.test.js' }],
          ['list_files', {}],
        ],
      );
      assert.equal(r.choices[0]!.finishReason, 'tool_calls');
      assert.ok(r.usage && r.usage.completion_tokens! > 0);
      const sent = server.requests.at(-1)!.body as { tools: unknown[]; stream: boolean };
      assert.equal(sent.stream, true);
      assert.equal(sent.tools.length, 1);
    },
  );
});

test('models are listed, and a non-streaming reply carries its tool calls', async () => {
  await withServer(
    { models: ['LAR-27B', 'LAR-9B'], script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }] },
    async (client) => {
      const models = [];
      for await (const m of client.models.list()) models.push(m.id);
      assert.deepEqual(models, ['LAR-27B', 'LAR-9B']);
      const r = await client.chat.completions.create({ model: 'LAR-27B', messages: [{ role: 'user', content: 'x' }] });
      assert.equal(r.choices[0]!.message.tool_calls?.[0]?.type, 'function');
      const call = r.choices[0]!.message.tool_calls[0] as { function: { name: string; arguments: string } };
      assert.deepEqual([call.function.name, JSON.parse(call.function.arguments)], ['submit', { summary: 'done' }]);
    },
  );
});

test('a server without a tool parser puts <tool_call> text in the content, and it is recovered', async () => {
  await withServer(
    {
      script: [
        {
          content: 'Let me see.',
          toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }],
          toolCallsAsText: true,
        },
      ],
    },
    async (client) => {
      const r = (await streamed(client)).result();
      assert.deepEqual(r.choices[0]!.toolCalls, []);
      const text = extractTextToolCalls(r.choices[0]!.content);
      assert.equal(text.text, 'Let me see.');
      assert.deepEqual(
        text.calls.map((c) => [c.name, c.args]),
        [['read_file', { path: 'a.ts' }]],
      );
    },
  );
});

test('malformed tool-call JSON arrives intact and becomes an argsError', async () => {
  await withServer(
    { script: [{ toolCalls: [{ name: 'write_file', arguments: '{"path": "a", "content": ' }] }] },
    async (client) => {
      const call = (await streamed(client)).result().choices[0]!.toolCalls[0]!;
      assert.equal(call.name, 'write_file');
      assert.equal(call.argumentsText, '{"path": "a", "content": ');
      assert.match(call.argsError!, /JSON/);
    },
  );
});

test('errors: wrong key, unknown model, error bodies in both shapes, and an error inside the stream', async () => {
  await withServer({ apiKey: 'secret', script: [{ content: 'hi' }] }, async (client, server) => {
    const wrongKey = new OpenAI({ apiKey: 'guess', baseURL: server.baseURL, maxRetries: 0 });
    await assert.rejects(
      async () => wrongKey.models.list(),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 401 && /invalid API key/.test(e.message),
    );
    const models = [];
    for await (const m of client.models.list()) models.push(m.id);
    assert.deepEqual(models, ['LAR-9B'], 'the right key is let in');
  });
  await withServer({ script: [{ content: 'hi' }] }, async (client) => {
    await assert.rejects(
      streamed(client, 'GPT-9'),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 404 && /does not exist/.test(e.message),
    );
  });
  await withServer(
    {
      script: [
        {
          kind: 'http_error',
          status: 429,
          body: { error: { message: 'rate limited', type: 'rate_limit', code: 429 } },
        },
      ],
    },
    async (client) => {
      await assert.rejects(streamed(client), (e: unknown) => e instanceof OpenAI.APIError && e.status === 429);
    },
  );
  await withServer(
    { script: [{ kind: 'stream_error', after: 'Working on', error: { message: 'CUDA out of memory', code: 500 } }] },
    async (client) => {
      await assert.rejects(
        streamed(client),
        (e: unknown) =>
          (e instanceof OpenAI.APIError || e instanceof ModelServerError) &&
          /CUDA out of memory/.test((e as Error).message),
      );
    },
  );
});

test('a stream cut off mid-way does not pass for a finished reply', async () => {
  await withServer({ script: [{ kind: 'truncate', after: 'partial answ' }] }, async (client) => {
    const a = new CompletionAssembler();
    await assert.rejects(
      async () => {
        const stream = await client.chat.completions.create({
          model: 'LAR-9B',
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        });
        for await (const chunk of stream) a.push(chunk);
        // Node's fetch reports a body cut short as TypeError("terminated"); the
        // openai client passes it on as it is. The agent's client must treat it as a dropped connection.
      },
      (e: unknown) => e instanceof Error && /terminated|connection/i.test(e.message),
    );
    assert.equal(a.finished, false);
    assert.equal(a.result().choices[0]!.content, 'partial answ', 'what arrived is kept');
  });
});

test('usage comes in a final chunk only when the request asks for it, with the prefix cache when it is reported', async () => {
  await withServer({ script: [{ content: 'one' }, { content: 'two' }, { content: 'three' }], promptCache: true }, async (client) => {
    const ask = async (messages: { role: 'user' | 'assistant'; content: string }[], includeUsage: boolean) => {
      const stream = await client.chat.completions.create({
        model: 'LAR-9B',
        stream: true,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
        messages,
      });
      const a = new CompletionAssembler();
      for await (const chunk of stream) a.push(chunk);
      return a.result().usage;
    };
    const first = [{ role: 'user' as const, content: 'fix the test' }];
    assert.equal(await ask(first, false), undefined);
    const u1 = await ask(first, true);
    assert.equal(u1?.prompt_tokens_details?.cached_tokens, u1?.prompt_tokens, 'the same prompt again is all cached');
    const u2 = await ask([...first, { role: 'assistant', content: 'one' }, { role: 'user', content: 'go on' }], true);
    assert.equal(u2?.prompt_tokens_details?.cached_tokens, u1?.prompt_tokens);
    assert.ok(u2!.prompt_tokens! > u1!.prompt_tokens!);
  }); // prettier-ignore
});
