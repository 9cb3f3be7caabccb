// The LAR models for other extensions: the caller's messages and tools become
// the OpenAI request the server receives, and the real ModelClient's streamed
// answer over HTTP (ScriptedModelServer) comes back as text deltas and tool
// calls for the caller to run, with cancellation and failures in words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { ModelClient } from '../../../core/model/client';
import type { ModelClientOptions } from '../../../core/model/options';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../../testkit/scripted-server';
import {
  LM_VENDOR,
  LmRole,
  LmToolMode,
  answerChat,
  estimateTokens,
  failureMessage,
  listChatModels,
  modelInformation,
  toChatMessages,
  toChatTools,
  type ChatRequest,
  type LmMessage,
  type LmToolCall,
} from '../../../extension/lm/bridge';
import { withModelClient } from '../../support/model-server';

// Parts as the editor hands them over (class instances with these fields).
const text = (value: string) => ({ value });
const call = (callId: string, name: string, input: object) => ({ callId, name, input });
const result = (callId: string, ...values: string[]) => ({ callId, content: values.map(text) });
const user = (...content: unknown[]): LmMessage => ({ role: LmRole.User, content });
const assistant = (...content: unknown[]): LmMessage => ({ role: LmRole.Assistant, content });

const readFile = {
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

test('messages: tool calls become assistant tool_calls, tool results role "tool" messages before the user text; unknown parts are left out', () => {
  const messages = toChatMessages([
    { role: LmRole.System, content: [text('Be brief.')] },
    user(text('What is in '), text('a.ts?'), { mimeType: 'image/png', data: new Uint8Array(3) }),
    assistant(
      text('Reading it.'),
      call('c1', 'read_file', { path: 'a.ts' }),
      call('c2', 'read_file', { path: 'b.ts' }),
    ),
    user(result('c1', 'export ', 'const a = 1;'), result('c2', 'no such file'), text('And now?')),
    assistant(call('c3', 'read_file', { path: 'c.ts' }), call('c4', 'read_file', { path: 'd.ts' })),
    // A result with nothing but a prompt-tsx part still answers its call.
    user(result('c3', 'x'), { callId: 'c4', content: [{ some: 'prompt-tsx' }] }),
  ]);
  assert.deepEqual(messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is in a.ts?' },
    {
      role: 'assistant',
      content: 'Reading it.',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
        { id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.ts"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' },
    { role: 'tool', tool_call_id: 'c2', content: 'no such file' },
    { role: 'user', content: 'And now?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c3', type: 'function', function: { name: 'read_file', arguments: '{"path":"c.ts"}' } },
        { id: 'c4', type: 'function', function: { name: 'read_file', arguments: '{"path":"d.ts"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c3', content: 'x' },
    { role: 'tool', tool_call_id: 'c4', content: '' },
  ]);
});

test('tools: name, description and schema as OpenAI function tools; no schema means an empty object', () => {
  assert.deepEqual(toChatTools([readFile, { name: 'now', description: 'The time.' }]), [
    {
      type: 'function',
      function: { name: 'read_file', description: 'Reads a file.', parameters: readFile.inputSchema },
    },
    {
      type: 'function',
      function: { name: 'now', description: 'The time.', parameters: { type: 'object', properties: {} } },
    },
  ]);
});

test('streamed text hides calls written as text and reasoning, even when a tag is split across deltas', async () => {
  const pieces = [
    '<thi',
    'nk>plan</think>Let me ',
    'look.<',
    'tool_',
    'call>{"name": "read_file", "arguments": {}}</tool',
    '_call> Done',
    ' <',
    'b>bold</b>',
  ];
  await withServer({ script: [{ content: pieces.join(''), fragment: 3 }] }, {}, async (c) => {
    const { out, sink } = collect();
    await answerChat(c, native({ messages: [user(text('go'))], tools: [readFile] }), sink);
    assert.equal(out.texts.join(''), 'Let me look. Done <b>bold</b>');
    assert.deepEqual(
      out.calls.map((x) => x.name),
      ['read_file'],
    );
  });
});

test('model information: the served models, the configured one first, input budget from max_model_len less the answer', () => {
  const info = modelInformation([{ id: '/models/LAR-9B', contextLength: 65_536 }, { id: 'LAR-27B' }], {
    endpoint: 'http://user:pw@gpu-box:30000/v1',
    maxOutputTokens: 4096,
    preferred: 'LAR-27B',
  });
  assert.deepEqual(
    info.map((m) => [
      m.id,
      m.name,
      m.family,
      m.version,
      m.maxInputTokens,
      m.maxOutputTokens,
      m.capabilities.toolCalling,
    ]),
    [
      ['LAR-27B', 'LAR-27B', 'LAR-27B', 'LAR-27B', 32_768 - 4096, 4096, true],
      ['/models/LAR-9B', 'LAR-9B', 'LAR-9B', '/models/LAR-9B', 65_536 - 4096, 4096, true],
    ],
  );
  assert.equal(info[0]!.detail, 'gpu-box:30000');
  assert.ok(
    info.every((m) => !m.tooltip.includes('pw')),
    'credentials in the endpoint stay out of the UI',
  );
});

test('token counts are estimates that grow with the text, plus framing per message', () => {
  const words = (n: number) => Array.from({ length: n }, () => 'word').join(' ');
  assert.ok(estimateTokens(words(100)) > estimateTokens(words(50)));
  assert.ok(estimateTokens(words(100)) >= 100 && estimateTokens(words(100)) <= 300, String(estimateTokens(words(100))));
  assert.equal(estimateTokens(user(text(words(10)))), estimateTokens(words(10)) + 5);
  // A tool call counts its name and JSON input; a result its text.
  assert.ok(
    estimateTokens(assistant(call('c', 'read_file', { path: 'a' }))) > estimateTokens(assistant(call('c', 'x', {}))),
  );
  assert.equal(estimateTokens(user(result('c', words(10)))), estimateTokens(words(10)) + 5);
});

test('the manifest contributes the vendor the provider registers, and activates on it', () => {
  const manifest = JSON.parse(readFileSync(resolve(__dirname, '../../../../package.json'), 'utf8')) as {
    activationEvents: string[];
    contributes: {
      languageModelChatProviders: { vendor: string; displayName: string; managementCommand?: string }[];
      commands: { command: string }[];
    };
  };
  const contributed = manifest.contributes.languageModelChatProviders.find((p) => p.vendor === LM_VENDOR);
  assert.ok(contributed?.displayName);
  assert.ok(manifest.activationEvents.includes(`onLanguageModelChatProvider:${LM_VENDOR}`));
  if (contributed.managementCommand)
    assert.ok(
      manifest.contributes.commands.some((c) => c.command === contributed.managementCommand),
      'the management command is a contributed command',
    );
});

// --- end to end: the bridge through the real ModelClient over HTTP ---

const withServer = (
  server: ScriptedServerOptions,
  client: Partial<ModelClientOptions>,
  run: (c: ModelClient, s: ScriptedModelServer) => Promise<void>,
) => withModelClient(server, { retries: 0, model: 'LAR-9B', ...client }, run);

function collect() {
  const out = { texts: [] as string[], calls: [] as LmToolCall[] };
  return { out, sink: { text: (d: string) => out.texts.push(d), toolCall: (c: LmToolCall) => out.calls.push(c) } };
}

const native = (req: Omit<ChatRequest, 'toolFormat'>): ChatRequest => ({ ...req, toolFormat: 'native' });

test('a streamed text reply arrives in pieces; the server got the converted conversation', async () => {
  await withServer(
    { script: [{ content: 'The test fails because sum subtracts.', fragment: 5 }] },
    {},
    async (c, s) => {
      const { out, sink } = collect();
      const history = [
        user(text('Why does it fail?')),
        assistant(call('c1', 'read_file', { path: 'sum.js' })),
        user(result('c1', 'a - b')),
      ];
      await answerChat(c, native({ messages: history, tools: [readFile], toolMode: LmToolMode.Auto }), sink);
      assert.ok(out.texts.length > 1, 'streamed, not in one piece');
      assert.equal(out.texts.join(''), 'The test fails because sum subtracts.');
      assert.deepEqual(out.calls, []);
      const body = s.requests.at(-1)!.body as {
        messages: unknown[];
        tools: unknown[];
        tool_choice: string;
        stream: boolean;
      };
      assert.equal(body.stream, true);
      assert.deepEqual(body.messages, toChatMessages(history));
      assert.deepEqual(body.tools, toChatTools([readFile]));
      assert.equal(body.tool_choice, 'auto');
    },
  );
});

test('a native tool call split across deltas comes back as one call with parsed input; Required is sent as tool_choice "required"', async () => {
  await withServer(
    {
      script: [
        { toolCalls: [{ id: 'call_abc', name: 'read_file', arguments: { path: 'test/sum.test.js' } }], fragment: 3 },
      ],
    },
    {},
    async (c, s) => {
      const { out, sink } = collect();
      await answerChat(
        c,
        native({ messages: [user(text('Read the test.'))], tools: [readFile], toolMode: LmToolMode.Required }),
        sink,
      );
      assert.deepEqual(out.calls, [{ callId: 'call_abc', name: 'read_file', input: { path: 'test/sum.test.js' } }]);
      assert.equal(out.texts.join(''), '');
      assert.equal((s.requests.at(-1)!.body as { tool_choice: string }).tool_choice, 'required');
    },
  );
});

test('a server without a tool parser: the <tool_call> text becomes a tool call with a fresh id, and is not shown as text', async () => {
  const turn = {
    content: 'Reading.',
    toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }],
    toolCallsAsText: true,
    fragment: 4,
  };
  await withServer({ script: [turn, turn] }, {}, async (c) => {
    const first = collect();
    await answerChat(c, native({ messages: [user(text('go'))], tools: [readFile] }), first.sink);
    assert.equal(first.out.texts.join('').trim(), 'Reading.');
    assert.deepEqual(
      first.out.calls.map((x) => [x.name, x.input]),
      [['read_file', { path: 'a.ts' }]],
    );
    const second = collect();
    await answerChat(c, native({ messages: [user(text('again'))], tools: [readFile] }), second.sink);
    assert.match(first.out.calls[0]!.callId, /^[A-Za-z0-9]{9}$/);
    assert.notEqual(first.out.calls[0]!.callId, second.out.calls[0]!.callId, 'ids stay unique across turns');
  });
});

test('a call with arguments that are not JSON is not passed on as a tool call: the text says what the model wrote', async () => {
  await withServer(
    {
      script: [
        {
          toolCalls: [
            { name: 'write_file', arguments: '{"path": "a", "content": ' },
            { name: 'read_file', arguments: { path: 'b' } },
          ],
        },
      ],
    },
    {},
    async (c) => {
      const { out, sink } = collect();
      await answerChat(c, native({ messages: [user(text('write'))], tools: [readFile] }), sink);
      assert.deepEqual(
        out.calls.map((x) => x.name),
        ['read_file'],
        'the well-formed call still goes through',
      );
      const note = out.texts.join('');
      assert.match(note, /"write_file" was not passed on/);
      assert.match(note, /JSON/);
      assert.ok(note.includes('{"path": "a", "content": '), note);
    },
  );
});

test('a text format: no tools array; the tools, the Required mode, earlier calls and results in the family form', async () => {
  await withServer(
    { script: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }], toolCallsAsText: 'qwen3_5' }] },
    { toolFormat: 'qwen3_5' },
    async (c, s) => {
      const { out, sink } = collect();
      const history = [
        { role: LmRole.System, content: [text('Be brief.')] },
        user(text('go')),
        assistant(text('Looking.'), call('c1', 'read_file', { path: 'x' })),
        user(result('c1', 'contents of x')),
      ];
      await answerChat(
        c,
        { messages: history, tools: [readFile], toolMode: LmToolMode.Required, toolFormat: 'qwen3_5' },
        sink,
      );
      assert.deepEqual(
        out.calls.map((x) => x.input),
        [{ path: 'a' }],
      );
      const body = s.requests.at(-1)!.body as {
        messages: { role: string; content: string }[];
        tools?: unknown;
        tool_choice?: unknown;
      };
      assert.equal(body.tools, undefined);
      assert.equal(body.tool_choice, undefined);
      assert.deepEqual(
        body.messages.map((m) => m.role),
        ['system', 'user', 'assistant', 'user'],
      );
      assert.match(
        body.messages[0]!.content,
        /^# Tools\n\nYou have access to the following functions:\n\n<tools>\n\{"type": "function", "function": \{"name": "read_file"/,
      );
      assert.match(
        body.messages[0]!.content,
        /<\/IMPORTANT>\n\nBe brief\.\n\nYou must answer by calling at least one of these tools\.$/,
      );
      assert.equal(
        body.messages[2]!.content,
        'Looking.\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nx\n</parameter>\n</function>\n</tool_call>',
      );
      assert.equal(body.messages[3]!.content, '<tool_response>\ncontents of x\n</tool_response>');
    },
  );
});

