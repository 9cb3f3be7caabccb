/**
 * The LAR models for other extensions (`vscode.lm`), without the editor: the
 * request messages and tools a caller hands to a `LanguageModelChatProvider`
 * become an OpenAI chat request for the ModelClient, and one streamed answer
 * comes back as text deltas and tool calls. The caller's tools are never run
 * here: a tool call goes back to the caller, who runs it and sends the result
 * in its next request. No `vscode` import, so this runs under `node --test`;
 * `lmProvider.ts` is the thin glue that turns the callbacks into response parts.
 *
 * Parts are recognised by shape, as the editor hands them over: text
 * `{value}`, tool call `{callId, name, input}`, tool result `{callId, content}`.
 * Anything else (images, prompt-tsx, data) is left out of the request.
 */
import { randomBytes } from 'node:crypto';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ModelError, redact, type ModelClient, type ModelReply, type ModelToolCall, type ServedModel } from '../../core/model/client';

/** The vendor in `contributes.languageModelChatProviders`: `vscode.lm.selectChatModels({ vendor: 'lean4agentic' })`. */
export const LM_VENDOR = 'lean4agentic';

/** `vscode.LanguageModelChatMessageRole`'s values; 3 is the System role VS Code has in a proposed API. */
export const LmRole = { User: 1, Assistant: 2, System: 3 } as const;
/** `vscode.LanguageModelChatToolMode`'s values. */
export const LmToolMode = { Auto: 1, Required: 2 } as const;

/** The shape of `vscode.LanguageModelChatRequestMessage`. */
export interface LmMessage {
  readonly role: number;
  readonly content: ReadonlyArray<unknown>;
}

/** The shape of `vscode.LanguageModelChatTool`. */
export interface LmTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema?: object | undefined;
}

/** A tool call for the caller to run: becomes a `LanguageModelToolCallPart`. */
export interface LmToolCall {
  callId: string;
  name: string;
  input: object;
}

type Part = { kind: 'text'; value: string } | { kind: 'call'; call: LmToolCall } | { kind: 'result'; callId: string; text: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function partOf(p: unknown): Part | undefined {
  if (!isObject(p)) return undefined;
  if (typeof p.callId === 'string') {
    if (typeof p.name === 'string' && isObject(p.input)) return { kind: 'call', call: { callId: p.callId, name: p.name, input: p.input } };
    if (Array.isArray(p.content)) return { kind: 'result', callId: p.callId, text: p.content.map(textOf).join('') };
    return undefined;
  }
  return typeof p.value === 'string' ? { kind: 'text', value: p.value } : undefined;
}

/** The text in a tool result's content: text parts (and bare strings); other parts carry nothing the server can read. */
function textOf(p: unknown): string {
  if (typeof p === 'string') return p;
  return isObject(p) && typeof p.value === 'string' ? p.value : '';
}

/**
 * The caller's conversation as OpenAI chat messages. An assistant message's
 * tool calls become `tool_calls`; a user message's tool results become
 * `role: "tool"` messages, placed before the user's own text because the API
 * wants them right after the assistant message that made the calls.
 */
export function toChatMessages(messages: readonly LmMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const m of messages) {
    const parts = m.content.map(partOf).filter((p): p is Part => p !== undefined);
    const text = parts.map((p) => (p.kind === 'text' ? p.value : '')).join('');
    if (m.role === LmRole.System) {
      out.push({ role: 'system', content: text });
    } else if (m.role === LmRole.Assistant) {
      const calls = parts.flatMap((p) => (p.kind === 'call' ? [p.call] : []));
      out.push({
        role: 'assistant',
        content: text || (calls.length ? null : ''),
        ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.callId, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input) } })) } : {}),
      });
    } else {
      const results = parts.flatMap((p) => (p.kind === 'result' ? [p] : []));
      for (const r of results) out.push({ role: 'tool', tool_call_id: r.callId, content: r.text });
      if (text || !results.length) out.push({ role: 'user', content: text });
    }
  }
  return out;
}

/** The caller's tools as OpenAI function tools; a tool without a schema takes an empty object. */
export function toChatTools(tools: readonly LmTool[]): ChatCompletionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: (t.inputSchema ?? { type: 'object', properties: {} }) as Record<string, unknown> },
  }));
}

/**
 * With the `hermes` tool-call format the ModelClient sends no `tools` array
 * (the server has no tool-call parser), so the model learns the caller's tools
 * from the system message instead, in the Hermes convention the text parser
 * reads back. `required` cannot be enforced by the server there: it is asked for.
 */
export function hermesToolPrompt(tools: readonly LmTool[], required: boolean): string {
  return [
    'You can call these tools. To call one, write <tool_call>{"name": <tool name>, "arguments": <JSON object>}</tool_call> in your answer, one block per call.',
    '<tools>',
    ...toChatTools(tools).map((t) => JSON.stringify(t)),
    '</tools>',
    ...(required ? ['You must answer by calling at least one of these tools.'] : []),
  ].join('\n');
}

