/**
 * Property-based tests for issue #6 ("never lose work, never run what it
 * should not"). The issue names seven properties; this is where each lives.
 *
 * 1. The JSONL parser never throws on any input.
 *    test/core/schema/jsonl.test.ts "parseLine never throws, whatever the line" (JSON and plain strings);
 *    here: hostile lines and whole files (lone surrogates, NUL and control characters, BOM,
 *    CR/CRLF, JSON nested tens of thousands deep, huge numbers, `__proto__` members, megabyte
 *    lines), line numbering, CRLF = LF, a BOM keeps the header, every event round-trips.
 * 2. The stream assembler never throws.
 *    test/core/model/assemble.test.ts "the assembler never throws on chunks of any shape, and only
 *    errors raise" and "however the argument text is cut into fragments, the call is the same";
 *    here: chunks that are not objects at all (`data: null`), JSON with `__proto__` members,
 *    and what is assembled is exactly what the chunks said.
 * 3. The text tool-call parser never throws.
 *    test/core/model/assemble.test.ts "the text tool-call parser never throws";
 *    here: hostile text around and inside the tags, and calls written in the format read back.
 * 4. The command splitter never throws.
 *    Only here (test/core/policy/policy.test.ts has examples): quotes, escapes, heredocs, `$(…)`, backticks,
 *    unbalanced parentheses; nothing is lost, splitting distributes over separators, and a
 *    denied command is denied wherever it stands in a compound command.
 * 5. The verifier never throws.
 *    test/core/verifier/verifier.test.ts "the verifier never throws and rewards stay in range on any event
 *    sequence" (the default workflow); here: random workflows, arguments nested 20 000 deep
 *    and with `__proto__` members, ill-typed lines through the text verifier, the gate on any call.
 * 6. Incremental verification equals batch verification for random trajectories.
 *    test/core/verifier/verifier.test.ts "incremental verification equals batch verification for random
 *    trajectories" (default workflow, one clone) and test/server/trajectory-model.test.ts "incremental
 *    updates give exactly what a fresh verification gives" (the language server's model);
 *    here: random workflows, two clones continued independently, and the text verifier agrees.
 * 7. The gate's verdict is the same as the post-hoc verdict for the same call.
 *    test/core/verifier/verifier.test.ts "the gate decides every violation exactly as the post-hoc verdict
 *    does" (default workflow); here: random workflows and hostile arguments, the same verdicts
 *    word for word, ask ⇔ the approval is checked, the same reward when the call then
 *    succeeds, and the gate changes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../support/fc';
import { parseLine, parseTrajectory, splitLines } from '../../core/schema/jsonl';
import { CALL_STATUSES, TrajectoryEvent } from '../../core/schema/trajectory';
import { CompletionAssembler, ModelServerError, errorOf, type StreamChunk } from '../../core/model/assemble';
import { FORMATS } from '../../core/model/formats';

/** The Hermes reader, as the agent's format module has it. */
const extractTextToolCalls = (content: string) => FORMATS.hermes.parse(content, []);
import {
  CommandView,
  commandMatches,
  commandParts,
  compilePatterns,
  firstMatch,
  normalizeSpaces,
} from '../../core/policy/command';
import { VerifierState } from '../../core/verifier/state';
import type { ProposedCall } from '../../core/verifier/types';
import { verifyEvents, verifyTrajectoryText } from '../../core/verifier/verify';
import { defaultWorkflow, loadWorkflow } from '../../core/workflow/load';
import type { Workflow } from '../../core/schema/workflow';
import { ToolArgs } from '../../core/schema/tools';
import {
  deepJsonText,
  eventsOver,
  jsonKey,
  jsonText,
  nastyChar,
  nastyLine,
  nastyString,
  shortNastyLine,
  workflowValue,
} from '../support/arbitrary';

const HEADER = JSON.stringify({
  lar: 1,
  type: 'header',
  task: 't',
  workflow: 'builtin:default-coding',
  started: '2026-01-01T00:00:00Z',
});
const EVENT_TYPES = ['tool_call', 'message', 'outcome', 'compaction', 'end'];

// ---------------------------------------------------------------- 1. the JSONL parser

