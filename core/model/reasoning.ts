/**
 * Reasoning left in `content` by a server that runs no reasoning parser. It
 * stands at the start of the answer, as vLLM's and SGLang's Qwen3 parsers
 * read it: a leading `<think>…</think>` block (Magistral: `[THINK]…[/THINK]`),
 * or, when the chat template already opened `<think>` in the prompt
 * (Qwen3.5), only the closing tag, everything before it being reasoning. A
 * block the model never closed (the answer was cut off) is reasoning to the
 * end. Nowhere else are these tags touched: a `<think>` in the middle of an
 * answer, or inside a call's arguments (a file that holds the tag), is text.
 * Tool calls are looked for only in what follows the reasoning.
 */
export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

const PAIRS: readonly [string, string][] = [
  [THINK_OPEN, THINK_CLOSE],
  ['[THINK]', '[/THINK]'],
];

/** Where a call may begin: a closing tag after one of these is not the end of reasoning. */
const CALL_MARKERS = ['<tool_call>', '<function=', '[TOOL_CALLS', '<|python_tag|>', '<|channel|>', '<|start|>'];

export function splitThinking(content: string): { text: string; reasoning: string } {
  const lead = content.length - content.trimStart().length;
  for (const [open, close] of PAIRS) {
    if (content.startsWith(open, lead)) {
      const start = lead + open.length;
      const end = content.indexOf(close, start);
      if (end < 0) return { text: '', reasoning: content.slice(start).trim() };
      return { text: content.slice(end + close.length).trim(), reasoning: content.slice(start, end).trim() };
    }
  }
  // Only the closing tag: the prompt opened the block. It counts before any call, never inside one
  // (nor inside an answer that is JSON: Llama's calls have no marker).
  if (/^[{[]/.test(content.trimStart())) return { text: content, reasoning: '' };
  for (const [, close] of PAIRS) {
    const end = content.indexOf(close);
    if (end < 0) continue;
    const before = content.slice(0, end);
    if (CALL_MARKERS.some((m) => before.includes(m))) continue;
    return { text: content.slice(end + close.length).trim(), reasoning: before.trim() };
  }
  return { text: content, reasoning: '' };
}
