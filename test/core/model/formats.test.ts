import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import fc from '../../support/fc';
import { ModelClient } from '../../../core/model/client';
import { readOverflow } from '../../../core/model/errors';
import {
  FORMATS,
  findTextCalls,
  guessFormat,
  TEXT_FORMATS,
  type TextFormatId,
  type ToolSpec,
} from '../../../core/model/formats';
import { parseLenientJson } from '../../../core/model/formats/json-repair';
import { pyJson } from '../../../core/model/formats/py-json';
import { splitThinking } from '../../../core/model/reasoning';
import { ScriptedModelServer } from '../../../testkit/scripted-server';
import type { ScriptedTurn } from '../../../testkit/scripted-turns';
import { StreamView } from '../../../core/model/stream-view';
import { toolDefinitions } from '../../../core/schema/tool-definitions';
import { ToolArgs, TOOL_NAMES } from '../../../core/schema/tools';
import { nastyString } from '../../support/arbitrary';

const tools = toolDefinitions() as unknown as ChatCompletionTool[];
const specs: ToolSpec[] = toolDefinitions().map((t) => t.function);
const FIXTURES = resolve(__dirname, '../../../../test-fixtures/streams');

interface Fixture {
  server: 'vllm' | 'sglang';
  about: string;
  format?: TextFormatId;
  chunks: { choices?: { delta?: { content?: string | null } }[] }[];
  expect: {
    text: string;
    reasoning: string;
    calls: { name: string; args: unknown; via: 'native' | 'text'; repairs?: string[]; cutOff?: boolean }[];
  };
}

async function replay(turn: ScriptedTurn, toolFormat: 'auto' | TextFormatId) {
  const server = new ScriptedModelServer({ script: [turn] });
  const endpoint = await server.start();
  try {
    return await new ModelClient({ endpoint, model: 'LAR-9B', toolFormat, retries: 0 }).complete({
      messages: [{ role: 'user', content: 'go' }],
      tools,
    });
  } finally {
    await server.stop();
  }
}

for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.json'))) {
  const fx = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Fixture;
  test(`stream ${file}: ${fx.about}`, async () => {
    for (const mode of ['auto', ...(fx.format ? [fx.format] : [])] as const) {
      const r = await replay({ kind: 'raw', chunks: fx.chunks }, mode);
      assert.equal(r.text, fx.expect.text, `${mode}: the prose`);
      assert.equal(r.reasoning, fx.expect.reasoning, `${mode}: the reasoning`);
      assert.deepEqual(
        r.toolCalls.map((c) => ({ name: c.name, args: c.args, via: c.via })),
        fx.expect.calls.map((c) => ({ name: c.name, args: c.args, via: c.via })),
        `${mode}: the calls`,
      );
      fx.expect.calls.forEach((want, i) => {
        const got = r.toolCalls[i]!;
        if (want.repairs) assert.deepEqual(got.repairs, want.repairs, `${mode}: repairs of call ${i}`);
        else if (!want.cutOff) assert.equal(got.repairs, undefined, `${mode}: call ${i} needed no repair`);
        if (want.cutOff) assert.match(got.argsError!, /cut off at its token limit/);
        else assert.equal(got.argsError, undefined);
      });
    }
    // What the chat shows while it streams: never a call's text, never the reasoning as prose.
    // The replaying client asks for LAR-9B, whose template opens <think> (Qwen3.5).
    const view = new StreamView({ promptOpensThinking: true });
    let shown = '';
    const take = (pieces: ReturnType<StreamView['push']>) => {
      for (const p of pieces) {
        if (p.kind === 'text') shown += p.delta;
        else if (p.kind === 'retract') shown = shown.slice(p.text.length);
      }
    };
    for (const c of fx.chunks) {
      const delta = c.choices?.[0]?.delta?.content;
      if (typeof delta === 'string' && delta) take(view.push(delta));
    }
    take(view.flush());
    assert.equal(shown.trim(), fx.expect.text, 'the live view shows the prose only');
    for (const call of fx.expect.calls)
      if (call.via === 'text') assert.ok(!shown.includes(call.name), `no call text in the live view: ${shown}`);
  });
}

