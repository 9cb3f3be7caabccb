/**
 * The inference servers a user named (`lean4Agentic.endpoints`, beside the default `lean4Agentic.endpoint`),
 * checked apart from the editor so that a bad entry is left out with a reason a person can act on.
 */
import { maskEndpoint } from '../secrets/endpoint';

/** The name `lean4Agentic.endpoint` goes by among the named endpoints. */
export const DEFAULT_ENDPOINT_NAME = 'default';
/** The most named endpoints read (each is asked for its models whenever the picker opens). */
export const MAX_ENDPOINTS = 20;

/** Letters, digits, spaces, dots, dashes and underscores: shown in menus and recorded in headers as typed. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}$/;

export interface NamedEndpoint {
  name: string;
  /** The base URL, ending in /v1 as a rule. */
  url: string;
}

export interface EndpointsConfig {
  /** The default endpoint first, then the named ones in the settings' order. */
  endpoints: NamedEndpoint[];
  /** One sentence per entry left out, naming it and what to fix. */
  problems: string[];
}

/** Why `url` cannot be an endpoint, or undefined when it can. */
export function endpointUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `"${maskEndpoint(url)}" is not a URL (e.g. http://127.0.0.1:8000/v1)`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `"${maskEndpoint(url)}" is not an http or https URL (e.g. http://127.0.0.1:8000/v1)`;
  // The client refuses them; a key belongs in SecretStorage.
  if (u.username || u.password)
    return `"${maskEndpoint(url)}" carries a user or a password: leave them out and use Set API Key`;
  return undefined;
}

/** One entry of the setting, or why it is left out. */
function entryOf(raw: unknown, at: string): NamedEndpoint | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return `${at} is not an object like {"name": "vllm", "url": "http://127.0.0.1:8000/v1"}`;
  const { name, url } = raw as { name?: unknown; url?: unknown };
  if (typeof name !== 'string' || !NAME.test(name.trim()))
    return `${at}: "name" must be 1 to 40 letters, digits, spaces, dots, dashes or underscores`;
  const trimmed = name.trim();
  if (trimmed.toLowerCase() === DEFAULT_ENDPOINT_NAME)
    return `${at}: the name "${DEFAULT_ENDPOINT_NAME}" is lean4Agentic.endpoint's; pick another`;
  if (typeof url !== 'string' || url.trim() === '') return `${at} ("${trimmed}"): "url" is missing`;
  const problem = endpointUrlProblem(url.trim());
  return problem ? `${at} ("${trimmed}"): ${problem}` : { name: trimmed, url: url.trim() };
}

/**
 * The endpoints in force: `lean4Agentic.endpoint` as "default", then each valid entry of
 * `lean4Agentic.endpoints`. Entries that are not objects, lack a name or a usable URL, reuse a name (names
 * are compared without case) or come past the limit are left out, each with a problem saying why.
 */
export function mergeEndpoints(defaultUrl: string, entries: unknown): EndpointsConfig {
  const endpoints: NamedEndpoint[] = [{ name: DEFAULT_ENDPOINT_NAME, url: defaultUrl }];
  const problems: string[] = [];
  if (entries === undefined || entries === null) return { endpoints, problems };
  if (!Array.isArray(entries)) {
    problems.push('lean4Agentic.endpoints is not a list: write [{"name": "…", "url": "…"}, …]');
    return { endpoints, problems };
  }
  const seen = new Set([DEFAULT_ENDPOINT_NAME]);
  entries.forEach((raw, i) => {
    const at = `lean4Agentic.endpoints entry ${i + 1}`;
    const entry = entryOf(raw, at);
    if (typeof entry === 'string') problems.push(entry);
    else if (seen.has(entry.name.toLowerCase()))
      problems.push(`${at}: the name "${entry.name}" is used twice; the first one is kept`);
    else if (endpoints.length > MAX_ENDPOINTS)
      problems.push(`${at} ("${entry.name}"): more than ${MAX_ENDPOINTS} endpoints; the rest are left out`);
    else {
      seen.add(entry.name.toLowerCase());
      endpoints.push(entry);
    }
  });
  return { endpoints, problems };
}

/** The endpoint of that name (names compare without case, as they are checked for duplicates). */
export function endpointNamed(config: EndpointsConfig, name: string): NamedEndpoint | undefined {
  const key = name.toLowerCase();
  return config.endpoints.find((e) => e.name.toLowerCase() === key);
}
