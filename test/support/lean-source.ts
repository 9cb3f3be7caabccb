/**
 * Just enough of Lean 4's lexical structure to read a package's sources without a toolchain: its
 * code with comments, strings and character literals blanked, so that a word found in it is a word
 * of the code and not of a doc comment or a message. (The imports are read by core/lean/build.ts.)
 */

/** The code of `text` with every comment (`--` to the end of the line, nested block comments, doc
 * comments), string literal (interpolated ones whole) and character literal replaced by spaces;
 * line breaks are kept so that positions still name their line. */
export function leanCode(text: string): string {
  const out: string[] = [];
  const blank = (s: string): string => s.replace(/[^\n]/g, ' ');
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    const next = text.charAt(i + 1);
    if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out.push(blank(text.slice(i, stop)));
      i = stop;
    } else if (c === '/' && next === '-') {
      let depth = 0;
      let j = i;
      while (j < text.length) {
        if (text[j] === '/' && text[j + 1] === '-') {
          depth++;
          j += 2;
        } else if (text[j] === '-' && text[j + 1] === '/') {
          depth--;
          j += 2;
          if (depth === 0) break;
        } else j++;
      }
      if (depth !== 0) throw new Error(`unterminated comment at offset ${i}`);
      out.push(blank(text.slice(i, j)));
      i = j;
    } else if (c === 'r' && /^r#*"/.test(text.slice(i, i + 40)) && !/[\p{L}\p{N}_'.]/u.test(text.charAt(i - 1))) {
      const j = rawStringEnd(text, i);
      out.push(blank(text.slice(i, j)));
      i = j;
    } else if (c === '"') {
      const j = stringEnd(text, i, isInterpolated(text, i));
      out.push(blank(text.slice(i, j)));
      i = j;
    } else if (c === "'" && isCharLiteral(text, i)) {
      const j = text.indexOf("'", i + (next === '\\' ? 3 : 2)) + 1;
      out.push(blank(text.slice(i, j)));
      i = j;
    } else {
      out.push(c);
      i++;
    }
  }
  return out.join('');
}

/** A string is interpolated (`{…}` inside it is code) after `s!`, `m!` or `f!`, or as the message of
 * `throwError` and the logging commands; a `{` in any other string is a character. */
function isInterpolated(text: string, quote: number): boolean {
  if (/[smf]!$/.test(text.slice(Math.max(0, quote - 2), quote))) return true;
  return /(?:^|[^\w.])(?:throwError|logInfo|logWarning|logError|trace\[[^\]]*\])\s*$/.test(
    text.slice(Math.max(0, quote - 60), quote),
  );
}

/** The offset just past the string literal that opens at `start`; in an interpolated string
 * (`s!"…{x}…"`) the `{…}` parts are read as code that may hold strings of their own. */
function stringEnd(text: string, start: number, interpolated: boolean): number {
  let j = start + 1;
  let braces = 0;
  while (j < text.length) {
    const d = text[j];
    if (d === '\\') j += 2;
    else if (interpolated && d === '{') {
      braces++;
      j++;
    } else if (interpolated && d === '}' && braces > 0) {
      braces--;
      j++;
    } else if (d === '"' && braces > 0) j = stringEnd(text, j, isInterpolated(text, j));
    else if (d === '"') return j + 1;
    else j++;
  }
  throw new Error(`unterminated string at offset ${start}`);
}

/** The offset just past the raw string literal (`r"…"`, `r#"…"#`) that opens at `start`: no escapes. */
function rawStringEnd(text: string, start: number): number {
  const hashes = /^r(#*)"/.exec(text.slice(start))?.[1] ?? '';
  const close = `"${hashes}`;
  const end = text.indexOf(close, start + 2 + hashes.length);
  if (end === -1) throw new Error(`unterminated raw string at offset ${start}`);
  return end + close.length;
}

/** `'a'`, `'\n'`, `'\x0c'`, `'"'` are character literals; a `'` after a name (`h'`, `x'`) is part of it. */
function isCharLiteral(text: string, i: number): boolean {
  const before = text.charAt(i - 1);
  if (/[\p{L}\p{N}_'!?.]/u.test(before)) return false;
  const m = /^'(\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.|[^\\'\n])'/u.exec(text.slice(i, i + 12));
  return m !== null;
}
