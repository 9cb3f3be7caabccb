/**
 * MCP server configurations: the files read (core/mcp/config-formats.ts), their variables resolved
 * with the values to mask collected, what the user allowed told by a digest, and several files
 * merged. Pure: the caller reads the files and gives the environment and the inputs.
 */
import { sep } from 'node:path';
import { canonicalDigest, canonicalExact } from '../json/canonical';
import { looksSecret } from '../secrets/redact';
import {
  keyPath,
  MAX_MCP_SERVERS,
  quote,
  urlProblem,
  type McpConfig,
  type McpInput,
  type McpServerConfig,
} from './config-formats';

export {
  MAX_MCP_CONFIG_BYTES,
  MAX_MCP_SERVERS,
  McpConfigError,
  parseMcpConfig,
  type McpConfig,
  type McpHttpConfig,
  type McpInput,
  type McpServerConfig,
  type McpStdioConfig,
  type McpTransport,
} from './config-formats';

export interface VariableContext {
  workspaceFolder: string;
  userHome: string;
  env: Readonly<Record<string, string | undefined>>;
  /** the value of ${input:ID}, undefined when not known (yet) */
  input: (id: string) => string | undefined;
}
export interface Resolved {
  server: McpServerConfig;
  /** ${input:…} ids it needs that `input` did not give */
  missingInputs: string[];
  /**
   * Values to mask wherever shown: an env value or header under a name that looks secret (TOKEN,
   * API_KEY, Authorization, Cookie …), a password input's value, and a ${env:…}/${VAR} whose name looks
   * secret. Not every value: masking `true` or `production` would blank ordinary text and break lines.
   */
  secrets: string[];
  problems: string[];
}

const VARIABLE = /\$\{([^{}]+)\}/g;
const INPUT_VARIABLE = /\$\{input:([^{}]+)\}/g;
/** `${VAR}` and `${VAR:-default}`: the default when VAR is unset or empty, as in sh. */
const SHELL_VARIABLE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

interface Resolution {
  format: McpConfig['format'];
  declared: ReadonlyMap<string, McpInput>;
  ctx: VariableContext;
  missing: Set<string>;
  secrets: Set<string>;
  problems: Set<string>;
}

/** A variable that cannot be resolved stays as written, so that the problem shows where it is. */
export function resolveServer(
  server: McpServerConfig,
  format: McpConfig['format'],
  inputs: readonly McpInput[],
  ctx: VariableContext,
): Resolved {
  const declared = new Map(inputs.map((i) => [i.id, i]));
  const r: Resolution = { format, declared, ctx, missing: new Set(), secrets: new Set(), problems: new Set() };
  const where = `${server.source}: server ${quote(server.name)}:`;
  const resolved = mapStrings(server, (text, key) =>
    text.replace(VARIABLE, (whole, body: string) => {
      const value = lookup(body, r);
      if (typeof value === 'string') return value;
      if (value) r.problems.add(`${where} ${key} uses ${whole}, which ${value.problem}; it is left as written.`);
      return whole;
    }),
  );
  const values = resolved.transport === 'stdio' ? resolved.env : resolved.headers;
  for (const [name, value] of Object.entries(values)) if (value !== '' && secretName(name)) r.secrets.add(value);
  // Not shown: once resolved, the address may carry a token.
  if (resolved.transport !== 'stdio' && !resolved.url.includes('${') && urlProblem(resolved.url))
    r.problems.add(`${where} url, its variables resolved, is not an http: or https: address.`);
  return { server: resolved, missingInputs: [...r.missing], secrets: [...r.secrets], problems: [...r.problems] };
}

/** An env variable's or a header's name that says its value is a credential (a header's `-` read as `_`). */
function secretName(name: string): boolean {
  return /^(?:proxy-)?authori[sz]ation$|^authentication$|^cookie$/i.test(name) || looksSecret(name.replace(/-/g, '_'));
}

/** A variable's value; undefined for an input not known yet; otherwise what is wrong with it. */
function lookup(body: string, r: Resolution): string | undefined | { problem: string } {
  const { ctx } = r;
  // VS Code gives an unset variable as empty, and so does Cursor.
  if (body.startsWith('env:')) return environment(body.slice(4), r) ?? '';
  if (body === 'workspaceFolder' || body === 'workspaceFolderBasename') {
    if (ctx.workspaceFolder === '') return { problem: 'needs a workspace folder, and none is open' };
    return body === 'workspaceFolder' ? ctx.workspaceFolder : (ctx.workspaceFolder.split(/[\\/]/).at(-1) ?? '');
  }
  if (body === 'userHome') return ctx.userHome;
  if (body === 'pathSeparator' || body === '/') return sep;
  if (r.format === 'vscode') {
    if (!body.startsWith('input:')) return { problem: "is not one of VS Code's variables here" };
    const id = body.slice('input:'.length);
    const input = r.declared.get(id);
    if (!input) return { problem: 'no entry of inputs declares' };
    const value = askInput(ctx, id);
    if (value === undefined) r.missing.add(id);
    else if (input.password && value !== '') r.secrets.add(value);
    return value;
  }
  const shell = SHELL_VARIABLE.exec(body);
  if (!shell) return { problem: 'is not ${VAR}, ${VAR:-default}, ${env:VAR} or ${workspaceFolder}' };
  const [, name = '', fallback] = shell;
  const value = environment(name, r);
  if (value !== undefined && (value !== '' || fallback === undefined)) return value;
  if (fallback === undefined) return { problem: `is not set in the environment and has no default (\${${name}:-…})` };
  if (looksSecret(name) && fallback !== '') r.secrets.add(fallback);
  return fallback;
}

