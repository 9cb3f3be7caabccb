import { parseArguments } from './assemble';
import { tooDeep } from '../schema/json-depth';

/**
 * The text form of tool calls: `<tool_call>{"name": …, "arguments": …}</tool_call>`.
 * Hermes-style models write it, and a server started without a tool-call
 * parser passes it through in `content` instead of `tool_calls`.
 */
export interface TextToolCall {
  name: string;
  args: unknown;
  argsError?: string;
  /** The JSON text between the tags, as written. */
  raw: string;
}

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/**
 * Splits content into the prose around the tags and the tool calls inside
 * them. A block the model never closed (the stream ended) is read up to the
 * end. Never throws: a block that is not a call becomes a call with an
 * `argsError` saying why, so the model is told on its next turn.
 */
export function extractTextToolCalls(content: string): { text: string; calls: TextToolCall[] } {
  const calls: TextToolCall[] = [];
  const prose: string[] = [];
  let at = 0;
  for (;;) {
    const open = content.indexOf(OPEN, at);
    if (open < 0) {
      prose.push(content.slice(at));
      break;
    }
    prose.push(content.slice(at, open));
    const start = open + OPEN.length;
    const close = content.indexOf(CLOSE, start);
    const raw = (close < 0 ? content.slice(start) : content.slice(start, close)).trim();
    calls.push(readCall(raw));
    if (close < 0) break;
    at = close + CLOSE.length;
  }
  return { text: prose.join('').trim(), calls };
}

function readCall(raw: string): TextToolCall {
  let value: unknown;
  const deep = tooDeep(raw, 'the tool call');
  if (deep) return { name: /"name"\s*:\s*"([^"\\]*)"/.exec(raw)?.[1] ?? '', args: null, argsError: deep, raw };
  try {
    value = JSON.parse(raw);
  } catch (e) {
    const name = /"name"\s*:\s*"([^"\\]*)"/.exec(raw)?.[1] ?? '';
    return { name, args: null, argsError: `the tool call is not JSON: ${(e as Error).message}`, raw };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { name: '', args: null, argsError: 'a tool call must be a JSON object {"name": …, "arguments": {…}}', raw };
  }
  const v = value as { name?: unknown; arguments?: unknown; parameters?: unknown };
  const name = typeof v.name === 'string' ? v.name : '';
  const given = v.arguments !== undefined ? v.arguments : v.parameters;
  if (name === '') return { name, args: given ?? null, argsError: 'the tool call has no "name"', raw };
  if (typeof given === 'string') {
    // Some models write the arguments as a JSON string, as the wire format does.
    const parsed = parseArguments(given);
    return 'error' in parsed ? { name, args: null, argsError: `the arguments are not JSON: ${parsed.error}`, raw } : { name, args: parsed.value, raw };
  }
  return { name, args: given ?? {}, raw };
}
