/**
 * The MCP configuration files people already have, read and checked: VS Code's `.vscode/mcp.json`
 * (`servers`, `inputs`; JSONC), the portable `.mcp.json` of Claude Code, Cursor and Kilo, and Cline's
 * settings (both `mcpServers`). Server by server: a bad one is left out with a sentence that names
 * it and the key, the others kept. Pure; reached through core/mcp/config.ts, split from it by size.
 */
import { createScanner, parseTree, printParseErrorCode, SyntaxKind, type Node, type ParseError } from 'jsonc-parser';
import { MAX_JSON_DEPTH } from '../json/depth';
import { maskEndpoint } from '../secrets/endpoint';

export type McpTransport = 'stdio' | 'http' | 'sse';
interface Common {
  name: string;
  /** where it came from, e.g. ".vscode/mcp.json" */
  source: string;
  /** Cline's autoApprove: tool names the user approved in advance */
  autoApprove?: string[];
  /** Cline's timeout, ms */
  timeoutMs?: number;
}
export interface McpStdioConfig extends Common {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}
export interface McpHttpConfig extends Common {
  transport: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
}
export type McpServerConfig = McpStdioConfig | McpHttpConfig;
export interface McpInput {
  id: string;
  type: 'promptString' | 'pickString';
  description?: string;
  password: boolean;
  options?: string[];
  default?: string;
}
export interface McpConfig {
  servers: McpServerConfig[];
  inputs: McpInput[];
  /** sentences, each naming the server and key: a bad server is left out, the others kept */
  problems: string[];
  /** 'vscode' | 'mcpServers' */
  format: 'vscode' | 'mcpServers';
}
/** The whole file is unusable: the message says why, with line:column for a JSON syntax error. */
export class McpConfigError extends Error {}

/** Larger than any hand-written configuration; the bound keeps a planted file cheap to refuse. */
export const MAX_MCP_CONFIG_BYTES = 1024 * 1024;
/** More servers than a run would start; the rest are left out and said. */
export const MAX_MCP_SERVERS = 64;
/** Cline's timeout is seconds; a day is far past any real one. */
const MAX_TIMEOUT_SECONDS = 86_400;
/** A name is shown in the chat and in prompts: no control characters and no bidi overrides that reorder what is shown. */
const SERVER_NAME = /^[^\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]{1,100}$/u;
/** Cline's `streamableHttp` is the specification's Streamable HTTP, which `http` means everywhere else. */
const TRANSPORTS: ReadonlyMap<string, McpTransport> = new Map([
  ['stdio', 'stdio'],
  ['http', 'http'],
  ['sse', 'sse'],
  ['streamableHttp', 'http'],
]);

type Json = string | number | boolean | null | Json[] | JsonObject;
interface JsonObject {
  [key: string]: Json;
}

/** A reason one server or input is left out; caught where its sentence is written, never escapes. */
class Unusable extends Error {}

/** The file's servers and inputs; throws McpConfigError only, when the file as a whole cannot be used. */
export function parseMcpConfig(text: string, source: string): McpConfig {
  const root = readJsonc(text, source);
  const top = new Map(root.type === 'object' ? members(root) : []);
  if (root.type !== 'object')
    throw new McpConfigError(
      `${source}: expected a JSON object with "servers" or "mcpServers", not ${kindOf(toValue(root))}`,
    );
  const vscode = top.get('servers');
  const portable = top.get('mcpServers');
  if (vscode && portable)
    throw new McpConfigError(
      `${source}: has both "servers" (VS Code's mcp.json) and "mcpServers" (.mcp.json, Cline); keep one of them`,
    );
  const map = vscode ?? portable;
  if (!map)
    throw new McpConfigError(
      `${source}: has neither "servers" (VS Code's mcp.json) nor "mcpServers" (.mcp.json, Cursor, Cline): no MCP servers in it`,
    );
  const key = vscode ? 'servers' : 'mcpServers';
  if (map.type !== 'object')
    throw new McpConfigError(`${source}: "${key}" must be an object of server names to configurations`);
  const problems: string[] = [];
  const inputs = vscode ? readInputs(top.get('inputs'), source, problems) : [];
  return { servers: readServers(map, source, problems), inputs, problems, format: vscode ? 'vscode' : 'mcpServers' };
}

function readJsonc(text: string, source: string): Node {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_MCP_CONFIG_BYTES)
    throw new McpConfigError(
      `${source}: ${bytes} bytes, more than the ${MAX_MCP_CONFIG_BYTES} an MCP configuration may have`,
    );
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.trim() === '') throw new McpConfigError(`${source}: the file is empty`);
  // jsonc-parser recurses per level: nesting is refused before it could overflow the stack.
  const scanner = createScanner(body, true);
  let depth = 0;
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.OpenBraceToken || kind === SyntaxKind.OpenBracketToken) {
      if (++depth > MAX_JSON_DEPTH)
        throw new McpConfigError(
          `${source}:${lineColumn(body, scanner.getTokenOffset())}: nested more than ${MAX_JSON_DEPTH} levels deep`,
        );
    } else if (kind === SyntaxKind.CloseBraceToken || kind === SyntaxKind.CloseBracketToken) depth--;
  }
  const errors: ParseError[] = [];
  const root = parseTree(body, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first || !root) {
    // jsonc-parser's codes read as words: CommaExpected → "comma expected".
    const code = first ? printParseErrorCode(first.error) : 'ValueExpected';
    const said = code.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase();
    throw new McpConfigError(`${source}:${lineColumn(body, first?.offset ?? 0)}: JSON syntax error: ${said}`);
  }
  return root;
}