test('1. parseLine never throws on hostile lines, and a bad line says where and why', () => {
  fc.assert(
    fc.property(nastyLine, fc.boolean(), (text, first) => {
      const p = parseLine(text, 7, first);
      assert.equal(p.line, 7);
      if (p.kind === 'blank') assert.equal(text.trim(), '');
      if (p.kind === 'header') assert.ok(first, 'a header is only read on the first non-blank line');
      if (p.kind === 'event') {
        assert.ok(EVENT_TYPES.includes(p.event.type));
        assert.ok(TrajectoryEvent.safeParse(p.event).success);
      }
      if (p.kind === 'malformed') {
        assert.equal(p.error.line, 7);
        assert.ok(
          p.error.column >= 1 && p.error.column <= text.length + 1,
          `column ${p.error.column} of ${text.length}`,
        );
        assert.ok(p.error.endColumn > p.error.column);
        assert.ok(p.error.message.length > 0);
      }
    }),
    { numRuns: 400 },
  );
  // The regression: the error scanner recursed once per level and overflowed the stack, so parseLine threw.
  const deep = parseLine('['.repeat(100_000), 2, false);
  assert.equal(deep.kind, 'malformed');
  if (deep.kind === 'malformed') assert.match(deep.error.message, /unexpected end of line: expected a JSON value/);
  const deepObject = parseLine('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000), 2, false);
  assert.equal(deepObject.kind, 'malformed');
  // Valid JSON that deep is refused before anything recursive sees it (core/json/depth.ts).
  if (deepObject.kind === 'malformed')
    assert.match(deepObject.error.message, /nested 100000 levels deep, more than the 64 accepted/);
});

/** A file: lines ended by LF, CRLF or a lone CR, a BOM or not, a header first or not. */
const hostileFile = fc
  .record({
    bom: fc.boolean(),
    header: fc.boolean(),
    lines: fc.array(fc.tuple(nastyLine, fc.constantFrom('\n', '\r\n', '\r', '\n\n')), { maxLength: 8 }),
  })
  .map(
    ({ bom, header, lines }) =>
      (bom ? '\ufeff' : '') + (header ? `${HEADER}\n` : '') + lines.map(([l, eol]) => l + eol).join(''),
  );

test('1. parseTrajectory never throws on hostile files: every line is numbered, a header only on the first non-blank line', () => {
  fc.assert(
    fc.property(hostileFile, (text) => {
      const parsed = parseTrajectory(text);
      assert.equal(parsed.lines.length, splitLines(text).length);
      assert.deepEqual(
        parsed.lines.map((l) => l.line),
        parsed.lines.map((_, i) => i + 1),
      );
      const headers = parsed.lines.filter((l) => l.kind === 'header');
      assert.ok(headers.length <= 1);
      const firstNonBlank = parsed.lines.find((l) => l.kind !== 'blank');
      if (headers[0]) assert.equal(headers[0], firstNonBlank);
      assert.equal(parsed.header !== undefined, headers.length === 1);
    }),
    { numRuns: 200 },
  );
});

test('1. CRLF and LF line ends read the same, and a byte order mark does not cost the header', () => {
  const oneLine = shortNastyLine.map((l) => l.replace(/[\r\n]/g, ''));
  fc.assert(
    fc.property(fc.array(oneLine, { maxLength: 8 }), (rest) => {
      const lines = [HEADER, ...rest];
      const lf = parseTrajectory(lines.join('\n'));
      assert.deepEqual(parseTrajectory(lines.join('\r\n')), lf);
      assert.deepEqual(parseTrajectory(lines.join('\r\n') + '\r\n'), parseTrajectory(lines.join('\n') + '\n'));
      const bom = parseTrajectory('\ufeff' + lines.join('\n'));
      assert.equal(bom.header?.workflow, 'builtin:default-coding');
      assert.deepEqual({ ...bom, lines: bom.lines.slice(1) }, { ...lf, lines: lf.lines.slice(1) });
      assert.equal(bom.lines[0]!.kind, 'header');
    }),
    { numRuns: 200 },
  );
  // The regression: a file saved as "UTF-8 with BOM" used to have no header, so nothing was verified.
  const report = verifyTrajectoryText(
    `\ufeff${HEADER}\n{"type":"tool_call","tool":"read_file","args":{"path":"a"},"status":"ok"}\n`,
  );
  assert.equal(report.fatal, undefined);
  assert.deepEqual(report.lineErrors, []);
  assert.equal(report.steps[0]!.toolReward, 1);
});

/** Well-typed events whose strings are hostile: lone surrogates, NUL, BOM, line separators. */
const validEvent: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({
    type: fc.constant('message'),
    role: fc.constantFrom('system', 'user', 'assistant'),
    content: nastyString(200),
  }),
  fc.record(
    {
      type: fc.constant('tool_call'),
      id: nastyString(8),
      tool: nastyString(12),
      args: jsonText.map((t) => JSON.parse(t) as unknown),
      argsError: nastyString(10),
      status: fc.constantFrom(...CALL_STATUSES),
      result: fc.record(
        {
          exitCode: fc.option(fc.integer()),
          completion: fc.constantFrom('marker', 'exit', 'timeout', 'unobserved'),
          output: nastyString(100),
          filesChanged: fc.array(nastyString(10), { maxLength: 3 }),
          error: nastyString(20),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['type', 'tool', 'args', 'status'] },
  ),
  fc.record({
    type: fc.constant('outcome'),
    command: nastyString(),
    exitCode: fc.option(fc.integer()),
    output: nastyString(50),
  }),
  fc.record(
    {
      type: fc.constant('end'),
      reason: fc.constantFrom('submitted', 'interrupted', 'cancelled', 'limit', 'error'),
      detail: nastyString(),
    },
    { requiredKeys: ['type', 'reason'] },
  ),
);

test('1. every event written as a line parses back to the same event', () => {
  fc.assert(
    fc.property(validEvent, (event) => {
      const line = JSON.stringify(event);
      const p = parseLine(line, 2, false);
      assert.equal(p.kind, 'event', p.kind === 'malformed' ? p.error.message : '');
      if (p.kind === 'event') assert.deepEqual(p.event, JSON.parse(line));
    }),
    { numRuns: 400 },
  );
});

// ---------------------------------------------------------------- 2. the stream assembler

const oddValue = fc.oneof(
  jsonText.map((t) => JSON.parse(t) as unknown),
  fc.constantFrom<unknown>(null, undefined, 0, -1, 1.5, 2 ** 53, 1e308, 'x', true, [], {}),
);
const argumentFragment = fc.oneof(nastyString(6), fc.constantFrom('{"path": ', '"a.ts"}', '{', '}', '', '\\'));
const toolDelta = fc.record(
  {
    index: fc.oneof(fc.nat(3), oddValue),
    id: fc.oneof(nastyString(4), oddValue),
    type: oddValue,
    function: fc.oneof(
      fc.record(
        {
          name: fc.oneof(fc.constantFrom('read_file', 'search', ''), oddValue),
          arguments: fc.oneof(argumentFragment, oddValue),
        },
        { requiredKeys: [] },
      ),
      oddValue,
    ),
  },
  { requiredKeys: [] },
);
const choiceDelta = fc.record(
  {
    index: fc.oneof(fc.nat(2), oddValue),
    delta: fc.oneof(
      fc.record(
        {
          role: oddValue,
          content: fc.oneof(nastyString(8), oddValue),
          reasoning_content: fc.oneof(nastyString(4), oddValue),
          tool_calls: fc.oneof(fc.array(fc.oneof(toolDelta, oddValue), { maxLength: 3 }), oddValue),
        },
        { requiredKeys: [] },
      ),
      oddValue,
    ),
    finish_reason: fc.oneof(fc.constantFrom('stop', 'tool_calls', ''), oddValue),
  },
  { requiredKeys: [] },
);
const chunkShaped = fc.record(
  {
    id: oddValue,
    model: fc.oneof(fc.constant('LAR-9B'), oddValue),
    choices: fc.oneof(fc.array(fc.oneof(choiceDelta, oddValue), { maxLength: 3 }), oddValue),
    usage: oddValue,
  },
  { requiredKeys: [] },
);
/** What the wire can carry: chunk-shaped objects, the same with a `__proto__` member (as JSON.parse makes it), errors, and values that are not objects at all. */
const anyChunk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: chunkShaped },
  {
    weight: 2,
    arbitrary: fc.tuple(chunkShaped, jsonText).map(([c, proto]) => {
      const body = JSON.stringify(c).slice(1, -1);
      return JSON.parse(`{"__proto__":${proto}${body ? `,${body}` : ''}}`) as unknown;
    }),
  },
  { weight: 2, arbitrary: oddValue },
  {
    weight: 1,
    arbitrary: fc.record(
      { error: oddValue, object: fc.constantFrom('error', 'chat.completion.chunk'), message: oddValue },
      { requiredKeys: [] },
    ),
  },
);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** The contract read plainly: per choice, the text is every string content in order; per call, every string argument fragment. */
function reference(chunks: readonly unknown[]): Map<number, { content: string; calls: Map<number, string> }> {
  const out = new Map<number, { content: string; calls: Map<number, string> }>();
  for (const chunk of chunks) {
    if (!isPlainObject(chunk) || !Array.isArray(chunk.choices)) continue;
    for (const c of chunk.choices) {
      if (!isPlainObject(c)) continue;
      const index = isIndex(c.index) ? c.index : 0;
      const choice = out.get(index) ?? { content: '', calls: new Map<number, string>() };
      out.set(index, choice);
      const d = isPlainObject(c.delta) ? c.delta : {};
      if (typeof d.content === 'string') choice.content += d.content;
      for (const t of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
        if (!isPlainObject(t)) continue;
        const i = isIndex(t.index) ? t.index : choice.calls.size;
        const fn = isPlainObject(t.function) ? t.function : {};
        choice.calls.set(i, (choice.calls.get(i) ?? '') + (typeof fn.arguments === 'string' ? fn.arguments : ''));
      }
    }
  }
  return out;
}

