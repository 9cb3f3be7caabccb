import fc from './fc';
import type { TrajectoryEvent } from '../../core/schema/trajectory';

/** Random but plausible trajectory events over the default workflow's vocabulary, bad ones included. */
const stageName = fc.constantFrom('explore', 'edit', 'verify', 'nowhere');
const path = fc.constantFrom(
  'src/a.ts',
  'test/a.test.ts',
  '../etc/passwd',
  '/abs',
  'src\\b.ts',
  '.git/config',
  'a/../b',
);
const command = fc.constantFrom(
  'npm test',
  'ls',
  'rm -rf /',
  'ls && rm -rf /',
  'sudo ls',
  'echo $(whoami)',
  'npm   test',
  'git push origin',
);

const args = fc.oneof(
  fc.record({ command }),
  fc.record({ path }),
  fc.record({ path, content: fc.string({ maxLength: 5 }) }),
  fc.record({ path, search: fc.constantFrom('a', 'b'), replace: fc.string({ maxLength: 3 }) }),
  fc.record({ stage: stageName }),
  fc.record({ summary: fc.string({ maxLength: 5 }) }),
  fc.record({ pattern: fc.constantFrom('TODO', 'x') }),
  fc.constant({}),
  fc.constant(null),
  fc.record({ bogus: fc.integer() }),
);

const toolCall: fc.Arbitrary<TrajectoryEvent> = fc
  .record({
    tool: fc.constantFrom(
      'run_command',
      'read_file',
      'write_file',
      'edit_file',
      'list_files',
      'search',
      'enter_stage',
      'submit',
      'rm_everything',
    ),
    args,
    status: fc.constantFrom('ok', 'ok', 'ok', 'error', 'blocked', 'denied', 'timeout', 'interrupted'),
    exitCode: fc.constantFrom(0, 0, 1, null, undefined),
    completion: fc.constantFrom('marker', 'exit', 'timeout', 'unobserved', undefined),
    changed: fc.constantFrom<string[] | undefined>(undefined, [], ['src/a.ts']),
  })
  .map(({ tool, args, status, exitCode, completion, changed }) => {
    const result: Record<string, unknown> = {};
    if (exitCode !== undefined) result.exitCode = exitCode;
    if (completion !== undefined) result.completion = completion;
    if (changed !== undefined) result.filesChanged = changed;
    return { type: 'tool_call', tool, args, status, result };
  });

const outcome: fc.Arbitrary<TrajectoryEvent> = fc
  .record({ exitCode: fc.constantFrom(0, 1, null), completion: fc.constantFrom('exit', 'timeout', undefined) })
  .map(({ exitCode, completion }) => ({
    type: 'outcome',
    command: 'npm test',
    exitCode,
    ...(completion ? { completion } : {}),
  }));

const message: fc.Arbitrary<TrajectoryEvent> = fc.constant({ type: 'message', role: 'assistant', content: 'thinking' });

export const events = fc.array(
  fc.oneof({ weight: 8, arbitrary: toolCall }, { weight: 1, arbitrary: outcome }, { weight: 1, arbitrary: message }),
  {
    maxLength: 40,
  },
);

// ---------------------------------------------------------------- nasty input (test/suites/properties.test.ts)

/** One UTF-16 code unit of any value: lone surrogates, NUL and every control character included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** Characters that break naive parsers: NUL, controls, BOM, line and paragraph separators, lone surrogates, JSON punctuation. */
const troubleChar = fc.constantFrom(
  '\0',
  '\x01',
  '\x08',
  '\x1b',
  '\x7f',
  '\x85',
  '\xa0',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\r',
  '\n',
  '\r\n',
  '\t',
  '\v',
  '\f',
  '"',
  "'",
  '\\',
  '/',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  '😀',
  'é',
  '\u200b',
  '\u202e',
);

export const nastyChar = fc.oneof(codeUnit, troubleChar, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));

export const nastyString = (maxLength = 24): fc.Arbitrary<string> => fc.string({ unit: nastyChar, maxLength });

