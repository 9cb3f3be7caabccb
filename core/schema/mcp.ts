import { z } from 'zod';

/**
 * MCP tools as the workflow, the verifier and the model name them: `mcp__SERVER__TOOL`, in the
 * alphabet OpenAI's function names allow (`[A-Za-z0-9_-]`, at most 64 characters). SERVER never
 * holds `__`, so the first `__` after the prefix splits the name back into its parts.
 */
export const MCP_PREFIX = 'mcp__';

/** The longest function name the OpenAI API (and so vLLM's and SGLang's parsers) accept. */
export const MAX_TOOL_NAME = 64;

/** A server's name in tool names: letters, digits and `-`, single `_` between them. */
const SERVER_PART = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
/** A tool's name after the server's: OpenAI's alphabet. */
const TOOL_PART = /^[A-Za-z0-9_-]+$/;

/** A server's name made fit for tool names (`github.com` → `github_com`); empty when nothing is left. */
export function serverSlug(name: string): string {
  return name
    .replace(/[^A-Za-z0-9-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
}

/** A server's tool name made fit for OpenAI's alphabet (`files.read` → `files_read`). */
export function toolSlug(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '_');
}

/** The stable name of a server's tool; undefined when the two do not make a name of at most 64 characters. */
export function mcpToolName(server: string, tool: string): string | undefined {
  const s = serverSlug(server);
  const t = toolSlug(tool);
  if (!s || !t) return undefined;
  const name = `${MCP_PREFIX}${s}__${t}`;
  return name.length <= MAX_TOOL_NAME ? name : undefined;
}

/** `mcp__SERVER__TOOL` split into its parts (as slugs), or undefined for a name that is not one. */
export function parseMcpName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_PREFIX) || name.length > MAX_TOOL_NAME) return undefined;
  const rest = name.slice(MCP_PREFIX.length);
  const cut = rest.indexOf('__');
  if (cut <= 0) return undefined;
  const server = rest.slice(0, cut);
  const tool = rest.slice(cut + 2);
  return SERVER_PART.test(server) && TOOL_PART.test(tool) ? { server, tool } : undefined;
}

export const isMcpName = (name: string): boolean => parseMcpName(name) !== undefined;

/**
 * A stage's tool entry that permits MCP tools: `mcp__` then the workflow's glob language over the
 * name's alphabet (`mcp__github__get_*`, `mcp__*`). A built-in tool is permitted by its exact name.
 */
export const isMcpPattern = (entry: string): boolean =>
  entry.startsWith(MCP_PREFIX) && entry.length <= MAX_TOOL_NAME && /^[A-Za-z0-9_*?-]+$/.test(entry);

/** sha-256 of a tool's input schema in canonical JSON, hex: what a call was made against. */
export const SchemaDigest = z.string().regex(/^[0-9a-f]{64}$/);

/** One tool a server offered: its stable name, the server's own name for it, and what it says of itself. */
export const McpToolRecord = z.object({
  name: z.string().refine(isMcpName, 'an MCP tool name is mcp__SERVER__TOOL'),
  /** The tool's name as the server lists it. */
  tool: z.string().min(1),
  digest: SchemaDigest,
  /** The server's annotations (hints, never trusted: they set whether the user is asked, nothing the verifier decides). */
  readOnly: z.boolean().optional(),
  destructive: z.boolean().optional(),
});
export type McpToolRecord = z.infer<typeof McpToolRecord>;

/** The most tools one server may offer a run; more are left out and said. */
export const MAX_SERVER_TOOLS = 256;

/**
 * A server's tools as the run saw them: at the start, after the server said its list changed, or
 * none once it stopped. The verifier knows an MCP tool only while its server's latest such line
 * lists it; nothing here is scored.
 */
export const McpToolsEvent = z
  .object({
    type: z.literal('mcp_tools'),
    /** The server's name in tool names (serverSlug of the configuration's key). */
    server: z.string().regex(SERVER_PART),
    reason: z.enum(['start', 'list_changed', 'stopped']),
    tools: z.array(McpToolRecord).max(MAX_SERVER_TOOLS),
    /** Tools the server listed that the run left out (a name that does not fit, a schema too large, past the bound). */
    omitted: z.number().int().positive().optional(),
    /** Why the server stopped or could not start (its stderr's tail included). */
    error: z.string().optional(),
    at: z.string().min(1).optional(),
  })
  .refine((e) => e.tools.every((t) => t.name.startsWith(`${MCP_PREFIX}${e.server}__`)), {
    message: "every tool's name is mcp__SERVER__TOOL with this line's server",
    path: ['tools'],
  });
export type McpToolsEvent = z.infer<typeof McpToolsEvent>;

/** A server as the header records it: how it was reached and how it was confined (no secrets: no env, no headers). */
export const McpServerRecord = z.object({
  /** The name in tool names; `label` is the configuration's own key when it differs. */
  server: z.string().regex(SERVER_PART),
  label: z.string().optional(),
  transport: z.enum(['stdio', 'http', 'sse']),
  /** stdio: the program, as configured. */
  command: z.string().optional(),
  /** http, sse: the URL without credentials or query. */
  url: z.string().optional(),
  /** stdio: the server ran in the run's sandbox (bubblewrap). */
  confined: z.boolean().optional(),
  /** stdio in the sandbox: the network it had (`host` only when the workflow grants it to this server). */
  network: z.enum(['none', 'host']).optional(),
  /** Where its configuration came from: `.vscode/mcp.json`, `.mcp.json`, a setting, `--mcp-config FILE`. */
  source: z.string().optional(),
});
export type McpServerRecord = z.infer<typeof McpServerRecord>;

/** On an MCP call's line: which server and tool it went to, and the schema its arguments were sent against. */
export const McpCallRecord = z.object({
  server: z.string(),
  tool: z.string(),
  digest: SchemaDigest,
});
export type McpCallRecord = z.infer<typeof McpCallRecord>;
