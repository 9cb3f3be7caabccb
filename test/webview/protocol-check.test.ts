// The webview's message checker (webview/protocol-check.ts) against the zod schemas it is made from: on messages
// made from the schemas, valid or one step off somewhere inside, it says what zod's safeParse says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fc } from '../support/fc';
import { FromWebview, ToWebview } from '../../core/protocol/chat';
import { compileSchema } from '../../webview/protocol-check';
import { chatProtocolSchemas } from '../../webview/protocol-schemas';

type Schema = Record<string, unknown>;
const schemas = chatProtocolSchemas();
const sides = [
  { name: 'extension → webview', json: schemas.toWebview as Schema, zod: ToWebview },
  { name: 'webview → extension', json: schemas.fromWebview as Schema, zod: FromWebview },
];

// No whitespace or NUL: `.trim()` and the NUL refinement are zod's alone (see the last tests). A surrogate pair
// checks that lengths count code points, as zod does.
const char = fc.constantFrom(...'abzAZ09-_./:é😀');
const text = (min: number, max: number) =>
  fc.string({ unit: char, minLength: min, maxLength: Math.max(min, Math.min(max, min + 12)) });

const num = (s: Schema, key: string): number | undefined => (typeof s[key] === 'number' ? s[key] : undefined);

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = num(s, 'minLength') ?? 0;
  const max = num(s, 'maxLength') ?? 50;
  if (typeof s.pattern !== 'string') return text(min, max);
  return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= min && v.length <= max);
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const low = Math.max(num(s, 'minimum') ?? -1e6, (num(s, 'exclusiveMinimum') ?? -1e9) + (integer ? 1 : 1e-3), -1e6);
  const high = Math.min(num(s, 'maximum') ?? 1e6, 1e6);
  return integer ? fc.integer({ min: low, max: high }) : fc.double({ min: low, max: high, noNaN: true });
}

/** Values `s` allows. */
function valid(s: Schema): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union)) return fc.oneof(...(union as Schema[]).map(valid));
  switch (s.type) {
    case 'string':
      return stringArb(s);
    case 'integer':
    case 'number':
      return numberArb(s, s.type === 'integer');
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = num(s, 'minItems') ?? 0;
      return fc.array(valid(s.items as Schema), {
        minLength: min,
        maxLength: Math.min(num(s, 'maxItems') ?? 3, min + 3),
      });
    }
    case 'object': {
      const props = Object.fromEntries(
        Object.entries(s.properties as Record<string, Schema>).map(([k, p]) => [k, valid(p)]),
      );
      return fc.record(props, { requiredKeys: (s.required as string[] | undefined) ?? [] });
    }
  }
  throw new Error(`no arbitrary for ${JSON.stringify(s).slice(0, 80)}`);
}

const ODD = [null, 0, -1, 1.5, -0, NaN, Infinity, '', 'x', true, [], {}, undefined, 'run.lar.jsonl', 'c1', 'f1'];

/** `n` code points in more UTF-16 units (and a lone surrogate): a checker counting units would refuse it. */
const wide = (n: number) => '😀'.repeat(Math.max(0, n - 1)) + (n > 0 ? '\ud800' : '');

function brokenString(s: Schema): fc.Arbitrary<unknown>[] {
  const out: fc.Arbitrary<unknown>[] = [];
  const max = num(s, 'maxLength');
  const min = num(s, 'minLength');
  if (max !== undefined) out.push(fc.constantFrom('y'.repeat(max), 'y'.repeat(max + 1), wide(max), wide(max + 1)));
  if (min) out.push(fc.constantFrom('y'.repeat(min - 1), 'y'.repeat(min)));
  if (typeof s.pattern === 'string')
    out.push(stringArb(s).chain((v) => fc.constantFrom(`${v}\n`, `/${v}`, v.slice(1))));
  return out;
}

function brokenNumber(s: Schema): fc.Arbitrary<unknown>[] {
  const edges = ['minimum', 'maximum', 'exclusiveMinimum'].flatMap((k) => {
    const n = num(s, k);
    return n === undefined ? [] : [n - 1, n, n + 1, n + 0.5];
  });
  return [fc.constantFrom(0.5, -0, NaN, Infinity, -Infinity, ...edges)];
}

