/** The scripted server's routes besides chat: the model list, SGLang's server info and the tokenizer, which report the window. */

import type { ServerResponse } from 'node:http';
import { countPromptTokens } from './prompt-tokens';
import type { ChatRequestBody, ServerFlavor } from './scripted-turns';
import { sendJson } from './wire-errors';

/** What the info routes tell about the server. */
export interface ServerInfo {
  models: string[];
  flavor: ServerFlavor;
  contextLength: number | undefined;
  /** Where the window is reported: `/v1/models`, SGLang's `/server_info` only, or nowhere. */
  report: 'models' | 'server_info' | 'none';
  /** `owned_by` instead of the flavor's name (a gateway in front that says it is the owner). */
  ownedBy?: string;
}

/** `/v1/models`, with `max_model_len` as vLLM and SGLang send it. */
export function sendModels(res: ServerResponse, info: ServerInfo): void {
  const owned = info.ownedBy ?? (info.flavor === 'vllm' ? 'vllm' : 'sglang');
  sendJson(res, 200, {
    object: 'list',
    data: info.models.map((id) => ({
      id,
      object: 'model',
      created: 0,
      owned_by: owned,
      root: id,
      parent: null,
      ...(info.contextLength && info.report === 'models' ? { max_model_len: info.contextLength } : {}),
    })),
  });
}

/** SGLang's `/server_info` (and its older `/get_server_info`). */
export function sendServerInfo(res: ServerResponse, info: ServerInfo): void {
  sendJson(res, 200, {
    model_path: info.models[0],
    context_length: info.report === 'server_info' ? (info.contextLength ?? null) : null,
    version: '0.5.x-scripted',
  });
}

/** `/tokenize` for a chat request's messages or a plain prompt, with the server's own count. */
export function sendTokenCount(res: ServerResponse, info: ServerInfo, body: unknown): void {
  const b = (body ?? {}) as ChatRequestBody & { prompt?: string };
  const count = Array.isArray(b.messages)
    ? countPromptTokens(b)
    : countPromptTokens({ messages: [{ role: '', content: b.prompt ?? '' }] }) - 6;
  sendJson(res, 200, { count, max_model_len: info.contextLength ?? 32768, tokens: [], token_strs: null });
}