function environment(name: string, r: Resolution): string | undefined {
  const value = Object.hasOwn(r.ctx.env, name) ? r.ctx.env[name] : undefined;
  if (typeof value !== 'string') return undefined;
  if (looksSecret(name) && value !== '') r.secrets.add(value);
  return value;
}

/** The caller's callback may fail: that is an input not known, never an exception out of here. */
function askInput(ctx: VariableContext, id: string): string | undefined {
  try {
    const value = ctx.input(id);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The input ids a server's strings mention, in order of first mention. */
export function inputsOf(server: McpServerConfig): string[] {
  const ids = new Set<string>();
  mapStrings(server, (text) => {
    for (const m of text.matchAll(INPUT_VARIABLE)) ids.add(m[1]!);
    return text;
  });
  return [...ids];
}

/** A copy of the server with `f` applied to every string a variable may be in, each with the key it is at. */
function mapStrings(server: McpServerConfig, f: (text: string, key: string) => string): McpServerConfig {
  const record = (field: string, values: Record<string, string>): Record<string, string> => {
    const out = Object.create(null) as Record<string, string>;
    for (const [name, value] of Object.entries(values)) out[name] = f(value, keyPath(field, name));
    return out;
  };
  const copy = { ...server, ...(server.autoApprove ? { autoApprove: [...server.autoApprove] } : {}) };
  if (copy.transport !== 'stdio') return { ...copy, url: f(copy.url, 'url'), headers: record('headers', copy.headers) };
  return {
    ...copy,
    command: f(copy.command, 'command'),
    args: copy.args.map((arg, i) => f(arg, `args[${i}]`)),
    env: record('env', copy.env),
    ...(copy.cwd !== undefined ? { cwd: f(copy.cwd, 'cwd') } : {}),
  };
}

/**
 * sha-256 hex of the server's configuration as written (before resolution), stable under key order:
 * what the user allowed once. Everything but `source`: the same server moved to another file is the same.
 */
export function configDigest(server: McpServerConfig): string {
  const { name, transport, autoApprove, timeoutMs } = server;
  const written =
    server.transport === 'stdio'
      ? { name, transport, command: server.command, args: server.args, env: server.env, cwd: server.cwd }
      : { name, transport, url: server.url, headers: server.headers };
  const given = Object.entries({ ...written, autoApprove, timeoutMs }).filter(([, v]) => v !== undefined);
  return canonicalDigest(Object.fromEntries(given));
}

/** Later files do not override earlier ones: a name defined twice keeps the first, and a problem names both sources. */
export function mergeConfigs(configs: readonly McpConfig[]): McpConfig {
  const problems = configs.flatMap((c) => c.problems);
  const servers: McpServerConfig[] = [];
  const firstSource = new Map<string, string>();
  const over: string[] = [];
  for (const server of configs.flatMap((c) => c.servers)) {
    const earlier = firstSource.get(server.name);
    if (earlier !== undefined) {
      problems.push(
        `server ${quote(server.name)} is defined in both ${earlier} and ${server.source}; the one in ${earlier} is used.`,
      );
    } else if (servers.length === MAX_MCP_SERVERS) over.push(server.name);
    else {
      firstSource.set(server.name, server.source);
      servers.push(server);
    }
  }
  if (over.length)
    problems.push(
      `more than ${MAX_MCP_SERVERS} servers in all; the first ${MAX_MCP_SERVERS} are kept and ${over.length} left out, from server ${quote(over[0]!)} on.`,
    );
  const inputs: McpInput[] = [];
  for (const input of configs.flatMap((c) => c.inputs)) {
    const earlier = inputs.find((x) => x.id === input.id);
    if (!earlier) inputs.push(input);
    else if (canonicalExact(earlier) !== canonicalExact(input))
      problems.push(`input ${quote(input.id)} is declared twice, differently; the first is used.`);
  }
  return { servers, inputs, problems, format: configs[0]?.format ?? 'vscode' };
}