function brokenArray(s: Schema): fc.Arbitrary<unknown>[] {
  const item = s.items as Schema;
  const max = num(s, 'maxItems');
  const min = num(s, 'minItems') ?? 0;
  const out = [
    fc.tuple(valid(s), broken(item), fc.nat()).map(([a, b, i]) => {
      const list = [...(a as unknown[])];
      list.splice(i % (list.length + 1), 0, b);
      return list;
    }),
  ];
  if (max !== undefined) out.push(fc.array(valid(item), { minLength: max, maxLength: max + 1 }));
  if (min) out.push(fc.array(valid(item), { minLength: min - 1, maxLength: min - 1 }));
  return out;
}

function brokenObject(s: Schema): fc.Arbitrary<unknown>[] {
  const props = s.properties as Record<string, Schema>;
  const required = (s.required as string[] | undefined) ?? [];
  const whole = valid(s) as fc.Arbitrary<Record<string, unknown>>;
  return [
    ...Object.entries(props).map(([k, p]) => fc.tuple(whole, broken(p)).map(([o, b]) => ({ ...o, [k]: b }))),
    ...required.map((k) => whole.map((o) => Object.fromEntries(Object.entries(o).filter(([key]) => key !== k)))),
    whole.map((o) => ({ ...o, unexpected: 1 })),
  ];
}

/** Values one step off `s`, somewhere inside: at a bound, a pattern missed, a key dropped or added, an odd value. */
function broken(s: Schema): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [fc.constantFrom(...ODD)];
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union)) options.push(fc.oneof(...(union as Schema[]).map(broken)));
  else if (s.type === 'string') options.push(...brokenString(s));
  else if (s.type === 'integer' || s.type === 'number') options.push(...brokenNumber(s));
  else if (s.type === 'array') options.push(...brokenArray(s));
  else if (s.type === 'object') options.push(...brokenObject(s));
  return fc.oneof(...options);
}

for (const side of sides) {
  const check = compileSchema(side.json);

  test(`${side.name}: every message made from the schema passes both zod and the checker`, () => {
    fc.assert(
      fc.property(valid(side.json), (msg) => {
        assert.equal(side.zod.safeParse(msg).success, true, 'the arbitrary makes valid messages');
        assert.equal(check(msg), true);
      }),
      { numRuns: 300 },
    );
  });

  test(`${side.name}: a message one step off somewhere is refused by the checker exactly when zod refuses it`, () => {
    fc.assert(
      fc.property(broken(side.json), (msg) => {
        assert.equal(check(msg), side.zod.safeParse(msg).success, JSON.stringify(msg)?.slice(0, 300));
      }),
      { numRuns: 1500 },
    );
  });
}

test('the checker refuses what the chat tests send it, as zod does', () => {
  const to = compileSchema(schemas.toWebview);
  const from = compileSchema(schemas.fromWebview);
  const card = { line: 4, tool: 'x', args: '', status: 'ok', failed: [] };
  assert.equal(to({ type: 'step', card: { ...card, toolReward: 1 } }), true);
  assert.equal(to({ type: 'step', card: { ...card, toolReward: 7 } }), false);
  assert.equal(to({ type: 'text' }), false);
  assert.equal(to({ type: 'nope' }), false);
  assert.equal(to('text'), false);
  for (const file of ['../x.lar.jsonl', '/etc/passwd', 'a/b.lar.jsonl', '.hidden.lar.jsonl', 'run.lar.jsonl\n'])
    assert.equal(from({ type: 'openRun', file }), false, file);
  assert.equal(from({ type: 'openRun', file: 'run-2026-11-30T10-00-00-000Z.lar.jsonl' }), true);
  assert.equal(from({ type: 'openThread', id: 'run-1', file: 'run-1.lar.jsonl' }), false, 'a strict object');
});

test("what JSON Schema cannot say stays zod's: the extension refuses these on receipt, the checker lets them by", () => {
  const from = compileSchema(schemas.fromWebview);
  const blank = { type: 'start', id: 'm1', task: '   ' };
  const nul = { type: 'start', id: 'm1', task: 'why', attachments: [{ kind: 'file', path: 'a\0b' }] };
  for (const msg of [blank, nul]) {
    assert.equal(from(msg), true);
    assert.equal(FromWebview.safeParse(msg).success, false);
  }
});

test('a schema with a keyword the checker does not know does not compile', () => {
  assert.throws(() => compileSchema({ type: 'string', format: 'email' }), /uses "format"/);
  assert.throws(() => compileSchema({ $ref: '#/$defs/a' }), /uses "\$ref"/);
  assert.throws(() => compileSchema({ type: 'tuple' }), /unknown type/);
  assert.throws(() => compileSchema({ anyOf: {} }), /anyOf is not a list/);
});
