/**
 * How a run's stdio MCP servers start: each in a sandbox of its own made like the run's (the
 * workspace as the workflow mounts it, a private home, no network unless the workflow grants it to
 * that server); unconfined only where the run's commands are too (the sandbox off, or the run's own
 * container); refused where the sandbox is required and cannot be had.
 */
import { resolve } from 'node:path';
import type { RunSandbox } from '../sandbox/run';
import type { McpStdioConfig } from './config';
import type { McpLauncher } from './hub';

/** What an unconfined server inherits of the host's environment (as the SDK's default): no secrets. */
const INHERITED = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL'];

export function sandboxLauncher(
  box: RunSandbox,
  workspace: string,
  hostEnv: Readonly<Record<string, string | undefined>>,
): { launcher: McpLauncher; dispose(): Promise<void> } {
  const disposers: (() => Promise<void>)[] = [];
  const launcher: McpLauncher = (server: McpStdioConfig, network: boolean) => {
    // A relative cwd is the workspace's folder, as VS Code reads it.
    const cwd = server.cwd ? resolve(workspace, server.cwd) : workspace;
    const sb = box.serverSandbox(network ? 'host' : 'none', cwd);
    if (sb) {
      disposers.push(() => sb.dispose());
      return {
        confined: true,
        launch: {
          file: sb.launcher.file,
          args: [...sb.launcher.args, server.command, ...server.args],
          env: { ...sb.env, ...server.env },
          cwd: workspace,
        },
      };
    }
    if (box.refusal) return { refused: `it would run outside the sandbox, and ${box.refusal}` };
    const env: Record<string, string> = {};
    for (const k of INHERITED) if (hostEnv[k] !== undefined) env[k] = hostEnv[k]!;
    return {
      confined: false,
      launch: { file: server.command, args: [...server.args], env: { ...env, ...server.env }, cwd },
    };
  };
  return {
    launcher,
    dispose: async () => {
      await Promise.all(disposers.splice(0).map((d) => d().catch(() => undefined)));
    },
  };
}