test('every format renders the tools with their argument names, so a model knows them from the prompt alone', () => {
  for (const id of TEXT_FORMATS) {
    const p = FORMATS[id].prompt('SYSTEM TEXT', 'THE TASK', specs);
    const all = `${p.system}\n${p.task}`;
    assert.ok(all.includes('SYSTEM TEXT') && all.includes('THE TASK'), id);
    for (const name of TOOL_NAMES) assert.ok(all.includes(name), `${id} names ${name}`);
    for (const arg of ['search', 'replace', 'startLine', 'timeoutMs', 'recursive'])
      assert.ok(all.includes(arg), `${id} names the argument ${arg}`);
  }
});

test('the Qwen renderings are byte for byte what their templates print', () => {
  const read = specs.filter((t) => t.name === 'read_file');
  const hermes = FORMATS.hermes.prompt('SYS', 't', read).system;
  assert.ok(
    hermes.startsWith(
      'SYS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{"type": "function", "function": {"name": "read_file", "description": ',
    ),
  );
  assert.ok(
    hermes.endsWith(
      '}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
    ),
  );
  assert.equal(
    FORMATS.hermes.assistantContent('Let me check.', [
      { name: 'a', args: { x: 1 } },
      { name: 'b', args: {} },
    ]),
    'Let me check.\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>',
  );
  assert.deepEqual(
    FORMATS.hermes.resultMessages([
      { name: 'a', callId: '1', content: 'R1' },
      { name: 'b', callId: '2', content: 'R2' },
    ]),
    [{ role: 'user', content: '<tool_response>\nR1\n</tool_response>\n<tool_response>\nR2\n</tool_response>' }],
  );
  // Qwen3-Coder: content trimmed, then a blank line, then each call on its own; results each end with a newline.
  assert.equal(
    FORMATS.qwen3_coder.assistantContent(" I'll look. ", [
      { name: 'read', args: { path: '/a.txt', limit: 10, deep: true, opts: { a: [1, 'x'] } } },
    ]),
    'I\'ll look.\n\n<tool_call>\n<function=read>\n<parameter=path>\n/a.txt\n</parameter>\n<parameter=limit>\n10\n</parameter>\n<parameter=deep>\nTrue\n</parameter>\n<parameter=opts>\n{"a": [1, "x"]}\n</parameter>\n</function>\n</tool_call>',
  );
  assert.equal(
    FORMATS.qwen3_coder.assistantContent('', [{ name: 'x', args: {} }]),
    '<tool_call>\n<function=x>\n</function>\n</tool_call>',
  );
  assert.deepEqual(FORMATS.qwen3_coder.resultMessages([{ name: 'a', callId: '1', content: 'R1' }]), [
    { role: 'user', content: '<tool_response>\nR1\n</tool_response>\n' },
  ]);
  const coder = FORMATS.qwen3_coder.prompt('SYS', 't', read).system;
  assert.ok(
    coder.startsWith(
      'SYS\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n<function>\n<name>read_file</name>\n<description>',
    ),
  );
  assert.match(
    coder,
    /<parameter>\n<name>startLine<\/name>\n<type>integer<\/type>\n<description>First line to read, from 1\.<\/description>\n<exclusiveMinimum>0<\/exclusiveMinimum>\n<\/parameter>/,
  );
  assert.match(
    coder,
    /<required>\["path"\]<\/required>\n<additionalProperties>False<\/additionalProperties>\n<\/parameters>\n<\/function>\n<\/tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:/,
  );
  // Qwen3.5: tools as JSON lines, then the instructions, then the system text.
  const q35 = FORMATS.qwen3_5.prompt('  SYS  ', 't', read).system;
  assert.ok(q35.startsWith('# Tools\n\nYou have access to the following functions:\n\n<tools>\n{"type": "function"'));
  assert.ok(q35.endsWith('do not tell the user about function calls\n</IMPORTANT>\n\nSYS'));
  assert.equal(
    FORMATS.qwen3_5.assistantContent('Go.', [
      { name: 'a', args: { p: 'v' } },
      { name: 'b', args: {} },
    ]),
    'Go.\n\n<tool_call>\n<function=a>\n<parameter=p>\nv\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=b>\n</function>\n</tool_call>',
  );
});

test('python json.dumps spacing, not JSON.stringify: separators, key order, non-ASCII kept, indent', () => {
  assert.equal(pyJson({ b: 1, a: [true, null, 'é"\n'] }), '{"b": 1, "a": [true, null, "é\\"\\n"]}');
  assert.equal(pyJson({ a: { b: [] }, c: {} }, 4), '{\n    "a": {\n        "b": []\n    },\n    "c": {}\n}');
});