test('cancelling stops the stream at once and reads as a cancellation', async () => {
  await withServer({ script: [{ kind: 'stall', after: 'Thinking', ms: 3000 }] }, {}, async (c) => {
    const ac = new AbortController();
    const { out, sink } = collect();
    const started = Date.now();
    const pending = answerChat(
      c,
      native({ messages: [user(text('go'))] }),
      { ...sink, text: (d) => (sink.text(d), ac.abort()) },
      ac.signal,
    );
    const failure = await pending.then(
      () => assert.fail('a cancelled request must not resolve'),
      (e: unknown) => failureMessage(e, undefined),
    );
    assert.equal(failure.cancelled, true);
    assert.ok(Date.now() - started < 2000, 'did not wait for the stalled server');
    assert.equal(out.texts.join(''), 'Thinking');
  });
});

test('a refused API key is a clear error without the key', async () => {
  await withServer(
    { apiKey: 'right-key-123', script: [{ content: 'x' }] },
    { apiKey: 'sk-wrong-key-456789' },
    async (c) => {
      const failure = await answerChat(c, native({ messages: [user(text('go'))] }), collect().sink).then(
        () => assert.fail('a refused key must not answer'),
        (e: unknown) => failureMessage(e, 'sk-wrong-key-456789'),
      );
      assert.equal(failure.cancelled, false);
      assert.match(failure.message, /refused the API key \(401\)/);
      assert.match(failure.message, /Set API Key/);
      assert.ok(!failure.message.includes('wrong-key'), failure.message);
    },
  );
});