/** Arguments are JSON text, and no text at all means no arguments. */
function parsesAsArguments(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

test('2. the stream assembler never throws on chunks of any shape, except for an error, and keeps what came before it', () => {
  fc.assert(
    fc.property(fc.array(anyChunk, { maxLength: 8 }), (chunks) => {
      const a = new CompletionAssembler();
      const fed: unknown[] = [];
      for (const chunk of chunks) {
        const before = a.result();
        const expected = errorOf(chunk);
        try {
          a.push(chunk as StreamChunk);
        } catch (e) {
          assert.ok(e instanceof ModelServerError, `only a server error is thrown, not ${String(e)}`);
          assert.ok(expected, 'only for a chunk that is an error');
          assert.equal(e.message, expected.message);
          assert.deepEqual(a.result(), before, 'the error loses nothing assembled before it');
          break;
        }
        assert.equal(expected, undefined, 'an error chunk is never swallowed');
        fed.push(chunk);
      }
      const r = a.result();
      assert.equal(typeof a.finished, 'boolean');
      const want = reference(fed);
      assert.deepEqual(
        // `+ 0`: an index of -0 on the wire is index 0 (as a Map key it already is).
        r.choices.map((c) => [c.index + 0, c.content, c.toolCalls.map((t) => [t.index + 0, t.argumentsText])]),
        [...want.entries()]
          .sort(([x], [y]) => x - y)
          .map(([i, c]) => [i, c.content, [...c.calls.entries()].sort(([x], [y]) => x - y)]),
      );
      for (const c of r.choices) {
        for (const t of c.toolCalls) {
          assert.ok(typeof t.id === 'string' && t.id.length > 0);
          assert.equal(typeof t.name, 'string');
          assert.equal(t.argsError === undefined, parsesAsArguments(t.argumentsText), t.argumentsText);
        }
      }
    }),
    { numRuns: 400 },
  );
  // The regressions: `data: null` on the wire crashed the assembler (and so the answer), and so did an
  // error whose code was an object with a "toString" member that is not a function.
  const hostile = JSON.parse('{"error":{"message":"boom","type":[{"toString":""}]}}') as StreamChunk;
  assert.throws(
    () => new CompletionAssembler().push(hostile),
    (e: Error) => e instanceof ModelServerError && e.message === 'boom',
  );
  const a = new CompletionAssembler();
  for (const c of [null, 5, 'x', [], { choices: [{ index: 0, delta: { content: 'kept' }, finish_reason: 'stop' }] }])
    a.push(c as unknown as StreamChunk);
  assert.equal(a.result().choices[0]!.content, 'kept');
  assert.equal(a.finished, true);
});

// ---------------------------------------------------------------- 3. the text tool-call parser

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const occurrences = (text: string, s: string) => text.split(s).length - 1;

test('3. the text tool-call parser never throws, and every call it reports was in the text', () => {
  const callJson = fc
    .record(
      { name: fc.oneof(nastyString(6), fc.constantFrom('read_file', '')), arguments: oddValue, parameters: oddValue },
      { requiredKeys: [] },
    )
    .map((c) => JSON.stringify(c));
  const piece = fc.oneof(
    nastyString(10),
    fc.constantFrom(
      OPEN,
      CLOSE,
      '<tool_call',
      'tool_call>',
      '</tool_call',
      '{"name":',
      '"arguments":',
      '"parameters":',
      '{',
      '}',
      '"',
      '\\',
      ' ',
      '\n',
    ),
    jsonText,
    callJson,
    deepJsonText.map((t) => t.slice(0, 30_000)),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const content = pieces.join('');
      const r = extractTextToolCalls(content);
      // Each call stands on a tag (an opening one, a closing one whose opening was left off, a bare <function=) or on
      // an object of its own in a block that holds several.
      assert.ok(
        r.calls.length <=
          occurrences(content, OPEN) +
            occurrences(content, CLOSE) +
            occurrences(content, '<function=') +
            occurrences(content, '{'),
      );
      for (const c of r.calls) {
        assert.equal(typeof c.name, 'string');
        assert.ok(content.includes(c.raw));
        if (c.argsError === undefined) assert.notEqual(c.name, '', 'a call without a name is an error');
        else assert.equal(typeof c.argsError, 'string');
      }
      if (!content.includes(OPEN) && !content.includes(CLOSE) && !content.includes('<function=')) {
        assert.deepEqual(r.calls, []);
        assert.equal(r.text, content.trim());
      }
    }),
    { numRuns: 400 },
  );
});

