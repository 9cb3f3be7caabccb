import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { ModelClient } from '../../../core/model/client';
import { ModelError } from '../../../core/model/errors';
import type { ModelClientOptions } from '../../../core/model/options';
import { redact } from '../../../core/secrets/redact';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../../testkit/scripted-server';
import { withModelClient } from '../../support/model-server';

const withClient = (
  server: ScriptedServerOptions,
  client: Partial<ModelClientOptions>,
  run: (c: ModelClient, s: ScriptedModelServer) => Promise<void>,
) => withModelClient(server, { ...client }, run);

const ask = {
  messages: [{ role: 'user' as const, content: 'fix the failing test' }],
  tools: [{ type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object' } } }],
};

test('a streamed turn: text as it arrives, tool calls parsed, the model taken from /v1/models', async () => {
  await withClient(
    {
      models: ['LAR-27B'],
      script: [
        { content: 'Reading the test.', toolCalls: [{ name: 'read_file', arguments: { path: 't.js' } }], fragment: 4 },
      ],
    },
    {},
    async (c, s) => {
      const pieces: string[] = [];
      const reply = await c.complete({ ...ask, onText: (d) => pieces.push(d) });
      assert.equal(reply.model, 'LAR-27B');
      assert.equal(reply.text, 'Reading the test.');
      assert.ok(pieces.length > 1, 'the text streamed in pieces');
      assert.equal(pieces.join(''), 'Reading the test.');
      assert.deepEqual(reply.toolCalls, [
        { id: reply.toolCalls[0]!.id, name: 'read_file', args: { path: 't.js' }, via: 'native' },
      ]);
      assert.equal(reply.attempts, 1);
      assert.equal((s.requests.at(-1)!.body as { tool_choice: string }).tool_choice, 'auto');
    },
  );
});

test('tool_choice "required" when asked; the served models with the context length the server reports', async () => {
  await withClient(
    {
      models: ['LAR-9B', 'LAR-27B'],
      contextLength: 32_768,
      script: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }] }],
    },
    {},
    async (c, s) => {
      assert.deepEqual(await c.servedModels(), [
        { id: 'LAR-9B', contextLength: 32_768 },
        { id: 'LAR-27B', contextLength: 32_768 },
      ]);
      await c.complete({ ...ask, toolChoice: 'required' });
      assert.equal((s.requests.at(-1)!.body as { tool_choice: string }).tool_choice, 'required');
    },
  );
  await withClient({ script: [] }, {}, async (c) => {
    assert.deepEqual(await c.servedModels(), [{ id: 'LAR-9B' }], 'no max_model_len, no context length');
  });
});

test('429 and 500 are retried with backoff; the third answer is used', async () => {
  await withClient(
    {
      script: [
        { kind: 'http_error', status: 429, body: { object: 'error', message: 'busy', code: 429 } },
        { kind: 'http_error', status: 500, body: { error: { message: 'oops', code: 500 } } },
        { content: 'ok' },
      ],
    },
    {},
    async (c) => {
      const reply = await c.complete(ask);
      assert.equal(reply.text, 'ok');
      assert.equal(reply.attempts, 3);
    },
  );
});