test('listing models: max_model_len is used; a server that is down means no models when silent and an error when asked', async () => {
  await withServer({ models: ['LAR-9B', 'LAR-27B'], contextLength: 16_384, script: [] }, {}, async (c) => {
    const info = await listChatModels(c, { endpoint: 'http://127.0.0.1/v1', maxOutputTokens: 2048, silent: true });
    assert.deepEqual(
      info.map((m) => [m.id, m.maxInputTokens]),
      [
        ['LAR-9B', 16_384 - 2048],
        ['LAR-27B', 16_384 - 2048],
      ],
    );
  });
  const port = await new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => done(p));
    });
  });
  const down = new ModelClient({ endpoint: `http://127.0.0.1:${port}/v1`, retries: 0 });
  const quiet: string[] = [];
  const none = await listChatModels(down, {
    endpoint: `http://127.0.0.1:${port}/v1`,
    maxOutputTokens: 2048,
    silent: true,
    onQuietFailure: (m) => quiet.push(m),
  });
  assert.deepEqual(none, []);
  assert.match(quiet[0] ?? '', /cannot reach/);
  await assert.rejects(
    listChatModels(down, { endpoint: `http://127.0.0.1:${port}/v1`, maxOutputTokens: 2048, silent: false }),
    /Lean4 Agentic: cannot reach the inference server .*Is the server running/,
  );
});