test('3. calls written in the text format are read back, name and arguments, with the prose around them', () => {
  const clean = (s: string) => !s.includes(OPEN) && !s.includes(CLOSE) && !s.includes('<function=');
  const call = fc
    .record({
      name: nastyString(10).filter((n) => n !== ''),
      args: jsonText.map((t) => JSON.parse(t) as unknown).filter(isPlainObject),
      asString: fc.boolean(),
    })
    .filter(({ name, args }) => clean(JSON.stringify({ name, arguments: args })));
  fc.assert(
    fc.property(
      nastyString(20).filter(clean),
      fc.array(fc.tuple(call, nastyString(20).filter(clean)), { maxLength: 4 }),
      (lead, calls) => {
        const content =
          lead +
          calls
            .map(
              ([c, prose]) =>
                `${OPEN}${JSON.stringify({ name: c.name, arguments: c.asString ? JSON.stringify(c.args) : c.args })}${CLOSE}${prose}`,
            )
            .join('');
        const r = extractTextToolCalls(content);
        assert.deepEqual(
          r.calls.map((c) => [c.name, c.args, c.argsError]),
          calls.map(([c]) => [c.name, JSON.parse(JSON.stringify(c.args)) as unknown, undefined]),
        );
        assert.equal(r.text, (lead + calls.map(([, prose]) => prose).join('')).trim());
      },
    ),
    { numRuns: 300 },
  );
});

