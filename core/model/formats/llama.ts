import { balancedEnd, parseLenientJson } from './json-repair';
import { pyJson } from './py-json';
import { toolObject } from './qwen';
import { callFromObject } from './calls';
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
 * Llama 3.1 / 3.3 JSON calls (vLLM `llama3_json`, SGLang `llama3`): the
 * answer is `{"name": …, "parameters": {…}}`, optionally after
 * `<|python_tag|>`, several separated by `;`. The official template puts the
 * tools (JSON, indent 4) and the instruction into the first user message and
 * renders results under the `ipython` role, which the server's template does
 * itself for `tool` messages.
 */

const PYTHON_TAG = '<|python_tag|>';
const END_TOKENS = /(<\|eom_id\|>|<\|eot_id\|>)\s*$/;

const HEAD =
  'Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n';

export function parseLlama(content: string): ParsedContent {
  const none: ParsedContent = { text: content.trim(), calls: [], repairs: [] };
  const tag = content.indexOf(PYTHON_TAG);
  let prose = '';
  let body: string;
  if (tag >= 0) {
    prose = content.slice(0, tag);
    body = content.slice(tag + PYTHON_TAG.length);
  } else {
    body = content.trim();
    if (!body.startsWith('{') && !body.startsWith('[')) return none;
  }
  body = body.replace(END_TOKENS, '');
  const calls: TextCall[] = [];
  let at = 0;
  let after = '';
  for (;;) {
    while (at < body.length && /[\s;]/.test(body[at]!)) at++;
    if (at >= body.length) break;
    if (body[at] !== '{' && body[at] !== '[') {
      after = body.slice(at);
      break;
    }
    const end = balancedEnd(body, at).end;
    const raw = body.slice(at, end);
    const parsed = parseLenientJson(raw, 'the tool call');
    if (!parsed.ok) {
      // Not readable as JSON: a tagged answer is a broken call; an untagged one was prose after all.
      if (tag < 0 && calls.length === 0) return none;
      const name = /"name"\s*:\s*"([^"\\]*)"/.exec(raw)?.[1] ?? '';
      calls.push({
        name,
        args: null,
        argsError: `the tool call is not JSON: ${parsed.error}`,
        raw,
        repairs: [],
        format: 'llama3_json',
      });
    } else {
      const values = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
      for (const v of values) {
        // JSON without a name is an answer that happens to be JSON, not a call (as vLLM reads it).
        if (typeof v !== 'object' || v === null || typeof (v as { name?: unknown }).name !== 'string') {
          if (tag < 0 && calls.length === 0) return none;
          continue;
        }
        calls.push(callFromObject(v, { raw, format: 'llama3_json' }, [...parsed.repairs]));
      }
    }
    at = end;
  }
  if (!calls.length) return none;
  return { text: `${prose}${after ? `\n${after}` : ''}`.trim(), calls, repairs: [] };
}

export const llama3Json: TextToolFormat = {
  id: 'llama3_json',
  family: 'Llama 3.1 / 3.3 (JSON calls, tools in the first user message)',
  prompt(system: string, task: string, tools: readonly ToolSpec[]) {
    return { system, task: `${HEAD}${tools.map((t) => `${pyJson(toolObject(t), 4)}\n\n`).join('')}${task.trim()}` };
  },
  assistantContent(text: string, calls: readonly RenderedCall[]): string {
    // The template drops a turn's prose when it has a call; several calls are joined as the servers read them.
    if (!calls.length) return text;
    return calls.map((c) => `{"name": "${c.name}", "parameters": ${pyJson(c.args ?? {})}}`).join('; ');
  },
  resultMessages(results: readonly RenderedResult[]): TextMessage[] {
    return results.map((r) => ({ role: 'tool', tool_call_id: r.callId, content: r.content }));
  },
  parse: (content) => parseLlama(content),
  mayContain: (content) => content.includes(PYTHON_TAG) || /^\s*\[?\s*\{/.test(content),
};
