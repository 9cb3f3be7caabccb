/**
 * A hand-written check of the usual arguments of the agent's tools: true only when ToolArgs (zod,
 * tools.ts) surely accepts them, so the verifier asks zod only for the rest, and every error
 * message stays zod's. test/core/schema/fast-event.test.ts holds the two to the same answers.
 */
import type { ToolName } from './tools';

const enum Arg {
  Str,
  NonEmpty,
  PosInt,
  Bool,
}

interface Spec {
  names: readonly string[];
  kinds: readonly Arg[];
  required: readonly string[];
}

/** Each tool's members (strict: no other), in the schema's order, and which of them must be there. */
const SPECS: Record<ToolName, Spec> = {
  run_command: spec({ command: Arg.NonEmpty, cwd: Arg.NonEmpty, timeoutMs: Arg.PosInt }, ['command']),
  read_file: spec({ path: Arg.NonEmpty, startLine: Arg.PosInt, endLine: Arg.PosInt }, ['path']),
  write_file: spec({ path: Arg.NonEmpty, content: Arg.Str }, ['path', 'content']),
  edit_file: spec({ path: Arg.NonEmpty, search: Arg.NonEmpty, replace: Arg.Str }, ['path', 'search', 'replace']),
  list_files: spec({ path: Arg.NonEmpty, recursive: Arg.Bool }, []),
  search: spec({ pattern: Arg.NonEmpty, path: Arg.NonEmpty, regex: Arg.Bool }, ['pattern']),
  enter_stage: spec({ stage: Arg.NonEmpty, reason: Arg.Str }, ['stage']),
  submit: spec({ summary: Arg.Str }, []),
};

function spec(members: Record<string, Arg>, required: string[]): Spec {
  return { names: Object.keys(members), kinds: Object.values(members), required };
}

function valid(kind: Arg, v: unknown): boolean {
  switch (kind) {
    case Arg.Str:
      return typeof v === 'string';
    case Arg.NonEmpty:
      return typeof v === 'string' && v.length > 0;
    case Arg.PosInt:
      return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
    case Arg.Bool:
      return typeof v === 'boolean';
  }
}

/** Whether ToolArgs[tool] surely accepts `args` (a parsed JSON value); false means "ask zod". */
export function argsSurelyValid(tool: ToolName, args: unknown): boolean {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return false;
  const s = SPECS[tool];
  const a = args as Record<string, unknown>;
  for (const k in a) {
    // At most three members: a scan of interned names beats a lookup.
    const i = s.names.indexOf(k);
    // An unknown member (`__proto__` included, never read) is zod's to refuse.
    if (i < 0 || !valid(s.kinds[i]!, a[k])) return false;
  }
  for (const k of s.required) if (a[k] === undefined) return false;
  return true;
}
