import { balancedEnd, parseLenientJson } from './json-repair';
import { pyJson } from './py-json';
import { toolObject } from './qwen';
import { callFromObject, skipSpace } from './calls';
import type {
  ParsedContent,
  RenderedCall,
  RenderedResult,
  TextCall,
  TextMessage,
  TextToolFormat,
  ToolSpec,
} from './types';

/**
 * Mistral's calls after the `[TOOL_CALLS]` token, in both generations the
 * servers parse (vLLM and SGLang `mistral`): a JSON array
 * `[TOOL_CALLS] [{"name": …, "arguments": {…}, "id": …}]` (tokenizers up to
 * v7) and the compact `[TOOL_CALLS]name[CALL_ID]id[ARGS]{…}` /
 * `[TOOL_CALLS]name[ARGS]{…}` (v11, v13+), one token per call. Rendering
 * follows the v13 layout (Devstral, Magistral, Mistral Small 3.2+); the
 * `[…]` markers are special tokens, which a server tokenizes as such in
 * message text only with Hugging Face tokenizers, so as a text format this is
 * the nearest a client can come, and native calls with the server's
 * `mistral` parser are the better choice for these models.
 */

const MARK = '[TOOL_CALLS';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';

export function parseMistral(content: string): ParsedContent {
  const first = content.indexOf(MARK);
  if (first < 0) {
    // The marker stripped by the detokenizer: a bare array of calls is all that is left.
    const bare = content.trim();
    if (!bare.startsWith('[{')) return { text: content.trim(), calls: [], repairs: [] };
    const calls = arrayCalls(bare.slice(0, balancedEnd(bare, 0).end));
    return calls.length
      ? { text: bare.slice(balancedEnd(bare, 0).end).trim(), calls, repairs: [] }
      : { text: content.trim(), calls: [], repairs: [] };
  }
  const prose: string[] = [content.slice(0, first)];
  const calls: TextCall[] = [];
  // Call by call from each marker: the JSON that follows is read to where its brackets balance, so a
  // value holding "[TOOL_CALLS]" (a file about this format) is part of its call, not a new one.
  let at = first;
  while (at >= 0 && at < content.length) {
    let pos = at + MARK.length;
    if (content[pos] === ']') pos++;
    const nextMark = (from: number) => content.indexOf(MARK, from);
    const lead = skipSpace(content, pos);
    if (content[lead] === '[') {
      const end = balancedEnd(content, lead).end;
      calls.push(...arrayCalls(content.slice(lead, end)));
      at = nextMark(end);
      prose.push(content.slice(end, at < 0 ? content.length : at));
      continue;
    }
    // name [CALL_ID]id [ARGS] {json}
    const stop = nextMark(pos);
    const segEnd = stop < 0 ? content.length : stop;
    const brace = content.indexOf('{', pos);
    const argsAt = content.indexOf(ARGS, pos);
    const idAt = content.indexOf(CALL_ID, pos);
    const stops = [brace, argsAt, idAt].filter((i) => i >= 0 && i < segEnd);
    const nameEnd = stops.length ? Math.min(...stops) : segEnd;
    const name = content.slice(pos, nameEnd).trim();
    if (brace < 0 || brace >= segEnd) {
      calls.push({
        name,
        args: null,
        argsError: 'the call has no JSON arguments after its name',
        raw: content.slice(pos, segEnd),
        repairs: [],
        format: 'mistral',
      });
      at = stop;
      continue;
    }
    const end = balancedEnd(content, brace).end;
    const raw = content.slice(brace, end);
    const parsed = parseLenientJson(raw);
    if (!parsed.ok)
      calls.push({
        name,
        args: null,
        argsError: `the arguments are not JSON: ${parsed.error}`,
        raw: content.slice(pos, end),
        repairs: [],
        format: 'mistral',
      });
    else
      calls.push(
        callFromObject({ name, arguments: parsed.value }, { raw: content.slice(pos, end), format: 'mistral' }, [
          ...parsed.repairs,
        ]),
      );
    at = nextMark(end);
    prose.push(content.slice(end, at < 0 ? content.length : at));
  }
  return {
    text: prose
      .join('')
      .replace(/<\/s>\s*$/, '')
      .trim(),
    calls,
    repairs: [],
  };
}

function arrayCalls(raw: string): TextCall[] {
  const parsed = parseLenientJson(raw, 'the tool calls');
  if (!parsed.ok)
    return [
      {
        name: /"name"\s*:\s*"([^"\\]*)"/.exec(raw)?.[1] ?? '',
        args: null,
        argsError: `the tool calls are not JSON: ${parsed.error}`,
        raw,
        repairs: [],
        format: 'mistral',
      },
    ];
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  return list
    .filter((v) => typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string')
    .map((v) => callFromObject(v, { raw, format: 'mistral' }, [...parsed.repairs]));
}

export const mistral: TextToolFormat = {
  id: 'mistral',
  family: 'Mistral, Devstral, Magistral ([TOOL_CALLS] calls)',
  prompt(system: string, task: string, tools: readonly ToolSpec[]) {
    const listed = `[AVAILABLE_TOOLS]${pyJson(tools.map(toolObject))}[/AVAILABLE_TOOLS]`;
    const how =
      'To call a tool, write [TOOL_CALLS], the tool name, [ARGS] and the arguments as one JSON object, for each call.';
    return { system: `${system ? `${system}\n\n` : ''}${how}\n\n${listed}`, task };
  },
  assistantContent(text: string, calls: readonly RenderedCall[]): string {
    return `${text}${calls.map((c) => `[TOOL_CALLS]${c.name}${ARGS}${pyJson(c.args ?? {})}`).join('')}`;
  },
  resultMessages(results: readonly RenderedResult[]): TextMessage[] {
    return results.length
      ? [{ role: 'user', content: results.map((r) => `[TOOL_RESULTS]${r.content}[/TOOL_RESULTS]`).join('') }]
      : [];
  },
  parse: (content) => parseMistral(content),
  mayContain: (content) => content.includes(MARK) || /^\s*\[\s*\{/.test(content),
};
