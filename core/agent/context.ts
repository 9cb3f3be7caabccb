import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/**
 * Keeps a long run's conversation within the model's context: when the
 * messages grow past `budgetChars`, the oldest tool results (and tool-result
 * messages sent as user text) are replaced by a one-line stub, oldest first,
 * until the conversation fits. The system prompt, the task, the model's own
 * turns and the most recent `keepRecent` messages are never touched, so the
 * model keeps its plan and the latest evidence. Returns a new array.
 */
export function compactMessages(messages: readonly ChatCompletionMessageParam[], budgetChars: number, keepRecent = 8): ChatCompletionMessageParam[] {
  const out = messages.map((m) => ({ ...m })) as ChatCompletionMessageParam[];
  let total = out.reduce((n, m) => n + sizeOf(m), 0);
  const protectedFrom = Math.max(2, out.length - keepRecent);
  for (let i = 2; i < protectedFrom && total > budgetChars; i++) {
    const m = out[i]!;
    const isToolResult = m.role === 'tool' || (m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('Result of '));
    if (!isToolResult || typeof m.content !== 'string' || m.content.startsWith('[earlier result elided')) continue;
    const before = sizeOf(m);
    const firstLine = m.content.split('\n', 1)[0]!.slice(0, 120);
    (m as { content: string }).content = `[earlier result elided to save context: ${m.content.length} characters; it began: ${firstLine}]`;
    total -= before - sizeOf(m);
  }
  return out;
}

function sizeOf(m: ChatCompletionMessageParam): number {
  const c = (m as { content?: unknown }).content;
  const text = typeof c === 'string' ? c.length : Array.isArray(c) ? JSON.stringify(c).length : 0;
  const calls = (m as { tool_calls?: unknown[] }).tool_calls;
  return text + (calls ? JSON.stringify(calls).length : 0);
}
