import { balancedEnd, parseLenientJson } from './json-repair';
import { pyJson } from './py-json';
import { toolObject } from './qwen';
import { callFromObject } from './tagged';
import type { ParsedContent, RenderedCall, RenderedResult, TextCall, TextMessage, TextToolFormat, ToolSpec } from './types';

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
    return calls.length ? { text: bare.slice(balancedEnd(bare, 0).end).trim(), calls, repairs: [] } : { text: content.trim(), calls: [], repairs: [] };
  }
  const prose: string[] = [content.slice(0, first)];
  const calls: TextCall[] = [];
  const segments = content.slice(first).split(/\[TOOL_CALLS\]?/).slice(1);
  for (const segment of segments) {
    const s = segment.replace(/<\/s>\s*$/, '');
    const lead = s.trimStart();
    if (lead.startsWith('[')) {
      const end = balancedEnd(lead, 0).end;
      calls.push(...arrayCalls(lead.slice(0, end)));
      prose.push(lead.slice(end));
      continue;
    }
    // name [CALL_ID]id [ARGS] {json}
    const brace = lead.indexOf('{');
    const argsAt = lead.indexOf(ARGS);
    const idAt = lead.indexOf(CALL_ID);
    const stops = [brace, argsAt, idAt].filter((i) => i >= 0);
    const nameEnd = stops.length ? Math.min(...stops) : lead.length;
    const name = lead.slice(0, nameEnd).trim();
    const jsonAt = brace >= 0 ? brace : -1;
    if (jsonAt < 0) {
      calls.push({ name, args: null, argsError: 'the call has no JSON arguments after its name', raw: lead, repairs: [], format: 'mistral' });
      continue;
    }
    const end = balancedEnd(lead, jsonAt).end;
    const raw = lead.slice(jsonAt, end);
    const parsed = parseLenientJson(raw);
    if (!parsed.ok) calls.push({ name, args: null, argsError: `the arguments are not JSON: ${parsed.error}`, raw: lead.slice(0, end), repairs: [], format: 'mistral' });
    else calls.push(callFromObject({ name, arguments: parsed.value }, { raw: lead.slice(0, end), format: 'mistral' }, [...parsed.repairs]));
    prose.push(lead.slice(end));
  }
  return { text: prose.join('').trim(), calls, repairs: [] };
}

function arrayCalls(raw: string): TextCall[] {
  const parsed = parseLenientJson(raw, 'the tool calls');
  if (!parsed.ok) return [{ name: /"name"\s*:\s*"([^"\\]*)"/.exec(raw)?.[1] ?? '', args: null, argsError: `the tool calls are not JSON: ${parsed.error}`, raw, repairs: [], format: 'mistral' }];
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  return list.filter((v) => typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string').map((v) => callFromObject(v, { raw, format: 'mistral' }, [...parsed.repairs]));
}

export const mistral: TextToolFormat = {
  id: 'mistral',
  family: 'Mistral, Devstral, Magistral ([TOOL_CALLS] calls)',
  prompt(system: string, task: string, tools: readonly ToolSpec[]) {
    const listed = `[AVAILABLE_TOOLS]${pyJson(tools.map(toolObject))}[/AVAILABLE_TOOLS]`;
    const how = 'To call a tool, write [TOOL_CALLS], the tool name, [ARGS] and the arguments as one JSON object, for each call.';
    return { system: `${system ? `${system}\n\n` : ''}${how}\n\n${listed}`, task };
  },
  assistantContent(text: string, calls: readonly RenderedCall[]): string {
    return `${text}${calls.map((c) => `[TOOL_CALLS]${c.name}${ARGS}${pyJson(c.args ?? {})}`).join('')}`;
  },
  resultMessages(results: readonly RenderedResult[]): TextMessage[] {
    return results.length ? [{ role: 'user', content: results.map((r) => `[TOOL_RESULTS]${r.content}[/TOOL_RESULTS]`).join('') }] : [];
  },
  parse: (content) => parseMistral(content),
  mayContain: (content) => content.includes(MARK) || /^\s*\[\s*\{/.test(content),
};
