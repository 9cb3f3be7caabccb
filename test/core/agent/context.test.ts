import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerBudget, budgetFor, capText, compact, promptLimit, tooSmall } from '../../../core/agent/context';
import { Conversation } from '../../../core/agent/conversation';
import { TokenMeter } from '../../../core/model/tokens';
import { toolDefinitions } from '../../../core/schema/tool-definitions';
import { textOf } from '../../../testkit/text';

const big = (n: number) => `$ cat big.log\n${'word '.repeat(n / 5)}`;
const specs = toolDefinitions().map((t) => t.function);

function longConversation(turns: number): Conversation {
  const c = new Conversation('rules', 'the task', specs);
  for (let i = 0; i < turns; i++) {
    c.push({
      kind: 'assistant',
      text: `plan ${i}`,
      calls: [{ id: `c${i}`, name: 'run_command', args: { command: `cat big${i}.log` } }],
    });
    c.push({ kind: 'results', results: [{ callId: `c${i}`, name: 'run_command', content: big(10_000) }] });
  }
  return c;
}

test('the budget keeps prompt + answer inside the window with a margin, for any window', () => {
  for (const w of [2048, 8192, 32_768, 131_072]) {
    const b = budgetFor(w);
    assert.ok(promptLimit(b) + b.reserve + b.margin === w, `${w}`);
    assert.ok(b.reserve <= w / 2 && b.reserve >= 256);
    // However big the prompt, the answer budget never asks past the window (the loop refuses a budget below MIN_ANSWER).
    for (const p of [0, promptLimit(b), w - b.margin - 5, w]) assert.ok(p + answerBudget(b, p) <= w - b.margin);
  }
  assert.equal(budgetFor(32_768, 1000).reserve, 1000, 'an explicit answer budget is kept');
});

test('compaction elides old results first and keeps the system prompt, the task, the model turns and the latest result', async () => {
  const c = longConversation(10);
  const meter = new TokenMeter();
  let asked = 0;
  const r = await compact(c, {
    format: 'native',
    meter,
    target: 12_000,
    window: 32_768,
    reason: 'window',
    ordinal: 1,
    facts: () => 'facts',
    summarize: () => {
      asked++;
      return Promise.resolve({ text: 'note' });
    },
  });
  assert.equal(asked, 0, 'eliding was enough: no summary asked');
  assert.ok(r.tokensAfter <= 12_000 && r.tokensBefore > r.tokensAfter, JSON.stringify(r));
  assert.ok(r.elided > 0 && r.summarized === 0);
  const m = c.render('native');
  assert.equal(m[0]!.content, 'rules');
  assert.equal(m[1]!.content, 'the task');
  assert.match(
    textOf(m[3]!.content),
    /^\[earlier result elided to fit the context window: \d+ characters from run_command; it began: \$ cat big\.log\]$/,
  );
  assert.equal(m.at(-1)!.content, big(10_000), 'the latest result is whole');
  assert.deepEqual(
    m.filter((x) => x.role === 'assistant').map((x) => x.content),
    Array.from({ length: 10 }, (_, i) => `plan ${i}`),
  );
});

