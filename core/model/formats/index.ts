import { gptOss } from './gpt-oss';
import { llama3Json } from './llama';
import { mistral } from './mistral';
import { hermes, qwen35, qwen3Coder } from './qwen';
import type { ParsedContent, TextFormatId, TextToolFormat, ToolSpec } from './types';

/**
 * The tool-call formats, one registry: each text format renders the tools,
 * the model's earlier calls and the results the way its family's chat
 * template does, and reads the calls back out of an answer. `findTextCalls`
 * is what every mode runs on content: in `native` and `auto` a server that
 * failed to parse a call left it there.
 */
export * from './types';
export { REPAIRS, type RepairId } from './repairs';

export const FORMATS: Readonly<Record<TextFormatId, TextToolFormat>> = {
  hermes,
  qwen3_coder: qwen3Coder,
  qwen3_5: qwen35,
  llama3_json: llama3Json,
  mistral,
  gpt_oss: gptOss,
};

/** Tried in this order on content: tagged forms first, the bare JSON forms last. */
const DETECT_ORDER: readonly TextFormatId[] = ['qwen3_5', 'mistral', 'llama3_json'];

/**
 * The calls written as text in `content` (reasoning already taken out).
 *
 * With a `preferred` format (a text format was chosen: the model was told to
 * write calls so) that form is read first and a broken call is an error the
 * model reads; the other forms are read after it, so a model that drifts to
 * another family's form is still understood.
 *
 * Without one (`native`, `auto`: the model was given tools in the API and a
 * server failed to parse a call) content is mostly prose, so a call counts
 * only when it names a tool that was offered, and never inside a markdown
 * code block (a call the model quotes, from a README or a file it read, is
 * an example, not a call). Prose that merely mentions `<tool_call>` or
 * `[TOOL_CALLS]` stays prose.
 *
 * Harmony (gpt-oss) is split into its channels first: the `analysis`
 * channel is reasoning, and no call is ever read from it. Returns undefined
 * when no call is found.
 */
export function findTextCalls(content: string, tools: readonly ToolSpec[], preferred?: TextFormatId): ParsedContent | undefined {
  if (!tools.length) return undefined;
  let text = content;
  let harmony: ParsedContent | undefined;
  if (gptOss.mayContain(content)) {
    harmony = gptOss.parse(content, tools);
    text = harmony.text;
  }
  const detect = preferred === undefined || preferred === 'gpt_oss';
  const order = preferred && preferred !== 'gpt_oss' ? [preferred, ...DETECT_ORDER.filter((f) => f !== preferred && !sameReader(f, preferred))] : DETECT_ORDER;
  const quoted = detect ? maskCodeBlocks(text) : undefined;
  const scan = quoted ? quoted.masked : text;
  let found: ParsedContent | undefined;
  for (const id of order) {
    const f = FORMATS[id];
    if (!f.mayContain(scan)) continue;
    const parsed = f.parse(scan, tools);
    if (!parsed.calls.length) continue;
    const isPreferred = id === preferred || (preferred !== undefined && sameReader(id, preferred));
    if ((detect || !isPreferred) && !parsed.calls.every((c) => tools.some((t) => t.name === c.name))) continue;
    found = quoted ? { ...parsed, text: quoted.restore(parsed.text) } : parsed;
    break;
  }
  if (harmony && (harmony.calls.length || harmony.reasoning)) {
    const calls = [...harmony.calls.filter((c) => !detect || tools.some((t) => t.name === c.name)), ...(found?.calls ?? [])];
    if (!calls.length && !found) return harmony.reasoning ? { text, calls: [], repairs: [], reasoning: harmony.reasoning } : undefined;
    return { text: found ? found.text : text, calls, repairs: found?.repairs ?? [], ...(harmony.reasoning ? { reasoning: harmony.reasoning } : {}) };
  }
  return found;
}

/** The Qwen forms share one reader. */
function sameReader(a: TextFormatId, b: TextFormatId): boolean {
  const qwen = new Set<TextFormatId>(['hermes', 'qwen3_coder', 'qwen3_5']);
  return qwen.has(a) && qwen.has(b);
}

/**
 * Markdown code blocks (``` fences and `inline code`) replaced by
 * placeholders that no reader takes for a tag, and a way to put them back in
 * the prose. A fence that stands inside an open `<tool_call>` (a model that
 * wrapped its JSON in one) is part of that call, not a quote, and is kept.
 */
function maskCodeBlocks(text: string): { masked: string; restore: (s: string) => string } | undefined {
  if (!text.includes('`')) return undefined;
  const kept: string[] = [];
  const masked = text.replace(/```[\s\S]*?(```|$)|`[^`\n]+`/g, (block, _end, offset: number) => {
    const before = text.slice(0, offset);
    const open = before.split('<tool_call>').length - before.split('</tool_call>').length;
    if (open > 0) return block;
    kept.push(block);
    return `\u0000${kept.length - 1}\u0000`;
  });
  if (!kept.length) return undefined;
  return { masked, restore: (s) => s.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => kept[Number(i)] ?? '') };
}

/**
 * The text format a model most likely writes, from its id (for `auto` when
 * the server cannot parse calls, and for the connection report's advice);
 * undefined for a family not known here. The LAR models are built on
 * Qwen3.5. Ids are often paths (`/models/LAR-9B`, `Qwen/Qwen3.5-27B`): only
 * the last part is read.
 */
export function guessFormat(modelId: string): TextFormatId | undefined {
  const m = (modelId.split('/').filter(Boolean).pop() ?? modelId).toLowerCase();
  if (/^gpt-oss|gpt_oss/.test(m)) return 'gpt_oss';
  if (/^(mistral|mixtral|devstral|magistral|codestral|ministral)/.test(m)) return 'mistral';
  if (/^(meta-)?llama-?3/.test(m)) return 'llama3_json';
  if (/^qwen3-?coder/.test(m)) return 'qwen3_coder';
  if (/^qwen3\.[5-9]|^qwen3\.\d\d|^lar[-_]/.test(m)) return 'qwen3_5';
  if (/^(qwen3|qwen2\.5|qwen2_5|hermes|nous-hermes)/.test(m)) return 'hermes';
  return undefined;
}

/** The server flags that parse a format natively, for the connection report and the docs. */
export const SERVER_PARSERS: Readonly<Record<TextFormatId, { vllm: string; sglang: string }>> = {
  hermes: { vllm: 'hermes', sglang: 'qwen25' },
  qwen3_coder: { vllm: 'qwen3_coder', sglang: 'qwen3_coder' },
  qwen3_5: { vllm: 'qwen3_coder', sglang: 'qwen3_coder' },
  llama3_json: { vllm: 'llama3_json', sglang: 'llama3' },
  mistral: { vllm: 'mistral', sglang: 'mistral' },
  gpt_oss: { vllm: 'openai', sglang: 'gpt-oss' },
};
