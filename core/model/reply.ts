/**
 * The reply as the agent reads it, from what the stream assembled: reasoning
 * apart, native calls repaired, calls written as text found, calls cut off at
 * the token limit withheld. Apart from the client so it reads without a server.
 */
import type { AssembledCompletion, StreamChunk, Usage } from './assemble';
import {
  findTextCalls,
  type ParsedContent,
  type RepairId,
  type TextFormatId,
  type ToolSpec,
  type WireFormat,
} from './formats';
import { canonicalLoose } from '../json/canonical';
import { parseLenientJson } from './formats/json-repair';
import { uniqueRepairs } from './formats/repairs';
import { splitThinking } from './reasoning';
import type { TurnTokens } from './token-record';

export interface ModelToolCall {
  id: string;
  name: string;
  args: unknown;
  /** Set when the arguments were not JSON: the model is told on its next turn. */
  argsError?: string;
  /** With `argsError`: what the model wrote, so whoever is told can see it. */
  argsText?: string;
  /** How the call reached us. */
  via: 'native' | 'text';
  /** With `via: text`: the form it was written in. */
  format?: TextFormatId;
  /** Slips repaired to read the call (core/model/formats/repairs.ts). */
  repairs?: RepairId[];
}

export interface ModelReply {
  model: string;
  text: string;
  reasoning: string;
  toolCalls: ModelToolCall[];
  finishReason: string | null;
  usage?: Usage;
  /** Attempts it took (1 when the first one succeeded). */
  attempts: number;
  /** With `recordTokens`: the turn's ids and logprobs exactly as the server sent them, checked. */
  tokens?: TurnTokens;
  /** With `recordTokens` and no `tokens`: why (the server sent none, or what it sent was refused). */
  tokensMissing?: string;
}

/**
 * The reply as the agent reads it: reasoning apart (the server's field, and
 * <think> left in content), native calls with their arguments repaired where
 * a slip allows it, and calls written as text found in what remains (never
 * inside reasoning). A text call identical to a native one is the same call
 * reported twice (a server parser bug) and runs once.
 */
export function toReply(
  model: string,
  done: AssembledCompletion,
  format: WireFormat,
  tools: readonly ToolSpec[],
  promptOpensThinking: boolean,
): Omit<ModelReply, 'attempts'> {
  const choice = done.choices[0] ?? {
    content: '',
    reasoning: '',
    toolCalls: [],
    finishReason: null,
    endedInCall: false,
  };
  const toolCalls: ModelToolCall[] = choice.toolCalls.map((c) =>
    nativeCall(c.id, c.name, c.argumentsText, c.args, c.argsError),
  );
  // A server that sent reasoning apart ran a reasoning parser: the content is the answer, tags and all.
  const split = choice.reasoning.trim()
    ? { text: choice.content, reasoning: '' }
    : splitThinking(choice.content, { promptOpensThinking });
  let text = split.text;
  const reasoning = [choice.reasoning.trim(), split.reasoning].filter(Boolean);
  const found = findTextCalls(text, tools, format === 'native' ? undefined : format);
  if (found) {
    if (found.reasoning) reasoning.push(found.reasoning);
    text = addTextCalls(toolCalls, found, text);
  }
  if (choice.finishReason === 'length') withholdCutCalls(toolCalls, choice.endedInCall);
  const reply: Omit<ModelReply, 'attempts'> = {
    model,
    text,
    reasoning: reasoning.join('\n\n'),
    toolCalls,
    finishReason: choice.finishReason,
  };
  if (done.usage) reply.usage = done.usage;
  return reply;
}

/**
 * Adds the calls found written in the text to `toolCalls` (a twin of a native call only marks it
 * `duplicate_call`), and returns the text that is left as prose.
 */