// ---------------------------------------------------------------- 4. the command splitter

const SEPARATORS = [';', '&', '|', '\n', '\r', '(', ')', '`'];
const shellToken = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'rm',
      '-rf',
      '/',
      '~',
      '~/',
      'echo',
      'ok',
      'sudo',
      'curl',
      'http://x',
      'sh',
      'bash',
      'mkfs.ext4',
      '/dev/sda',
      'x',
      'a b',
      '$HOME',
      '>>',
      '>',
      '<',
      '2>&1',
      'if=/dev/zero',
      'of=/dev/sda',
      'npm',
      'test',
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      ' ',
      '  ',
      '\t',
      '\v',
      ';',
      '&&',
      '||',
      '|',
      '&',
      '\n',
      '\r',
      '\r\n',
      '(',
      ')',
      '$(',
      '`',
      '<(',
      '{',
      '}',
      '"',
      "'",
      '\\',
      '\\;',
      '\\|',
      '\\\n',
      '<<EOF\n',
      '\nEOF\n',
      "<<'EOF'\n",
      '<<-EOF\n',
      '$((',
      '))',
      '${',
      '#',
      '!',
    ),
  },
  { weight: 1, arbitrary: nastyChar },
);
const shellish = fc.array(shellToken, { maxLength: 30 }).map((ts) => ts.join(''));
const WHITESPACE = /[\t\n\v\f\r ]/g;

test('4. the command splitter never throws; parts are normalized and nothing between separators is lost', () => {
  const wf = defaultWorkflow();
  const deny = compilePatterns(wf.policy.commands.deny);
  const ask = compilePatterns(wf.policy.commands.ask);
  fc.assert(
    fc.property(
      shellish,
      fc.oneof(shellish, fc.constantFrom('*', '?', 'rm -rf /', '*|*sh', '**', '')),
      (command, pattern) => {
        const parts = commandParts(command);
        for (const p of parts) {
          assert.ok(p.length > 0);
          assert.ok(!SEPARATORS.some((s) => p.includes(s)), JSON.stringify(p));
          assert.equal(normalizeSpaces(p), p);
          assert.ok(!/^ | $|  |[\t\n\v\f\r]/.test(p), JSON.stringify(p));
        }
        const strip = (s: string) =>
          [...s]
            .filter((ch) => !SEPARATORS.includes(ch))
            .join('')
            .replace(WHITESPACE, '');
        assert.equal(
          parts.join('').replace(/ /g, ''),
          strip(command),
          'every character but separators and spacing is in some part, in order',
        );
        assert.equal(
          normalizeSpaces(command),
          command
            .split(/[\t\n\v\f\r ]+/)
            .filter(Boolean)
            .join(' '),
        );
        const view = new CommandView(command);
        firstMatch(deny, view);
        firstMatch(ask, view);
        if (pattern !== '') commandMatches(pattern, command);
      },
    ),
    { numRuns: 1000 },
  );
});

