/**
 * The inference server from the editor: the model client built from the
 * settings and the API key in SecretStorage, and the commands Set API Key,
 * Clear API Key and Test Connection. The key is never logged: every message
 * that could carry it goes through `redact`.
 */
import * as vscode from 'vscode';
import { COMMANDS } from '../../core/protocol/commands';
import { ModelClient } from '../../core/model/client';
import type { ConnectionReport } from '../../core/model/probe';
import { redact } from '../../core/secrets/redact';
import { readAgentConfig, type AgentConfig } from '../config';
import { formatTokens } from '../../core/protocol/display';
import { maskEndpoint } from '../../core/secrets/endpoint';
import { apiKeySecretFor, keyOwner, pickEndpoint, readApiKey } from './endpoint-keys';

export function modelClientFor(config: AgentConfig, apiKey: string | undefined): ModelClient {
  return new ModelClient({
    endpoint: config.endpoint,
    ...(apiKey ? { apiKey } : {}),
    ...(config.model ? { model: config.model } : {}),
    temperature: config.temperature,
    maxTokens: config.maxTokens,
    requestTimeoutMs: config.requestTimeoutMs,
    idleTimeoutMs: config.requestTimeoutMs,
    toolFormat: config.toolCallFormat,
    ...(config.contextLength > 0 ? { contextLength: config.contextLength } : {}),
    thinking: config.thinking,
  });
}

/** Settings that differ per machine (scope machine-overridable): in a remote window the Settings editor lists them under Remote, not User. */
const MACHINE_SETTINGS = new Set(['lean4Agentic.endpoint', 'lean4Agentic.endpoints', 'lean4Agentic.leanPath']);

export type SettingSource = 'default' | 'user' | 'workspace' | 'folder';

/** Where the value in force of a `lean4Agentic.*` setting comes from: the most specific scope that sets it. */
export function settingSource(key: string): SettingSource {
  const name = key.replace(/^lean4Agentic\./, '');
  const i = vscode.workspace
    .getConfiguration('lean4Agentic', vscode.workspace.workspaceFolders?.[0]?.uri)
    .inspect(name);
  if (!i) return 'default';
  // In Restricted Mode the workspace's values of restricted settings (the endpoint) are not used.
  if (vscode.workspace.isTrusted || !MACHINE_SETTINGS.has(key)) {
    // A folder's own settings are apart from the workspace's only in a .code-workspace (else they are one file).
    if (
      i.workspaceFolderValue !== undefined &&
      (vscode.workspace.workspaceFile !== undefined || (vscode.workspace.workspaceFolders?.length ?? 0) > 1)
    )
      return 'folder';
    if (i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined) return 'workspace';
  }
  if (i.globalValue !== undefined) return 'user';
  return 'default';
}

/** How the chat names a setting's source. */
export function describeSource(source: SettingSource): string {
  switch (source) {
    case 'folder':
      return 'Folder settings';
    case 'workspace':
      return 'Workspace settings';
    case 'user':
      return vscode.env.remoteName !== undefined ? 'Remote or User settings' : 'User settings';
    default:
      return 'the default';
  }
}

/**
 * Opens the Settings editor on a setting, on the tab whose value wins: a
 * workspace (or folder) value outranks the user's, so that is where a fix
 * must be made; otherwise the tab where it is listed (Remote in a remote
 * window for machine settings).
 */
export function openSetting(query: string): Thenable<unknown> {
  const source = query.startsWith('lean4Agentic.') && query !== 'lean4Agentic' ? settingSource(query) : 'default';
  if (source === 'workspace')
    return vscode.commands.executeCommand('workbench.action.openWorkspaceSettings', { query });
  if (source === 'folder') return vscode.commands.executeCommand('workbench.action.openFolderSettings', { query });
  // openRemoteSettings takes only the options object, openSettings a plain query too.
  if (vscode.env.remoteName !== undefined && MACHINE_SETTINGS.has(query))
    return vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query });
  return vscode.commands.executeCommand('workbench.action.openSettings', query);
}

export function openEndpointSetting(): Thenable<unknown> {
  return openSetting('lean4Agentic.endpoint');
}