test('when eliding is not enough the model summarizes the older turns; a failed summary falls back to the host note', async () => {
  for (const answer of ['## Task\n- fix it', undefined]) {
    const c = new Conversation('rules', 'the task', specs);
    for (let i = 0; i < 40; i++)
      c.push(
        {
          kind: 'assistant',
          text: `thinking about step ${i} `.repeat(40),
          calls: [{ id: `c${i}`, name: 'read_file', args: { path: `f${i}` } }],
        },
        { kind: 'results', results: [{ callId: `c${i}`, name: 'read_file', content: 'ok' }] },
      );
    const r = await compact(c, {
      format: 'qwen3_5',
      meter: new TokenMeter(),
      target: 4_000,
      window: 8_192,
      reason: 'context_error',
      ordinal: 2,
      facts: () => 'Recorded by Lean4 Agentic: stage edit',
      summarize: (messages, maxTokens) => {
        assert.ok(maxTokens >= 256);
        assert.match(textOf(messages[1]!.content), /## What failed/);
        return Promise.resolve(answer === undefined ? undefined : { text: answer, tokens: 9 });
      },
    });
    assert.ok(r.summarized > 0 && r.tokensAfter <= 4_000, JSON.stringify({ ...r, summary: undefined }));
    assert.equal(r.summaryBy, answer ? 'model' : 'host');
    assert.match(r.summary!, /compaction 2 of this run/);
    assert.match(r.summary!, /Recorded by Lean4 Agentic: stage edit/);
    if (answer) assert.match(r.summary!, /## Task\n- fix it/);
    else assert.match(r.summary!, /read_file \{"path":"f0"\}/);
    const m = c.render('qwen3_5');
    assert.match(
      textOf(m[1]!.content),
      /^the task\n\n\[The conversation so far, summarized to fit/,
      'the note follows the task in its message',
    );
    assert.equal(m[2]!.role, 'assistant', 'the kept turns begin with a model turn');
  }
});

test('capText keeps the head and the tail of a long result and says what it left out', () => {
  const meter = new TokenMeter();
  const text = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n');
  const out = capText(text, 500, meter, 'read_file shows the rest');
  assert.ok(meter.estimateText(out) < 700);
  assert.ok(out.startsWith('line 0\n'));
  assert.ok(out.endsWith('line 4999'));
  assert.match(out, /characters left out to fit the context window; read_file shows the rest/);
  assert.equal(capText('short', 500, meter, ''), 'short');
});

test('reasoning goes back in the Qwen text formats for the turns since the last user query, never natively', () => {
  const c = new Conversation('rules', 'the task', specs);
  c.push({
    kind: 'assistant',
    text: 'Reading.',
    calls: [{ id: 'a', name: 'read_file', args: { path: 'x' } }],
    reasoning: 'x first',
  });
  c.push({ kind: 'results', results: [{ callId: 'a', name: 'read_file', content: 'X' }] });
  const hermes = c.render('hermes');
  assert.equal(
    hermes[2]!.content,
    '<think>\nx first\n</think>\n\nReading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "x"}}\n</tool_call>',
  );
  assert.equal(
    c.render('qwen3_5')[2]!.content,
    '<think>\nx first\n</think>\n\nReading.\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nx\n</parameter>\n</function>\n</tool_call>',
  );
  assert.equal((c.render('native')[2] as { content: string }).content, 'Reading.');
  assert.doesNotMatch(textOf(c.render('qwen3_coder')[2]!.content), /think/, "Qwen3-Coder's template has no reasoning");
  // A user message (a nudge) is a new query: the reasoning before it is dropped, as the template drops it.
  c.push(
    { kind: 'assistant', text: 'Hmm.', calls: [], reasoning: 'stuck' },
    { kind: 'user', text: 'Continue by calling a tool.' },
  );
  const after = c.render('hermes');
  assert.equal(
    after[2]!.content,
    'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "x"}}\n</tool_call>',
  );
  assert.equal(after[4]!.content, 'Hmm.');
});

test('a compaction note is part of the task message: the roles keep alternating', async () => {
  const c = longConversation(30);
  await compact(c, {
    format: 'native',
    meter: new TokenMeter(),
    target: 3000,
    window: 8192,
    reason: 'window',
    ordinal: 1,
    facts: () => 'facts',
    summarize: () => Promise.resolve({ text: '## Task\n- t' }),
  });
  const m = c.render('native');
  assert.equal(m[1]!.role, 'user');
  assert.match(textOf(m[1]!.content), /^the task\n\n\[The conversation so far, summarized/);
  for (let i = 1; i < m.length; i++)
    assert.ok(
      !(m[i]!.role === 'user' && m[i - 1]!.role === 'user'),
      `messages ${i - 1} and ${i} are both user messages`,
    );
});

test('a window too small for the system prompt and the tools is refused up front; the answer budget leaves room for the conversation', () => {
  assert.match(tooSmall(2048, 2100)!, /cannot hold the system prompt and the tool descriptions \(about 2100 tokens\)/);
  assert.equal(tooSmall(8192, 2500), undefined);
  const b = budgetFor(4096, 4096, 2100);
  assert.ok(b.reserve <= (4096 - b.margin - 2100) * 0.75 && b.reserve >= 256, JSON.stringify(b));
});

test("reasoning sent back is the first thing compaction gives up, the last turn's last; a long-thinking run still compacts to its target", async () => {
  const c = new Conversation('rules', 'the task', specs);
  for (let i = 0; i < 12; i++) {
    c.push({
      kind: 'assistant',
      text: `step ${i}`,
      calls: [{ id: `c${i}`, name: 'read_file', args: { path: `f${i}` } }],
      reasoning: `thinking hard about step ${i} `.repeat(200),
    });
    c.push({ kind: 'results', results: [{ callId: `c${i}`, name: 'read_file', content: 'small' }] });
  }
  const meter = new TokenMeter();
  const before = meter.estimate(c.render('hermes'));
  const r = await compact(c, {
    format: 'hermes',
    meter,
    target: Math.floor(before / 3),
    window: 32_768,
    reason: 'window',
    ordinal: 1,
    facts: () => 'facts',
    summarize: () => Promise.resolve({ text: 'note' }),
  });
  assert.ok(r.tokensAfter <= Math.floor(before / 3), JSON.stringify({ ...r, summary: undefined }));
  const flags = c.turns
    .filter((t) => t.kind === 'assistant')
    .map((t) => (t.kind === 'assistant' && t.reasoning ? 1 : 0));
  assert.ok(flags.includes(0), 'reasoning was given up');
  assert.deepEqual(flags, [...flags].sort(), `oldest first: ${flags.join('')}`);
});

test('a note the host writes carries the earlier note forward', async () => {
  const c = longConversation(20);
  const meter = new TokenMeter();
  const opts = {
    format: 'native' as const,
    meter,
    target: 2500,
    window: 16_384,
    reason: 'window' as const,
    facts: () => 'Recorded by Lean4 Agentic (exact, from the run itself):\n- facts',
  };
  await compact(c, {
    ...opts,
    ordinal: 1,
    summarize: () => Promise.resolve({ text: '## What was tried\n- MARKER-NOTE-1: build.log shows no error' }),
  });
  for (let i = 20; i < 30; i++)
    c.push(
      {
        kind: 'assistant',
        text: `plan ${i}`,
        calls: [{ id: `c${i}`, name: 'run_command', args: { command: `cat big${i}.log` } }],
      },
      { kind: 'results', results: [{ callId: `c${i}`, name: 'run_command', content: big(10_000) }] },
    );
  const r = await compact(c, {
    ...opts,
    ordinal: 2,
    modelNote: false,
    summarize: () => assert.fail('the model is not asked this time'),
  });
  assert.equal(r.summaryBy, 'host');
  assert.match(r.summary!, /MARKER-NOTE-1: build\.log shows no error/);
  assert.equal(
    (r.summary!.match(/Recorded by Lean4 Agentic/g) ?? []).length,
    1,
    'the host facts are written once, anew',
  );
});

test('a conversation knows when the model has not answered its last turn', () => {
  const c = new Conversation('rules', 'the task', specs);
  assert.equal(c.awaitsModel, true);
  c.push({ kind: 'assistant', text: 'ok', calls: [] });
  assert.equal(c.awaitsModel, false);
  c.push({ kind: 'user', text: 'more' });
  assert.equal(c.awaitsModel, true);
});
