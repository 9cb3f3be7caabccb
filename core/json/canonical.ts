/**
 * One canonical text per JSON value, so "the same arguments" can be told by comparing strings
 * (the verifier's repeat key). Exact: values are compared as JSON writes them, `1` is not `"1"`.
 */

/**
 * JSON with object keys sorted. Iterative (a work stack of values still to
 * write and text to emit between them): arguments nested thousands deep must
 * not overflow the call stack and take the verifier down.
 */
export function canonicalExact(root: unknown): string {
  if (root === null || typeof root !== 'object') return JSON.stringify(root) ?? 'null';
  if (!Array.isArray(root) && isFlatSorted(root as Record<string, unknown>)) return JSON.stringify(root);
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
      out.push(JSON.stringify(v) ?? 'null');
    } else if (Array.isArray(v)) {
      work.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        work.push({ value: v[i] });
        if (i > 0) work.push({ text: ',' });
      }
      work.push({ text: '[' });
    } else if (isFlatSorted(v as Record<string, unknown>)) {
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
