/**
 * Reasoning left in `content` by a server that runs no reasoning parser:
 * `<think>…</think>` blocks, and the Qwen3-family case where the chat
 * template already opened `<think>` in the prompt, so the answer holds only
 * the closing tag (everything before it is reasoning). A block the model
 * never closed (the answer was cut off) is reasoning to the end. Tool calls
 * are looked for only in what is left: never inside reasoning.
 */
export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

export function splitThinking(content: string): { text: string; reasoning: string } {
  if (!content.includes(THINK_OPEN) && !content.includes(THINK_CLOSE)) return { text: content, reasoning: '' };
  const reasoning: string[] = [];
  const text: string[] = [];
  let at = 0;
  const firstOpen = content.indexOf(THINK_OPEN);
  const firstClose = content.indexOf(THINK_CLOSE);
  if (firstClose >= 0 && (firstOpen < 0 || firstClose < firstOpen)) {
    // Only the closing tag: the prompt opened the block.
    reasoning.push(content.slice(0, firstClose));
    at = firstClose + THINK_CLOSE.length;
  }
  for (;;) {
    const open = content.indexOf(THINK_OPEN, at);
    if (open < 0) {
      text.push(content.slice(at));
      break;
    }
    text.push(content.slice(at, open));
    const start = open + THINK_OPEN.length;
    const close = content.indexOf(THINK_CLOSE, start);
    reasoning.push(close < 0 ? content.slice(start) : content.slice(start, close));
    if (close < 0) break;
    at = close + THINK_CLOSE.length;
  }
  // A stray closing tag later on says nothing more: it is not text to show or parse.
  return { text: text.join('').split(THINK_CLOSE).join('').trim(), reasoning: reasoning.map((r) => r.trim()).filter(Boolean).join('\n\n') };
}
