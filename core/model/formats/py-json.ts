/**
 * JSON the way chat templates print it. Hugging Face templates run
 * `tojson`, which is Python's `json.dumps(x, ensure_ascii=False)`: `", "`
 * between items and `": "` after keys, keys in insertion order, non-ASCII
 * kept as it is. A prompt the client renders must be byte-identical to what
 * the template would have made, or the server's prefix cache misses and the
 * model reads a form it was not trained on.
 */
export function pyJson(value: unknown, indent?: number): string {
  if (indent !== undefined) return indented(value, ' '.repeat(indent), '');
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      // Python prints NaN and Infinity; JSON has neither. Tool arguments never carry them.
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
      return `{${Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
        .join(', ')}}`;
    default:
      return 'null';
  }
}

/** `json.dumps(x, indent=N)`: items on their own lines, `","` at line ends, `": "` after keys. */
function indented(value: unknown, step: string, at: string): string {
  if (typeof value !== 'object' || value === null) return pyJson(value);
  const inner = at + step;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => inner + indented(v, step, inner)).join(',\n')}\n${at}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${indented(v, step, inner)}`).join(',\n')}\n${at}}`;
}

/**
 * A value as Jinja's `| string` prints it: Python's `str()`. The XML call
 * format renders scalar parameters this way (`True`, `None`, `10`).
 */
export function pyStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'None';
  return pyJson(value);
}
