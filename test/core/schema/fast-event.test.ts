/**
 * The hand-written checks of the verifier's hot path (core/schema/fast-event.ts, fast-args.ts)
 * against zod, the definition: whenever a fast check answers, zod accepts and gives the same value
 * (same members in the same order); parseEventLine answers exactly as parseLine does, messages
 * included; and lines read a chunk at a time are the lines of the whole text. Property tests print
 * their seed (test/support/fc.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../../support/fc';
import { jsonText, mangled, nastyString, hugeNumberText, eventishLine, nastyLine } from '../../support/arbitrary';
import { FAST_SHAPES, fastEvent } from '../../../core/schema/fast-event';
import { argsSurelyValid } from '../../../core/schema/fast-args';
import { linesOfBytes, parseEventLine, parseLine, splitLines } from '../../../core/schema/jsonl';
import {
  MessageEvent,
  OutcomeEvent,
  ToolCallEvent,
  ToolResult,
  TrajectoryEvent,
  TurnUsage,
} from '../../../core/schema/trajectory';
import { TOOL_NAMES, ToolArgs } from '../../../core/schema/tools';

const q = (...xs: string[]) => fc.constantFrom(...xs.map((x) => JSON.stringify(x)));
/** Usually a plausible value for the member, sometimes any JSON at all. */
const member = (good: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 30, arbitrary: good }, { weight: 1, arbitrary: jsonText });
const str = fc.oneof(
  q('', 'x', 'npm test', 'src/a.ts'),
  nastyString(12).map((s) => JSON.stringify(s)),
);
const int = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('1', '2', '255', '1000000000', '9007199254740991') },
  { weight: 1, arbitrary: fc.constantFrom('0', '-1', '0.5', '-0', '1000000001', '9007199254740993') },
  { weight: 1, arbitrary: hugeNumberText },
  { weight: 1, arbitrary: fc.integer().map(String) },
);
const bool = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('true', 'false') }, fc.constantFrom('0', 'null'));
const strings = fc.array(str, { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`);
const hex = (n: number, unit = '0123456789abcdef') =>
  fc.string({ unit: fc.constantFrom(...unit), minLength: n, maxLength: n });
const checkpoint = fc
  .oneof({ weight: 8, arbitrary: fc.oneof(hex(40), hex(64)) }, hex(39), hex(41), hex(40, '0123456789abcdefA'))
  .map((s) => JSON.stringify(s));
/** Token counts: within TokenCount's bound mostly, and cached sometimes more than prompt. */
const count = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 5000 }).map(String) },
  fc.constantFrom('1000000000', '1000000001', '-1', '0.5'),
);

/**
 * An object's text from members: each present or not (a `rare` one seldom: the fast check leaves
 * it to zod), in the shape's order or shuffled, sometimes with an unknown one.
 */
function objectText(
  members: Record<string, fc.Arbitrary<string>>,
  { required = [], rare = [] }: { required?: string[]; rare?: string[] } = {},
): fc.Arbitrary<string> {
  const entries = Object.entries(members).map(([k, v]) =>
    fc.oneof(
      { weight: rare.includes(k) ? 24 : required.includes(k) ? 1 : 2, arbitrary: fc.constant(null) },
      { weight: required.includes(k) ? 40 : 2, arbitrary: v.map((t) => `${JSON.stringify(k)}:${t}`) },
    ),
  );
  return fc
    .tuple(
      fc.tuple(...entries),
      fc.integer({ min: 0, max: 3 }).map((x) => x === 0),
      fc.option(fc.tuple(fc.constantFrom('__proto__', 'extra', 'kind', 'constructor', 'type'), jsonText), {
        freq: 4,
      }),
      fc.nat(),
    )
    .map(([parts, shuffle, extra, seed]) => {
      const list = parts.filter((p): p is string => p !== null);
      if (extra) list.splice(seed % (list.length + 1), 0, `${JSON.stringify(extra[0])}:${extra[1]}`);
      if (shuffle) list.sort((a, b) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7));
      return `{${list.join(',')}}`;
    });
}

const completion = q('marker', 'exit', 'timeout', 'unobserved', 'bogus');
const usage = objectText(
  { prompt: member(count), completion: member(count), cached: member(count) },
  { required: ['prompt', 'completion'] },
);
const result = objectText({
  exitCode: member(fc.oneof(int, fc.constant('null'))),
  completion: member(completion),
  output: member(str),
  outputTruncated: member(bool),
  outputPath: member(str),
  durationMs: member(fc.constantFrom('0', '12.5', '-1', '1e400', '-0')),
  filesChanged: member(strings),
  error: member(str),
  sandboxed: member(bool),
  shellRestarted: member(bool),
  waitingForInput: member(bool),
  killed: member(str),
  ranAsCheck: member(bool),
  testsRan: member(int),
  zz: jsonText,
});
const args = fc.oneof(
  objectText({ command: member(str), cwd: member(str), timeoutMs: member(int) }, { required: ['command'] }),
  objectText({ path: member(str), startLine: member(int), endLine: member(int) }, { required: ['path'] }),
  objectText({ path: member(str), content: member(str) }, { required: ['path', 'content'] }),
  objectText(
    { path: member(str), search: member(str), replace: member(str) },
    { required: ['path', 'search', 'replace'] },
  ),
  objectText({ path: member(str), recursive: member(bool) }),
  objectText({ pattern: member(str), path: member(str), regex: member(bool) }, { required: ['pattern'] }),
  objectText({ stage: member(str), reason: member(str) }, { required: ['stage'] }),
  objectText({ summary: member(str) }),
  jsonText,
);
const toolCall = objectText(
  {
    type: member(q('tool_call')),
    id: member(str),
    tool: member(q(...TOOL_NAMES, 'rm_everything', 'mcp__fs__read')),
    args,
    argsError: member(str),
    argsText: member(str),
    repairs: member(strings),
    via: member(q('native', 'text', 'native', 'text', 'smoke')),
    reply: member(int),
    usage: member(usage),
    checkpoint: member(checkpoint),
    mcp: member(objectText({ server: member(str), tool: member(str), digest: member(checkpoint) })),
    status: member(q('ok', 'error', 'blocked', 'denied', 'timeout', 'interrupted', 'OK')),
    result: member(result),
    at: member(str),
  },
  { required: ['type', 'tool', 'args', 'status'], rare: ['mcp'] },
);
const message = objectText(
  {
    type: member(q('message')),
    role: member(q('system', 'user', 'assistant', 'tool')),
    content: member(str),
    parts: member(fc.constantFrom('[]', '[{"type":"text","text":"x"}]', '[{"type":"bogus"}]')),
    reasoning: member(str),
    usage: member(usage),
    at: member(str),
  },
  { required: ['type', 'role', 'content'], rare: ['parts'] },
);
const outcome = objectText(
  {
    type: member(q('outcome')),
    command: member(str),
    exitCode: member(fc.oneof(int, fc.constant('null'))),
    completion: member(completion),
    output: member(str),
    testsRan: member(int),
    durationMs: member(fc.constantFrom('0', '12.5', '-1', '1e400')),
    sandboxed: member(bool),
    restored: member(strings),
    at: member(str),
  },
  { required: ['type', 'command', 'exitCode'] },
);
/** Event lines of the three shapes the fast check knows, good and bad, and the rest of what a file holds. */
const line = fc.oneof(
  { weight: 6, arbitrary: toolCall },
  { weight: 2, arbitrary: message },
  { weight: 2, arbitrary: outcome },
  { weight: 2, arbitrary: mangled(toolCall) },
  { weight: 2, arbitrary: eventishLine },
  { weight: 1, arbitrary: nastyLine },
);

test('the fast shapes name the members of the zod schemas, in their order', () => {
  assert.deepEqual(FAST_SHAPES.tool_call, Object.keys(ToolCallEvent.shape));
  assert.deepEqual(FAST_SHAPES.message, Object.keys(MessageEvent.shape));
  assert.deepEqual(FAST_SHAPES.outcome, Object.keys(OutcomeEvent.shape));
  assert.deepEqual(FAST_SHAPES.result, Object.keys(ToolResult.shape));
  assert.deepEqual(FAST_SHAPES.usage, Object.keys(TurnUsage.shape));
});

test('whenever the fast check answers, zod accepts the line and gives the same value, members in the same order', () => {
  let answered = 0;
  fc.assert(
    fc.property(line, (text) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return;
      }
      // Parsed again: the fast check may replace a nested object of the value it is given.
      const zod = TrajectoryEvent.safeParse(JSON.parse(text));
      const fast = fastEvent(value);
      if (fast === undefined) return;
      answered++;
      assert.ok(zod.success, `fast accepted what zod refuses: ${text}`);
      assert.deepStrictEqual(fast, zod.data, text);
      assert.equal(JSON.stringify(fast), JSON.stringify(zod.data), text);
    }),
    { numRuns: 3000 },
  );
  assert.ok(answered > 150, `the fast check answered only ${answered} times: the property tested little`);
});

test('parseEventLine answers exactly as parseLine: events, blank and malformed lines, messages and positions', () => {
  fc.assert(
    fc.property(line, fc.integer({ min: 2, max: 1_000_000 }), (text, n) => {
      const slow = parseLine(text, n, false);
      const fast = parseEventLine(text, n);
      if ('kind' in fast) assert.deepStrictEqual(fast, slow, text);
      else {
        assert.equal(slow.kind, 'event', text);
        assert.deepStrictEqual(fast, (slow as { event: unknown }).event, text);
        assert.equal(JSON.stringify(fast), JSON.stringify((slow as { event: unknown }).event), text);
      }
    }),
    { numRuns: 3000 },
  );
});

test('a line nested deeper than the limit is refused by parseEventLine as by parseLine, duplicate members included', () => {
  const deep = `{"type":"tool_call","tool":"x","args":${'['.repeat(70)}${']'.repeat(70)},"status":"ok"}`;
  const hidden = `{"type":"tool_call","tool":"x","args":${'['.repeat(70)}${']'.repeat(70)},"args":1,"status":"ok"}`;
  for (const text of [deep, hidden]) {
    assert.deepStrictEqual(parseEventLine(text, 3), parseLine(text, 3, false));
    assert.equal(parseLine(text, 3, false).kind, 'malformed');
  }
});

test('whenever the fast argument check says yes, zod accepts the arguments', () => {
  let yes = 0;
  fc.assert(
    fc.property(fc.constantFrom(...TOOL_NAMES), args, (tool, text) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return;
      }
      if (!argsSurelyValid(tool, value)) return;
      yes++;
      assert.ok(ToolArgs[tool].safeParse(value).success, `${tool} ${text}`);
    }),
    { numRuns: 3000 },
  );
  assert.ok(yes > 50, `the argument check said yes only ${yes} times`);
});

/** Text of lines with every kind of line end and character, as bytes, sometimes not UTF-8. */
const fileBytes = fc
  .tuple(
    fc.array(fc.oneof(toolCall, nastyString(30), fc.constantFrom('', '\ufeff{}', 'é😀\u2028')), { maxLength: 12 }),
    fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 1, maxLength: 12 }),
    fc.boolean(),
    fc.option(fc.uint8Array({ minLength: 1, maxLength: 6 })),
  )
  .map(([lines, ends, finalEnd, junk]) => {
    const text = lines.map((l, i) => l + (i < lines.length - 1 || finalEnd ? ends[i % ends.length] : '')).join('');
    const bytes = Buffer.from(text, 'utf8');
    return junk
      ? Buffer.concat([bytes.subarray(0, bytes.length >> 1), junk, bytes.subarray(bytes.length >> 1)])
      : bytes;
  });

test('lines read a chunk at a time are the lines of the whole text, whatever the chunk size', () => {
  fc.assert(
    fc.property(fileBytes, fc.integer({ min: 1, max: 64 }), (bytes, chunk) => {
      let at = 0;
      // Reads of random sizes up to `chunk`, as a file or a pipe may give them.
      const read = (buf: Buffer, from: number) => {
        const n = Math.min(buf.length - from, bytes.length - at, 1 + ((at * 7) % chunk));
        bytes.copy(buf, from, at, at + n);
        at += n;
        return n;
      };
      // splitLines gives one blank line for an empty text, the chunks none: blank lines judge nothing.
      const whole = bytes.length === 0 ? [] : splitLines(bytes.toString('utf8'));
      assert.deepStrictEqual([...linesOfBytes(read, chunk)], whole);
    }),
    { numRuns: 2000 },
  );
});