test('each failure says what to do: 401, unknown model, no tool parser, unreachable', async () => {
  await withClient(
    { apiKey: 'right-key-123', script: [{ content: 'x' }] },
    { apiKey: 'sk-wrong-key-456789' },
    async (c) => {
      await assert.rejects(
        c.complete(ask),
        (e: unknown) =>
          e instanceof ModelError &&
          e.kind === 'unauthorized' &&
          /API key/.test(e.message) &&
          !e.message.includes('wrong-key'),
      );
    },
  );
  await withClient({ models: ['LAR-9B'], script: [{ content: 'x' }] }, { model: 'LAR-1T' }, async (c) => {
    await assert.rejects(
      c.complete(ask),
      (e: unknown) => e instanceof ModelError && e.kind === 'model_not_found' && /LAR-1T/.test(e.message),
    );
  });
  const noParser = {
    object: 'error',
    message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    type: 'BadRequestError',
    code: 400,
  };
  await withClient({ script: [{ kind: 'http_error', status: 400, body: noParser }] }, {}, async (c) => {
    await assert.rejects(
      c.complete(ask),
      (e: unknown) => e instanceof ModelError && e.kind === 'no_tool_parser' && /--tool-call-parser/.test(e.message),
    );
  });
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => resolve(p));
    });
  });
  const down = new ModelClient({ endpoint: `http://127.0.0.1:${port}/v1`, model: 'LAR-9B', retries: 1, backoffMs: 5 });
  await assert.rejects(
    down.complete(ask),
    (e: unknown) => e instanceof ModelError && e.kind === 'unreachable' && /Is the server running/.test(e.message),
  );
});

test('a stalled stream is stopped by the idle timeout; a dropped one is not taken for an answer', async () => {
  await withClient(
    { script: [{ kind: 'stall', after: 'thinking', ms: 2000 }] },
    { idleTimeoutMs: 200, retries: 0 },
    async (c) => {
      await assert.rejects(c.complete(ask), (e: unknown) => e instanceof ModelError && e.kind === 'stalled');
    },
  );
  await withClient({ script: [{ kind: 'truncate', after: 'half an ans' }] }, { retries: 0 }, async (c) => {
    await assert.rejects(c.complete(ask), (e: unknown) => e instanceof ModelError && e.kind === 'dropped');
  });
  // Once text has streamed, a drop is not retried (the model would repeat itself).
  await withClient(
    { script: [{ kind: 'truncate', after: 'half' }, { content: 'second' }] },
    { retries: 3 },
    async (c, s) => {
      await assert.rejects(c.complete(ask), (e: unknown) => e instanceof ModelError && e.kind === 'dropped');
      assert.equal(s.requests.filter((r) => r.path === '/v1/chat/completions').length, 1);
    },
  );
});

test('an error inside the stream and a cancelled request', async () => {
  await withClient(
    { script: [{ kind: 'stream_error', error: { message: 'CUDA out of memory', code: 500 } }] },
    { retries: 0 },
    async (c) => {
      await assert.rejects(
        c.complete(ask),
        (e: unknown) => e instanceof ModelError && /CUDA out of memory/.test(e.message),
      );
    },
  );
  await withClient({ script: [{ kind: 'stall', after: 'thinking', ms: 2000 }] }, {}, async (c) => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await assert.rejects(
      c.complete({ ...ask, signal: ac.signal }),
      (e: unknown) => e instanceof ModelError && e.kind === 'cancelled',
    );
  });
});

test('text tool calls: recovered in native mode and in hermes mode; bad JSON becomes argsError', async () => {
  await withClient(
    {
      script: [
        { content: 'Looking.', toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }], toolCallsAsText: true },
      ],
    },
    {},
    async (c) => {
      const r = await c.complete(ask);
      assert.equal(r.text, 'Looking.');
      assert.deepEqual(
        r.toolCalls.map((t) => [t.name, t.args, t.via]),
        [['read_file', { path: 'a' }, 'text']],
      );
    },
  );
  await withClient(
    { script: [{ toolCalls: [{ name: 'write_file', arguments: '{"path": ' }] }] },
    { toolFormat: 'hermes' },
    async (c, s) => {
      const r = await c.complete(ask);
      assert.equal(r.toolCalls[0]!.name, 'write_file');
      assert.match(r.toolCalls[0]!.argsError!, /JSON/);
      assert.equal(r.toolCalls[0]!.argsText, '{"path": ', 'what the model wrote is kept for whoever is told');
      assert.equal(
        (s.requests.at(-1)!.body as { tools?: unknown }).tools,
        undefined,
        'hermes mode sends no tools array',
      );
    },
  );
  await withClient(
    { script: [{ toolCalls: [{ name: 'read_file', arguments: '{"path": ' }], toolCallsAsText: true }] },
    {},
    async (c) => {
      const r = await c.complete(ask);
      assert.match(r.toolCalls[0]!.argsError!, /JSON/);
      assert.equal(r.toolCalls[0]!.argsText, '{"name": "read_file", "arguments": {"path": }');
    },
  );
  // In native mode a text call must name a tool that was offered: anything else is prose.
  await withClient(
    { script: [{ content: 'See <tool_call>{"name": "write_file", "arguments": {}}</tool_call>.' }] },
    {},
    async (c) => {
      const r = await c.complete(ask);
      assert.deepEqual(r.toolCalls, []);
      assert.equal(r.text, 'See <tool_call>{"name": "write_file", "arguments": {}}</tool_call>.');
    },
  );
});

