/**
 * The LAR models for other extensions (`vscode.lm`), without the editor: the
 * request messages and tools a caller hands to a `LanguageModelChatProvider`
 * become an OpenAI chat request for the ModelClient, and one streamed answer
 * comes back as text deltas and tool calls. The caller's tools are never run
 * here: a tool call goes back to the caller, who runs it and sends the result
 * in its next request. No `vscode` import, so this runs under `node --test`;
 * `provider.ts` is the thin glue that turns the callbacks into response parts.
 *
 * Parts are recognised by shape, as the editor hands them over: text
 * `{value}`, tool call `{callId, name, input}`, tool result `{callId, content}`.
 * Anything else (images, prompt-tsx, data) is left out of the request.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { newCallId, toParam } from '../../core/agent/conversation';
import { wireFormatOf, type ModelClient } from '../../core/model/client';
import { ModelError } from '../../core/model/errors';
import type { ModelReply, ModelToolCall } from '../../core/model/reply';
import { DEFAULT_CONTEXT_WINDOW, type ServedModel } from '../../core/model/server-info';
import { redact } from '../../core/secrets/redact';
import { FORMATS, type TextFormatId, type ToolFormatSetting, type ToolSpec } from '../../core/model/formats';
import { StreamView, type StreamPiece } from '../../core/model/stream-view';
import { MESSAGE_OVERHEAD, TokenMeter } from '../../core/model/tokens';

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

type Part =
  | { kind: 'text'; value: string }
  | { kind: 'call'; call: LmToolCall }
  | { kind: 'result'; callId: string; text: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function partOf(p: unknown): Part | undefined {
  if (!isObject(p)) return undefined;
  if (typeof p.callId === 'string') {
    if (typeof p.name === 'string' && isObject(p.input))
      return { kind: 'call', call: { callId: p.callId, name: p.name, input: p.input } };
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
        ...(calls.length
          ? {
              tool_calls: calls.map((c) => ({
                id: c.callId,
                type: 'function' as const,
                function: { name: c.name, arguments: JSON.stringify(c.input) },
              })),
            }
          : {}),
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
    function: {
      name: t.name,
      description: t.description,
      parameters: (t.inputSchema ?? { type: 'object', properties: {} }) as Record<string, unknown>,
    },
  }));
}

/**
 * With a text tool-call format the ModelClient sends no `tools` array (the
 * server has no tool-call parser, or one that fails on the model), so the
 * caller's conversation is rendered the way the model family's own chat
 * template renders tools, calls and results (core/model/formats): the tools
 * into the system message (or, for Llama, the first user message), earlier
 * calls and results in that family's text form. `required` cannot be
 * enforced by the server there: it is asked for.
 */
export function toTextMessages(
  messages: readonly LmMessage[],
  format: TextFormatId,
  tools: readonly LmTool[],
  required: boolean,
): ChatCompletionMessageParam[] {
  const f = FORMATS[format];
  const specs = toChatTools(tools).map((t) => (t as { function: ToolSpec }).function);
  const out: ChatCompletionMessageParam[] = [];
  let system = '';
  /** The first user message: where it is in `out`, and its text. */
  let firstUser: { at: number; text: string } | undefined;
  /** Calls by id, so a result can name the tool that made it. */
  const calls = new Map<string, string>();
  for (const m of messages) {
    const parts = m.content.map(partOf).filter((p): p is Part => p !== undefined);
    const text = parts.map((p) => (p.kind === 'text' ? p.value : '')).join('');
    if (m.role === LmRole.System) {
      system = system ? `${system}\n\n${text}` : text;
    } else if (m.role === LmRole.Assistant) {
      const made = parts.flatMap((p) => (p.kind === 'call' ? [p.call] : []));
      for (const c of made) calls.set(c.callId, c.name);
      out.push({
        role: 'assistant',
        content: f.assistantContent(
          text,
          made.map((c) => ({ name: c.name, args: c.input })),
        ),
      });
    } else {
      const results = parts.flatMap((p) => (p.kind === 'result' ? [p] : []));
      if (results.length)
        for (const r of f.resultMessages(
          results.map((r) => ({ name: calls.get(r.callId) ?? 'tool', callId: r.callId, content: r.text })),
        ))
          out.push(toParam(r));
      if (text || !results.length) {
        firstUser ??= { at: out.length, text };
        out.push({ role: 'user', content: text });
      }
    }
  }
  const ask = required ? `${system ? '\n\n' : ''}You must answer by calling at least one of these tools.` : '';
  const head = f.prompt(`${system}${ask}`, firstUser?.text ?? '', specs);
  if (firstUser !== undefined) out[firstUser.at] = { role: 'user', content: head.task };
  else if (head.task) out.unshift({ role: 'user', content: head.task });
  return [{ role: 'system', content: head.system }, ...out];
}