test('4. splitting distributes over separators: a command cannot hide behind quotes, escapes, heredocs or substitutions', () => {
  const wf = defaultWorkflow();
  const deny = compilePatterns(wf.policy.commands.deny);
  const denied = fc.constantFrom(
    'rm -rf /',
    'rm  -rf  ~',
    'mkfs.ext4 /dev/sda',
    'dd if=/dev/zero of=/dev/sda',
    ':(){ :|:& };:',
    'rm -fr /',
    'wipefs -a /dev/sda',
  );
  const separator = fc.constantFrom(';', '&&', '||', '|', '&', '\n', '\r\n', ')', '`', '(', ') | (');
  fc.assert(
    fc.property(shellish, separator, shellish, (a, s, b) => {
      assert.deepEqual(commandParts(a + s + b), [...commandParts(a), ...commandParts(b)]);
    }),
    { numRuns: 500 },
  );
  // Before the denied command anything may stand, `$(` and `<(` included (their `$` and `<` stay with what precedes).
  const opener = fc.oneof(separator, fc.constantFrom('$(', '<(', ' "$(', '`'));
  fc.assert(
    fc.property(shellish, opener, denied, separator, shellish, (a, s1, d, s2, b) => {
      const command = a + s1 + d + s2 + b;
      assert.notEqual(firstMatch(deny, new CommandView(command)), undefined, JSON.stringify(command));
    }),
    { numRuns: 500 },
  );
});

// ---------------------------------------------------------------- 5–7. the verifier

const workflowAndEvents = workflowValue.chain((value) => {
  const load = loadWorkflow(value);
  if (!load.ok)
    throw new Error(
      `the workflow generator made an ill-formed workflow: ${load.problems.map((p) => p.message).join('; ')}`,
    );
  return fc.tuple(fc.constant(value), fc.constant(load.workflow), eventsOver(load.workflow.stages.map((s) => s.id)));
});
const at = (list: readonly TrajectoryEvent[], from = 2) => list.map((event, i) => ({ event, line: i + from }));