function withSystemText(messages: ChatCompletionMessageParam[], text: string): ChatCompletionMessageParam[] {
  const first = messages[0];
  // Merged into the caller's system message: some chat templates allow only one, at the start.
  if (first?.role === 'system' && typeof first.content === 'string') return [{ role: 'system', content: `${first.content}\n\n${text}` }, ...messages.slice(1)];
  return [{ role: 'system', content: text }, ...messages];
}

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/**
 * Streamed text minus `<tool_call>…</tool_call>` blocks: a server without a
 * tool-call parser (or the `hermes` format) writes calls into the content,
 * and the ModelClient hands them back as tool calls once the answer is whole,
 * so the caller must not also see them as text. A tail that may be the start
 * of a tag is held back until the next delta says what it is.
 */
export class ToolCallTextFilter {
  private pending = '';
  private inside = false;

  push(delta: string): string {
    let text = this.pending + delta;
    this.pending = '';
    let out = '';
    for (;;) {
      if (this.inside) {
        const close = text.indexOf(CLOSE);
        if (close < 0) {
          this.pending = text.slice(-(CLOSE.length - 1));
          return out;
        }
        text = text.slice(close + CLOSE.length);
        this.inside = false;
      } else {
        const open = text.indexOf(OPEN);
        if (open < 0) {
          const keep = partialTag(text);
          this.pending = text.slice(text.length - keep);
          return out + text.slice(0, text.length - keep);
        }
        out += text.slice(0, open);
        text = text.slice(open + OPEN.length);
        this.inside = true;
      }
    }
  }

  /** What was held back, once the answer has ended (nothing of an unclosed call). */
  flush(): string {
    const rest = this.inside ? '' : this.pending;
    this.pending = '';
    return rest;
  }
}

/** How many trailing characters of `text` could begin `<tool_call>`. */
function partialTag(text: string): number {
  for (let n = Math.min(OPEN.length - 1, text.length); n > 0; n--) if (OPEN.startsWith(text.slice(-n))) return n;
  return 0;
}

export interface ChatRequest {
  messages: readonly LmMessage[];
  tools?: readonly LmTool[];
  /** `LmToolMode`; Auto when absent. */
  toolMode?: number;
  /** The `toolCallFormat` setting the ModelClient was built with. */
  toolFormat: 'native' | 'hermes';
}

export interface ChatSink {
  text(delta: string): void;
  toolCall(call: LmToolCall): void;
}

/**
 * One streamed answer: text deltas go to the sink as they arrive, tool calls
 * once the answer is complete (their arguments are whole only then).
 * `Required` tool mode is sent as `tool_choice: "required"` (native format)
 * or asked for in the system message (hermes). Throws the ModelClient's
 * ModelError; `failureMessage` words it for the caller.
 *
 * A call whose arguments are not a JSON object is not passed on as a tool
 * call: the caller would run its tool with input the model never wrote. It
 * comes back as a note in the text instead, naming the tool, the parse error
 * and what the model wrote, so the user (and the model, on the next turn)
 * can see what went wrong.
 */
export async function answerChat(client: Pick<ModelClient, 'complete'>, req: ChatRequest, sink: ChatSink, signal?: AbortSignal): Promise<ModelReply> {
  const tools = req.tools?.length ? req.tools : undefined;
  const required = tools !== undefined && req.toolMode === LmToolMode.Required;
  let messages = toChatMessages(req.messages);
  if (tools && req.toolFormat === 'hermes') messages = withSystemText(messages, hermesToolPrompt(tools, required));
  const filter = new ToolCallTextFilter();
  const reply = await client.complete({
    messages,
    ...(tools ? { tools: toChatTools(tools) } : {}),
    ...(required ? { toolChoice: 'required' as const } : {}),
    ...(signal ? { signal } : {}),
    onText: (delta) => {
      const shown = filter.push(delta);
      if (shown) sink.text(shown);
    },
  });
  const rest = filter.flush();
  if (rest) sink.text(rest);
  for (const call of reply.toolCalls) {
    if (call.argsError !== undefined || !call.name || !isObject(call.args)) sink.text(malformedCallNote(call));
    else sink.toolCall({ callId: call.via === 'text' ? textCallId() : call.id, name: call.name, input: call.args });
  }
  return reply;
}

/**
 * Calls parsed from text have no server id (the ModelClient numbers them from
 * 0 each turn); the caller keys results by id across the whole conversation,
 * so each gets a fresh one. Nine alphanumerics: the strictest chat templates
 * (Mistral's) accept no other shape.
 */
