import assert from 'node:assert/strict';
import test from 'node:test';
import { canonicalExact, canonicalLoose } from '../../../core/json/canonical';

test('the same arguments in another key order have one canonical text, exact and loose', () => {
  const a = { path: 'src/a.ts', range: { end: 3, start: 1 }, tags: ['x', { b: 1, a: 2 }] };
  const b = { tags: ['x', { a: 2, b: 1 }], range: { start: 1, end: 3 }, path: 'src/a.ts' };
  assert.equal(canonicalExact(a), canonicalExact(b));
  assert.equal(canonicalLoose(a), canonicalLoose(b));
  assert.equal(canonicalExact(a), '{"path":"src/a.ts","range":{"end":3,"start":1},"tags":["x",{"a":2,"b":1}]}');
});

test('exact tells 60 from "60"; loose takes them as one, as a server that did not type an argument sends it', () => {
  assert.notEqual(canonicalExact({ timeout: 60 }), canonicalExact({ timeout: '60' }));
  assert.equal(canonicalLoose({ timeout: 60, force: true }), canonicalLoose({ force: 'true', timeout: '60' }));
  assert.notEqual(canonicalLoose({ timeout: 60 }), canonicalLoose({ timeout: 61 }));
  assert.notEqual(canonicalLoose(['a', 'b']), canonicalLoose(['a,b']));
});

test('values nested far deeper than the call stack allows are written, not thrown on', () => {
  let deep: unknown = 'leaf';
  for (let i = 0; i < 200_000; i++) deep = i % 2 ? [deep] : { k: deep };
  for (const canonical of [canonicalExact, canonicalLoose]) {
    const text = canonical(deep);
    assert.ok(text.length > 800_000);
    assert.ok(text.includes('"leaf"'));
  }
});
