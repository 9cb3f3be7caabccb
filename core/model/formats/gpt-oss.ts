import { balancedEnd, parseLenientJson } from './json-repair';
import { pyJson } from './py-json';
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
 * gpt-oss's Harmony messages (vLLM `openai`, SGLang `gpt-oss`), as text when
 * a server keeps the special tokens and parses nothing (SGLang does so
 * whenever tools are sent): `<|channel|>analysis<|message|>…<|end|>` is
 * reasoning, `…<|channel|>commentary to=functions.NAME <|constrain|>json
 * <|message|>{…}<|call|>` a call, `final` (or commentary for nobody) the
 * answer. The header rules are Harmony's own: the recipient may sit in the
 * role or the channel part, `<|constrain|>` is optional. vLLM always parses
 * gpt-oss from tokens, so this mostly serves SGLang without a parser; the
 * tools render as Harmony's `namespace functions` of TypeScript types.
 */

const START = '<|start|>';
const MESSAGE = '<|message|>';
const ENDS = ['<|end|>', '<|call|>', '<|return|>'];

export function parseHarmony(content: string): ParsedContent {
  if (!content.includes('<|channel|>') && !content.includes(MESSAGE))
    return { text: content.trim(), calls: [], repairs: [] };
  const calls: TextCall[] = [];
  const reasoning: string[] = [];
  const finals: string[] = [];
  const preambles: string[] = [];
  const prose: string[] = [];
  // Message by message: a header up to <|message|>, then a body to its end token. A call's body is
  // JSON read to where its brackets balance, so arguments that hold Harmony's tokens (a file about
  // the format) stay arguments.
  let at = 0;
  while (at < content.length) {
    const m = content.indexOf(MESSAGE, at);
    if (m < 0) {
      const rest = content.slice(at).replace(/^(?:<\|start\|>|<\|end\|>|<\|return\|>|<\|call\|>)+/, '');
      if (rest.trim()) prose.push(rest);
      break;
    }
    const header = content.slice(at, m).replace(/^<\|start\|>/, '');
    const bodyStart = m + MESSAGE.length;
    const channel = /<\|channel\|>([^\s<]+)/.exec(header)?.[1] ?? '';
    const recipient = /(?:^|\s)to=([^\s<]+)/.exec(header.replace('<|constrain|>', ' <|constrain|>'))?.[1];
    let bodyEnd: number;
    if (recipient?.startsWith('functions.')) {
      const lead = skipSpace(content, bodyStart);
      bodyEnd =
        content[lead] === '{' || content[lead] === '[' ? balancedEnd(content, lead).end : endOf(content, bodyStart);
      const name = recipient.slice('functions.'.length);
      const raw = content.slice(bodyStart, bodyEnd).trim();
      const parsed = parseLenientJson(raw || '{}');
      calls.push(
        parsed.ok
          ? callFromObject({ name, arguments: parsed.value }, { raw, format: 'gpt_oss' }, [...parsed.repairs])
          : {
              name,
              args: null,
              argsError: `the arguments are not JSON: ${parsed.error}`,
              raw,
              repairs: [],
              format: 'gpt_oss',
            },
      );
    } else {
      bodyEnd = endOf(content, bodyStart);
      const body = content.slice(bodyStart, bodyEnd);
      if (channel === 'analysis') reasoning.push(body);
      else if (channel === 'final') finals.push(body);
      else preambles.push(body);
    }
    at = bodyEnd;
    for (const e of ENDS) if (content.startsWith(e, skipSpace(content, at))) at = skipSpace(content, at) + e.length;
    // Prose between messages (no header yet): kept.
    const next = content.indexOf(START, at);
    const nextChannel = content.indexOf('<|channel|>', at);
    const cut = [next, nextChannel].filter((i) => i >= 0);
    const headerAt = cut.length ? Math.min(...cut) : -1;
    if (headerAt > at && content.slice(at, headerAt).trim() && content.indexOf(MESSAGE, at) > headerAt) {
      prose.push(content.slice(at, headerAt));
      at = headerAt;
    }
  }
  const text = [...prose, ...(finals.length ? finals : preambles)].join('\n').trim();
  const out: ParsedContent = { text, calls, repairs: [] };
  if (reasoning.length) out.reasoning = reasoning.map((r) => r.trim()).join('\n\n');
  return out;
}

