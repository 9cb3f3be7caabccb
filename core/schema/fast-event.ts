/**
 * A hand-written check of the common event lines (tool calls, messages, outcomes) for the verifier's
 * hot path: zod's check of every line cost nearly as much as JSON.parse. It answers only when it is
 * sure: the value zod would give (same members, same order, unknown members dropped) for a line zod
 * accepts, else undefined, and then zod decides, so every error message stays zod's. Its fields
 * mirror trajectory.ts; test/core/schema/fast-event.test.ts holds the two to the same answers.
 */
import { CALL_STATUSES, type TrajectoryEvent } from './trajectory';

const enum Kind {
  Str,
  NonEmpty,
  Bool,
  PosInt,
  NonNegInt,
  IntOrNull,
  NonNegNum,
  StrArray,
  Any,
  Enum,
  Literal,
  Checkpoint,
  Result,
  Usage,
  /** A member this check leaves to zod (an MCP record, message parts): a line with it goes to zod. */
  Defer,
}

interface Field {
  name: string;
  kind: Kind;
  required: boolean;
  /** Kind.Enum: the values; Kind.Literal: the one value. */
  values?: ReadonlySet<string>;
}

interface Shape {
  fields: readonly Field[];
  index: ReadonlyMap<string, number>;
  required: number;
}

function shape(fields: Field[]): Shape {
  return {
    fields,
    index: new Map(fields.map((f, i) => [f.name, i])),
    required: fields.filter((f) => f.required).length,
  };
}

const opt = (name: string, kind: Kind, values?: readonly string[]): Field =>
  values ? { name, kind, required: false, values: new Set(values) } : { name, kind, required: false };
const req = (name: string, kind: Kind, values?: readonly string[]): Field => ({
  ...opt(name, kind, values),
  required: true,
});

const COMPLETIONS = ['marker', 'exit', 'timeout', 'unobserved'];

const RESULT = shape([
  opt('exitCode', Kind.IntOrNull),
  opt('completion', Kind.Enum, COMPLETIONS),
  opt('output', Kind.Str),
  opt('outputTruncated', Kind.Bool),
  opt('outputPath', Kind.Str),
  opt('durationMs', Kind.NonNegNum),
  opt('filesChanged', Kind.StrArray),
  opt('error', Kind.Str),
  opt('sandboxed', Kind.Bool),
  opt('shellRestarted', Kind.Bool),
  opt('waitingForInput', Kind.Bool),
  opt('killed', Kind.Str),
  opt('ranAsCheck', Kind.Bool),
  opt('testsRan', Kind.NonNegInt),
]);

/** TurnUsage's counts; the refinement (cached ≤ prompt) is checked after the members. */
const USAGE = shape([req('prompt', Kind.NonNegInt), req('completion', Kind.NonNegInt), opt('cached', Kind.NonNegInt)]);

const TOOL_CALL = shape([
  req('type', Kind.Literal, ['tool_call']),
  opt('id', Kind.Str),
  req('tool', Kind.Str),
  req('args', Kind.Any),
  opt('argsError', Kind.Str),
  opt('argsText', Kind.Str),
  opt('repairs', Kind.StrArray),
  opt('via', Kind.Enum, ['native', 'text']),
  opt('reply', Kind.PosInt),
  opt('usage', Kind.Usage),
  opt('checkpoint', Kind.Checkpoint),
  opt('mcp', Kind.Defer),
  req('status', Kind.Enum, CALL_STATUSES),
  opt('result', Kind.Result),
  opt('at', Kind.NonEmpty),
]);

const MESSAGE = shape([
  req('type', Kind.Literal, ['message']),
  req('role', Kind.Enum, ['system', 'user', 'assistant']),
  req('content', Kind.Str),
  opt('parts', Kind.Defer),
  opt('reasoning', Kind.Str),
  opt('usage', Kind.Usage),
  opt('at', Kind.NonEmpty),
]);

const OUTCOME = shape([
  req('type', Kind.Literal, ['outcome']),
  req('command', Kind.Str),
  req('exitCode', Kind.IntOrNull),
  opt('completion', Kind.Enum, COMPLETIONS),
  opt('output', Kind.Str),
  opt('testsRan', Kind.NonNegInt),
  opt('durationMs', Kind.NonNegNum),
  opt('sandboxed', Kind.Bool),
  opt('restored', Kind.StrArray),
  opt('at', Kind.NonEmpty),
]);

const CHECKPOINT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** TokenCount's bound (trajectory.ts MAX_TURN_TOKENS). */
const MAX_TOKENS = 1_000_000_000;

type Obj = Record<string, unknown>;

