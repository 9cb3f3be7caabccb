import { tooDeep } from '../json/depth';

/**
 * Assembles a streamed chat completion (OpenAI wire format, as SGLang and
 * vLLM send it) into whole messages and tool calls. Chunks are fed one at a
 * time in arrival order; nothing here does I/O, so the same code serves the
 * agent, the CLI and the tests. What the stream looked like in practice:
 *
 * - tool calls arrive as deltas keyed by choice index and tool-call index;
 *   the first non-null `id` and `function.name` win, `function.arguments`
 *   fragments are concatenated, and the arguments are parsed once the
 *   choice's `finish_reason` arrives (the last fragment may share that chunk);
 * - a final usage chunk has an empty `choices` array;
 * - a server may put an `error` object inside the stream instead of a chunk;
 * - reasoning comes as `delta.reasoning_content` (SGLang) or `delta.reasoning`
 *   (vLLM), when the server runs a reasoning parser.
 */

export interface ToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

export interface ChunkChoice {
  index?: number;
  delta?: {
    role?: string | null;
    content?: string | null;
    /** SGLang's name for streamed reasoning (and vLLM's before it renamed it). */
    reasoning_content?: string | null;
    /** vLLM's current name for streamed reasoning. */
    reasoning?: string | null;
    tool_calls?: ToolCallDelta[] | null;
  } | null;
  finish_reason?: string | null;
}

export interface StreamChunk {
  id?: string;
  model?: string;
  choices?: ChunkChoice[] | null;
  usage?: Usage | null;
  error?: unknown;
  object?: string;
  message?: string;
}

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** Of the prompt, what the prefix cache held (vLLM with --enable-prompt-tokens-details, SGLang's cache report). */
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

/** A tool call as the model made it: the raw argument text, and what it parsed to. */
export interface AssembledToolCall {
  index: number;
  id: string;
  name: string;
  argumentsText: string;
  /** The parsed arguments when `argumentsText` is JSON (an empty text is `{}`). */
  args: unknown;
  /** Why the arguments are not JSON, for the model to read on its next turn. */
  argsError?: string;
}

export interface AssembledChoice {
  index: number;
  content: string;
  reasoning: string;
  toolCalls: AssembledToolCall[];
  finishReason: string | null;
  /** The stream's last piece of this choice was tool-call arguments (a stop there cut a call). */
  endedInCall: boolean;
}

export interface AssembledCompletion {
  choices: AssembledChoice[];
  usage?: Usage;
  model?: string;
}

/** An error the server sent, in either body shape or inside the stream. */
export class ModelServerError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly code: string | undefined,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'ModelServerError';
  }
}

/**
 * Reads an error body: `{"error": {"message", "code", "type"}}` (OpenAI,
 * vLLM) or the flat `{"object": "error", "message", "code"}` (SGLang and
 * vLLM's older form). Undefined when the value is not an error.
 */
export function errorOf(body: unknown, status?: number): ModelServerError | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const inner =
    typeof b.error === 'object' && b.error !== null
      ? (b.error as Record<string, unknown>)
      : b.object === 'error'
        ? b
        : undefined;
  if (!inner) {
    if (typeof b.error === 'string') return new ModelServerError(b.error, status, undefined, body);
    return undefined;
  }
  const message = typeof inner.message === 'string' ? inner.message : JSON.stringify(inner);
  const code = inner.code ?? inner.type;
  const st = typeof inner.code === 'number' ? inner.code : status;
  // Not String(code): an object from the wire with a "toString" member that is not a function makes that throw.
  const codeText =
    code === undefined || code === null
      ? undefined
      : typeof code === 'string' || typeof code === 'number' || typeof code === 'boolean'
        ? String(code)
        : JSON.stringify(code);
  return new ModelServerError(message, st, codeText, body);
}

