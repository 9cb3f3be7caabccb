import { gptOss } from './gpt-oss';
import { llama3Json } from './llama';
import { mistral } from './mistral';
import { hermes, qwen35, qwen3Coder } from './qwen';
import type { ParsedContent, TextCall, TextFormatId, TextToolFormat, ToolSpec } from './types';

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
 * Harmony (gpt-oss) is split into its channels first, when the answer is
 * Harmony (the gpt_oss format, or an answer that begins with a channel): the
 * `analysis` channel is reasoning, and no call is ever read from it. Returns
 * undefined when there is nothing to take out of the content.
 */
export function findTextCalls(
  content: string,
  tools: readonly ToolSpec[],
  preferred?: TextFormatId,
): ParsedContent | undefined {
  let text = content;
  let harmony: ParsedContent | undefined;
  if (preferred === 'gpt_oss' || /^\s*<\|(channel|start)\|>/.test(content)) {
    harmony = gptOss.parse(content, tools);
    text = harmony.text;
  }
  const found = tools.length ? readCalls(text, tools, preferred === 'gpt_oss' ? undefined : preferred) : undefined;
  if (!harmony) return found;
  // The gpt_oss format told the model to call so: a misspelled tool is the gate's to report, not dropped.
  const calls = [
    ...harmony.calls.filter((c) => preferred === 'gpt_oss' || tools.some((t) => t.name === c.name)),
    ...(found?.calls ?? []),
  ];
  return {
    text: found ? found.text : text,
    calls,
    repairs: found?.repairs ?? [],
    ...(harmony.reasoning ? { reasoning: harmony.reasoning } : {}),
  };
}

/** The calls of the first reader that finds any, as described above. */
function readCalls(
  text: string,
  tools: readonly ToolSpec[],
  preferred: TextFormatId | undefined,
): ParsedContent | undefined {
  const detect = preferred === undefined;
  const order = preferred
    ? [preferred, ...DETECT_ORDER.filter((f) => f !== preferred && !sameReader(f, preferred))]
    : DETECT_ORDER;
  for (const id of order) {
    const f = FORMATS[id];
    if (!f.mayContain(text)) continue;
    let parsed = f.parse(text, tools);
    if (!parsed.calls.length) continue;
    const isPreferred = preferred !== undefined && (id === preferred || sameReader(id, preferred));
    if (detect || !isPreferred) {
      // Not told to write calls so: only calls to offered tools, outside code blocks, count.
      const quoted = detect ? quotedCalls(text, parsed.calls) : undefined;
      if (quoted?.size) {
        const masked = maskRegions(text, quoted.regions);
        parsed = f.parse(masked.text, tools);
        parsed = { ...parsed, text: masked.restore(parsed.text) };
      }
      const offered = parsed.calls.filter((c) => tools.some((t) => t.name === c.name));
      if (!offered.length) continue;
      if (offered.length !== parsed.calls.length) parsed = { ...parsed, calls: offered };
    }
    return parsed;
  }
  return undefined;
}

/**
 * The calls that stand in a markdown code block (a ``` fence or `inline
 * code`), with the blocks that hold them. Code blocks are found in the prose
 * only: each call's own text is blanked first, so a backtick inside a call's
 * arguments (a file with a fence in it) pairs with nothing outside.
 */
function quotedCalls(text: string, calls: readonly TextCall[]): Set<TextCall> & { regions: [number, number][] } {
  const out = new Set<TextCall>() as Set<TextCall> & { regions: [number, number][] };
  out.regions = [];
  if (!text.includes('`')) return out;
  const spans: { call: TextCall; start: number; end: number }[] = [];
  let from = 0;
  for (const c of calls) {
    const at = c.raw ? text.indexOf(c.raw, from) : -1;
    if (at < 0) continue;
    spans.push({ call: c, start: at, end: at + c.raw.length });
    from = at + c.raw.length;
  }
  let prose = text;
  for (const s of spans) prose = prose.slice(0, s.start) + ' '.repeat(s.end - s.start) + prose.slice(s.end);
  const blocks: [number, number][] = [];
  for (const m of prose.matchAll(/```[\s\S]*?(?:```|$)|`[^`\n]+`/g)) blocks.push([m.index, m.index + m[0].length]);
  for (const s of spans) {
    // Where the call begins: its opening tag (the call's text starts after it), or its own start.
    const opener = openerOf(text, s.start);
    let block = blocks.find(([a, b]) => opener >= a && opener < b);
    // `<function=x>` in inline code: the call's own text ran over the closing backtick, so the span
    // was not found in the prose; a call that begins right after a backtick is quoted all the same.
    if (!block && text[opener - 1] === '`') block = [opener - 1, s.end];
    if (!block) continue;
    out.add(s.call);
    if (!out.regions.includes(block)) out.regions.push(block);
  }
  return out;
}

/** The opening tag a call's text follows (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`), or the call's start: a fence inside the tags is part of the call, one around them quotes it. */
function openerOf(text: string, start: number): number {
  let opener = start;
  for (const [open, close] of [
    ['<tool_call>', '</tool_call>'],
    ['[TOOL_CALLS', '\u0000'],
    ['<|python_tag|>', '\u0000'],
  ] as const) {
    const at = text.lastIndexOf(open, start);
    if (
      at >= 0 &&
      at < opener &&
      !text.slice(at, start).includes(close) &&
      text.slice(at + open.length, start).trim().length < 400
    )
      opener = at;
  }
  return opener;
}

/** `regions` of `text` replaced by placeholders no reader takes for a tag, and a way to put them back in prose. */
function maskRegions(
  text: string,
  regions: readonly [number, number][],
): { text: string; restore: (s: string) => string } {
  const kept: string[] = [];
  let out = '';
  let at = 0;
  for (const [a, b] of [...regions].sort((x, y) => x[0] - y[0])) {
    out += text.slice(at, a) + `\u0000${kept.length}\u0000`;
    kept.push(text.slice(a, b));
    at = b;
  }
  out += text.slice(at);
  return { text: out, restore: (s) => s.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => kept[Number(i)] ?? '') };
}

/** The Qwen forms share one reader. */
function sameReader(a: TextFormatId, b: TextFormatId): boolean {
  const qwen = new Set<TextFormatId>(['hermes', 'qwen3_coder', 'qwen3_5']);
  return qwen.has(a) && qwen.has(b);
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