const isObject = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Integers zod's `.int()` takes (safe integers); anything else is left to zod. */
const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x);

function isStringArray(x: unknown): boolean {
  if (!Array.isArray(x)) return false;
  for (let i = 0; i < x.length; i++) if (typeof x[i] !== 'string') return false;
  return true;
}

/** The value zod gives for `x` under field `f`, or undefined when this check is not sure it passes. */
function fieldValue(f: Field, x: unknown): unknown {
  switch (f.kind) {
    case Kind.Str:
      return typeof x === 'string' ? x : undefined;
    case Kind.NonEmpty:
      return typeof x === 'string' && x.length > 0 ? x : undefined;
    case Kind.Bool:
      return typeof x === 'boolean' ? x : undefined;
    case Kind.PosInt:
      return isInt(x) && x > 0 ? x : undefined;
    case Kind.NonNegInt:
      return isInt(x) && x >= 0 ? x : undefined;
    case Kind.IntOrNull:
      return x === null || isInt(x) ? x : undefined;
    case Kind.NonNegNum:
      return typeof x === 'number' && x >= 0 && Number.isFinite(x) ? x : undefined;
    case Kind.StrArray:
      return isStringArray(x) ? x : undefined;
    case Kind.Any:
      return x;
    case Kind.Enum:
    case Kind.Literal:
      return typeof x === 'string' && f.values!.has(x) ? x : undefined;
    case Kind.Checkpoint:
      return typeof x === 'string' && CHECKPOINT.test(x) ? x : undefined;
    case Kind.Result:
      return isObject(x) ? object(x, RESULT) : undefined;
    case Kind.Usage:
      return isObject(x) ? usage(x) : undefined;
    case Kind.Defer:
      return undefined;
  }
}

function usage(x: Obj): Obj | undefined {
  const u = object(x, USAGE);
  if (!u) return undefined;
  const { prompt, completion, cached } = u as { prompt: number; completion: number; cached?: number };
  if (prompt > MAX_TOKENS || completion > MAX_TOKENS) return undefined;
  if (cached !== undefined && (cached > MAX_TOKENS || cached > prompt)) return undefined;
  return u;
}

/**
 * `x` checked against `s`: itself when its members are known and in the shape's order (the usual
 * line, and no copy), a copy in that order without the unknown ones otherwise (what zod gives).
 */
function object(x: Obj, s: Shape): Obj | undefined {
  const fields = s.fields;
  let next = 0;
  let asIs = true;
  let required = 0;
  for (const k in x) {
    // Members usually come in the shape's order: look ahead from the last one first (keys are
    // interned strings, so each comparison is one pointer test), then anywhere.
    let i = next;
    while (i < fields.length && fields[i]!.name !== k) i++;
    if (i === fields.length) {
      const at = s.index.get(k);
      // An unknown member (`__proto__` included, never read) is dropped, as zod drops it.
      if (at === undefined) {
        asIs = false;
        continue;
      }
      asIs = false;
      i = at;
    }
    next = i + 1;
    const f = fields[i]!;
    const v = x[k];
    const w = fieldValue(f, v);
    // `args` may be null, and then undefined is the only "not sure".
    if (w === undefined && f.kind !== Kind.Any) return undefined;
    if (w !== v) x[k] = w; // a nested object copied into the shape's order; x is the parser's own value
    if (f.required) required++;
  }
  if (required !== s.required) return undefined;
  if (asIs) return x;
  const out: Obj = {};
  for (const f of fields) if (x[f.name] !== undefined) out[f.name] = x[f.name];
  return out;
}

/** The members each shape knows, in order, for the test that holds them to trajectory.ts. */
export const FAST_SHAPES: Readonly<Record<string, readonly string[]>> = {
  tool_call: TOOL_CALL.fields.map((f) => f.name),
  message: MESSAGE.fields.map((f) => f.name),
  outcome: OUTCOME.fields.map((f) => f.name),
  result: RESULT.fields.map((f) => f.name),
  usage: USAGE.fields.map((f) => f.name),
};

/**
 * The event zod would parse from `value` (JSON.parse's result of a line, owned by the caller: a
 * nested object may be replaced by its copy), when this check is sure zod accepts it; otherwise
 * undefined, and zod is asked.
 */
export function fastEvent(value: unknown): TrajectoryEvent | undefined {
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case 'tool_call':
      return object(value, TOOL_CALL) as TrajectoryEvent | undefined;
    case 'message':
      return object(value, MESSAGE) as TrajectoryEvent | undefined;
    case 'outcome':
      return object(value, OUTCOME) as TrajectoryEvent | undefined;
    default:
      return undefined;
  }
}
