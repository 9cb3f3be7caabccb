import type { SandboxSetting } from '../core/sandbox/plan';
import type { ServerOptions } from '../core/protocol/lsp';
/** The extension's settings (`lean4Agentic.*`), read in one place. */
import * as vscode from 'vscode';
import { TOOL_FORMATS, type ToolFormatSetting } from '../core/model/formats';
import { mergeEndpoints, type EndpointsConfig } from '../core/model/endpoints';

export const SECTION = 'lean4Agentic';

export const BACKEND_CHOICES = ['auto', 'lean', 'builtin'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];

export interface Config {
  backend: BackendChoice;
  leanPath: string;
  gutterEnabled: boolean;
  editedFilesEnabled: boolean;
  debounceMs: number;
  problems: 'open' | 'all';
}

export function readConfig(): Config {
  const c = vscode.workspace.getConfiguration(SECTION);
  const backend = c.get<string>('backend', 'auto');
  const debounce = c.get<number>('gutter.debounceMs', 150);
  return {
    backend: (BACKEND_CHOICES as readonly string[]).includes(backend) ? (backend as BackendChoice) : 'auto',
    leanPath: c.get<string>('leanPath', '').trim(),
    gutterEnabled: c.get<boolean>('gutter.enabled', true),
    editedFilesEnabled: c.get<boolean>('gutter.editedFiles', true),
    debounceMs: Number.isFinite(debounce) ? Math.min(Math.max(debounce, 0), 2000) : 150,
    problems: c.get<string>('problems', 'open') === 'all' ? 'all' : 'open',
  };
}

/** What the server is started with (`initializationOptions`). */
export interface ServerOptionsFromConfig extends ServerOptions {
  /** Absent when the setting is empty: the server then looks at $LAR_LEAN_PATH, PATH and ~/.elan/bin. */
  leanPath?: string;
  backend: BackendChoice;
}

/**
 * The server's initialization options. In Restricted Mode only the builtin
 * backend is used: finding and building the Lean checker runs executables
 * (`lean`, `lake`, elan picking the toolchain a workspace pins).
 */
export function initializationOptions(config: Config, trusted: boolean): ServerOptionsFromConfig {
  // VS Code validates *.larflow.json against the JSON Schema itself (jsonValidation):
  // the server leaves those schema errors to it instead of reporting them twice.
  const common = { workflowSchemaByClient: true, problems: config.problems };
  if (!trusted) return { ...common, backend: 'builtin' };
  return config.leanPath
    ? { ...common, leanPath: config.leanPath, backend: config.backend }
    : { ...common, backend: config.backend };
}

/** Settings that only take effect when the server restarts. */
export function affectsServer(e: vscode.ConfigurationChangeEvent): boolean {
  return (
    e.affectsConfiguration(`${SECTION}.backend`) ||
    e.affectsConfiguration(`${SECTION}.leanPath`) ||
    e.affectsConfiguration(`${SECTION}.problems`)
  );
}

