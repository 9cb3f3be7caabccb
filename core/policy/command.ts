import { compileGlob, type Matcher } from './glob';

/**
 * Separators between the parts of a compound command. Splitting happens on
 * these characters wherever they stand, inside quotes too: a part may be cut
 * too finely, never too coarsely, so no command hides behind `&&`, `;`, a pipe,
 * `$(…)` or backticks. The Lean checker uses the same set.
 */
const SEPARATORS = new Set([';', '&', '|', '\n', '\r', '(', ')', '`']);

/** Collapses whitespace runs to one space and trims, so spacing cannot dodge a pattern. */
const ALREADY_NORMAL = /^[^ \t\n\v\f\r]+(?: [^ \t\n\v\f\r]+)*$/;

export function normalizeSpaces(text: string): string {
  if (ALREADY_NORMAL.test(text)) return text;
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
  let start = 0;
  for (let i = 0; i <= command.length; i++) {
    if (i === command.length || SEPARATORS.has(command[i]!)) {
      const n = normalizeSpaces(command.slice(start, i));
      if (n) parts.push(n);
      start = i + 1;
    }
  }
  return parts;
}

/**
 * A pattern matches a command when it matches the whole (normalized) command
 * or any one of its parts. Whole-command matching lets a policy name a
 * pipeline such as `curl *|*sh`.
 */
export function commandMatches(pattern: string, command: string): boolean {
  return firstMatch(compilePatterns([pattern]), new CommandView(command)) !== undefined;
}

/** A policy's pattern list, compiled once per workflow. */
export type CompiledPatterns = readonly (readonly [pattern: string, matcher: Matcher])[];

export function compilePatterns(patterns: readonly string[]): CompiledPatterns {
  return patterns.map((p) => [p, compileGlob(p)] as const);
}

/** A command split and normalized once, to be matched against any number of patterns. */
export class CommandView {
  readonly whole: string;
  readonly parts: readonly string[];
  constructor(readonly command: string) {
    this.whole = normalizeSpaces(command);
    this.parts = commandParts(command);
  }
}

/** The first pattern that matches the command, if any. */
export function firstMatch(patterns: CompiledPatterns, view: CommandView): string | undefined {
  for (const [pattern, m] of patterns) {
    if (m(view.whole)) return pattern;
    for (const part of view.parts) if (m(part)) return pattern;
  }
  return undefined;
}