/** Keys that are special somewhere: prototype keys, and the field names of events, chunks and tool calls. */
export const jsonKey = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', ''),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'type',
      'tool',
      'args',
      'status',
      'result',
      'exitCode',
      'completion',
      'filesChanged',
      'path',
      'command',
      'stage',
      'content',
      'role',
      'lar',
      'workflow',
      'choices',
      'delta',
      'tool_calls',
      'index',
      'id',
      'function',
      'name',
      'arguments',
      'finish_reason',
      'error',
      'object',
      'message',
      'model',
      'usage',
    ),
  },
  { weight: 1, arbitrary: nastyString(8) },
);

/** Numbers JSON can write but JavaScript cannot hold, or holds only approximately. */
export const hugeNumberText = fc.constantFrom(
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '9007199254740993',
  '1' + '0'.repeat(400),
  '0.' + '0'.repeat(400) + '1',
  '1E+308',
  '-123456789012345678901234567890',
);

const scalarText = fc.oneof(
  fc.constantFrom('null', 'true', 'false', '0', '1', '-1', '0.5'),
  hugeNumberText,
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  nastyString().map((s) => JSON.stringify(s)),
);

/**
 * JSON text (valid) with prototype keys, huge numbers and escaped lone
 * surrogates. Written as text, so `__proto__` becomes an own member when
 * parsed, exactly as it does when it comes off the wire.
 */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalarText, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
  object: fc
    .array(fc.tuple(jsonKey, tie('value')), { maxLength: 4 })
    .map((ms) => `{${ms.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
})).value;

/** JSON nested thousands deep (a recursive parser or serializer overflows its stack on it), closed or not. */
export const deepJsonText = fc
  .record({
    depth: fc.integer({ min: 2_000, max: 60_000 }),
    open: fc.constantFrom('[', '{"a":', '{"__proto__":'),
    closed: fc.boolean(),
  })
  .map(({ depth, open, closed }) =>
    !closed
      ? open.repeat(depth)
      : open === '['
        ? '['.repeat(depth) + ']'.repeat(depth)
        : open.repeat(depth) + '1' + '}'.repeat(depth),
  );

/** Text edits that turn good JSON into almost-good JSON: cut it, or put a nasty character somewhere. */
export const mangled = (text: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(text, fc.nat(), fc.constantFrom('cut', 'insert', 'none'), nastyChar).map(([t, at, how, ch]) => {
    const i = t.length ? at % (t.length + 1) : 0;
    return how === 'cut' ? t.slice(0, i) : how === 'insert' ? t.slice(0, i) + ch + t.slice(i) : t;
  });

/** A field that usually has the right type and sometimes any JSON at all. */
const field = (good: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: jsonText });
const quoted = (...xs: string[]) => fc.constantFrom(...xs.map((x) => JSON.stringify(x)));

/** An object's text from optional members: a missing member is left out. */
function objectText(members: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  return fc
    .record(
      Object.fromEntries(Object.entries(members).map(([k, v]) => [k, fc.option(v, { freq: 6 })])) as Record<
        string,
        fc.Arbitrary<string | null>
      >,
    )
    .chain((r) =>
      fc.option(fc.tuple(jsonKey, jsonText), { freq: 4 }).map((extra) => {
        const parts = Object.entries(r).flatMap(([k, v]) => (v === null ? [] : [`${JSON.stringify(k)}:${v}`]));
        if (extra) parts.push(`${JSON.stringify(extra[0])}:${extra[1]}`);
        return `{${parts.join(',')}}`;
      }),
    );
}

const resultText = objectText({
  exitCode: field(fc.oneof(fc.constantFrom('0', '1', 'null', '255', '-1'), hugeNumberText)),
  completion: field(quoted('marker', 'exit', 'timeout', 'unobserved', 'bogus')),
  output: field(nastyString(40).map((s) => JSON.stringify(s))),
  filesChanged: field(
    fc
      .array(
        nastyString(8).map((s) => JSON.stringify(s)),
        { maxLength: 3 },
      )
      .map((xs) => `[${xs.join(',')}]`),
  ),
  durationMs: field(fc.constantFrom('0', '12.5', '-1', '1e400')),
});

/** Trajectory lines shaped like events (and a header), with wrong types, missing and extra members. */
export const eventishLine: fc.Arbitrary<string> = fc.oneof(
  objectText({
    type: field(quoted('tool_call')),
    tool: field(
      quoted('read_file', 'run_command', 'write_file', 'enter_stage', 'submit', 'constructor', '__proto__', ''),
    ),
    args: jsonText,
    argsError: field(nastyString(10).map((s) => JSON.stringify(s))),
    status: field(quoted('ok', 'error', 'blocked', 'denied', 'timeout', 'interrupted', 'OK')),
    result: field(resultText),
    at: field(quoted('2026-01-01T00:00:00Z', '')),
  }),
  objectText({
    type: field(quoted('message')),
    role: field(quoted('system', 'user', 'assistant', 'tool')),
    content: field(nastyString(60).map((s) => JSON.stringify(s))),
  }),
  objectText({
    type: field(quoted('outcome')),
    command: field(nastyString(10).map((s) => JSON.stringify(s))),
    exitCode: field(fc.constantFrom('0', '1', 'null', '1e400')),
    completion: field(quoted('exit', 'timeout')),
  }),
  objectText({
    type: field(quoted('end')),
    reason: field(quoted('submitted', 'interrupted', 'cancelled', 'limit', 'error', 'done')),
    detail: field(nastyString(10).map((s) => JSON.stringify(s))),
  }),
  objectText({
    lar: field(fc.constantFrom('1', '2', '"1"')),
    type: field(quoted('header')),
    task: field(nastyString(10).map((s) => JSON.stringify(s))),
    workflow: field(
      quoted('builtin:default-coding', 'builtin:nope', 'builtin:constructor', 'builtin:__proto__', 'x.larflow.json'),
    ),
    started: field(quoted('now', '')),
  }),
);

/** Very long lines, built once: a megabyte of content, a long run of spaces, a long bad line. */
const LONG = 'x'.repeat(1 << 20);
export const longLine = fc.constantFrom(
  JSON.stringify({ type: 'message', role: 'assistant', content: LONG }),
  JSON.stringify({
    type: 'tool_call',
    tool: 'run_command',
    args: { command: LONG.slice(0, 100_000) },
    status: 'ok',
    result: { exitCode: 0, output: LONG },
  }),
  ' '.repeat(200_000) + '{}',
  '{"type":"message","content":"' + LONG.slice(0, 300_000),
);

/** A line a trajectory file might hold, good, bad or hostile, but short and shallow. */
export const shortNastyLine: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: eventishLine },
  { weight: 2, arbitrary: mangled(eventishLine) },
  { weight: 2, arbitrary: nastyString(60) },
  { weight: 2, arbitrary: jsonText },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\t',
      '\ufeff',
      '\0',
      '[]',
      'null',
      '"header"',
      '{"type":"header"}',
      '{"__proto__":{"type":"tool_call"}}',
    ),
  },
);

/** Any line a trajectory file might hold, nested tens of thousands deep and a megabyte long included. */
export const nastyLine: fc.Arbitrary<string> = fc.oneof(
  { weight: 11, arbitrary: shortNastyLine },
  { weight: 1, arbitrary: deepJsonText },
  { weight: 1, arbitrary: longLine },
);

// ---------------------------------------------------------------- random workflows and events over them

const STAGE_IDS = [
  'explore',
  'edit',
  'verify',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'a',
  'B-2',
  'z_z',
] as const;
const ALL_TOOLS = [
  'run_command',
  'read_file',
  'write_file',
  'edit_file',
  'list_files',
  'search',
  'enter_stage',
  'submit',
] as const;
const COMMAND_PATTERNS = [
  'rm -rf /',
  '*sudo*',
  'curl *|*sh',
  'git push*',
  'npm test',
  'npm test*',
  '*test*',
  'ls*',
  '?',
  '*',
  'echo ?*',
];
const PATH_PATTERNS = ['.git', '.git/*', 'secrets/*', 'src/*.ts', '*', '?'];

const exitCondition = fc.oneof(
  fc.record({
    kind: fc.constant('tool_succeeded'),
    tool: fc.constantFrom(...ALL_TOOLS),
    atLeast: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({
    kind: fc.constant('command_succeeded'),
    pattern: fc.constantFrom(...COMMAND_PATTERNS),
    afterLastChange: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('command_ran'),
    pattern: fc.constantFrom(...COMMAND_PATTERNS),
    afterLastChange: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('file_changed') }),
  fc.record({ kind: fc.constant('file_changed'), pattern: fc.constantFrom(...PATH_PATTERNS) }),
  fc.record({ kind: fc.constant('outcome_ran'), afterLastChange: fc.boolean() }),
);

/**
 * Well-formed workflows (as JSON values) with 1–5 stages, some named like
 * Object.prototype members: every stage reachable along a chain from the
 * start, the last one terminal, random extra transitions, tools, exit
 * conditions, budgets, command and path policies and reward weights.
 */
export const workflowValue: fc.Arbitrary<Record<string, unknown>> = fc
  .uniqueArray(fc.constantFrom<string>(...STAGE_IDS), { minLength: 1, maxLength: 5 })
  .chain((ids) =>
    fc.record({
      stages: fc.tuple(
        ...ids.map((id) =>
          fc.record({
            id: fc.constant(id),
            tools: fc.subarray([...ALL_TOOLS]),
            exit: fc.array(exitCondition, { maxLength: 2 }),
            budget: fc.integer({ min: 1, max: 6 }),
          }),
        ),
      ),
      extra: fc.array(fc.tuple(fc.constantFrom(...ids), fc.constantFrom(...ids)), { maxLength: 4 }),
      terminal: fc.subarray(ids),
      deny: fc.subarray(COMMAND_PATTERNS, { maxLength: 3 }),
      ask: fc.subarray(COMMAND_PATTERNS, { maxLength: 3 }),
      paths: fc.subarray(PATH_PATTERNS, { maxLength: 2 }),
      alpha: fc.constantFrom(0, 0.25, 0.5, 1),
      beta: fc.constantFrom(0, 0.25, 0.5),
    }),
  )
  .map(({ stages, extra, terminal, deny, ask, paths, alpha, beta }) => {
    const ids = stages.map((s) => s.id);
    // A Map, not an object: stage ids such as "toString" must not find Object.prototype's members.
    const out = new Map<string, string[]>();
    const link = (from: string, to: string) => {
      const targets = out.get(from) ?? [];
      if (!targets.includes(to)) targets.push(to);
      out.set(from, targets);
    };
    for (let i = 0; i + 1 < ids.length; i++) link(ids[i]!, ids[i + 1]!);
    for (const [from, to] of extra) link(from, to);
    const transitions = Object.fromEntries(out);
    const terminals = [...new Set([...terminal, ids[ids.length - 1]!])];
    const tools = (id: string, base: readonly string[]) => {
      const t = new Set(base);
      if (out.get(id)?.length) t.add('enter_stage');
      if (terminals.includes(id)) t.add('submit');
      else t.delete('submit');
      return [...t];
    };
    return {
      lar: 1,
      id: 'random',
      stages: stages.map((s) => ({ ...s, tools: tools(s.id, s.tools) })),
      transitions,
      start: ids[0]!,
      terminal: terminals,
      outcome: { command: 'npm test' },
      policy: { commands: { deny, ask }, paths: { deny: paths } },
      rewards: { alpha, beta },
    };
  });

/** Plausible arguments for every tool, junk and hostile ones included. */
const eventArgs = (stages: readonly string[]) =>
  fc.oneof(
    fc.record({
      command: fc.oneof(
        fc.constantFrom(
          'npm test',
          'ls',
          'rm -rf /',
          'ls && rm -rf /',
          'sudo ls',
          'echo $(whoami)',
          'npm   test',
          'git push origin',
          'curl x | sh',
          'true; npm test',
        ),
        nastyString(12),
      ),
    }),
    fc.record({ command: fc.constantFrom('npm test', 'ls'), cwd: fc.constantFrom('.', 'src', '../x', '.git') }),
    fc.record({
      path: fc.oneof(
        fc.constantFrom(
          'src/a.ts',
          'test/a.test.ts',
          '../etc/passwd',
          '/abs',
          'src\\b.ts',
          '.git/config',
          'a/../b',
          'secrets/k',
          '~/.bashrc',
          'C:/x',
        ),
        nastyString(8),
      ),
    }),
    fc.record({ path: fc.constantFrom('src/a.ts', '.git/HEAD'), content: nastyString(5) }),
    fc.record({
      path: fc.constantFrom('src/a.ts', 'x'),
      search: fc.constantFrom('a', 'b', ''),
      replace: nastyString(3),
    }),
    fc.record({
      stage: fc.oneof(
        fc.constantFrom(...stages),
        fc.constantFrom('nowhere', '__proto__', 'constructor', 'toString', ''),
      ),
    }),
    fc.record({ summary: nastyString(5) }),
    fc.record({ pattern: fc.constantFrom('TODO', 'x') }),
    fc.constant({}),
    fc.constant(null),
    fc.record({ bogus: fc.integer() }),
    jsonText.map((t) => JSON.parse(t) as unknown),
  );

/** Random event sequences over the stages of a workflow: calls of every status, outcomes, messages and ends. */
export const eventsOver = (stages: readonly string[], maxLength = 40): fc.Arbitrary<TrajectoryEvent[]> => {
  const call: fc.Arbitrary<TrajectoryEvent> = fc
    .record({
      tool: fc.constantFrom(...ALL_TOOLS, ...ALL_TOOLS, 'rm_everything', 'constructor', '__proto__'),
      args: eventArgs(stages),
      argsError: fc.option(fc.constant('Unexpected token'), { freq: 12 }),
      status: fc.constantFrom('ok', 'ok', 'ok', 'error', 'blocked', 'denied', 'timeout', 'interrupted'),
      exitCode: fc.constantFrom(0, 0, 1, null, undefined),
      completion: fc.constantFrom('marker', 'exit', 'timeout', 'unobserved', undefined),
      changed: fc.constantFrom<string[] | undefined>(undefined, [], ['src/a.ts'], ['secrets/k', 'src/b.ts']),
      testsRan: fc.constantFrom<number | undefined>(undefined, undefined, 0, 3),
    })
    .map(({ tool, args, argsError, status, exitCode, completion, changed, testsRan }) => {
      const result: Record<string, unknown> = {};
      if (exitCode !== undefined) result.exitCode = exitCode;
      if (testsRan !== undefined) result.testsRan = testsRan;
      if (completion !== undefined) result.completion = completion;
      if (changed !== undefined) result.filesChanged = changed;
      return {
        type: 'tool_call',
        tool,
        args: argsError ? null : args,
        ...(argsError ? { argsError } : {}),
        status,
        result,
      };
    });
  const outcomeEvent: fc.Arbitrary<TrajectoryEvent> = fc
    .record({ exitCode: fc.constantFrom(0, 1, null), completion: fc.constantFrom('exit', 'timeout', undefined) })
    .map(({ exitCode, completion }) => ({
      type: 'outcome',
      command: 'npm test',
      exitCode,
      ...(completion ? { completion } : {}),
    }));
  const other: fc.Arbitrary<TrajectoryEvent> = fc.constantFrom<TrajectoryEvent>(
    { type: 'message', role: 'assistant', content: 'thinking' },
    { type: 'end', reason: 'interrupted' },
  );
  return fc.array(
    fc.oneof({ weight: 8, arbitrary: call }, { weight: 1, arbitrary: outcomeEvent }, { weight: 1, arbitrary: other }),
    { maxLength },
  );
};
