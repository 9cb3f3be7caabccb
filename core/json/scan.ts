/**
 * The one string-aware walk over JSON text, so that every reader that repairs, cuts or measures JSON a model
 * wrote agrees on where its strings end (a backslash escapes the character after it, even in broken text).
 */

/** Where the string opened by the quote at `open` ends: its closing quote, or the text's length if none. */
export function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22 /* " */) return i;
  }
  return text.length;
}

/** Where `scanJson` stopped: the offset `visit` stopped at (-1: the text ran out), and whether in a string. */
export interface JsonScan {
  stoppedAt: number;
  inString: boolean;
}

/**
 * Calls `visit` with the code and offset of each character from `from` on that is outside strings, the quote
 * opening a string included (what follows up to its closing quote is skipped). `visit` returns true to stop.
 */
export function scanJson(text: string, from: number, visit: (code: number, at: number) => boolean | void): JsonScan {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (visit(c, i) === true) return { stoppedAt: i, inString: false };
    if (c === 0x22 && (i = stringEnd(text, i)) === text.length) return { stoppedAt: -1, inString: true };
  }
  return { stoppedAt: -1, inString: false };
}
