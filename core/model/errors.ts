/**
 * Errors a person can act on: what the OpenAI client, undici and the servers
 * (vLLM, SGLang, gateways in front of them) throw, sorted into kinds the agent
 * branches on, each with a message that says what to do.
 */
import OpenAI from 'openai';
import { ModelServerError } from './assemble';
import { guessFormat } from './formats';
import type { ModelClientOptions } from './options';
import { maskEndpoint } from '../secrets/endpoint';
import { redact } from '../secrets/redact';

export type ModelErrorKind =
  | 'unreachable'
  | 'unauthorized'
  | 'model_not_found'
  | 'no_tool_parser'
  | 'rate_limited'
  | 'server_error'
  | 'bad_request'
  | 'context_length'
  | 'stalled'
  | 'dropped'
  | 'cancelled';

/** A failure with a kind to branch on and a message that says what to do. */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly status?: number,
    /** With `context_length`: what the server said about the window and the prompt, when it said it. */
    readonly context?: ContextOverflow,
  ) {
    super(message);
    this.name = 'ModelError';
  }

  get retryable(): boolean {
    return (
      this.kind === 'rate_limited' ||
      this.kind === 'server_error' ||
      this.kind === 'unreachable' ||
      this.kind === 'dropped'
    );
  }
}

/** What a server's context-length refusal says, read from its message (vLLM's and SGLang's wordings). */
export interface ContextOverflow {
  /** The window in tokens. */
  window?: number;
  /** The prompt's tokens as the server counted them. */
  promptTokens?: number;
}

const VLLM_NO_PARSER = /enable-auto-tool-choice|tool-call-parser|tool_choice.*not supported|does not support tool/i;

/** The context-window refusals of vLLM (every wording since 2024) and SGLang, and what gateways in front of them say (OpenAI's `context_length_exceeded`). */
const CONTEXT_OVERFLOW =
  /maximum context length|context length is only|longer than the model's context length|exceeds (?:the )?model'?s? (?:maximum )?context length|cannot be greater than max_model_len|maximum allowed length|supports at most \d+ completion tokens|context_length_exceeded|context (?:length|window) (?:exceeded|is exceeded)|exceeds? the context window|too many (?:input |prompt )?tokens|(?:prompt|input) is too long|request is too long/i;