test('repairs: each slip is repaired and named; what cannot be read stays an error', () => {
  const cases: [string, unknown, string[]][] = [
    ['{"a": 1}', { a: 1 }, []],
    ['```json\n{"a": 1}\n```', { a: 1 }, ['code_fence']],
    ['{"a": [1, 2,], }', { a: [1, 2] }, ['trailing_comma']],
    ['{"a": True, "b": None}', { a: true, b: null }, ['python_literal']],
    ['{"a": {"b": 1}', { a: { b: 1 } }, ['unclosed_json']],
    ['{"a": 1}}', { a: 1 }, ['extra_closer']],
    ['{"s": "True, None, [1,]"}', { s: 'True, None, [1,]' }, []],
  ];
  for (const [text, value, repairs] of cases) {
    const r = parseLenientJson(text);
    assert.ok(r.ok, text);
    assert.deepEqual(r.ok && r.value, value, text);
    assert.deepEqual(r.ok && r.repairs, repairs, text);
  }
  for (const bad of ['{"a": tru}', '{"a": "unterminated', 'not json', '{"a" 1}'])
    assert.equal(parseLenientJson(bad).ok, false, bad);
  // Repairs on whole calls.
  const missingOpen = findTextCalls('Sure. {"name": "list_files", "arguments": {}}</tool_call>', specs)!;
  assert.deepEqual(
    [missingOpen.text, missingOpen.calls[0]!.name, missingOpen.calls[0]!.repairs],
    ['Sure.', 'list_files', ['missing_open_tag']],
  );
  const prose = findTextCalls(
    '<tool_call>\nI will list.\n{"name": "list_files", "arguments": {}}\nthen read.</tool_call>',
    specs,
  )!;
  assert.deepEqual([prose.text, prose.calls[0]!.repairs], ['I will list.\n\nthen read.', ['prose_inside_call']]);
  const bare = findTextCalls('<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>', specs)!;
  assert.deepEqual(bare.calls[0]!.repairs, ['missing_open_tag']);
  const typed = findTextCalls(
    '<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n<parameter=startLine>\n2.0\n</parameter>\n</function>\n</tool_call>',
    specs,
  )!;
  assert.deepEqual([typed.calls[0]!.args, typed.calls[0]!.repairs], [{ path: 'a', startLine: 2 }, ['parameter_type']]);
  const broken = findTextCalls('<tool_call>\n{"name": "read_file", "arguments": {"path": a}}\n</tool_call>', specs)!;
  assert.match(broken.calls[0]!.argsError!, /not JSON/);
  assert.equal(broken.calls[0]!.name, 'read_file');
});

test('reasoning: <think> blocks, a closing tag alone, an unclosed block', () => {
  assert.deepEqual(splitThinking('<think>\nplan\n</think>\n\nanswer'), { text: 'answer', reasoning: 'plan' });
  const opened = { promptOpensThinking: true };
  assert.deepEqual(splitThinking('plan\n</think>\n\nanswer', opened), { text: 'answer', reasoning: 'plan' });
  // A call drafted before the closing tag is reasoning's, never run.
  assert.deepEqual(
    splitThinking('Maybe <tool_call>{"name": "run_command"}</tool_call>? No.</think>\nReading.', opened),
    { text: 'Reading.', reasoning: 'Maybe <tool_call>{"name": "run_command"}</tool_call>? No.' },
  );
  // Where the template does not open the block, a closing tag alone is text: an answer that talks about it.
  assert.deepEqual(splitThinking('The parser drops a stray </think> tag now.'), {
    text: 'The parser drops a stray </think> tag now.',
    reasoning: '',
  });
  // Only the start: tags later in the answer, or in a file the model writes, are text.
  assert.deepEqual(splitThinking('<think>a</think>Writing <think> and </think> into tags.ts', opened), {
    text: 'Writing <think> and </think> into tags.ts',
    reasoning: 'a',
  });
  assert.deepEqual(splitThinking('<think>cut off here'), { text: '', reasoning: 'cut off here' });
  assert.deepEqual(splitThinking('[THINK]plan[/THINK]answer'), { text: 'answer', reasoning: 'plan' });
  assert.deepEqual(splitThinking('no tags'), { text: 'no tags', reasoning: '' });
});

