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

/** `NAME=value` words for env(1); a name env would misread, or a program it would take for one, is refused. */
function envInside(env: Readonly<Record<string, string>>): { assignments: string[] } | { refused: string } {
  const assignments: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    // env(1) reads up to the first "=" as the name: any other name is passed as written.
    if (name === '' || name.includes('=') || name.includes('\0'))
      return { refused: `its env has the name ${JSON.stringify(name.slice(0, 80))}, which env(1) cannot set` };
    assignments.push(`${name}=${value}`);
  }
  return { assignments };
}

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
      const env = envInside(server.env);
      if ('refused' in env) return env;
      // With no assignment before it, a command starting "-" would be read as an option; one with "=" always as a variable.
      if (server.command.includes('=') || (env.assignments.length === 0 && server.command.startsWith('-')))
        return { refused: 'its command has "=", or starts with "-", which env(1) would misread' };
      // The server's variables are set inside, by env(1): the launchers before bwrap run on the host, where
      // LD_PRELOAD or a PATH of the configuration's would run its code unconfined.
      return {
        confined: true,
        launch: {
          file: sb.launcher.file,
          args: [...sb.launcher.args, '/usr/bin/env', ...env.assignments, server.command, ...server.args],
          env: sb.env,
          cwd: workspace,
        },
      };
    }
    // A confined run never starts a server outside its sandbox, whatever made that sandbox fail.
    if (box.plan.confined) return { refused: 'its sandbox could not be made' };
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