export function affectsGutter(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${SECTION}.gutter`);
}

/** Writes the backend where it takes effect: the workspace if it sets one, else the user settings. */
export async function writeBackend(choice: BackendChoice): Promise<void> {
  const c = vscode.workspace.getConfiguration(SECTION);
  const inspected = c.inspect<string>('backend');
  const target =
    inspected?.workspaceFolderValue !== undefined || inspected?.workspaceValue !== undefined
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
  await c.update('backend', choice, target);
}

/** The agent's settings (`lean4Agentic.endpoint` … `lean4Agentic.limits.*`); the API key is in SecretStorage, not here. */
export interface AgentConfig {
  endpoint: string;
  /** `endpoint` as "default", then the valid named endpoints, and why the others were left out. */
  endpoints: EndpointsConfig;
  model: string;
  temperature: number;
  maxTokens: number;
  requestTimeoutMs: number;
  toolCallFormat: ToolFormatSetting;
  /** The model's window in tokens; 0: ask the server. */
  contextLength: number;
  thinking: 'auto' | 'on' | 'off';
  /** Rule files for the system prompt (none in an untrusted workspace). */
  rules: string[];
  /** Checkpoints before steps that may change files. */
  checkpoints: boolean;
  enforcement: 'block' | 'warn';
  approvals: Record<string, unknown>;
  workflow: string;
  maxSteps: number;
  maxRepeatedFailures: number;
  maxMinutes: number;
  /** Completion tokens over a whole run; 0: no limit. */
  maxRunTokens: number;
  /** How commands are confined (user settings only). */
  sandbox: SandboxSetting;
  /** Make multiply-linked workspace files their own copies before a run (user settings only). */
  breakHardLinks: boolean;
}

export const API_KEY_SECRET = 'lean4Agentic.apiKey';

function stringList(v: unknown, fallback: string[]): string[] {
  return Array.isArray(v)
    ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').slice(0, 20)
    : fallback;
}

/** The context length setting: 0 (ask the server), else at least 1024 tokens (less cannot hold a run; lar run refuses it). */
export function contextLengthSetting(v: unknown): number {
  const n = Math.round(Number(v ?? 0) || 0);
  return n <= 0 ? 0 : Math.max(1024, n);
}

/** A setting value as a tool format; anything unknown (an old or mistyped value) is `auto`. */
export function toolFormatSetting(v: string | undefined): ToolFormatSetting {
  return v !== undefined && (TOOL_FORMATS as readonly string[]).includes(v) ? (v as ToolFormatSetting) : 'auto';
}

function positive(n: number | undefined, fallback: number): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : fallback;
}

/**
 * The endpoint receives the API key: in Restricted Mode a workspace's own
 * value is ignored (user settings or the default), so an untrusted folder
 * cannot send the key elsewhere (e.g. through Test Connection).
 */
function trustedEndpoint(c: vscode.WorkspaceConfiguration): string {
  const fallback = 'http://127.0.0.1:30000/v1';
  const value = vscode.workspace.isTrusted ? c.get<string>('endpoint') : c.inspect<string>('endpoint')?.globalValue;
  return (typeof value === 'string' ? value.trim() : '') || fallback;
}

/** The named endpoints receive their keys too: in Restricted Mode only the user's list counts, as for `endpoint`. */
function trustedEndpoints(c: vscode.WorkspaceConfiguration, endpoint: string): EndpointsConfig {
  const value = vscode.workspace.isTrusted ? c.get<unknown>('endpoints') : c.inspect<unknown>('endpoints')?.globalValue;
  return mergeEndpoints(endpoint, value);
}

export function readAgentConfig(): AgentConfig {
  const c = vscode.workspace.getConfiguration(SECTION);
  const temperature = c.get<number>('temperature', 0.2);
  const approvals = c.get<unknown>('approvals');
  const endpoint = trustedEndpoint(c);
  return {
    endpoint,
    endpoints: trustedEndpoints(c, endpoint),
    model: c.get<string>('model', '').trim(),
    temperature:
      typeof temperature === 'number' && Number.isFinite(temperature) ? Math.min(Math.max(temperature, 0), 2) : 0.2,
    maxTokens: Math.round(positive(c.get<number>('maxTokens'), 4096)),
    requestTimeoutMs: Math.max(1000, positive(c.get<number>('requestTimeoutMs'), 60_000)),
    toolCallFormat: toolFormatSetting(c.get<string>('toolCallFormat')),
    contextLength: contextLengthSetting(c.get<number>('contextLength')),
    thinking: ((t) => (t === 'on' || t === 'off' ? t : 'auto'))(c.get<string>('thinking')),
    // A workspace's own words reach the prompt only when the workspace is trusted.
    checkpoints: c.get<boolean>('checkpoints') !== false,
    rules: vscode.workspace.isTrusted ? stringList(c.get<unknown>('rules'), ['AGENTS.md']) : [],
    enforcement: c.get<string>('enforcement') === 'warn' ? 'warn' : 'block',
    approvals: typeof approvals === 'object' && approvals !== null ? (approvals as Record<string, unknown>) : {},
    workflow: c.get<string>('workflow', 'builtin:default-coding').trim() || 'builtin:default-coding',
    maxSteps: Math.round(positive(c.get<number>('limits.maxSteps'), 200)),
    maxRepeatedFailures: Math.max(2, Math.round(positive(c.get<number>('limits.maxRepeatedFailures'), 3))),
    maxMinutes: positive(c.get<number>('limits.maxMinutes'), 60),
    maxRunTokens: Math.max(0, Math.round(Number(c.get<number>('limits.maxTokens') ?? 0) || 0)),
    sandbox: userSandboxSetting(c),
    breakHardLinks: c.inspect<boolean>('breakHardLinks')?.globalValue === true,
  };
}

/** lean4Agentic.sandbox from user settings only: a workspace (or a command that wrote its settings) must not be able to turn confinement off. */
function userSandboxSetting(c: vscode.WorkspaceConfiguration): SandboxSetting {
  const v = c.inspect<string>('sandbox')?.globalValue;
  return v === 'required' || v === 'off' ? v : 'auto';
}

/**
 * lean4Agentic.mcpServers from user settings only: a workspace's settings must not add servers the user never
 * allowed, nor an autoApprove that skips the approval of their tools.
 */
export function readMcpServersSetting(): unknown {
  return vscode.workspace.getConfiguration(SECTION).inspect<unknown>('mcpServers')?.globalValue;
}