function isObject<T>(v: T): v is T & object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isIndex(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

interface PartialCall {
  index: number;
  id: string | undefined;
  name: string | undefined;
  args: string[];
}

interface PartialChoice {
  index: number;
  content: string[];
  reasoning: string[];
  calls: Map<number, PartialCall>;
  finishReason: string | null;
  endedInCall: boolean;
}

export class CompletionAssembler {
  private readonly choices = new Map<number, PartialChoice>();
  private usage: Usage | undefined;
  private model: string | undefined;

  /**
   * Feeds one parsed SSE data chunk. The wire is not trusted: fields of the
   * wrong type are ignored rather than crashing the run. Throws
   * ModelServerError for an error sent inside the stream.
   */
  push(chunk: StreamChunk): void {
    const err = errorOf(chunk);
    if (err) throw err;
    // `data: null` (or a number, a string, an array) is not a chunk: nothing to take from it.
    if (!isObject(chunk)) return;
    if (typeof chunk.model === 'string') this.model ??= chunk.model;
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    for (const c of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (!isObject(c)) continue;
      const choice = this.choice(isIndex(c.index) ? c.index : 0);
      const d = isObject(c.delta) ? c.delta : undefined;
      if (typeof d?.content === 'string' && d.content) {
        choice.content.push(d.content);
        choice.endedInCall = false;
      }
      // One of the two names per delta: a server that sends both (a renaming in progress) means the same text.
      const reasoning =
        typeof d?.reasoning_content === 'string' && d.reasoning_content
          ? d.reasoning_content
          : typeof d?.reasoning === 'string'
            ? d.reasoning
            : '';
      if (reasoning) choice.reasoning.push(reasoning);
      for (const t of Array.isArray(d?.tool_calls) ? d.tool_calls : []) {
        if (!isObject(t)) continue;
        const index = isIndex(t.index) ? t.index : choice.calls.size;
        let call = choice.calls.get(index);
        if (!call) choice.calls.set(index, (call = { index, id: undefined, name: undefined, args: [] }));
        const fn = isObject(t.function) ? t.function : undefined;
        if (call.id === undefined && typeof t.id === 'string' && t.id) call.id = t.id;
        if (call.name === undefined && typeof fn?.name === 'string' && fn.name) call.name = fn.name;
        if (typeof fn?.arguments === 'string' && fn.arguments) {
          call.args.push(fn.arguments);
          choice.endedInCall = true;
        }
      }
      if (typeof c.finish_reason === 'string' && c.finish_reason) choice.finishReason = c.finish_reason;
    }
  }

  private choice(index: number): PartialChoice {
    let c = this.choices.get(index);
    if (!c)
      this.choices.set(
        index,
        (c = { index, content: [], reasoning: [], calls: new Map(), finishReason: null, endedInCall: false }),
      );
    return c;
  }

  /** Whether every choice seen so far has its finish_reason. */
  get finished(): boolean {
    return this.choices.size > 0 && [...this.choices.values()].every((c) => c.finishReason !== null);
  }

  /** The completion as assembled so far; tool-call arguments are parsed here. */
  result(): AssembledCompletion {
    const choices = [...this.choices.values()]
      .sort((a, b) => a.index - b.index)
      .map((c) => ({
        index: c.index,
        content: c.content.join(''),
        reasoning: c.reasoning.join(''),
        toolCalls: [...c.calls.values()].sort((a, b) => a.index - b.index).map((p) => finishCall(p, c.index)),
        finishReason: c.finishReason,
        endedInCall: c.endedInCall,
      }));
    const out: AssembledCompletion = { choices };
    if (this.usage) out.usage = this.usage;
    if (this.model) out.model = this.model;
    return out;
  }
}

/** A finished tool call; a server that sent no id gets a stable one from its position. */
function finishCall(p: PartialCall, choice: number): AssembledToolCall {
  const argumentsText = p.args.join('');
  const call: AssembledToolCall = {
    index: p.index,
    id: p.id ?? `call_${choice}_${p.index}`,
    name: p.name ?? '',
    argumentsText,
    args: null,
  };
  const parsed = parseArguments(argumentsText);
  if ('error' in parsed) call.argsError = parsed.error;
  else call.args = parsed.value;
  return call;
}

/** Tool-call arguments: JSON text, where an empty text means no arguments. */
export function parseArguments(text: string): { value: unknown } | { error: string } {
  if (text.trim() === '') return { value: {} };
  const deep = tooDeep(text, 'the arguments');
  if (deep) return { error: deep };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return {
      error: `${(e as Error).message} in ${JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text)}`,
    };
  }
}