/** Reads the window and the prompt's tokens out of a context-length refusal. */
export function readOverflow(message: string): ContextOverflow {
  const num = (patterns: RegExp[]): number | undefined => {
    for (const p of patterns) {
      const m = p.exec(message);
      if (m) return Number(m[1]);
    }
    return undefined;
  };
  const window = num([
    /maximum context length (?:is |of )?\(?(\d+)/i,
    /context length \((\d+) tokens\)/i,
    /context length is only (\d+)/i,
    /max_model_len=(\d+)/i,
    /maximum allowed length \((\d+)/i,
  ]);
  const promptTokens = num([
    /contains (?:at least )?(\d+) input tokens/i,
    /\((\d+) in the messages/i,
    /request has (\d+) input tokens/i,
    /passed (\d+) input tokens/i,
    /input \((\d+) tokens\)/i,
    /(\d+) tokens from the input/i,
    /input length \((\d+)/i,
  ]);
  const out: ContextOverflow = {};
  if (window !== undefined && window > 0) out.window = window;
  if (promptTokens !== undefined && promptTokens > 0) out.promptTokens = promptTokens;
  return out;
}

/** What the messages name: the server, the key to keep out of them, the model asked for. */
export type ErrorContext = Pick<ModelClientOptions, 'endpoint' | 'apiKey' | 'requestTimeoutMs'> & { model?: string };

/** Turns anything thrown while talking to the server into a ModelError. */
export function classifyError(e: unknown, ctx: ErrorContext, what = 'the inference server'): ModelError {
  if (e instanceof ModelError) return e;
  const server = `${what} at ${maskEndpoint(ctx.endpoint)}`;
  const key = ctx.apiKey;
  if (e instanceof OpenAI.APIUserAbortError || (e instanceof Error && e.name === 'AbortError'))
    return new ModelError('cancelled', 'the request was cancelled');
  if (e instanceof OpenAI.APIConnectionTimeoutError)
    return new ModelError(
      'stalled',
      `${server} did not start answering within ${(ctx.requestTimeoutMs ?? 60_000) / 1000} s. ${STUCK}`,
    );
  if (e instanceof OpenAI.APIConnectionError) {
    return new ModelError(
      'unreachable',
      `cannot reach ${server}: ${redact(causeOf(e), key)}. Is the server running (e.g. SGLang: python -m sglang.launch_server --model-path … --port 30000 --tool-call-parser …)? Check the endpoint setting.`,
    );
  }
  if (e instanceof OpenAI.APIError || e instanceof ModelServerError) return classifyRefusal(e, server, ctx);
  if (e instanceof TypeError && /terminated|other side closed|socket/i.test(e.message + causeOf(e))) {
    return new ModelError(
      'dropped',
      `the connection to ${server} dropped mid-answer (${redact(causeOf(e) || e.message, key)}); the partial answer was discarded. ${SERVER_LOG}`,
    );
  }
  // The openai client's SSE parser: an event whose data is not JSON.
  if (e instanceof SyntaxError && /server-sent event/i.test(e.message)) {
    return new ModelError(
      'server_error',
      `${server} sent a malformed stream (an event that is not JSON); the answer was discarded. The server, or a proxy in front of it, garbles its events. ${SERVER_LOG}`,
    );
  }
  return new ModelError(
    'server_error',
    `unexpected failure talking to ${server}: ${redact(e instanceof Error ? e.message : String(e), key)}`,
  );
}

/** An error the server answered with (an HTTP status, or an `error` sent inside the stream), by its status and wording. */
function classifyRefusal(
  e: InstanceType<typeof OpenAI.APIError> | ModelServerError,
  server: string,
  ctx: ErrorContext,
): ModelError {
  const status = e.status;
  const message = tidy(redact(e.message, ctx.apiKey), status);
  if (status === 401 || status === 403)
    return new ModelError(
      'unauthorized',
      `${server} refused the API key (${status}): ${message}. Set the key with the "Set API Key" command (lar run: the LAR_API_KEY environment variable).`,
      status,
    );
  if (status === 404)
    return new ModelError(
      'model_not_found',
      `${server} does not serve ${ctx.model ? `"${ctx.model}"` : 'that model'} (404): ${message}. Pick one of the served models in the model setting (lar run: --model), or leave it empty for the first one.`,
      status,
    );
  if (status === 429)
    return new ModelError(
      'rate_limited',
      `${server} is busy (429): ${message}. Wait a moment, then send the task again.`,
      status,
    );
  if ((status === 400 || status === 413) && CONTEXT_OVERFLOW.test(e.message)) {
    const context = readOverflow(e.message);
    return new ModelError(
      'context_length',
      `${server} refused the request as longer than the model's context window (${status}): ${message}`,
      status,
      context,
    );
  }
  if (status === 400 && VLLM_NO_PARSER.test(e.message)) {
    return new ModelError(
      'no_tool_parser',
      `${server} cannot return tool calls: ${message}. Start vLLM with --enable-auto-tool-choice --tool-call-parser <parser>, or SGLang with --tool-call-parser <parser>; or set the tool-call format to the model family's text format (${guessFormat(ctx.model ?? '') ? `"${guessFormat(ctx.model ?? '')}"` : 'e.g. "hermes"'}).`,
      status,
    );
  }
  if (status !== undefined && status >= 500)
    return new ModelError('server_error', `${server} failed (${status}): ${message}. ${SERVER_LOG}`, status);
  if (status === undefined)
    return new ModelError('server_error', `${server} reported an error: ${message}. ${SERVER_LOG}`);
  return new ModelError('bad_request', `${server} rejected the request (${status}): ${message}`, status);
}

/** What to do about a server that failed: its log says why. */
export const SERVER_LOG = "Check the inference server's log, then send the task again.";
/** What to do about a server that stopped answering. */
export const STUCK =
  'The server may be overloaded or stuck: check its log, then send the task again (a slow but healthy server needs a longer request timeout setting).';

/** A server's message inside ours: without the status the openai client puts first, nor a final period. */
function tidy(message: string, status: number | undefined): string {
  const bare =
    status !== undefined && message.startsWith(`${status} `) ? message.slice(String(status).length + 1) : message;
  return bare.trim().replace(/\.+$/, '');
}

/** The innermost cause: undici nests the system error (`fetch failed` ← `connect ECONNREFUSED …`). */
function causeOf(e: unknown): string {
  let c = (e as { cause?: unknown }).cause;
  if (!(c instanceof Error)) return e instanceof Error ? e.message : '';
  while ((c as { cause?: unknown }).cause instanceof Error) c = (c as { cause: Error }).cause;
  // Connecting to every address of a name fails as one AggregateError with an empty message.
  const first = c instanceof AggregateError && c.errors[0] instanceof Error ? c.errors[0] : undefined;
  const code = (c as { code?: unknown }).code ?? (first as { code?: unknown } | undefined)?.code;
  const message = (c as Error).message || first?.message || '';
  if (typeof code !== 'string' || message.includes(code)) return message || 'no details';
  return message ? `${message} (${code})` : code;
}
