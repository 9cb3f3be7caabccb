import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../../support/fc';
import { CompletionAssembler, ModelServerError, errorOf, type StreamChunk } from '../../../core/model/assemble';
import { FORMATS } from '../../../core/model/formats';

/** The Hermes reader, as the agent's format module has it. */
const extractTextToolCalls = (content: string) => FORMATS.hermes.parse(content, []);

const feed = (chunks: StreamChunk[]) => {
  const a = new CompletionAssembler();
  for (const c of chunks) a.push(c);
  return a;
};

test('tool calls are assembled from streamed deltas as SGLang sends them', () => {
  const a = feed([
    { id: 'x', model: 'LAR-9B', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
    { choices: [{ index: 0, delta: { content: 'Let me ' } }] },
    { choices: [{ index: 0, delta: { content: 'look.' } }] },
    {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '' } }],
          },
        },
      ],
    },
    {
      choices: [
        { index: 0, delta: { tool_calls: [{ index: 0, id: null, function: { name: null, arguments: '{"path": ' } }] } },
      ],
    },
    // The last fragment shares its chunk with finish_reason.
    {
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: '"src/a.ts"}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    },
    // The usage chunk has no choices.
    { choices: [], usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 } },
  ]);
  assert.equal(a.finished, true);
  const r = a.result();
  assert.equal(r.model, 'LAR-9B');
  assert.deepEqual(r.usage, { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 });
  assert.equal(r.choices[0]!.content, 'Let me look.');
  assert.deepEqual(r.choices[0]!.toolCalls, [
    { index: 0, id: 'call_a', name: 'read_file', argumentsText: '{"path": "src/a.ts"}', args: { path: 'src/a.ts' } },
  ]);
  assert.equal(r.choices[0]!.finishReason, 'tool_calls');
});

test('parallel tool calls are kept apart by index, and the first id and name win', () => {
  const r = feed([
    {
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 1, id: 'second', function: { name: 'list_files', arguments: '{}' } }] },
        },
      ],
    },
    {
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: 'first', function: { name: 'search', arguments: '{"pattern"' } }] },
        },
      ],
    },
    {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 'later-id-ignored', function: { name: 'other', arguments: ':"x"}' } }],
          },
        },
      ],
    },
    { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ]).result();
  assert.deepEqual(
    r.choices[0]!.toolCalls.map((c) => [c.index, c.id, c.name, c.args]),
    [
      [0, 'first', 'search', { pattern: 'x' }],
      [1, 'second', 'list_files', {}],
    ],
  );
});

test('several choices are assembled separately; a call without an id gets a stable one', () => {
  const a = feed([
    {
      choices: [
        { index: 1, delta: { content: 'B' } },
        { index: 0, delta: { content: 'A' } },
      ],
    },
    {
      choices: [
        {
          index: 1,
          delta: { tool_calls: [{ index: 0, function: { name: 'submit', arguments: '{}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    },
  ]);
  assert.equal(a.finished, false, 'choice 0 has no finish_reason yet');
  const r = a.result();
  assert.deepEqual(
    r.choices.map((c) => c.content),
    ['A', 'B'],
  );
  assert.equal(r.choices[1]!.toolCalls[0]!.id, 'call_1_0');
  assert.equal(a.result().choices[1]!.toolCalls[0]!.id, 'call_1_0');
});

test('arguments that are not JSON become an error the model can read, never a crash', () => {
  const r = feed([
    {
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                id: 'c',
                function: { name: 'write_file', arguments: '{"path": "a", "content": "unterminated' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    },
  ]).result();
  const call = r.choices[0]!.toolCalls[0]!;
  assert.equal(call.args, null);
  assert.match(call.argsError!, /JSON/);
  assert.match(call.argsError!, /unterminated/);
});

test('server errors: both body shapes, and an error inside the stream', () => {
  const nested = errorOf({ error: { message: 'model "x" not found', type: 'NotFoundError', code: 404 } }, 404)!;
  assert.equal(nested.message, 'model "x" not found');
  assert.equal(nested.status, 404);
  const flat = errorOf({
    object: 'error',
    message: 'This model does not support tool calls',
    type: 'BadRequestError',
    code: 400,
  })!;
  assert.equal(flat.message, 'This model does not support tool calls');
  assert.equal(flat.status, 400);
  assert.equal(errorOf({ choices: [] }), undefined);
  const a = new CompletionAssembler();
  a.push({ choices: [{ index: 0, delta: { content: 'partial' } }] });
  assert.throws(
    () => a.push({ error: { message: 'CUDA out of memory', code: 500 } }),
    (e: Error) => e instanceof ModelServerError && /CUDA out of memory/.test(e.message),
  );
  assert.equal(a.result().choices[0]!.content, 'partial', 'what came before the error is kept');
});

test('however the argument text is cut into fragments, the call is the same', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.array(fc.nat(), { maxLength: 8 }), (value, cuts) => {
      const text = JSON.stringify({ v: value });
      const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((x, y) => x - y);
      const pieces: string[] = [];
      let at = 0;
      for (const p of points) {
        pieces.push(text.slice(at, p));
        at = p;
      }
      pieces.push(text.slice(at));
      const chunks: StreamChunk[] = pieces.map((arguments_, i) => ({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  ...(i === 0
                    ? { id: 'c', function: { name: 'search', arguments: arguments_ } }
                    : { function: { arguments: arguments_ } }),
                },
              ],
            },
          },
        ],
      }));
      chunks[chunks.length - 1]!.choices![0]!.finish_reason = 'tool_calls';
      const call = feed(chunks).result().choices[0]!.toolCalls[0]!;
      assert.equal(call.argumentsText, text);
      assert.deepEqual(call.args, JSON.parse(text));
    }),
    { numRuns: 300 },
  );
});

