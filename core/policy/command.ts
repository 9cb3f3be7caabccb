import { globMatch } from './glob';

/**
 * Separators between the parts of a compound command. Splitting happens on
 * these characters wherever they stand, inside quotes too: a part may be cut
 * too finely, never too coarsely, so no command hides behind `&&`, `;`, a pipe,
 * `$(…)` or backticks. The Lean checker uses the same set.
 */
const SEPARATORS = new Set([';', '&', '|', '\n', '\r', '(', ')', '`']);

/** Collapses whitespace runs to one space and trims, so spacing cannot dodge a pattern. */
export function normalizeSpaces(text: string): string {
  let out = '';
  let pendingSpace = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // space, tab, newline, vertical tab, form feed, carriage return
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) {
      pendingSpace = out.length > 0;
    } else {
      if (pendingSpace) out += ' ';
      pendingSpace = false;
      out += text[i];
    }
  }
  return out;
}

/** The non-empty, space-normalized parts of a command line. */
export function commandParts(command: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (const c of command) {
    if (SEPARATORS.has(c)) {
      const n = normalizeSpaces(current);
      if (n) parts.push(n);
      current = '';
    } else {
      current += c;
    }
  }
  const n = normalizeSpaces(current);
  if (n) parts.push(n);
  return parts;
}

/**
 * A pattern matches a command when it matches the whole (normalized) command
 * or any one of its parts. Whole-command matching lets a policy name a
 * pipeline such as `curl *|*sh`.
 */
export function commandMatches(pattern: string, command: string): boolean {
  return firstMatch([pattern], command) !== undefined;
}

/** The first pattern that matches, if any. The command is split once, whatever the number of patterns. */
export function firstMatch(patterns: readonly string[], command: string): string | undefined {
  if (patterns.length === 0) return undefined;
  const whole = normalizeSpaces(command);
  const parts = commandParts(command);
  return patterns.find((p) => globMatch(p, whole) || parts.some((part) => globMatch(p, part)));
}
