/**
 * The webview's message checker: a JSON Schema, as zod writes the chat protocol's (webview/protocol-schemas.ts,
 * turned into JSON when esbuild.mjs builds the bundle), compiled to a predicate. The bundle carries no zod, and the
 * schemas stay written once, in core/protocol/chat.ts.
 *
 * It knows the keywords zod writes for these schemas and refuses to compile any other, so a schema it could not
 * check fails the build rather than letting messages through. Lengths count code points and numbers must be
 * finite, as in zod. What JSON Schema cannot say (`.trim()`, `.refine()`) the extension checks again with zod.
 */
export type Check = (value: unknown) => boolean;
type Schema = Readonly<Record<string, unknown>>;

/** The keywords read (`$schema`, `description` and `title` only annotate). */
const KEYWORDS = new Set([
  '$schema',
  'description',
  'title',
  'type',
  'const',
  'enum',
  'anyOf',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const TYPES: Readonly<Record<string, Check>> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  object: isObject,
  array: (v) => Array.isArray(v),
};

function fail(what: string): never {
  throw new Error(`webview/protocol-check.ts cannot check the chat protocol's JSON Schema: ${what}`);
}

function schemaOf(v: unknown): Schema {
  return isObject(v) ? v : fail(`${JSON.stringify(v)} is not a schema`);
}

function typeCheck(type: unknown): Check {
  const names = Array.isArray(type) ? type : [type];
  const checks = names.map((t) => (typeof t === 'string' && TYPES[t]) || fail(`unknown type ${JSON.stringify(t)}`));
  return (v) => checks.some((c) => c(v));
}

type Kind = 'string' | 'number' | 'array';
/** Each bound: the kind of value it applies to (others pass, as in JSON Schema) and how it compares. */
const BOUNDS: readonly (readonly [string, Kind, (x: number, n: number) => boolean])[] = [
  ['minLength', 'string', (x, n) => x >= n],
  ['maxLength', 'string', (x, n) => x <= n],
  ['minItems', 'array', (x, n) => x >= n],
  ['maxItems', 'array', (x, n) => x <= n],
  ['minimum', 'number', (x, n) => x >= n],
  ['maximum', 'number', (x, n) => x <= n],
  ['exclusiveMinimum', 'number', (x, n) => x > n],
  ['exclusiveMaximum', 'number', (x, n) => x < n],
];

/** A string's length in code points: a surrogate pair counts once, a lone surrogate as one. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const high = s.charCodeAt(i);
    const low = s.charCodeAt(i + 1);
    if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
      n--;
      i++;
    }
  }
  return n;
}

/** What a bound of `kind` measures of `v`: a string's code points, an array's length, a number itself. */
function measure(v: unknown, kind: Kind): number | undefined {
  if (kind === 'number') return typeof v === 'number' ? v : undefined;
  if (kind === 'string') return typeof v === 'string' ? codePoints(v) : undefined;
  return Array.isArray(v) ? v.length : undefined;
}

function boundChecks(s: Schema): Check[] {
  const out: Check[] = [];
  for (const [key, kind, ok] of BOUNDS) {
    const n = s[key];
    if (n === undefined) continue;
    if (typeof n !== 'number') fail(`${key} is not a number`);
    out.push((v) => {
      const x = measure(v, kind);
      return x === undefined || ok(x, n);
    });
  }
  if (s.pattern !== undefined) {
    const re = typeof s.pattern === 'string' ? new RegExp(s.pattern) : fail('pattern is not a string');
    out.push((v) => typeof v !== 'string' || re.test(v));
  }
  return out;
}

function objectCheck(s: Schema): Check {
  const props = Object.entries(schemaOf(s.properties ?? {})).map(([k, p]) => [k, compileSchema(p)] as const);
  const listed = s.required ?? [];
  const required = new Set(Array.isArray(listed) ? listed : fail('required is not a list'));
  const known = new Set(props.map(([k]) => k));
  const extra = s.additionalProperties;
  const other = extra === undefined || extra === false ? undefined : compileSchema(extra);
  return (v) => {
    if (!isObject(v)) return true;
    for (const [k, check] of props) {
      const value = v[k];
      if ((value !== undefined || required.has(k)) && !check(value)) return false;
    }
    if (extra === undefined) return true;
    return Object.keys(v).every((k) => known.has(k) || (other !== undefined && other(v[k])));
  };
}

function unionCheck(s: Schema, key: 'anyOf' | 'oneOf'): Check {
  const list = s[key];
  const branches = (Array.isArray(list) ? list : fail(`${key} is not a list`)).map(compileSchema);
  if (key === 'anyOf') return (v) => branches.some((b) => b(v));
  // Exactly one branch (a discriminated union's messages each match one).
  return (v) => branches.filter((b) => b(v)).length === 1;
}

/** The predicate of `schema`: true for the values it allows. Throws on what it cannot check. */
export function compileSchema(schema: unknown): Check {
  const s = schemaOf(schema);
  for (const k of Object.keys(s)) if (!KEYWORDS.has(k)) fail(`it uses "${k}"`);
  const checks: Check[] = [];
  if (s.type !== undefined) checks.push(typeCheck(s.type));
  if ('const' in s) checks.push((v) => v === s.const);
  if (s.enum !== undefined) {
    const values: unknown[] = Array.isArray(s.enum) ? s.enum : fail('enum is not a list');
    checks.push((v) => values.includes(v));
  }
  if (s.anyOf !== undefined) checks.push(unionCheck(s, 'anyOf'));
  if (s.oneOf !== undefined) checks.push(unionCheck(s, 'oneOf'));
  if (s.properties !== undefined || s.required !== undefined || s.additionalProperties !== undefined)
    checks.push(objectCheck(s));
  if (s.items !== undefined) {
    const item = compileSchema(s.items);
    checks.push((v) => !Array.isArray(v) || v.every(item));
  }
  checks.push(...boundChecks(s));
  return (v) => checks.every((c) => c(v));
}