test('the assembler never throws on chunks of any shape, and only errors raise', () => {
  const anyValue = fc.oneof(fc.jsonValue(), fc.constant(null), fc.constant(5), fc.constant('x'));
  const choice = fc.record({
    index: anyValue,
    delta: fc.oneof(
      anyValue,
      fc.record({
        content: anyValue,
        tool_calls: fc.oneof(
          anyValue,
          fc.array(
            fc.record({
              index: anyValue,
              id: anyValue,
              function: fc.oneof(anyValue, fc.record({ name: anyValue, arguments: anyValue })),
            }),
          ),
        ),
      }),
    ),
    finish_reason: anyValue,
  });
  const chunk = fc.record(
    { choices: fc.oneof(anyValue, fc.array(fc.oneof(choice, anyValue))), usage: anyValue, model: anyValue },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(fc.array(chunk, { maxLength: 6 }), (chunks) => {
      const a = new CompletionAssembler();
      for (const c of chunks) a.push(c as StreamChunk);
      for (const ch of a.result().choices)
        for (const call of ch.toolCalls) assert.equal(typeof call.argumentsText, 'string');
    }),
    { numRuns: 500 },
  );
});

test('text tool calls (a server without a tool parser) are extracted from the content', () => {
  const r = extractTextToolCalls(
    'I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.ts"}}\n</tool_call>\n<tool_call>{"name": "search", "arguments": "{\\"pattern\\": \\"x\\"}"}</tool_call>',
  );
  assert.equal(r.text, 'I will read it.');
  assert.deepEqual(
    r.calls.map((c) => [c.name, c.args, c.argsError]),
    [
      ['read_file', { path: 'a.ts' }, undefined],
      ['search', { pattern: 'x' }, undefined],
    ],
  );
  const bad = extractTextToolCalls('<tool_call>{"name": "write_file", "arguments": {"path": </tool_call> and then');
  assert.equal(bad.calls[0]!.name, 'write_file');
  assert.match(bad.calls[0]!.argsError!, /not JSON/);
  assert.equal(bad.text, 'and then');
  const unclosed = extractTextToolCalls('ok <tool_call>{"name": "submit", "arguments": {}}');
  assert.deepEqual(
    unclosed.calls.map((c) => c.name),
    ['submit'],
  );
  assert.equal(unclosed.text, 'ok');
  assert.deepEqual(extractTextToolCalls('no calls here').calls, []);
});

test('the text tool-call parser never throws', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.string(), fc.constantFrom('<tool_call>', '</tool_call>', '{"name":', '"x"}', '{', '}')), {
        maxLength: 10,
      }),
      (parts) => {
        const r = extractTextToolCalls(parts.join(''));
        for (const c of r.calls) assert.equal(typeof c.name, 'string');
      },
    ),
    { numRuns: 500 },
  );
});
