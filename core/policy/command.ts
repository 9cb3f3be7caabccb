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
  return text.split(/[ \t\n\r\f\v]+/).filter((w) => w !== '').join(' ');
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
  if (globMatch(pattern, normalizeSpaces(command))) return true;
  return commandParts(command).some((part) => globMatch(pattern, part));
}

/** The first pattern that matches, if any. */
export function firstMatch(patterns: readonly string[], command: string): string | undefined {
  return patterns.find((p) => commandMatches(p, command));
}