/** Arguments no parser or serializer that recurses survives: 20 000 levels of arrays or objects, with `__proto__` members. */
const DEEP_ARGS: unknown[] = [
  JSON.parse('['.repeat(20_000) + ']'.repeat(20_000)),
  JSON.parse('{"__proto__":'.repeat(20_000) + '{"path":"x"}' + '}'.repeat(20_000)),
  JSON.parse('{"path":"a","x":' + '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_001)),
];

test('5. the verifier never throws on random workflows and hostile arguments; rewards stay in range', () => {
  fc.assert(
    fc.property(
      workflowAndEvents,
      fc.array(fc.tuple(fc.nat(), fc.nat(DEEP_ARGS.length - 1)), { maxLength: 3 }),
      ([, wf, list], deep) => {
        const events = list.map((e) => ({ ...e }));
        for (const [i, which] of deep) {
          const k = events.length ? i % events.length : -1;
          const e = events[k];
          // Deep arguments on a failed call: the loop detector then keys on them.
          if (e?.type === 'tool_call') events[k] = { ...e, args: DEEP_ARGS[which], status: 'error' };
        }
        const { steps, summary } = verifyEvents(wf, at(events));
        assert.equal(summary.steps, events.filter((e) => e.type === 'tool_call').length);
        for (const s of steps) if (s.toolReward !== undefined) assert.ok([-1, 0, 1].includes(s.toolReward));
        for (const v of summary.stages) assert.ok([-1, 0, 1].includes(v.reward));
        const { alpha, beta } = wf.rewards;
        assert.ok(
          summary.return >= -(alpha + beta) - 1e-12 && summary.return <= 1 + alpha + beta + 1e-12,
          String(summary.return),
        );
      },
    ),
    { numRuns: 150 },
  );
  // The regression: a failed call with deeply nested arguments overflowed the stack (loop detection).
  const deep = { type: 'tool_call', tool: 'read_file', args: DEEP_ARGS[0], status: 'error' } as TrajectoryEvent;
  assert.equal(
    verifyEvents(defaultWorkflow(), at([deep, deep])).steps[1]!.verdicts.find((v) => v.check === 'tool.not_repeated')!
      .ok,
    false,
  );
});

test('5. the text verifier never throws on hostile files: ill-typed lines are line errors, the rest is judged', () => {
  const headerLine = fc.oneof(
    fc.constant(HEADER),
    workflowValue.map((wf) => JSON.stringify({ lar: 1, type: 'header', task: 't', workflow: wf, started: 'now' })),
    nastyLine,
  );
  fc.assert(
    fc.property(
      headerLine,
      fc.array(fc.tuple(nastyLine, fc.constantFrom('\n', '\r\n', '\r')), { maxLength: 10 }),
      fc.boolean(),
      (header, lines, bom) => {
        const text = (bom ? '\ufeff' : '') + header + '\n' + lines.map(([l, eol]) => l + eol).join('');
        const report = verifyTrajectoryText(text);
        const count = splitLines(text).length;
        const errorLines = report.lineErrors.map((e) => e.line);
        assert.equal(new Set(errorLines).size, errorLines.length, 'one error per bad line');
        for (const l of errorLines) assert.ok(l >= 1 && l <= count);
        const judged = report.steps.map((s) => s.line);
        assert.deepEqual(
          judged,
          [...judged].sort((x, y) => x - y),
        );
        for (const l of judged) assert.ok(!errorLines.includes(l) && l >= 2 && l <= count);
        assert.equal(report.summary !== undefined, report.workflow !== undefined);
        if (report.workflow === undefined) assert.ok(report.fatal, 'nothing verified, and it says why');
      },
    ),
    { numRuns: 200 },
  );
});

/** The ask pattern a call matches, from the policy alone: a well-formed run_command the deny list lets through. */
function expectedAskPattern(wf: Workflow, call: ProposedCall): string | undefined {
  if (call.tool !== 'run_command' || call.argsError !== undefined || !ToolArgs.run_command.safeParse(call.args).success)
    return undefined;
  const view = new CommandView((call.args as { command: string }).command);
  if (firstMatch(compilePatterns(wf.policy.commands.deny), view) !== undefined) return undefined;
  return firstMatch(compilePatterns(wf.policy.commands.ask), view);
}

test('5. the gate never throws on any proposed call, and it decides one of allow, ask or block', () => {
  const proposal: fc.Arbitrary<ProposedCall> = fc.record(
    {
      tool: fc.oneof(
        fc.constantFrom(
          'run_command',
          'read_file',
          'write_file',
          'enter_stage',
          'submit',
          'constructor',
          '__proto__',
          'toString',
        ),
        nastyString(8),
      ),
      args: fc.oneof(
        oddValue,
        fc.constantFrom(...DEEP_ARGS),
        fc.record({ command: nastyString(20) }),
        fc.record({ path: nastyString(10) }),
        fc.record({ stage: fc.constantFrom('constructor', '__proto__', 'hasOwnProperty') }),
      ),
      argsError: nastyString(10),
    },
    { requiredKeys: ['tool', 'args'] },
  );
  fc.assert(
    fc.property(workflowAndEvents, fc.array(proposal, { minLength: 1, maxLength: 5 }), ([, wf, list], calls) => {
      const state = new VerifierState(wf);
      list.forEach((e, i) => state.append(e, i + 2));
      for (const call of calls) {
        const g = state.gate(call);
        assert.ok(['allow', 'ask', 'block'].includes(g.decision));
        assert.ok(g.reason.length > 0);
        assert.equal(g.decision === 'block', g.toolReward === -1);
        // The contract (GateResult.askPattern): the pattern is the one the command matches,
        // whatever the decision; a blocked call keeps it so that `warn` still asks.
        const expected = expectedAskPattern(wf, call);
        if (g.askPattern !== expected)
          assert.fail(
            `askPattern ${g.askPattern} for ${call.tool} (decision ${g.decision}); the policy says ${expected}`,
          );
        if (g.decision === 'ask') assert.notEqual(g.askPattern, undefined);
        if (g.decision === 'allow') assert.equal(g.askPattern, undefined);
      }
    }),
    { numRuns: 150 },
  );
});

test('6. incremental verification equals batch verification on random workflows, from clones taken anywhere', () => {
  fc.assert(
    fc.property(workflowAndEvents, fc.nat(40), fc.nat(40), ([, wf, list], x, y) => {
      const batch = verifyEvents(wf, at(list));
      const events = at(list);
      const [k1, k2] = [Math.min(x, y, list.length), Math.min(Math.max(x, y), list.length)];
      const a = new VerifierState(wf);
      const stepsA = events.slice(0, k1).map(({ event, line }) => a.append(event, line));
      const b = a.clone();
      stepsA.push(...events.slice(k1, k2).map(({ event, line }) => a.append(event, line)));
      const c = a.clone();
      const prefix2 = [...stepsA];
      stepsA.push(...events.slice(k2).map(({ event, line }) => a.append(event, line)));
      const stepsB = [...stepsA.slice(0, k1), ...events.slice(k1).map(({ event, line }) => b.append(event, line))];
      const stepsC = [...prefix2, ...events.slice(k2).map(({ event, line }) => c.append(event, line))];
      for (const [steps, state] of [
        [stepsA, a],
        [stepsB, b],
        [stepsC, c],
      ] as const) {
        assert.deepEqual(steps, batch.steps);
        assert.deepEqual(state.summary(), batch.summary);
      }
    }),
    { numRuns: 200 },
  );
});

test('6. the text verifier (inline workflow, parsed lines) agrees with feeding the parsed events one by one', () => {
  fc.assert(
    fc.property(workflowAndEvents, ([value, wf, list]) => {
      const text = [
        JSON.stringify({ lar: 1, type: 'header', task: 't', workflow: value, started: 'now' }),
        ...list.map((e) => JSON.stringify(e)),
      ].join('\n');
      const report = verifyTrajectoryText(text);
      assert.deepEqual(report.lineErrors, []);
      assert.deepEqual(report.workflow, wf);
      const parsed = parseTrajectory(text).lines.flatMap((l) =>
        l.kind === 'event' ? [{ event: l.event, line: l.line }] : [],
      );
      assert.equal(parsed.length, list.length);
      const state = new VerifierState(wf);
      assert.deepEqual(
        report.steps,
        parsed.map(({ event, line }) => state.append(event, line)),
      );
      assert.deepEqual(report.summary, state.summary());
    }),
    { numRuns: 150 },
  );
});

/** The checks a gate cannot know: whether the call then succeeds, and whether the user approves it. */
// Judged on what the call did: whether it succeeded, was approved, ran in the sandbox.
const AFTER_THE_FACT = new Set(['tool.succeeded', 'tool.approved', 'tool.sandboxed']);

function gateAgreesWithVerdicts(wf: Workflow, list: readonly TrajectoryEvent[]): void {
  const state = new VerifierState(wf);
  list.forEach((event, i) => {
    if (event.type !== 'tool_call') {
      state.append(event, i + 2);
      return;
    }
    const call: ProposedCall =
      event.argsError === undefined
        ? { tool: event.tool, args: event.args }
        : { tool: event.tool, args: event.args, argsError: event.argsError };
    const summaryBefore = state.summary();
    const gate = state.gate(call);
    assert.deepEqual(state.gate(call), gate, 'the gate is a function of the state and the call');
    assert.deepEqual(state.summary(), summaryBefore, 'the gate changes nothing');
    const after = state.append(event, i + 2);
    assert.deepEqual(
      after.verdicts.filter((v) => !AFTER_THE_FACT.has(v.check)),
      gate.verdicts,
      'the same checks with the same verdicts and reasons',
    );
    assert.equal(gate.decision === 'block', after.toolReward === -1);
    // A call that would be blocked anyway is not asked about; otherwise the gate asks exactly when approval is judged.
    if (gate.decision !== 'block')
      assert.equal(
        gate.decision === 'ask',
        after.verdicts.some((v) => v.check === 'tool.approved'),
      );
    if (after.verdicts.every((v) => v.ok || !AFTER_THE_FACT.has(v.check)))
      assert.equal(after.toolReward, gate.toolReward, 'a call that then succeeds gets the reward the gate foresaw');
  });
}

test('7. the gate decides every call exactly as the post-hoc verdict does, on random workflows', () => {
  fc.assert(
    fc.property(workflowAndEvents, ([, wf, list]) => gateAgreesWithVerdicts(wf, list)),
    { numRuns: 200 },
  );
});

test('7. the same on the default workflow with hostile arguments', () => {
  const wf = defaultWorkflow();
  const hostile = fc
    .record({ k: jsonKey, v: nastyString(12) })
    .map(({ k, v }) => JSON.parse(`{${JSON.stringify(k)}:${JSON.stringify(v)}}`) as unknown);
  fc.assert(
    fc.property(
      eventsOver(wf.stages.map((s) => s.id)),
      fc.array(fc.tuple(fc.nat(), hostile), { maxLength: 4 }),
      (list, swaps) => {
        const events = [...list];
        for (const [i, args] of swaps) {
          const k = events.length ? i % events.length : -1;
          const e = events[k];
          if (e?.type === 'tool_call') events[k] = { ...e, args };
        }
        gateAgreesWithVerdicts(wf, events);
      },
    ),
    { numRuns: 200 },
  );
});