test('a JSON answer is not a call unless it names a tool offered; in its own format it is read as written', () => {
  assert.equal(findTextCalls('{"answer": 42}', specs), undefined);
  assert.equal(findTextCalls('{"name": "not_a_tool", "parameters": {}}', specs), undefined);
  assert.equal(
    findTextCalls('{"name": "not_a_tool", "parameters": {}}', specs, 'llama3_json')!.calls[0]!.name,
    'not_a_tool',
  );
  // Talking about the format is prose when the model was given tools in the API…
  assert.equal(findTextCalls('Use <tool_call> tags to call tools.', specs), undefined);
  assert.equal(
    findTextCalls('Use <function=NAME> to start a call; that is how Qwen3-Coder writes them.', specs),
    undefined,
  );
  assert.equal(
    findTextCalls('Mistral marks calls with [TOOL_CALLS] and then the name. That is all.', specs),
    undefined,
  );
  // …and a call the model quotes in a code block is an example, not a call.
  const quoted =
    'A call looks like:\n\n```\n<tool_call>\n{"name": "read_file", "arguments": {"path": "x"}}\n</tool_call>\n```\nand `<function=read_file>` too.';
  assert.equal(findTextCalls(quoted, specs), undefined);
  // Told to write calls in a format, a broken one is an error the model reads.
  assert.match(
    findTextCalls('Use <tool_call> tags to call tools.', specs, 'hermes')!.calls[0]!.argsError!,
    /holds no call|empty/,
  );
  // No tools offered (a summary request, a caller without tools): nothing is a call.
  assert.equal(findTextCalls('<tool_call>\n{"name": "read_file", "arguments": {}}\n</tool_call>', []), undefined);
});

test('the model family picks the text format; context refusals are read in every wording', () => {
  assert.deepEqual(
    [
      'LAR-9B',
      '/models/LAR-27B',
      'Qwen/Qwen3.5-27B',
      'Qwen3-Coder-30B-A3B-Instruct',
      'Qwen/Qwen3-8B',
      'meta-llama/Llama-3.3-70B-Instruct',
      'mistralai/Devstral-Small-2507',
      'openai/gpt-oss-20b',
      'upstage/SOLAR-10.7B-Instruct',
      'polar-7b',
      'deepseek-ai/DeepSeek-V3',
    ].map(guessFormat),
    [
      'qwen3_5',
      'qwen3_5',
      'qwen3_5',
      'qwen3_coder',
      'hermes',
      'llama3_json',
      'mistral',
      'gpt_oss',
      undefined,
      undefined,
      undefined,
    ],
  );
  const cases: [string, { window?: number; promptTokens?: number }][] = [
    [
      "This model's maximum context length is 32768 tokens. However, you requested 8192 output tokens and your prompt contains 40885 input tokens, for a total of 49077 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=40885)",
      { window: 32768, promptTokens: 40885 },
    ],
    [
      "This model's maximum context length is 32768 tokens. However, you requested 49077 tokens (40885 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
      { window: 32768, promptTokens: 40885 },
    ],
    [
      "This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens. Please reduce the length of the input messages.",
      { window: 8192, promptTokens: 9000 },
    ],
    [
      "The input (9100 tokens) is longer than the model's context length (8192 tokens).",
      { window: 8192, promptTokens: 9100 },
    ],
    [
      "Requested token count exceeds the model's maximum context length of 8192 tokens. You requested a total of 9000 tokens: 7000 tokens from the input messages and 2000 tokens for the completion.",
      { window: 8192, promptTokens: 7000 },
    ],
    [
      'max_tokens=20000 cannot be greater than max_model_len=8192. Please request fewer output tokens.',
      { window: 8192 },
    ],
  ];
  for (const [m, want] of cases) assert.deepEqual(readOverflow(m), want, m);
});

// ---------------------------------------------------------------- properties

