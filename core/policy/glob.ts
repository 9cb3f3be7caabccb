/**
 * The workflow pattern language: `*` matches any run of characters (also
 * none), `?` exactly one, every other character itself; the whole text must
 * match. No character classes, no escapes: small enough that the Lean checker
 * (lean/Lar/Glob.lean) decides it by the same definition (docs/rewards.md).
 */
export function globMatch(pattern: string, text: string): boolean {
  return compileGlob(pattern)(text);
}

export type Matcher = (text: string) => boolean;

const compiled = new Map<string, Matcher>();

/**
 * Policies match every command against every pattern, so patterns are
 * compiled once. A pattern without `?` is a list of literal pieces between
 * stars: a fixed prefix, a fixed suffix, and pieces found in order between
 * them, which leftmost search decides exactly and in linear time. Patterns
 * with `?` use the general matcher.
 */
export function compileGlob(pattern: string): Matcher {
  let m = compiled.get(pattern);
  if (!m) {
    m = pattern.includes('?') ? (text) => generalMatch(pattern, text) : piecesMatcher(pattern);
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(pattern, m);
  }
  return m;
}

function piecesMatcher(pattern: string): Matcher {
  const pieces = pattern.split('*');
  if (pieces.length === 1) return (text) => text === pattern;
  const prefix = pieces[0]!;
  const suffix = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).filter((p) => p !== '');
  const fixed = prefix.length + suffix.length;
  return (text) => {
    if (text.length < fixed || !text.startsWith(prefix) || !text.endsWith(suffix)) return false;
    let at = prefix.length;
    const end = text.length - suffix.length;
    for (const piece of middle) {
      const i = text.indexOf(piece, at);
      if (i < 0 || i + piece.length > end) return false;
      at = i + piece.length;
    }
    return true;
  };
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Iterative matcher with single-star backtracking, for patterns with `?`.
 * A character is a Unicode code point, as in Lean's `Char`: `?` matches one
 * emoji, not half of it, so strings with surrogate pairs are split into code
 * points first.
 */
function generalMatch(pattern: string, text: string): boolean {
  return SURROGATE.test(pattern) || SURROGATE.test(text)
    ? matchSeq(Array.from(pattern), Array.from(text))
    : matchSeq(pattern, text);
}

function matchSeq(pattern: ArrayLike<string>, text: ArrayLike<string>): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    const pc = p < pattern.length ? pattern[p] : undefined;
    if (pc === '?' || (pc !== undefined && pc !== '*' && pc === text[t])) {
      p++;
      t++;
    } else if (pc === '*') {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
