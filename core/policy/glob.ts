/**
 * The workflow pattern language: `*` matches any run of characters (also
 * none), `?` exactly one, every other character itself; the whole text must
 * match. No character classes, no escapes: small enough that the Lean checker
 * (lean/Lar/Glob.lean) decides it by the same definition.
 */
export function globMatch(pattern: string, text: string): boolean {
  // Iterative matcher with single-star backtracking: linear in practice and
  // equivalent to the recursive definition in docs/rewards.md.
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    const pc = pattern[p];
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
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
