/** The error bodies and refusal wording of SGLang and vLLM, kept exact so the client's error reading is tested against the real text. */

import type { ServerResponse } from 'node:http';
import type { ServerFlavor } from './scripted-turns';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** An error the server makes itself, in SGLang's flat body shape or OpenAI's nested one. */
export function sendError(
  res: ServerResponse,
  shape: 'flat' | 'nested' | undefined,
  status: number,
  message: string,
  type: string,
): void {
  const body =
    shape === 'nested' ? { error: { message, type, code: status } } : { object: 'error', message, type, code: status };
  sendJson(res, status, body);
}

/** A refusal in the flavor's body shape (vLLM nests it; SGLang keeps the flat form). */
export function sendRefusal(
  res: ServerResponse,
  flavor: ServerFlavor,
  status: number,
  message: string,
  param: string | null = null,
): void {
  const body =
    flavor === 'vllm'
      ? { error: { message, type: 'BadRequestError', param, code: status } }
      : { object: 'error', message, type: 'BadRequestError', param: null, code: status };
  sendJson(res, status, body);
}

/** vLLM's answer to a request with tools when it was started without a tool parser. */
export const NO_TOOL_PARSER_REFUSAL =
  '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set';

export interface Refusal {
  message: string;
  param: string;
}

/** The window check, worded exactly as the flavor words it (research: vLLM renderers/params.py, SGLang tokenizer_manager.py). */
export function windowRefusal(
  flavor: ServerFlavor,
  L: number | undefined,
  prompt: number,
  maxTokens: number | undefined,
): Refusal | undefined {
  if (!L) return undefined;
  return flavor === 'vllm' ? vllmRefusal(L, prompt, maxTokens) : sglangRefusal(L, prompt, maxTokens);
}

function vllmRefusal(L: number, prompt: number, maxTokens: number | undefined): Refusal | undefined {
  if (maxTokens !== undefined && maxTokens > L)
    return {
      message: `max_tokens=${maxTokens} cannot be greater than max_model_len=${L}. Please request fewer output tokens. (parameter=max_tokens, value=${maxTokens})`,
      param: 'max_tokens',
    };
  const out = maxTokens ?? 0;
  if (prompt + out > L) {
    return {
      message: `This model's maximum context length is ${L} tokens. However, you requested ${out} output tokens and your prompt contains ${prompt} input tokens, for a total of ${prompt + out} tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${prompt})`,
      param: 'input_tokens',
    };
  }
  return undefined;
}

function sglangRefusal(L: number, prompt: number, maxTokens: number | undefined): Refusal | undefined {
  if (prompt >= L)
    return {
      message: `The input (${prompt} tokens) is longer than the model's context length (${L} tokens).`,
      param: 'input',
    };
  if (maxTokens !== undefined && prompt + maxTokens > L) {
    return {
      message: `Requested token count exceeds the model's maximum context length of ${L} tokens. You requested a total of ${prompt + maxTokens} tokens: ${prompt} tokens from the input messages and ${maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
      param: 'input',
    };
  }
  return undefined;
}