function addTextCalls(toolCalls: ModelToolCall[], found: ParsedContent, text: string): string {
  const natives = toolCalls.length > 0;
  let first = true;
  const extra: ModelToolCall[] = [];
  found.calls.forEach((c, i) => {
    const twin = toolCalls.find(
      (n) => n.via === 'native' && n.name === c.name && canonicalLoose(n.args) === canonicalLoose(c.args),
    );
    if (twin) {
      twin.repairs = uniqueRepairs([...(twin.repairs ?? []), 'duplicate_call']);
      return;
    }
    const repairs = uniqueRepairs([...(first ? found.repairs : []), ...c.repairs]);
    first = false;
    extra.push({
      id: `text_call_${i}`,
      name: c.name,
      args: c.args,
      ...(c.argsError !== undefined ? { argsError: c.argsError, argsText: c.raw } : {}),
      via: 'text',
      format: c.format,
      ...(repairs.length ? { repairs } : {}),
    });
  });
  // The server parsed this answer's calls: what else looks like a call in its text is a quote or
  // an example (the twins above are the server reporting a call twice), and stays prose.
  if (!natives) {
    toolCalls.push(...extra);
    return found.text;
  }
  return extra.length ? text : found.text;
}

/**
 * The answer hit max_tokens: a call missing its end was cut off, not forgotten, and must not run
 * half-written; nor a native call the stream stopped inside (a server's parser may have closed it).
 */
function withholdCutCalls(toolCalls: ModelToolCall[], endedInCall: boolean): void {
  const lastNative = [...toolCalls].reverse().find((c) => c.via === 'native');
  for (const c of toolCalls) {
    const cut =
      c.via === 'native'
        ? c === lastNative && endedInCall
        : c.repairs?.some((r) => r === 'missing_close_tag' || r === 'unclosed_json');
    if (c.argsError === undefined && cut) {
      c.argsError =
        'the answer was cut off at its token limit (finish_reason "length") in the middle of this call, so it was not run; make the call again, smaller (e.g. write a long file in parts)';
      c.argsText = JSON.stringify(c.args);
      c.args = null;
    }
  }
}

/** A native call; arguments that are not strict JSON get the repair layer, a JSON string holding the object is unwrapped. */
function nativeCall(
  id: string,
  name: string,
  argumentsText: string,
  args: unknown,
  argsError: string | undefined,
): ModelToolCall {
  if (argsError !== undefined) {
    const lenient = parseLenientJson(argumentsText);
    if (!lenient.ok) return { id, name, args, argsError, argsText: argumentsText, via: 'native' };
    return unwrapString({
      id,
      name,
      args: lenient.value,
      via: 'native',
      ...(lenient.repairs.length ? { repairs: lenient.repairs } : {}),
    });
  }
  return unwrapString({ id, name, args, via: 'native' });
}

function unwrapString(call: ModelToolCall): ModelToolCall {
  if (typeof call.args !== 'string') return call;
  const inner = parseLenientJson(call.args);
  if (!inner.ok || typeof inner.value !== 'object' || inner.value === null) return call;
  return {
    ...call,
    args: inner.value,
    repairs: uniqueRepairs([...(call.repairs ?? []), 'arguments_as_string', ...inner.repairs]),
  };
}

/** The reasoning a chunk adds to the first choice, in either field name. */
export function reasoningOf(chunk: StreamChunk): string {
  const c = Array.isArray(chunk?.choices) ? chunk.choices.find((x) => (x?.index ?? 0) === 0) : undefined;
  const d = c?.delta;
  if (typeof d?.reasoning_content === 'string' && d.reasoning_content) return d.reasoning_content;
  return typeof d?.reasoning === 'string' ? d.reasoning : '';
}

/** The text a chunk adds to the first choice. */
export function contentOf(chunk: StreamChunk): string {
  const c = Array.isArray(chunk?.choices) ? chunk.choices.find((x) => (x?.index ?? 0) === 0) : undefined;
  const content = c?.delta?.content;
  return typeof content === 'string' ? content : '';
}