/** Where a message's body ends: its first end token, or the end of the text. */
function endOf(s: string, from: number): number {
  let end = s.length;
  for (const e of ENDS) {
    const i = s.indexOf(e, from);
    if (i >= 0 && i < end) end = i;
  }
  return end;
}

/** A JSON schema as Harmony writes a parameter's type. */
function tsType(schema: Record<string, unknown> | undefined, indent: string): string {
  if (!schema) return 'any';
  const t = schema.type;
  if (Array.isArray(t)) return t.map((x) => tsType({ ...schema, type: x }, indent)).join(' | ');
  switch (t) {
    case 'string':
      return Array.isArray(schema.enum) ? schema.enum.map((e) => JSON.stringify(e)).join(' | ') : 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array': {
      const items = schema.items;
      return typeof items === 'object' && items !== null
        ? `${tsType(items as Record<string, unknown>, indent)}[]`
        : 'Array<any>';
    }
    case 'object':
      return objectType(schema, indent);
    default:
      return 'any';
  }
}

function objectType(schema: Record<string, unknown>, indent: string): string {
  const props =
    typeof schema.properties === 'object' && schema.properties !== null
      ? (schema.properties as Record<string, Record<string, unknown>>)
      : {};
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
  const lines: string[] = ['{\n'];
  for (const [key, p] of Object.entries(props)) {
    if (typeof p.description === 'string') lines.push(`${indent}// ${p.description}\n`);
    const def =
      p.default !== undefined
        ? ` // default: ${typeof p.default === 'string' && !Array.isArray(p.enum) ? JSON.stringify(p.default) : typeof p.default === 'string' ? p.default : pyJson(p.default)}`
        : '';
    lines.push(
      `${indent}${key}${required.includes(key) ? '' : '?'}: ${tsType(p, `${indent}    `)}${p.nullable === true ? ' | null' : ''},${def}\n`,
    );
  }
  lines.push(`${indent.slice(4)}}`);
  return lines.join('');
}

export const gptOss: TextToolFormat = {
  id: 'gpt_oss',
  family: 'gpt-oss (Harmony channels)',
  prompt(system: string, task: string, tools: readonly ToolSpec[]) {
    const decls = tools.map((t) => {
      const desc = t.description
        ? `${t.description
            .split('\n')
            .map((l) => `// ${l}`)
            .join('\n')}\n`
        : '';
      const params = t.parameters === undefined ? '() => any' : `(_: ${objectType(t.parameters, '')}) => any`;
      return `${desc}type ${t.name} = ${params};\n`;
    });
    const section = [
      '# Tools',
      '## functions',
      ['namespace functions {\n', ...decls, '} // namespace functions'].join('\n'),
    ].join('\n\n');
    return { system: `${system ? `${system}\n\n` : ''}${section}`, task };
  },
  assistantContent(text: string, calls: readonly RenderedCall[]): string {
    const said = text ? `<|channel|>final<|message|>${text}<|end|>` : '';
    const made = calls.map(
      (c, i) =>
        `${i === 0 && !said ? '' : START + 'assistant'}<|channel|>commentary to=functions.${c.name} <|constrain|>json${MESSAGE}${JSON.stringify(c.args ?? {})}<|call|>`,
    );
    return `${said}${made.join('')}`;
  },
  resultMessages(results: readonly RenderedResult[]): TextMessage[] {
    return results.length
      ? [
          {
            role: 'user',
            content: results
              .map((r) => `${START}functions.${r.name} to=assistant<|channel|>commentary${MESSAGE}${r.content}<|end|>`)
              .join(''),
          },
        ]
      : [];
  },
  parse: (content) => parseHarmony(content),
  mayContain: (content) => content.includes('<|channel|>') || content.includes(MESSAGE),
};