/** One sentence for the report of a connection test (the key redacted). */
export function describeReport(r: ConnectionReport, apiKey: string | undefined): string {
  const calls =
    r.toolCalls === 'native'
      ? 'native tool calls'
      : r.toolCalls === 'text'
        ? `tool calls as text (${r.textFormat ?? 'text'})`
        : 'no tool call came back';
  const window = r.contextWindow
    ? `, context window ${formatTokens(r.contextWindow.tokens)} tokens${r.contextWindow.source === 'default' ? ' (assumed)' : r.contextWindow.source === 'setting' ? ' (setting)' : ''}`
    : '';
  const advice = r.suggestedFormat ? ` Suggested tool-call format: "${r.suggestedFormat}".` : '';
  const head = r.ok
    ? `connected to ${r.endpoint}: model ${r.model ?? '?'} (${r.models.length} served), ${calls}${window}${r.reasoning ? ', reasoning sent apart' : ''}.${advice}`
    : `the connection test against ${r.endpoint} failed.${advice}`;
  return redact([head, ...r.problems].join(' '), apiKey);
}

/**
 * Test Connection: the settings' endpoint and model, or the chat's pick (`target`: the endpoint and model the
 * chat's next run uses, with that endpoint's key).
 */
export async function testConnection(
  secrets: vscode.SecretStorage,
  output: vscode.LogOutputChannel,
  target?: { config: AgentConfig; endpointName: string },
): Promise<void> {
  const config = target?.config ?? readAgentConfig();
  const apiKey = await readApiKey(secrets, target?.endpointName);
  const report = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Lean4 Agentic: testing ${maskEndpoint(config.endpoint)}…`,
      cancellable: true,
    },
    (_p, token) => {
      const ac = new AbortController();
      token.onCancellationRequested(() => ac.abort());
      return modelClientFor(config, apiKey).testConnection(ac.signal);
    },
  );
  const text = describeReport(report, apiKey);
  output.info(`test connection: ${text}`);
  // The walkthrough's step is done when a check passed, not when one was run.
  void vscode.commands.executeCommand('setContext', 'lean4Agentic.connectionOk', report.ok);
  const buttons = ['Open Endpoint Setting', ...(report.error === 'unauthorized' ? ['Set API Key'] : [])];
  const pick =
    report.ok && !report.problems.length
      ? await vscode.window.showInformationMessage(`Lean4 Agentic: ${text}`, 'Open Endpoint Setting')
      : await vscode.window.showWarningMessage(`Lean4 Agentic: ${text}`, ...buttons);
  if (pick === 'Open Endpoint Setting') await openEndpointSetting();
  else if (pick === 'Set API Key') await vscode.commands.executeCommand(COMMANDS.setApiKey);
}

/** Set API Key: for the only endpoint, or the one picked among several. */
async function setApiKey(secrets: vscode.SecretStorage, output: vscode.LogOutputChannel): Promise<void> {
  const config = readAgentConfig().endpoints;
  const endpoint = await pickEndpoint(config, 'Set');
  if (!endpoint) return;
  const owner = keyOwner(config, endpoint);
  const key = await vscode.window.showInputBox({
    title: `Lean4 Agentic: API key for ${owner} (${maskEndpoint(endpoint.url)})`,
    prompt:
      'Kept in VS Code SecretStorage; never written to settings, logs or trajectories. Leave empty for a server without a key.',
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key.trim() === '') {
    await secrets.delete(apiKeySecretFor(endpoint.name));
    void vscode.window.showInformationMessage(`Lean4 Agentic: the API key of ${owner} was cleared.`);
    return;
  }
  await secrets.store(apiKeySecretFor(endpoint.name), key.trim());
  output.info(`the API key of ${owner} was stored in SecretStorage`);
  void vscode.window.showInformationMessage(`Lean4 Agentic: the API key of ${owner} is stored.`);
}

export function registerConnectionCommands(
  context: vscode.ExtensionContext,
  output: vscode.LogOutputChannel,
): vscode.Disposable[] {
  const { secrets } = context;
  return [
    vscode.commands.registerCommand(COMMANDS.setApiKey, () => setApiKey(secrets, output)),
    vscode.commands.registerCommand(COMMANDS.clearApiKey, async () => {
      const config = readAgentConfig().endpoints;
      const endpoint = await pickEndpoint(config, 'Clear');
      if (!endpoint) return;
      await secrets.delete(apiKeySecretFor(endpoint.name));
      output.info(`the API key of ${keyOwner(config, endpoint)} was removed from SecretStorage`);
      void vscode.window.showInformationMessage(
        `Lean4 Agentic: the API key of ${keyOwner(config, endpoint)} was cleared.`,
      );
    }),
    vscode.commands.registerCommand(COMMANDS.testConnection, () => testConnection(secrets, output)),
    // The walkthrough's button: a plain openSettings lands on the User tab, where a remote window does not list it.
    vscode.commands.registerCommand(COMMANDS.openEndpointSetting, () => openEndpointSetting()),
  ];
}
