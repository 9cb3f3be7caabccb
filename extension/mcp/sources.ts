/**
 * Pure: the MCP servers the editor would start, from the configuration people already have: the
 * user setting `lean4Agentic.mcpServers` (the `mcpServers` shape), the workspace's
 * `.vscode/mcp.json` (VS Code's) and its `.mcp.json`. Each file keeps its own format, because its
 * variables mean different things; a name defined twice keeps the first, in that order.
 */
import {
  configDigest,
  McpConfigError,
  parseMcpConfig,
  type McpConfig,
  type McpInput,
  type McpServerConfig,
} from '../../core/mcp/config';

export const SETTING_SOURCE = 'lean4Agentic.mcpServers';
export const VSCODE_SOURCE = '.vscode/mcp.json';
export const PORTABLE_SOURCE = '.mcp.json';

/** Where a server came from: the user's own settings, or files of the workspace (a repository may plant them). */
export type McpOrigin = 'user' | 'workspace';

/** A server as written, before its variables are resolved. */
export interface McpCandidate {
  server: McpServerConfig;
  format: McpConfig['format'];
  /** The inputs its file declares (only VS Code's format has them). */
  inputs: readonly McpInput[];
  origin: McpOrigin;
  /** What the user allows once (core/mcp/config.ts configDigest of the server as written). */
  digest: string;
}

export interface McpSourceTexts {
  /** The user setting's value; undefined when it is not set. */
  setting?: unknown;
  /** The text of the workspace's `.vscode/mcp.json`, undefined when there is none. */
  vscode?: string;
  /** The text of the workspace's `.mcp.json`, undefined when there is none. */
  portable?: string;
}

export interface GatheredServers {
  candidates: McpCandidate[];
  /** Sentences naming the source, the server and the key. */
  problems: string[];
}

export function gatherServers(src: McpSourceTexts): GatheredServers {
  const problems: string[] = [];
  const read = (text: string | undefined, source: string, origin: McpOrigin): McpCandidate[] => {
    if (text === undefined) return [];
    let config: McpConfig;
    try {
      config = parseMcpConfig(text, source);
    } catch (e) {
      if (!(e instanceof McpConfigError)) throw e;
      problems.push(`${e.message}; no MCP server of it is started.`);
      return [];
    }
    problems.push(...config.problems);
    return config.servers.map((written) => {
      // A repository could plant autoApprove to skip the user's approval: only the user's own setting may say it.
      const server = origin === 'workspace' ? withoutAutoApprove(written) : written;
      return { server, format: config.format, inputs: config.inputs, origin, digest: configDigest(server) };
    });
  };
  const all = [
    ...read(settingText(src.setting, problems), SETTING_SOURCE, 'user'),
    ...read(src.vscode, VSCODE_SOURCE, 'workspace'),
    ...read(src.portable, PORTABLE_SOURCE, 'workspace'),
  ];
  const candidates: McpCandidate[] = [];
  for (const c of all) {
    const first = candidates.find((x) => x.server.name === c.server.name);
    if (first)
      problems.push(
        `MCP server ${JSON.stringify(c.server.name)} is defined in both ${first.server.source} and ${c.server.source}; the one in ${first.server.source} is used.`,
      );
    else candidates.push(c);
  }
  return { candidates, problems };
}

/** The setting as the text of an `.mcp.json`, so it is read by the same parser; undefined when unset. */
function settingText(value: unknown, problems: string[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push(
      `${SETTING_SOURCE} must be an object of server names to configurations, not ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}; no MCP server of it is started.`,
    );
    return undefined;
  }
  return JSON.stringify({ mcpServers: value });
}

function withoutAutoApprove(server: McpServerConfig): McpServerConfig {
  const { autoApprove: _planted, ...rest } = server;
  return rest;
}
