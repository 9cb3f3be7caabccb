/**
 * The chat's connection line: whether the model server answers (and with which model), or what is wrong and
 * which button fixes it; re-checked whenever the endpoint, the model or the key changes.
 */
import type * as vscode from 'vscode';
import { ModelError } from '../../core/model/errors';
import { maskEndpoint } from '../../core/secrets/endpoint';
import { redact } from '../../core/secrets/redact';
import { clip, type ErrorAction, type ToWebview } from '../../core/protocol/chat';
import { DEFAULT_ENDPOINT_NAME } from '../../core/model/endpoints';
import type { ModelChoice } from '../../core/model/model-choice';
import type { AgentConfig } from '../config';
import { describeSource, modelClientFor, settingSource } from './connection';
import { readApiKey } from './endpoint-keys';
import { chatConfig } from './model-picker';

/** The buttons that fix a failed request to the model server (none for a cancelled one). */
export function actionsFor(e: unknown): ErrorAction[] {
  if (e instanceof ModelError) {
    if (e.kind === 'unauthorized') return ['setApiKey', 'testConnection'];
    if (e.kind === 'cancelled') return [];
    if (e.kind === 'model_not_found') return ['openModelSetting', 'testConnection'];
    return ['openEndpointSetting', 'testConnection'];
  }
  return ['openSettings'];
}

export class ConnectionProbe {
  private seq = 0;
  /** What the chat's connection line says now. */
  private shown: 'checking' | 'connected' | 'failed' | undefined;
  private readonly post: (msg: ToWebview) => void;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    post: (msg: ToWebview) => void,
    /** The chat's model pick: the line checks the endpoint and model the next run will use. */
    private readonly choice: () => ModelChoice | undefined = () => undefined,
  ) {
    this.post = (msg) => {
      if (msg.type === 'connection') this.shown = msg.state;
      post(msg);
    };
  }

  /** The connection line says the server does not answer (a request that just worked says otherwise). */
  get failed(): boolean {
    return this.shown === 'failed';
  }

  /**
   * Asks the server for its models and tells the chat whether it answers (and
   * with which model), or what is wrong and how to fix it. Only the latest
   * check is shown: an older one finishing late is dropped. `quiet` (the periodic check): no "Checking…" first.
   */
  async check(quiet = false): Promise<void> {
    const seq = ++this.seq;
    const choice = this.choice();
    const chat = chatConfig(choice);
    if ('error' in chat) {
      // The pick's endpoint is no longer named in the settings: the line says which, and the picker offers others.
      const named = clip(`the endpoint "${choice?.endpoint ?? ''}"`, 1000);
      this.post({ type: 'connection', state: 'failed', endpoint: named, message: clip(chat.error, 2000), actions: [] });
      return;
    }
    const { config } = chat;
    const endpoint = clip(maskEndpoint(config.endpoint), 1000);
    const endpointSource = describeSource(
      settingSource(`lean4Agentic.${chat.endpointName === DEFAULT_ENDPOINT_NAME ? 'endpoint' : 'endpoints'}`),
    );
    if (!quiet) this.post({ type: 'connection', state: 'checking', endpoint, endpointSource, actions: [] });
    let apiKey: string | undefined;
    try {
      apiKey = await readApiKey(this.secrets, chat.endpointName);
    } catch (e) {
      if (seq === this.seq)
        this.post({
          type: 'connection',
          state: 'failed',
          endpoint,
          message: clip(
            `The API key could not be read from the secret storage: ${e instanceof Error ? e.message : String(e)}`,
            2000,
          ),
          actions: ['setApiKey'],
        });
      return;
    }
    const msg = await probe(config, apiKey, endpoint);
    if (seq === this.seq) this.post({ ...msg, endpointSource });
  }
}

/** What the server says to a listing of its models, within 10 s, as the chat's connection line. */
async function probe(
  config: AgentConfig,
  apiKey: string | undefined,
  endpoint: string,
): Promise<Extract<ToWebview, { type: 'connection' }>> {
  const client = modelClientFor(config, apiKey);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    const served = await client.servedModels(ac.signal);
    const models = served.map((m) => m.id);
    if (config.model && !models.includes(config.model))
      return {
        type: 'connection',
        state: 'failed',
        endpoint,
        message: clip(
          `The server does not serve the model "${config.model}" (it serves: ${models.join(', ') || 'nothing'}). Change the model setting or leave it empty.`,
          2000,
        ),
        actions: ['openModelSetting'],
      };
    if (!models.length)
      return {
        type: 'connection',
        state: 'failed',
        endpoint,
        message: 'The server answers but lists no models at /v1/models.',
        actions: ['openEndpointSetting', 'testConnection'],
      };
    const window = await client.contextWindow(ac.signal, served).catch(() => undefined);
    return {
      type: 'connection',
      state: 'connected',
      endpoint,
      model: clip(config.model || models[0]!, 300),
      ...(window ? { window: { tokens: window.tokens, assumed: window.source === 'default' } } : {}),
      actions: [],
    };
  } catch (e) {
    const err = ac.signal.aborted
      ? client.classify(new Error(`no answer from ${maskEndpoint(config.endpoint)} within 10 s`))
      : client.classify(e);
    return {
      type: 'connection',
      state: 'failed',
      endpoint,
      message: clip(redact(err.message, apiKey), 2000),
      actions: actionsFor(err),
    };
  } finally {
    clearTimeout(timer);
  }
}