export interface ChatRequest {
  messages: readonly LmMessage[];
  tools?: readonly LmTool[];
  /** `LmToolMode`; Auto when absent. */
  toolMode?: number;
  /** The `toolCallFormat` setting the ModelClient was built with. */
  toolFormat: ToolFormatSetting;
}

export interface ChatSink {
  text(delta: string): void;
  toolCall(call: LmToolCall): void;
}

/**
 * One streamed answer: text deltas go to the sink as they arrive, tool calls
 * once the answer is complete (their arguments are whole only then).
 * `Required` tool mode is sent as `tool_choice: "required"` (native format)
 * or asked for in the system message (a text format). Throws the ModelClient's
 * ModelError; `failureMessage` words it for the caller.
 *
 * A call whose arguments are not a JSON object is not passed on as a tool
 * call: the caller would run its tool with input the model never wrote. It
 * comes back as a note in the text instead, naming the tool, the parse error
 * and what the model wrote, so the user (and the model, on the next turn)
 * can see what went wrong.
 */
export async function answerChat(
  client: Pick<ModelClient, 'complete'> & Partial<Pick<ModelClient, 'opensThinking'>>,
  req: ChatRequest,
  sink: ChatSink,
  signal?: AbortSignal,
): Promise<ModelReply> {
  const tools = req.tools?.length ? req.tools : undefined;
  const required = tools !== undefined && req.toolMode === LmToolMode.Required;
  const format = wireFormatOf(req.toolFormat);
  const messages =
    tools && format !== 'native' ? toTextMessages(req.messages, format, tools, required) : toChatMessages(req.messages);
  const view = new StreamView({ promptOpensThinking: client.opensThinking?.() ?? false });
  let emitted = '';
  const show = (pieces: StreamPiece[]) => {
    // The editor's chat has no place for reasoning here: only the prose goes to the caller.
    for (const p of pieces) {
      if (p.kind !== 'text' || !p.delta) continue;
      sink.text(p.delta);
      emitted += p.delta;
    }
  };
  const reply = await client.complete({
    messages,
    ...(tools ? { tools: toChatTools(tools) } : {}),
    format,
    ...(required ? { toolChoice: 'required' as const } : {}),
    ...(signal ? { signal } : {}),
    onText: (delta) => show(view.push(delta)),
  });
  show(view.flush());
  // The live view held back what it could not yet tell (an answer that is JSON, a tag named in
  // prose): what the exact reading of the whole answer kept as prose goes out now. A caller cannot
  // take text back, so where the live guess went another way (a bare </think> after streamed text)
  // what was sent stands.
  const rest = reply.text.startsWith(emitted)
    ? reply.text.slice(emitted.length)
    : reply.text.startsWith(emitted.trimEnd())
      ? reply.text.slice(emitted.trimEnd().length).trimStart()
      : '';
  if (rest) sink.text(rest);
  const offered = new Set((tools ?? []).map((t) => t.name));
  for (const call of reply.toolCalls) {
    if (call.argsError !== undefined || !call.name || !isObject(call.args)) sink.text(malformedCallNote(call));
    // A call read from text to a tool the caller did not offer goes nowhere: the caller would not know it.
    else if (call.via === 'text' && !offered.has(call.name))
      sink.text(
        `\n\n[Lean4 Agentic: the model wrote a call to "${call.name}", which is not one of the tools offered; it was not passed on.]\n`,
      );
    else sink.toolCall({ callId: call.via === 'text' ? newCallId() : call.id, name: call.name, input: call.args });
  }
  return reply;
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
  /** The `contextLength` setting (0 or absent: what the server reports). */
  contextLength?: number;
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
    const context =
      o.contextLength && o.contextLength > 0 ? o.contextLength : (m.contextLength ?? DEFAULT_CONTEXT_WINDOW);
    const name = m.id.split('/').filter(Boolean).pop() ?? m.id;
    return {
      id: m.id,
      name,
      family: name,
      version: m.id,
      detail: host,
      tooltip: `${m.id} on ${host}: ${o.contextLength && o.contextLength > 0 ? `${context}-token context (setting)` : m.contextLength ? `${context}-token context` : `context not reported, ${context} tokens assumed`}`,
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
  o: ModelInfoOptions & {
    silent: boolean;
    apiKey?: string;
    signal?: AbortSignal;
    onQuietFailure?: (message: string) => void;
  },
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

/**
 * An estimate, not the model's tokenizer (the agent's own meter, before the
 * server has counted anything): VS Code asks often enough that a round trip
 * per call to a server's `/tokenize` would cost more than it tells.
 */
export function estimateTokens(input: string | LmMessage): number {
  const meter = new TokenMeter();
  if (typeof input === 'string') return meter.estimateText(input);
  const text = input.content
    .map((raw) => {
      const p = partOf(raw);
      if (!p) return '';
      if (p.kind === 'text') return p.value;
      if (p.kind === 'call') return `${p.call.name} ${JSON.stringify(p.call.input)}`;
      return p.text;
    })
    .join('');
  return meter.estimateText(text) + MESSAGE_OVERHEAD;
}
