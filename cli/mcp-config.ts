/**
 * `lar run --mcp-config FILE`: the servers of a `.mcp.json`, a `.vscode/mcp.json` or Cline's
 * settings file, read and checked before anything starts; their variables resolved for each
 * rollout's workspace. Nobody can be asked for an `${input:…}` here: it comes from the environment.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  McpConfigError,
  parseMcpConfig,
  resolveServer,
  type McpConfig,
  type McpServerConfig,
} from '../core/mcp/config';
import { UsageError } from './read-input';
import { readBoundedText } from '../core/workspace/bounded-read';

const MAX_FILE = 1024 * 1024;

/** The environment variable that gives `${input:ID}` its value in `lar run`. */
export const inputVariable = (id: string): string => `LAR_MCP_INPUT_${id.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`;

export function readMcpConfig(file: string, cwd: string): McpConfig {
  const path = resolve(cwd, file);
  let text: string;
  try {
    // Regular files only, bounded: a FIFO or /dev/zero named here must not hang or fill the run.
    text = readBoundedText(path, MAX_FILE, 'the MCP configuration');
  } catch (e) {
    throw new UsageError(`--mcp-config ${file}: ${(e as Error).message}`);
  }
  try {
    return parseMcpConfig(text, file);
  } catch (e) {
    if (e instanceof McpConfigError) throw new UsageError(`--mcp-config ${file}: ${e.message}`);
    throw e;
  }
}

export interface RunServers {
  servers: McpServerConfig[];
  secrets: string[];
  problems: string[];
}

/** The servers with their variables resolved for `workspace`; a missing input is a usage error naming its variable. */
export function resolveForRun(
  config: McpConfig,
  workspace: string,
  env: Readonly<Record<string, string | undefined>>,
): RunServers {
  const out: RunServers = { servers: [], secrets: [], problems: [...config.problems] };
  const ctx = {
    workspaceFolder: workspace,
    userHome: homedir(),
    env,
    input: (id: string) => env[inputVariable(id)],
  };
  for (const server of config.servers) {
    const r = resolveServer(server, config.format, config.inputs, ctx);
    if (r.missingInputs.length)
      throw new UsageError(
        `--mcp-config: server "${server.name}" needs ${r.missingInputs.map((id) => `\${input:${id}}`).join(', ')}; lar run cannot ask for it: set ${r.missingInputs.map(inputVariable).join(', ')}`,
      );
    out.servers.push(r.server);
    out.secrets.push(...r.secrets);
    out.problems.push(...r.problems);
  }
  return out;
}
