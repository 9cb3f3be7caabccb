/**
 * A parameter written as text (the XML call form) made into the value its tool's schema asks for, as vLLM
 * types it; apart from the tag reading, since the typing follows the schema and not the text.
 */
import { parseLenientJson } from './json-repair';
import type { RepairId } from './repairs';
import type { ToolSpec } from './types';

/** The schema of the tool's parameter `key`, when the tool is known and describes it. */
export function schemaOf(tool: ToolSpec | undefined, key: string): Record<string, unknown> | undefined {
  const props = tool?.parameters?.properties;
  if (typeof props !== 'object' || props === null) return undefined;
  const s = (props as Record<string, unknown>)[key];
  return typeof s === 'object' && s !== null ? (s as Record<string, unknown>) : undefined;
}

/** The JSON types a property's schema allows (`type`, a list of them, or `anyOf`/`oneOf` branches). */
function typesOf(schema: Record<string, unknown> | undefined): Set<string> {
  const out = new Set<string>();
  if (!schema) return out;
  const t = schema.type;
  if (typeof t === 'string') out.add(t);
  else if (Array.isArray(t)) for (const x of t) if (typeof x === 'string') out.add(x);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list))
      for (const b of list)
        for (const x of typesOf(typeof b === 'object' && b !== null ? (b as Record<string, unknown>) : undefined))
          out.add(x);
  }
  if (out.size === 0 && Array.isArray(schema.enum))
    for (const e of schema.enum)
      out.add(e === null ? 'null' : typeof e === 'number' ? 'number' : typeof e === 'boolean' ? 'boolean' : 'string');
  return out;
}

/**
 * A parameter's text as the value its schema asks for: a string stays as
 * written (newlines and all); numbers, booleans, null, objects and arrays
 * are parsed. A value that does not read as its type is passed on as the
 * text, so the verifier says what is wrong with it; an unknown parameter
 * (not in the schema) is kept as text too.
 */
export function typedValue(
  text: string,
  schema: Record<string, unknown> | undefined,
): { value: unknown; repairs: RepairId[] } | { error: string } {
  const types = typesOf(schema);
  if (types.size === 0 || types.has('string')) {
    // As vLLM reads it: the word null is null only where the schema allows null.
    if (types.has('null') && text.trim() === 'null') return { value: null, repairs: [] };
    return { value: text, repairs: [] };
  }
  const t = text.trim();
  if (types.has('null') && (t === 'null' || t === 'None')) return { value: null, repairs: [] };
  if (types.has('integer') || types.has('number')) {
    if (/^[+-]?\d+$/.test(t)) return { value: Number(t), repairs: [] };
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) {
      const n = Number(t);
      if (types.has('number')) return { value: n, repairs: [] };
      if (Number.isInteger(n)) return { value: n, repairs: ['parameter_type'] };
    }
  }
  if (types.has('boolean')) {
    if (/^true$/i.test(t)) return { value: true, repairs: t === 'true' ? [] : ['parameter_type'] };
    if (/^false$/i.test(t)) return { value: false, repairs: t === 'false' ? [] : ['parameter_type'] };
  }
  if (types.has('object') || types.has('array')) {
    const parsed = parseLenientJson(t, 'the value');
    if (parsed.ok) return { value: parsed.value, repairs: parsed.repairs };
    return { error: `not JSON (${parsed.error})` };
  }
  return { value: text, repairs: [] };
}