function textCallId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return [...randomBytes(9)].map((b) => alphabet[b % alphabet.length]).join('');
}

function malformedCallNote(call: ModelToolCall): string {
  const why = call.argsError ?? (call.name ? 'the arguments are not a JSON object' : 'the call names no tool');
  const wrote = call.argsText ?? JSON.stringify(call.args ?? null);
  const shown = wrote.length > 1000 ? `${wrote.slice(0, 1000)}…` : wrote;
  return `\n\n[Lean4 Agentic: the model's call to ${call.name ? `"${call.name}"` : 'a tool'} was not passed on: ${why}. It wrote: ${shown}]\n`;
}

/**
 * A failure in words for the caller (the key redacted), and whether it was
 * only the caller cancelling, which the glue reports as a cancellation.
 */
export function failureMessage(e: unknown, apiKey: string | undefined): { cancelled: boolean; message: string } {
  const cancelled = e instanceof ModelError && e.kind === 'cancelled';
  return { cancelled, message: `Lean4 Agentic: ${redact(e instanceof Error ? e.message : String(e), apiKey)}` };
}

/** Context window assumed when the server does not report `max_model_len`. */
export const DEFAULT_CONTEXT_TOKENS = 32_768;

/** The shape of `vscode.LanguageModelChatInformation`. */
export interface LmModelInfo {
  id: string;
  name: string;
  family: string;
  version: string;
  detail: string;
  tooltip: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  capabilities: { toolCalling: boolean; imageInput: boolean };
}

export interface ModelInfoOptions {
  endpoint: string;
  /** The `maxTokens` setting: what every request asks the server for. */
  maxOutputTokens: number;
  /** The `model` setting, listed first when served. */
  preferred?: string;
}

/**
 * What the server serves, as the editor lists it. The id is the server's (it
 * goes back in each request); name and family are its last path segment (vLLM
 * names a model by its path unless told otherwise). The input budget is the
 * context window less the answer's `max_tokens`, since the server rejects a
 * request whose prompt and answer together do not fit.
 */
export function modelInformation(served: readonly ServedModel[], o: ModelInfoOptions): LmModelInfo[] {
  const host = hostOf(o.endpoint);
  const ordered = [...served].sort((a, b) => Number(b.id === o.preferred) - Number(a.id === o.preferred));
  return ordered.map((m) => {
    const context = m.contextLength ?? DEFAULT_CONTEXT_TOKENS;
    const name = m.id.split('/').filter(Boolean).pop() ?? m.id;
    return {
      id: m.id,
      name,
      family: name,
      version: m.id,
      detail: host,
      tooltip: `${m.id} on ${host}: ${m.contextLength ? `${context}-token context` : `context not reported, ${context} tokens assumed`}`,
      maxInputTokens: Math.max(context - o.maxOutputTokens, 1),
      maxOutputTokens: o.maxOutputTokens,
      capabilities: { toolCalling: true, imageInput: false },
    };
  });
}

/** Host and port only: an endpoint URL may carry credentials. */
function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).host || endpoint;
  } catch {
    return 'the inference server';
  }
}

/**
 * The model list for the editor. `silent` is VS Code looking on its own (at
 * start-up, for the model picker): a server that is down or refuses the key
 * then means no models, not an error in someone's face; asked for by the
 * user, the failure is thrown in words.
 */
export async function listChatModels(
  client: Pick<ModelClient, 'servedModels'>,
  o: ModelInfoOptions & { silent: boolean; apiKey?: string; signal?: AbortSignal; onQuietFailure?: (message: string) => void },
): Promise<LmModelInfo[]> {
  try {
    return modelInformation(await client.servedModels(o.signal), o);
  } catch (e) {
    const { message } = failureMessage(e, o.apiKey);
    if (!o.silent) throw new Error(message);
    o.onQuietFailure?.(message);
    return [];
  }
}

/** Chat-template framing (role markers, separators) per message, in tokens. */
const MESSAGE_OVERHEAD = 4;

/**
 * An estimate, not the model's tokenizer: about 4 characters a token (English
 * and code; denser scripts take more tokens). The OpenAI API has no token
 * count endpoint, and VS Code asks often enough that a round trip per call to
 * a server-specific `/tokenize` would cost more than it tells.
 */
export function estimateTokens(input: string | LmMessage): number {
  if (typeof input === 'string') return Math.ceil(input.length / 4);
  const chars = input.content.reduce<number>((n, raw) => {
    const p = partOf(raw);
    if (!p) return n;
    if (p.kind === 'text') return n + p.value.length;
    if (p.kind === 'call') return n + p.call.name.length + JSON.stringify(p.call.input).length;
    return n + p.text.length;
  }, 0);
  return Math.ceil(chars / 4) + MESSAGE_OVERHEAD;
}