/** 1-based, as editors show them. */
function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `${line}:${offset - before.lastIndexOf('\n')}`;
}

function members(node: Node): [string, Node][] {
  const out: [string, Node][] = [];
  for (const property of node.children ?? []) {
    const [key, value] = property.children ?? [];
    if (key && value) out.push([key.value as string, value]);
  }
  return out;
}

/** Objects without a prototype, so that `__proto__` or `constructor` are names like any other. */
function toValue(node: Node): Json {
  if (node.type === 'array') return (node.children ?? []).map(toValue);
  if (node.type !== 'object') return node.value as Json;
  const out = Object.create(null) as JsonObject;
  for (const [key, value] of members(node)) out[key] = toValue(value);
  return out;
}

function readServers(map: Node, source: string, problems: string[]): McpServerConfig[] {
  // A name written twice: the later one, as JSON.parse and so the other tools read the file.
  const byName = new Map<string, Node>();
  for (const [name, node] of members(map)) {
    if (byName.has(name))
      problems.push(`${source}: server ${quote(name)} is defined twice; the later definition is used.`);
    byName.set(name, node);
  }
  const servers: McpServerConfig[] = [];
  const entries = [...byName];
  for (const [i, [name, node]] of entries.entries()) {
    const value = toValue(node);
    if (isObject(value) && value.disabled === true) continue;
    if (servers.length === MAX_MCP_SERVERS) {
      problems.push(
        `${source}: more than ${MAX_MCP_SERVERS} servers; the first ${MAX_MCP_SERVERS} are kept and the ${entries.length - i} from server ${quote(name)} on are left out.`,
      );
      break;
    }
    try {
      const server = readServer(name, value, source, problems);
      servers.push(server);
    } catch (e) {
      if (!(e instanceof Unusable)) throw e;
      problems.push(`${source}: server ${quote(name)}: ${e.message}; the server is left out.`);
    }
  }
  return servers;
}

function readServer(name: string, value: Json, source: string, problems: string[]): McpServerConfig {
  if (!SERVER_NAME.test(name))
    throw new Unusable('the name must be 1 to 100 characters, none of them a control character');
  if (!isObject(value)) throw new Unusable(`the configuration must be an object, not ${kindOf(value)}`);
  if (value.disabled !== undefined && typeof value.disabled !== 'boolean')
    throw new Unusable(`disabled must be true or false, not ${shown(value.disabled)}`);
  const common: McpServerConfig = { ...readTransport(value), name, source };
  const autoApprove = optionalStrings(value, 'autoApprove');
  if (autoApprove) common.autoApprove = autoApprove;
  const timeout = value.timeout;
  if (timeout !== undefined) {
    if (typeof timeout !== 'number' || !(timeout > 0 && timeout <= MAX_TIMEOUT_SECONDS))
      throw new Unusable(
        `timeout must be a positive number of seconds, at most ${MAX_TIMEOUT_SECONDS}, not ${shown(timeout)}`,
      );
    common.timeoutMs = Math.max(1, Math.round(timeout * 1000));
  }
  if (common.transport === 'stdio' && value.envFile !== undefined)
    problems.push(`${source}: server ${quote(name)}: envFile is not supported; put the variables in env.`);
  return common;
}

/** The transport and its keys; `type` (or Cline's older `transportType`) when given, else what the keys say. */
function readTransport(
  o: JsonObject,
): Omit<McpStdioConfig, 'name' | 'source'> | Omit<McpHttpConfig, 'name' | 'source'> {
  const typeKey = o.type !== undefined ? 'type' : o.transportType !== undefined ? 'transportType' : undefined;
  let transport: McpTransport | undefined;
  if (typeKey) {
    const given = o[typeKey];
    transport = typeof given === 'string' ? TRANSPORTS.get(given) : undefined;
    if (!transport)
      throw new Unusable(`${typeKey} must be "stdio", "http", "sse" or "streamableHttp", not ${shown(given)}`);
  } else if (o.command !== undefined && o.url !== undefined) {
    throw new Unusable('type is missing and both command and url are given: set type to "stdio" or "http"');
  } else if (o.command !== undefined) transport = 'stdio';
  else if (o.url !== undefined) transport = 'http';
  else throw new Unusable('command (a program to start) or url (a server to reach) is missing');

  if (transport !== 'stdio') {
    const url = requiredString(o, 'url');
    const wrong = url.includes('${') ? undefined : urlProblem(url);
    if (wrong) throw new Unusable(`url ${wrong}`);
    return { transport, url, headers: optionalRecord(o, 'headers') };
  }
  const command = requiredString(o, 'command');
  if (command.trim() === '') throw new Unusable('command must name a program, not be empty');
  const cwd = o.cwd === undefined ? undefined : requiredString(o, 'cwd');
  const env = optionalRecord(o, 'env');
  return { transport, command, args: optionalStrings(o, 'args') ?? [], env, ...(cwd !== undefined ? { cwd } : {}) };
}