test('what the live view holds back reaches the caller once the answer is whole: a JSON answer, tags named in prose, a quoted call', async () => {
  const answers = [
    '{"city": "Paris", "temp": 21}',
    'Mistral marks calls with [TOOL_CALLS] and then the name. That is all.',
    'Qwen3.5 writes <function=NAME> inside <tool_call>; gpt-oss uses <|channel|>commentary.',
    'A call looks like ```<tool_call>{"name": "read_file", "arguments": {"path": "x"}}</tool_call>``` in the docs.',
  ];
  for (const content of answers) {
    await withServer({ script: [{ content, fragment: 4 }] }, {}, async (c) => {
      const { out, sink } = collect();
      await answerChat(c, native({ messages: [user(text('go'))], tools: [readFile] }), sink);
      assert.equal(out.texts.join(''), content);
      assert.deepEqual(out.calls, []);
    });
  }
});

test('a text call to a tool the caller did not offer is not passed on', async () => {
  await withServer(
    { script: [{ toolCalls: [{ name: 'delete_everything', arguments: {} }], toolCallsAsText: 'qwen3_5' }] },
    { toolFormat: 'qwen3_5' },
    async (c) => {
      const { out, sink } = collect();
      await answerChat(c, { messages: [user(text('go'))], tools: [readFile], toolFormat: 'qwen3_5' }, sink);
      assert.deepEqual(out.calls, []);
      assert.match(out.texts.join(''), /"delete_everything", which is not one of the tools offered/);
    },
  );
});
