import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_SCRIPT, demoTurn } from '../../devtools/demo-model';
import type { ChatRequestBody, ScriptedTurn } from '../../testkit/scripted-turns';

type Message = NonNullable<ChatRequestBody['messages']>[number];
const calls = (t: ScriptedTurn) => ('toolCalls' in t ? (t.toolCalls ?? []).map((c) => c.name) : []);
const content = (t: ScriptedTurn) => ('content' in t ? String(t.content) : '');

/** A conversation: the answered turns as assistant + tool message pairs. */
function after(first: Message[], turns: [string, string][]): Message[] {
  return [
    ...first,
    ...turns.flatMap(([, result]): Message[] => [{ role: 'assistant' }, { role: 'tool', content: result }]),
  ];
}

test("a conversation's first task replays the recorded run, turn by turn", () => {
  const start: Message[] = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'Make npm test pass.' },
  ];
  for (let i = 0; i < DEMO_SCRIPT.length; i++) {
    const messages = after(
      start,
      Array.from({ length: i }, () => ['', 'ok'] as [string, string]),
    );
    assert.deepEqual(demoTurn({ messages }), DEMO_SCRIPT[i]);
  }
});

test('a follow-up is answered from the workspace as it is: the tests fail after a restore put the bug back', () => {
  const chat: Message[] = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'Make npm test pass.' },
    { role: 'assistant', content: 'Done' },
    { role: 'user', content: 'Does npm test pass now?' },
  ];
  assert.deepEqual(calls(demoTurn({ messages: chat })), ['read_file']);
  const read = [...chat, { role: 'assistant' }, { role: 'tool', content: 'function sum(a, b) {\n  return a - b;\n}' }];
  assert.deepEqual(calls(demoTurn({ messages: read })), ['run_command']);
  const failing = [...read, { role: 'assistant' }, { role: 'tool', content: 'exit code 1\nnot ok 1 - sum' }];
  const answer = demoTurn({ messages: failing });
  assert.deepEqual(calls(answer), []);
  assert.match(content(answer), /`npm test` fails right now \(exit code 1\), and `sum` in src\/sum\.js subtracts/);
  const fixed = [
    ...chat,
    { role: 'assistant' },
    { role: 'tool', content: 'function sum(a, b) {\n  return a + b;\n}' },
    { role: 'assistant' },
    { role: 'tool', content: 'exit code 0\n# pass 2' },
  ];
  assert.match(content(demoTurn({ messages: fixed })), /`npm test` passes right now, and `sum` in src\/sum\.js adds/);
});