/** Arguments valid for a tool's schema, with the strings a model really writes (newlines, tags, quotes). */
function argsFor(name: (typeof TOOL_NAMES)[number]): fc.Arbitrary<Record<string, unknown>> {
  const text = fc.oneof(
    nastyString(30),
    fc.constantFrom(
      'a\nb\n',
      '\nlead',
      'trail\n',
      '<b>x</b>',
      '</tool_call>',
      '{"json": 1}',
      'C:\\path',
      '  spaced  ',
      'True',
      'null',
      "const A = '<think>';",
      '</think>',
      '[THINK]x[/THINK]',
      '<think>\nplan\n</think>',
      'Run `npm test`.',
      '```\ncode\n```',
      '<|channel|>final<|message|>hi<|return|>',
      '<|start|>assistant',
      '[TOOL_CALLS]',
    ),
  );
  // A value that closes its own parameter and opens another is the one ambiguity the XML form has by design.
  const safe = text.filter(
    (s) => !/<\/parameter>\s*(<parameter=|<\/function>|<\/tool_call>|$)/.test(s) && !s.includes('<parameter='),
  );
  const nonEmpty = safe.filter((s) => s.length > 0);
  const shape = ToolArgs[name].shape as Record<string, { def?: { type?: string } }>;
  const keys = Object.keys(shape);
  const value = (key: string): fc.Arbitrary<unknown> => {
    if (['startLine', 'endLine', 'timeoutMs'].includes(key)) return fc.integer({ min: 1, max: 100_000 });
    if (['recursive', 'regex'].includes(key)) return fc.boolean();
    if (['content', 'replace', 'reason', 'summary'].includes(key)) return safe;
    return nonEmpty;
  };
  return fc.record(Object.fromEntries(keys.map((k) => [k, value(k)])), { requiredKeys: [] });
}

test('property: every tool call survives a round trip through every text format (render, then read back as the client does)', () => {
  const call = fc.constantFrom(...TOOL_NAMES).chain((name) => argsFor(name).map((args) => ({ name, args })));
  fc.assert(
    fc.property(fc.constantFrom(...TEXT_FORMATS), fc.array(call, { minLength: 1, maxLength: 3 }), (id, calls) => {
      const f = FORMATS[id];
      // Llama's template carries one call per turn; it is joined, not nested.
      const content = f.assistantContent('', calls);
      // As toReply reads an answer: reasoning split off the start first, then the calls in what is left.
      const split = splitThinking(content);
      assert.equal(split.reasoning, '', `${id}: nothing of a call is reasoning: ${JSON.stringify(content)}`);
      const want = calls.map((c) => ({ name: c.name, args: { ...c.args }, error: undefined }));
      const back = findTextCalls(split.text, specs, id)!;
      assert.deepEqual(
        back.calls.map((c) => ({ name: c.name, args: c.args, error: c.argsError })),
        want,
        `${id}: ${JSON.stringify(content)}`,
      );
      // Natively (a server that failed to parse), the same calls are found with no format named.
      const found = findTextCalls(split.text, specs)!;
      assert.deepEqual(
        found.calls.map((c) => ({ name: c.name, args: c.args, error: c.argsError })),
        want,
        `${id}, found natively: ${JSON.stringify(content)}`,
      );
    }),
    { numRuns: 400 },
  );
});

test('property: no reader throws, whatever the content; every call names a string and reports its text', () => {
  const piece = fc.oneof(
    nastyString(12),
    fc.constantFrom(
      '<tool_call>',
      '</tool_call>',
      '<function=',
      '</function>',
      '<parameter=',
      '</parameter>',
      '>',
      '\n',
      '{',
      '}',
      '[',
      ']',
      '"',
      '[TOOL_CALLS]',
      '[ARGS]',
      '<|python_tag|>',
      '<|channel|>',
      '<|message|>',
      '<|call|>',
      'to=functions.read_file',
      '<think>',
      '</think>',
      '{"name": "read_file", "arguments": {',
      ',',
      'True',
    ),
  );
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 24 }),
      fc.constantFrom(undefined, ...TEXT_FORMATS),
      (pieces, preferred) => {
        const content = pieces.join('');
        const split = splitThinking(content);
        for (const id of TEXT_FORMATS) {
          const r = FORMATS[id].parse(split.text, specs);
          for (const c of r.calls) {
            assert.equal(typeof c.name, 'string');
            assert.ok(Array.isArray(c.repairs));
            if (c.argsError === undefined) assert.ok(c.args !== undefined);
          }
        }
        findTextCalls(split.text, specs, preferred);
        const view = new StreamView();
        for (const p of pieces) view.push(p);
        view.flush();
      },
    ),
    { numRuns: 500 },
  );
});
