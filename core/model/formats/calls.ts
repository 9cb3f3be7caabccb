/**
 * What every text format does once it has a call's JSON: make a call of it, and read around it. Kept apart
 * so that the Llama, Mistral and gpt-oss readers need not import the Qwen one.
 */
import { parseLenientJson } from './json-repair';
import { uniqueRepairs, type RepairId } from './repairs';
import type { TextCall, TextFormatId } from './types';

/** A parsed call object (`name` and `arguments` or `parameters`, or the API's `function` wrapper) as a call. */
export function callFromObject(
  value: unknown,
  base: { raw: string; format: TextFormatId },
  repairs: RepairId[],
): TextCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ...base,
      name: '',
      args: null,
      argsError: 'a tool call must be a JSON object {"name": …, "arguments": {…}}',
      repairs,
    };
  }
  let v = value as Record<string, unknown>;
  // `{"type": "function", "function": {"name": …, "arguments": …}}`: the API's own shape.
  if (typeof v.function === 'object' && v.function !== null && !Array.isArray(v.function) && v.name === undefined)
    v = v.function as Record<string, unknown>;
  const name = typeof v.name === 'string' ? v.name : '';
  const given = v.arguments !== undefined ? v.arguments : v.parameters;
  if (name === '') return { ...base, name, args: given ?? null, argsError: 'the tool call has no "name"', repairs };
  if (typeof given === 'string') {
    const inner = parseLenientJson(given);
    if (!inner.ok)
      return { ...base, name, args: null, argsError: `the arguments are not JSON: ${inner.error}`, repairs };
    return {
      ...base,
      name,
      args: inner.value,
      repairs: uniqueRepairs([...repairs, 'arguments_as_string', ...inner.repairs]),
    };
  }
  return { ...base, name, args: given ?? {}, repairs: uniqueRepairs(repairs) };
}

/** The first position at or after `pos` that is not whitespace. */
export function skipSpace(s: string, pos: number): number {
  while (pos < s.length && /\s/.test(s[pos]!)) pos++;
  return pos;
}

/** The prose around the calls, as written (only the ends trimmed). */
export function tidyProse(parts: string[]): string {
  return parts.join('').trim();
}
