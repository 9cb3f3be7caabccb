import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { compactMessages } from '../core/agent/context';

const big = (n: number) => `$ cat big.log\n${'x'.repeat(n)}`;

test('old tool results are elided first; the task, the model turns and recent messages stay', () => {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'rules' },
    { role: 'user', content: 'the task' },
  ];
  for (let i = 0; i < 10; i++) {
    messages.push({ role: 'assistant', content: `plan ${i}`, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'run_command', arguments: '{}' } }] });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: big(10_000) });
  }
  const out = compactMessages(messages, 60_000, 4);
  const size = out.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : 0), 0);
  assert.ok(size <= 60_000 + 10 * 200, `fits the budget: ${size}`);
  assert.equal(out[1]!.content, 'the task');
  assert.ok(out.filter((m) => m.role === 'assistant').every((m, i) => m.content === `plan ${i}`), 'the model keeps its own turns');
  assert.match(String(out[3]!.content), /^\[earlier result elided to save context: 10014 characters; it began: \$ cat big\.log\]$/);
  assert.equal(out.at(-1)!.content, big(10_000), 'the latest result is whole');
  assert.equal(messages[3]!.content, big(10_000), 'the input is not changed');
  // Under the budget nothing changes.
  assert.deepEqual(compactMessages(messages.slice(0, 6), 1_000_000), messages.slice(0, 6));
});
