import { pyJson, pyStr } from './py-json';
import { parseTagged } from './tagged/index';
import { CALL_CLOSE, CALL_OPEN } from './tagged/scan';
import type { RenderedCall, RenderedResult, TextMessage, TextToolFormat, ToolSpec } from './types';

/**
 * The Qwen family's three renderings, byte for byte as their chat templates
 * print them (the templates' text is quoted in docs/agent.md with where it
 * comes from). What the template adds around a message (`<|im_start|>`,
 * the role, `<|im_end|>`) is the server's to add: these return the content.
 *
 * - `hermes`: Qwen2.5 / Qwen3 / Qwen3-2507 and Hermes models — tools as JSON
 *   lines, calls as `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`.
 * - `qwen3_coder`: Qwen3-Coder — tools as `<function><name>…` XML, calls as
 *   `<function=NAME><parameter=KEY>…`.
 * - `qwen3_5`: Qwen3.5 / Qwen3.6 (and the LAR models built on them) — tools
 *   as JSON lines, calls in the XML form, the system text after the tools.
 */

const HERMES_HEAD =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>';
const HERMES_TAIL =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

const XML_INSTRUCTIONS =
  '\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>';

/** A tool as vLLM hands it to a template: the whole API object (`tool | tojson`). */
export function toolObject(t: ToolSpec): Record<string, unknown> {
  const fn: Record<string, unknown> = { name: t.name, description: t.description ?? null };
  if (t.parameters !== undefined) fn.parameters = t.parameters;
  return { type: 'function', function: fn };
}

function toolJson(t: ToolSpec): string {
  return pyJson(toolObject(t));
}

/** Jinja's `| trim` on a string. */
function trim(s: string): string {
  return s.trim();
}

/** Python's `s.strip('\n')`. */
function stripNewlines(s: string): string {
  return s.replace(/^\n+|\n+$/g, '');
}

/** The `<tool_response>` blocks of one turn's results, as the Qwen templates group consecutive tool messages. */
function responses(results: readonly RenderedResult[], after: string): string {
  return results.map((r) => `<tool_response>\n${r.content}\n</tool_response>${after}`).join(after ? '' : '\n');
}

