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

/** Tried in this order on content: tagged forms first, the bare JSON forms last (they need known tool names). */
const DETECT_ORDER: readonly TextFormatId[] = ['qwen3_5', 'mistral', 'gpt_oss', 'llama3_json'];

/** Forms that are only JSON, with no marker: a call must name a tool offered, or it is an answer that is JSON. */
const BARE: ReadonlySet<TextFormatId> = new Set(['llama3_json', 'mistral']);

/**
 * The calls written as text in `content` (reasoning already taken out). The
 * `preferred` format is read first; then every other form, so a model that
 * drifts to another family's form is still understood. Returns undefined
 * when no form finds a call.
 */
export function findTextCalls(content: string, tools: readonly ToolSpec[], preferred?: TextFormatId): ParsedContent | undefined {
  const order = preferred ? [preferred, ...DETECT_ORDER.filter((f) => f !== preferred && !sameReader(f, preferred))] : DETECT_ORDER;
  for (const id of order) {
    const f = FORMATS[id];
    if (!f.mayContain(content)) continue;
    const parsed = f.parse(content, tools);
    if (!parsed.calls.length) continue;
    if (id !== preferred && BARE.has(id) && !unmarked(content, id, parsed, tools)) continue;
    return parsed;
  }
  return undefined;
}

/** The Qwen forms share one reader. */
function sameReader(a: TextFormatId, b: TextFormatId): boolean {
  const qwen = new Set<TextFormatId>(['hermes', 'qwen3_coder', 'qwen3_5']);
  return qwen.has(a) && qwen.has(b);
}

/** A marker-less JSON answer counts as calls only when every call names a tool that was offered. */
function unmarked(content: string, id: TextFormatId, parsed: ParsedContent, tools: readonly ToolSpec[]): boolean {
  const marked = id === 'llama3_json' ? content.includes('<|python_tag|>') : content.includes('[TOOL_CALLS');
  if (marked) return true;
  return parsed.calls.every((c) => tools.some((t) => t.name === c.name));
}

/**
 * The text format a model most likely writes, from its id (for `auto` when
 * the server cannot parse calls, and for the connection report's advice).
 * The LAR models are built on Qwen3.5.
 */
export function guessFormat(modelId: string): TextFormatId {
  const m = modelId.toLowerCase();
  if (/gpt-oss|gpt_oss/.test(m)) return 'gpt_oss';
  if (/mistral|mixtral|devstral|magistral|codestral|ministral/.test(m)) return 'mistral';
  if (/llama/.test(m)) return 'llama3_json';
  if (/qwen3-coder|qwen3_coder|qwen3coder/.test(m)) return 'qwen3_coder';
  if (/qwen3\.[5-9]|qwen3\.\d{2}|qwen3_[5-9]|qwen3\.5|\blar\b|lar-\d|lar_\d/.test(m)) return 'qwen3_5';
  return 'hermes';
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
