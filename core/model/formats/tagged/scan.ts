/**
 * Finding the tags of `<tool_call>` text without rescanning it: the tag names and the remembering search that
 * both the block reader and the XML body reader walk with.
 */
import { skipSpace } from '../calls';

export const CALL_OPEN = '<tool_call>';
export const CALL_CLOSE = '</tool_call>';
export const FN_OPEN = '<function=';
export const FN_CLOSE = '</function>';
export const PARAM_OPEN = '<parameter=';
export const PARAM_CLOSE = '</parameter>';

/**
 * `indexOf` that remembers: the next occurrence of a tag from a position is
 * searched again only once reading has passed the last one found, and a tag
 * not found from some position stays not found after it. Without it, content full of one tag and none of
 * another rescans the whole text per tag (quadratic in what a model may write).
 */
export type Find = ((tag: string, from: number) => number) & { structural: () => number[] };

export function finder(s: string): Find {
  /** Per tag, the last search: from where, and the first occurrence found (-1: none to the end). */
  const last = new Map<string, { from: number; at: number }>();
  const find = ((tag: string, from: number) => {
    const known = last.get(tag);
    // Valid when there is nothing between its start and what it found, and `from` lies in that stretch.
    if (known && known.from <= from && (known.at < 0 || from <= known.at)) return known.at;
    const at = s.indexOf(tag, from);
    last.set(tag, { from, at });
    return at;
  }) as Find;
  let closers: number[] | undefined;
  /** Every `</parameter>` that the structure allows to close a value, in order (found once). */
  find.structural = () => {
    if (closers) return closers;
    closers = [];
    for (let i = s.indexOf(PARAM_CLOSE); i >= 0; i = s.indexOf(PARAM_CLOSE, i + 1)) {
      const after = skipSpace(s, i + PARAM_CLOSE.length);
      if (
        after >= s.length ||
        s.startsWith(PARAM_OPEN, after) ||
        s.startsWith(FN_CLOSE, after) ||
        s.startsWith(CALL_CLOSE, after)
      )
        closers.push(i);
    }
    return closers;
  };
  return find;
}

/** The first of `tags` at or after `from`, or the end of the text. */
export function nextOf(content: string, from: number, tags: readonly string[], find: Find): number {
  let best = content.length;
  for (const t of tags) {
    const i = find(t, from);
    if (i >= 0 && i < best) best = i;
  }
  return best;
}
