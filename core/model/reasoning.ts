/**
 * Reasoning left in `content` by a server that runs no reasoning parser. It
 * stands at the start of the answer, as vLLM's and SGLang's Qwen3 parsers
 * read it: a leading `<think>…</think>` block (Magistral: `[THINK]…[/THINK]`),
 * or, when the chat template already opened `<think>` in the prompt
 * (Qwen3.5), only the closing tag, everything before it being reasoning. A
 * block the model never closed (the answer was cut off) is reasoning to the
 * end. The closing tag alone counts only when the template is known to open
 * the block (see SplitOptions). Nowhere else are these tags touched: a `<think>` in the middle of an
 * answer, or inside a call's arguments (a file that holds the tag), is text.
 * Tool calls are looked for only in what follows the reasoning.
 */
export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

const PAIRS: readonly [string, string][] = [
  [THINK_OPEN, THINK_CLOSE],
  ['[THINK]', '[/THINK]'],
];

export interface SplitOptions {
  /**
   * The chat template opened `<think>` in the prompt (Qwen3.5 and the models
   * built on it, thinking on): the answer's first closing tag ends the
   * reasoning, as vLLM's qwen3 parser reads it. Otherwise a closing tag with
   * no opening one is text (an answer that talks about the tag).
   */
  promptOpensThinking?: boolean;
}

export function splitThinking(content: string, opts: SplitOptions = {}): { text: string; reasoning: string } {
  const lead = content.length - content.trimStart().length;
  for (const [open, close] of PAIRS) {
    if (content.startsWith(open, lead)) {
      const start = lead + open.length;
      const end = content.indexOf(close, start);
      if (end < 0) return { text: '', reasoning: content.slice(start).trim() };
      return { text: content.slice(end + close.length).trim(), reasoning: content.slice(start, end).trim() };
    }
  }
  if (!opts.promptOpensThinking) return { text: content, reasoning: '' };
  // The prompt opened the block: all up to the first closing tag is reasoning, a call drafted in it too.
  const end = content.indexOf(THINK_CLOSE);
  if (end < 0) return { text: content, reasoning: '' };
  return { text: content.slice(end + THINK_CLOSE.length).trim(), reasoning: content.slice(0, end).trim() };
}