/** One call in the XML form: strings verbatim, objects and arrays as JSON, other scalars as Python prints them. */
function xmlCall(c: RenderedCall): string {
  const args =
    typeof c.args === 'object' && c.args !== null && !Array.isArray(c.args) ? (c.args as Record<string, unknown>) : {};
  const params = Object.entries(args)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<parameter=${k}>\n${typeof v === 'object' && v !== null ? pyJson(v) : pyStr(v)}\n</parameter>\n`)
    .join('');
  return `<tool_call>\n<function=${c.name}>\n${params}</function>\n</tool_call>`;
}

export const hermes: TextToolFormat = {
  id: 'hermes',
  family: 'Hermes, Qwen2.5, Qwen3, Qwen3-2507 (JSON in <tool_call>)',
  prompt(system: string, task: string, tools: readonly ToolSpec[]) {
    const head = system ? `${system}\n\n` : '';
    return { system: `${head}${HERMES_HEAD}${tools.map((t) => `\n${toolJson(t)}`).join('')}${HERMES_TAIL}`, task };
  },
  assistantContent(text: string, calls: readonly RenderedCall[], reasoning?: string): string {
    const rendered = calls.map(
      (c) => `<tool_call>\n{"name": "${c.name}", "arguments": ${pyJson(c.args ?? {})}}\n</tool_call>`,
    );
    // Qwen3: '<think>\n' + reasoning.strip('\n') + '\n</think>\n\n' + content.lstrip('\n').
    const content = reasoning ? `<think>\n${stripNewlines(reasoning)}\n</think>\n\n${text.replace(/^\n+/, '')}` : text;
    return `${content}${text && calls.length ? '\n' : ''}${rendered.join('\n')}`;
  },
  resultMessages(results: readonly RenderedResult[]): TextMessage[] {
    return results.length ? [{ role: 'user', content: responses(results, '') }] : [];
  },
  parse: (content, tools) => parseTagged(content, tools, 'hermes'),
  mayContain: mayBeTagged,
};

export const qwen3Coder: TextToolFormat = {
  id: 'qwen3_coder',
  family: 'Qwen3-Coder (XML <function=…> calls, tools listed as XML)',
  prompt(system: string, task: string, tools: readonly ToolSpec[]) {
    const listed = tools.map((t) => {
      const parts = [`\n<function>\n<name>${t.name}</name>`];
      if (t.description !== undefined) parts.push(`\n<description>${trim(t.description)}</description>`);
      parts.push('\n<parameters>');
      const params = t.parameters ?? {};
      const props =
        typeof params.properties === 'object' && params.properties !== null
          ? (params.properties as Record<string, Record<string, unknown>>)
          : {};
      for (const [name, fields] of Object.entries(props)) {
        parts.push(`\n<parameter>\n<name>${name}</name>`);
        if (fields.type !== undefined)
          parts.push(`\n<type>${pyStr(Array.isArray(fields.type) ? pyList(fields.type) : fields.type)}</type>`);
        if (typeof fields.description === 'string')
          parts.push(`\n<description>${trim(fields.description)}</description>`);
        parts.push(extraKeys(fields, ['name', 'type', 'description']));
        parts.push('\n</parameter>');
      }
      parts.push(extraKeys(params, ['type', 'properties']));
      parts.push('\n</parameters>');
      parts.push('\n</function>');
      return parts.join('');
    });
    const head = system || 'You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks.';
    return {
      system: `${head}\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>${listed.join('')}\n</tools>${XML_INSTRUCTIONS}`,
      task,
    };
  },
  assistantContent(text: string, calls: readonly RenderedCall[]): string {
    if (!calls.length) return text;
    // The template writes `assistant` + ("\n" + trimmed content + "\n") + "\n<tool_call>…" per call;
    // the server adds the first newline after the role.
    const body = calls.map((c) => `\n${xmlCall(c)}`).join('');
    return trim(text) ? `${trim(text)}\n${body}` : body.slice(1);
  },
  resultMessages(results: readonly RenderedResult[]): TextMessage[] {
    return results.length ? [{ role: 'user', content: responses(results, '\n') }] : [];
  },
  parse: (content, tools) => parseTagged(content, tools, 'qwen3_coder'),
  mayContain: mayBeTagged,
};

export const qwen35: TextToolFormat = {
  id: 'qwen3_5',
  family: 'Qwen3.5, Qwen3.6 and models built on them such as LAR (XML <function=…> calls, tools listed as JSON)',
  prompt(system: string, task: string, tools: readonly ToolSpec[]) {
    const listed = tools.map((t) => `\n${toolJson(t)}`).join('');
    const tail = trim(system) ? `\n\n${trim(system)}` : '';
    return {
      system: `# Tools\n\nYou have access to the following functions:\n\n<tools>${listed}\n</tools>${XML_INSTRUCTIONS}${tail}`,
      task,
    };
  },
  assistantContent(text: string, calls: readonly RenderedCall[], reasoning?: string): string {
    const content = trim(text);
    // Qwen3.5: '\n<think>\n' + reasoning|trim + '\n</think>\n\n' + content after the role (the server writes the first newline).
    const thought = reasoning && trim(reasoning) ? `<think>\n${trim(reasoning)}\n</think>\n\n` : '';
    if (!calls.length) return `${thought}${content}`;
    const body = calls
      .map((c, i) => (i === 0 ? (content ? `\n\n${xmlCall(c)}` : xmlCall(c)) : `\n${xmlCall(c)}`))
      .join('');
    return `${thought}${content}${body}`;
  },
  resultMessages(results: readonly RenderedResult[]): TextMessage[] {
    return results.length ? [{ role: 'user', content: responses(results, '') }] : [];
  },
  parse: (content, tools) => parseTagged(content, tools, 'qwen3_5'),
  mayContain: mayBeTagged,
};

function mayBeTagged(content: string): boolean {
  return content.includes(CALL_OPEN) || content.includes(CALL_CLOSE) || content.includes('<function=');
}

/** A list as Python's `str()` prints it (`['string', 'null']`): how `| string` shows a list of types. */
function pyList(list: unknown[]): string {
  return `[${list.map((x) => (typeof x === 'string' ? `'${x}'` : pyStr(x))).join(', ')}]`;
}

/** The template's `render_extra_keys`: each other key as `<key>value</key>`, JSON for containers. */
function extraKeys(obj: Record<string, unknown>, skip: readonly string[]): string {
  return Object.entries(obj)
    .filter(([k, v]) => !skip.includes(k) && v !== undefined)
    .map(([k, v]) => `\n<${k}>${typeof v === 'object' && v !== null ? pyJson(v) : pyStr(v)}</${k}>`)
    .join('');
}

export { CALL_CLOSE, CALL_OPEN };