test('test connection reports native tool calls, a missing tool parser, or what failed', async () => {
  await withClient(
    {
      models: ['LAR-9B'],
      contextLength: 32768,
      script: [{ toolCalls: [{ name: 'ping', arguments: { echo: 'lar' } }] }],
    },
    {},
    async (c) => {
      const r = await c.testConnection();
      assert.deepEqual(
        {
          ok: r.ok,
          models: r.models,
          model: r.model,
          toolCalls: r.toolCalls,
          problems: r.problems,
          window: r.contextWindow,
          suggested: r.suggestedFormat,
        },
        {
          ok: true,
          models: ['LAR-9B'],
          model: 'LAR-9B',
          toolCalls: 'native',
          problems: [],
          window: { tokens: 32768, source: 'server' },
          suggested: 'auto',
        },
      );
    },
  );
  await withClient(
    {
      contextLength: 8192,
      script: [{ toolCalls: [{ name: 'ping', arguments: { echo: 'lar' } }], toolCallsAsText: 'qwen3_5' }],
    },
    {},
    async (c) => {
      const r = await c.testConnection();
      assert.equal(r.toolCalls, 'text');
      assert.equal(r.textFormat, 'qwen3_5');
      assert.equal(r.suggestedFormat, 'qwen3_5');
      assert.match(r.problems[0]!, /wrote its tool call as text \(qwen3_5\).*--tool-call-parser qwen3_coder/);
    },
  );
  // No window anywhere: the default is assumed and the report says how to set it.
  await withClient({ script: [{ toolCalls: [{ name: 'ping', arguments: { echo: 'lar' } }] }] }, {}, async (c) => {
    const r = await c.testConnection();
    assert.deepEqual(r.contextWindow, { tokens: 32768, source: 'default' });
    assert.match(r.problems.join(' '), /does not say how long the model's context window is.*--context-length/);
  });
  await withClient({ apiKey: 'k1234567', script: [] }, { apiKey: 'nope-nope' }, async (c) => {
    const r = await c.testConnection();
    assert.equal(r.ok, false);
    assert.equal(r.error, 'unauthorized');
  });
});

test('secrets never reach a message', () => {
  assert.equal(
    redact('failed with key sk-abcdef123456 and Bearer abcdefghijkl', undefined),
    'failed with key sk-*** and Bearer ***',
  );
  assert.equal(redact('key my-secret-value leaked', 'my-secret-value'), 'key *** leaked');
  assert.equal(
    redact('cannot construct http://user:pass@10.0.0.2:8000/v1/models', undefined),
    'cannot construct http://***@10.0.0.2:8000/v1/models',
  );
});

test('the demo model answers Test Connection as a tool-calling model does, in native and text formats', async () => {
  const { startDemoModel } = await import('../../../devtools/demo-model.js');
  const { server, endpoint } = await startDemoModel();
  try {
    for (const toolFormat of ['auto', 'qwen3_5'] as const) {
      const r = await new ModelClient({ endpoint, toolFormat, retries: 0 }).testConnection();
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.toolCalls, 'native', 'the demo answers with a structured call');
    }
  } finally {
    await server.stop();
  }
});
