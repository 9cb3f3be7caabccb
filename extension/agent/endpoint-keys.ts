/**
 * One API key per named endpoint, in SecretStorage (never in settings): a key goes only to the endpoint it
 * was set for, so a second server never sees the first one's key. Set API Key asks which endpoint.
 */
import * as vscode from 'vscode';
import { DEFAULT_ENDPOINT_NAME, type EndpointsConfig, type NamedEndpoint } from '../../core/model/endpoints';
import { maskEndpoint } from '../../core/secrets/endpoint';
import { API_KEY_SECRET } from '../config';

/** The secret of an endpoint's key: the default endpoint keeps the one key there was before names. */
export function apiKeySecretFor(endpointName: string): string {
  const name = endpointName.toLowerCase();
  return name === DEFAULT_ENDPOINT_NAME ? API_KEY_SECRET : `${API_KEY_SECRET}.endpoint.${name}`;
}

/** Whether a change of this secret changes an endpoint's key. */
export function isApiKeySecret(key: string): boolean {
  return key === API_KEY_SECRET || key.startsWith(`${API_KEY_SECRET}.endpoint.`);
}

export async function readApiKey(
  secrets: vscode.SecretStorage,
  endpointName: string = DEFAULT_ENDPOINT_NAME,
): Promise<string | undefined> {
  const key = await secrets.get(apiKeySecretFor(endpointName));
  return key ? key : undefined;
}

/** Every configured endpoint's key: text that may echo any of them (a terminal's output) is masked of all. */
export async function allApiKeys(secrets: vscode.SecretStorage, config: EndpointsConfig): Promise<string[]> {
  const keys = await Promise.all(config.endpoints.map((e) => readApiKey(secrets, e.name)));
  return keys.filter((k): k is string => k !== undefined);
}

/** The endpoint whose key to set or clear: the only one, or the one the user picks (undefined: cancelled). */
export async function pickEndpoint(config: EndpointsConfig, verb: string): Promise<NamedEndpoint | undefined> {
  if (config.endpoints.length === 1) return config.endpoints[0];
  const picked = await vscode.window.showQuickPick(
    config.endpoints.map((e) => ({ label: e.name, description: maskEndpoint(e.url), endpoint: e })),
    { title: `Lean4 Agentic: ${verb} the API key of which endpoint?`, ignoreFocusOut: true },
  );
  return picked?.endpoint;
}

/** What a message calls the endpoint whose key it is about (nothing more when there is only the default). */
export function keyOwner(config: EndpointsConfig, endpoint: NamedEndpoint): string {
  return config.endpoints.length === 1 ? 'the inference server' : `the endpoint "${endpoint.name}"`;
}
