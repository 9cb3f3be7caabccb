/** A scripted reply made into what the server sends: the content and calls it carries, and the whole (unstreamed) completion. */

import { FORMATS } from '../core/model/formats';
import type { ReplyTurn, ServerFlavor } from './scripted-turns';
import type { TurnTokenWriter } from './token-ids';

export interface RenderedCall {
  id: string;
  name: string;
  args: string;
}

/** What the server is answering with, for the body or the chunks it sends. */
export interface Answer {
  id: string;
  model: string;
  flavor: ServerFlavor;
  /** Prompt tokens of the chat request being answered (the `usage` it reports). */
  promptTokens: number;
  /** Of those, what the prefix cache held, when the server reports it (`prompt_tokens_details`). */
  cachedTokens?: number;
  /** A streamed answer ends with a usage chunk (`stream_options.include_usage`). */
  includeUsage?: boolean;
  /** The request asked for token ids: each piece of the answer carries its own (vLLM's and SGLang's shapes). */
  tokens?: TurnTokenWriter;
}

/** The `usage` object a server sends for an answer of `completion` tokens. */
export function usageOf(answer: Answer, completion: number, total = answer.promptTokens + completion): object {
  return {
    prompt_tokens: answer.promptTokens,
    completion_tokens: completion,
    total_tokens: total,
    ...(answer.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: answer.cachedTokens } } : {}),
  };
}

export function render(turn: ReplyTurn): { content: string; toolCalls: RenderedCall[] } {
  const calls = (turn.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}_${Math.random().toString(36).slice(2, 10)}`,
    name: c.name,
    args: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
  }));
  let content = turn.content ?? '';
  if (turn.reasoningInContent && turn.reasoning) {
    content =
      turn.reasoningInContent === 'tags'
        ? `<think>\n${turn.reasoning}\n</think>\n\n${content}`
        : `${turn.reasoning}\n</think>\n\n${content}`;
  }
  if (turn.toolCallsAsText) {
    if (turn.toolCallsAsText === true) {
      const text = calls
        .map((c) => `<tool_call>\n{"name": ${JSON.stringify(c.name)}, "arguments": ${c.args}}\n</tool_call>`)
        .join('\n');
      return { content: [content, text].filter(Boolean).join('\n'), toolCalls: [] };
    }
    // Written in the family's own form, as its template taught it.
    const written = FORMATS[turn.toolCallsAsText].assistantContent(
      content,
      calls.map((c) => ({ name: c.name, args: safeParse(c.args) })),
    );
    return { content: written, toolCalls: [] };
  }
  return { content, toolCalls: calls };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

export function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The `chat.completion` body for a request that did not ask to stream. */
export function completionBody(turn: ReplyTurn, answer: Answer): object {
  const { content, toolCalls } = render(turn);
  const reasoning = turn.reasoningInContent ? undefined : turn.reasoning;
  const field = answer.flavor === 'vllm' ? 'reasoning' : 'reasoning_content';
  const said = (reasoning ?? '') + content + toolCalls.map((c) => c.name + c.args).join('');
  const ids = answer.tokens?.next(said);
  // vLLM puts the prompt's ids beside the choices, SGLang on the choice.
  const promptIds = answer.tokens?.sent.promptIds;
  const vllm = answer.flavor === 'vllm';
  return {
    ...(promptIds && vllm ? { prompt_token_ids: promptIds } : {}),
    id: answer.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(reasoning ? { [field]: reasoning } : {}),
          ...(toolCalls.length
            ? {
                tool_calls: toolCalls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: c.args },
                })),
              }
            : {}),
        },
        finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
        ...(ids ? { ...(vllm ? {} : { prompt_token_ids: promptIds }), token_ids: ids.token_ids } : {}),
        ...(ids ? { logprobs: ids.logprobs } : {}),
      },
    ],
    usage: usageOf(answer, 10),
  };
}
