/**
 * One canonical text per JSON value, so "the same arguments" can be told by comparing strings.
 * Two kinds, stated here once: exact (the verifier's repeat key: `1` is not `"1"`) and loose
 * (the model client's duplicate-call test: scalars compared as text).
 */
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted: the verifier's repeat key. Objects of scalars
 * already in key order, the usual arguments, are written as they are.
 */
export function canonicalExact(root: unknown): string {
  if (root === null || typeof root !== 'object') return exactScalar(root);
  if (!Array.isArray(root) && isFlatSorted(root as Record<string, unknown>)) return JSON.stringify(root);
  return canonicalWith(root, exactScalar, true);
}

/** sha-256 (hex) of the exact canonical text: one digest for a value however its keys were ordered. */
export function canonicalDigest(root: unknown): string {
  return createHash('sha256').update(canonicalExact(root)).digest('hex');
}

/**
 * Loose: scalars compared as their text, so `"60"` is `60` and `"true"` is
 * `true` (one server typed an argument, the other did not). The model client
 * uses it to tell a text call that repeats a native one.
 */
export function canonicalLoose(root: unknown): string {
  return canonicalWith(root, looseScalar, false);
}

function exactScalar(v: unknown): string {
  return JSON.stringify(v) ?? 'null';
}

function looseScalar(v: unknown): string {
  return JSON.stringify(typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : 'null');
}

/**
 * Iterative (a work stack of values still to write and text to emit between
 * them): values nested thousands deep, from a trajectory or a model's reply,
 * must not overflow the call stack.
 */
function canonicalWith(root: unknown, scalar: (v: unknown) => string, flatAsIs: boolean): string {
  const out: string[] = [];
  const work: ({ text: string } | { value: unknown })[] = [{ value: root }];
  while (work.length) {
    const w = work.pop()!;
    if ('text' in w) {
      out.push(w.text);
      continue;
    }
    const v = w.value;
    if (v === null || typeof v !== 'object') {
      out.push(scalar(v));
    } else if (Array.isArray(v)) {
      work.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        work.push({ value: v[i] });
        if (i > 0) work.push({ text: ',' });
      }
      work.push({ text: '[' });
    } else if (flatAsIs && isFlatSorted(v as Record<string, unknown>)) {
      out.push(JSON.stringify(v));
    } else {
      const keys = Object.keys(v).sort();
      work.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        work.push({ value: (v as Record<string, unknown>)[keys[i]!] });
        work.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:` });
      }
      work.push({ text: '{' });
    }
  }
  return out.join('');
}

/** Objects of scalars with keys in order, the usual arguments, stringify canonically as they are. */
function isFlatSorted(o: Record<string, unknown>): boolean {
  let prev = '';
  for (const k in o) {
    const x = o[k];
    if ((typeof x === 'object' && x !== null) || x === undefined || k < prev) return false;
    prev = k;
  }
  return true;
}
