/**
 * The LAR models as a VS Code language-model chat provider, so other
 * extensions (and the chat view's model picker) can use them through
 * `vscode.lm`. Editor glue only: the endpoint, model settings and API key are
 * read at request time, cancellation becomes an AbortSignal, and the
 * vscode-free `bridge.ts` does the mapping and the streaming.
 */
import * as vscode from 'vscode';
import { API_KEY_SECRET, SECTION, readAgentConfig } from '../config';
import { modelClientFor } from '../agent/connection';
import { readApiKey } from '../agent/endpoint-keys';
import { LM_VENDOR, answerChat, estimateTokens, failureMessage, listChatModels } from './bridge';

/** The cancellation token as an AbortSignal, for as long as `run` takes. */
async function withSignal<T>(token: vscode.CancellationToken, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  if (token.isCancellationRequested) ac.abort();
  const listener = token.onCancellationRequested(() => ac.abort());
  try {
    return await run(ac.signal);
  } finally {
    listener.dispose();
  }
}

export class LarChatModelProvider implements vscode.LanguageModelChatProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  /** The served models may differ now (another endpoint, key or output budget): VS Code asks again. */
  refresh(): void {
    this.changed.fire();
  }

  async provideLanguageModelChatInformation(
    options: vscode.PrepareLanguageModelChatModelOptions,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelChatInformation[]> {
    const config = readAgentConfig();
    const apiKey = await readApiKey(this.secrets);
    return withSignal(token, (signal) =>
      listChatModels(modelClientFor(config, apiKey), {
        endpoint: config.endpoint,
        maxOutputTokens: config.maxTokens,
        contextLength: config.contextLength,
        ...(config.model ? { preferred: config.model } : {}),
        silent: options.silent,
        ...(apiKey ? { apiKey } : {}),
        signal,
        onQuietFailure: (message) => this.output.info(`language models: none listed (${message})`),
      }),
    );
  }

  async provideLanguageModelChatResponse(
    model: vscode.LanguageModelChatInformation,
    messages: readonly vscode.LanguageModelChatRequestMessage[],
    options: vscode.ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<vscode.LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const config = readAgentConfig();
    const apiKey = await readApiKey(this.secrets);
    // The model the caller picked, whatever the `model` setting says.
    const client = modelClientFor({ ...config, model: model.id }, apiKey);
    try {
      await withSignal(token, (signal) =>
        answerChat(
          client,
          {
            messages,
            ...(options.tools ? { tools: options.tools } : {}),
            toolMode: options.toolMode,
            toolFormat: config.toolCallFormat,
          },
          {
            text: (delta) => progress.report(new vscode.LanguageModelTextPart(delta)),
            toolCall: (c) => progress.report(new vscode.LanguageModelToolCallPart(c.callId, c.name, c.input)),
          },
          signal,
        ),
      );
    } catch (e) {
      const failure = failureMessage(e, apiKey);
      if (failure.cancelled) throw new vscode.CancellationError();
      this.output.warn(`language model request to ${model.id}: ${failure.message}`);
      throw new Error(failure.message);
    }
  }

  provideTokenCount(
    _model: vscode.LanguageModelChatInformation,
    text: string | vscode.LanguageModelChatRequestMessage,
  ): Promise<number> {
    // Counted inside the promise, so that a throw reaches VS Code as a rejection.
    return new Promise((resolve) => resolve(estimateTokens(text)));
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Registers the provider and tells VS Code when its model list may have changed. */
export function registerLanguageModels(
  context: vscode.ExtensionContext,
  output: vscode.LogOutputChannel,
): vscode.Disposable[] {
  // Editors built on older VS Code (forks) lack the API; the rest of the extension still works there.
  if (typeof vscode.lm?.registerLanguageModelChatProvider !== 'function') {
    output.info(
      'this editor has no language-model chat provider API: the LAR models are not offered to other extensions',
    );
    return [];
  }
  const provider = new LarChatModelProvider(context.secrets, output);
  const affects = (e: vscode.ConfigurationChangeEvent) =>
    ['endpoint', 'model', 'maxTokens'].some((k) => e.affectsConfiguration(`${SECTION}.${k}`));
  return [
    provider,
    vscode.lm.registerLanguageModelChatProvider(LM_VENDOR, provider),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affects(e)) provider.refresh();
    }),
    context.secrets.onDidChange((e) => {
      if (e.key === API_KEY_SECRET) provider.refresh();
    }),
    // Trust lets a workspace's own endpoint setting count.
    vscode.workspace.onDidGrantWorkspaceTrust(() => provider.refresh()),
  ];
}