function requiredString(o: JsonObject, key: string): string {
  const v = o[key];
  if (v === undefined) throw new Unusable(`${key} is missing`);
  if (typeof v !== 'string') throw new Unusable(`${key} must be a string, not ${kindOf(v)}`);
  return v;
}

function optionalStrings(o: JsonObject, key: string): string[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw new Unusable(`${key} must be an array of strings, not ${kindOf(v)}`);
  const bad = v.findIndex((x) => typeof x !== 'string');
  if (bad >= 0) throw new Unusable(`${key}[${bad}] must be a string, not ${kindOf(v[bad]!)}`);
  return v as string[];
}

function optionalRecord(o: JsonObject, key: string): Record<string, string> {
  const v = o[key];
  const out = Object.create(null) as Record<string, string>;
  if (v === undefined) return out;
  if (!isObject(v)) throw new Unusable(`${key} must be an object of names to strings, not ${kindOf(v)}`);
  for (const [name, value] of Object.entries(v)) {
    if (typeof value !== 'string') throw new Unusable(`${keyPath(key, name)} must be a string, not ${kindOf(value)}`);
    out[name] = value;
  }
  return out;
}

function readInputs(node: Node | undefined, source: string, problems: string[]): McpInput[] {
  if (!node) return [];
  const list = toValue(node);
  if (!Array.isArray(list)) {
    problems.push(`${source}: inputs must be an array, not ${kindOf(list)}; no input is read.`);
    return [];
  }
  const inputs: McpInput[] = [];
  for (const [i, item] of list.entries()) {
    const id = isObject(item) && typeof item.id === 'string' ? item.id : undefined;
    const which = id !== undefined ? `input ${quote(id)}` : `inputs[${i}]`;
    try {
      const input = readInput(item);
      if (!inputs.some((x) => x.id === input.id)) inputs.push(input);
      else problems.push(`${source}: ${which}: id is declared twice; the first declaration is used.`);
    } catch (e) {
      if (!(e instanceof Unusable)) throw e;
      problems.push(`${source}: ${which}: ${e.message}; the input is left out.`);
    }
  }
  return inputs;
}

function readInput(item: Json): McpInput {
  if (!isObject(item)) throw new Unusable(`must be an object, not ${kindOf(item)}`);
  const id = requiredString(item, 'id');
  if (id === '') throw new Unusable('id must not be empty');
  const type = item.type;
  if (type === undefined) throw new Unusable('type is missing: "promptString" or "pickString"');
  if (type !== 'promptString' && type !== 'pickString')
    throw new Unusable(`type must be "promptString" or "pickString", not ${shown(type)}`);
  if (item.password !== undefined && typeof item.password !== 'boolean')
    throw new Unusable(`password must be true or false, not ${shown(item.password)}`);
  const input: McpInput = { id, type, password: item.password === true };
  if (item.description !== undefined) input.description = requiredString(item, 'description');
  if (item.default !== undefined) input.default = requiredString(item, 'default');
  if (type === 'pickString') {
    // VS Code also takes `{ "label", "value" }` options; the value is what the variable becomes.
    const options = Array.isArray(item.options) ? item.options : undefined;
    const values = options?.map((x) => (isObject(x) && typeof x.value === 'string' ? x.value : x));
    if (!values?.length || values.some((x) => typeof x !== 'string'))
      throw new Unusable('options must be a non-empty array of strings');
    input.options = values as string[];
  }
  return input;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kindOf(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** A value in a message: strings quoted (and cut), other kinds named. */
function shown(v: Json | undefined): string {
  if (v === undefined) return 'nothing';
  return typeof v === 'string' ? quote(v) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : kindOf(v);
}

/** What is wrong with a server's address, or undefined; credentials in it are masked. */
export function urlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL, so maskEndpoint may not see a password before an `@`: that part goes too.
    return `must be an http: or https: address, not ${quote(maskEndpoint(url).replace(/[^\s/@]+@/g, '***@'))}`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `must be an http: or https: address, not ${parsed.protocol}`;
  return undefined;
}

/** A name in a message: quoted, control characters escaped, cut when long. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/** `env.GITHUB_TOKEN`, `headers["X Api"]`: the key as the user finds it in the file. */
export function keyPath(field: string, name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? `${field}.${name}` : `${field}[${JSON.stringify(name)}]`;
}
