/**
 * code-server (the real VS Code, served to a browser) for the demo and the
 * end-to-end tests: loopback only, no auth, its own user-data and extensions
 * folders, our VSIX installed the way a user installs one, and stopped by
 * process group so no extension host outlives it. See ../shared notes on
 * e2e: without --reconnection-grace-time every page load leaves an extension
 * host alive for hours.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { codeServerCommand } from './paths';

export interface CodeServerOptions {
  /** Folder for settings, state and logs; created. */
  dataDir: string;
  /** User settings merged over the defaults below. */
  settings?: Record<string, unknown>;
  /** VSIX files to install before starting. */
  extensions?: string[];
  port?: number;
  /** Extra environment for code-server and its extension hosts. */
  env?: Record<string, string | undefined>;
  /** Receives code-server's output lines (default: dropped). */
  log?: (line: string) => void;
}

/** What keeps the workbench predictable under automation (and its terminal text in the DOM). */
export const DEFAULT_SETTINGS: Record<string, unknown> = {
  'security.workspace.trust.enabled': false,
  'terminal.integrated.gpuAcceleration': 'off',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'chat.disableAIFeatures': true,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'git.openRepositoryInParentFolders': 'never',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export class CodeServer {
  private exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly extensionsDir: string,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Installs the extensions, starts code-server and resolves once it answers HTTP. */
  static async start(opts: CodeServerOptions): Promise<CodeServer> {
    const cmd = codeServerCommand();
    if (!cmd) throw new Error('code-server is not installed: run `npm run setup` (scripts/setup.mjs)');
    const userData = join(opts.dataDir, 'user-data');
    const extensionsDir = join(opts.dataDir, 'extensions');
    mkdirSync(join(userData, 'User'), { recursive: true });
    mkdirSync(extensionsDir, { recursive: true });
    writeFileSync(
      join(userData, 'User', 'settings.json'),
      JSON.stringify({ ...DEFAULT_SETTINGS, ...opts.settings }, null, 2),
    );
    const common = ['--user-data-dir', userData, '--extensions-dir', extensionsDir];
    for (const vsix of opts.extensions ?? []) {
      execFileSync(cmd.node, [cmd.script, ...common, '--install-extension', vsix, '--force'], {
        stdio: 'pipe',
        timeout: 120_000,
        env: { ...process.env, NODE_TEST_CONTEXT: undefined },
      });
    }
    const port = opts.port ?? (await freePort());
    const child = spawn(
      cmd.node,
      [
        cmd.script,
        ...common,
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        '--reconnection-grace-time',
        '5',
      ],
      {
        detached: true, // its own process group: stop() ends the extension hosts and terminals too
        stdio: ['ignore', 'pipe', 'pipe'],
        // Not the test runner's marker: a `node --test` in the agent's terminal would think it runs inside ours and skip its files.
        env: { ...process.env, NODE_TEST_CONTEXT: undefined, ...opts.env },
      },
    );
    const log = opts.log ?? (() => {});
    for (const s of [child.stdout, child.stderr]) {
      let buf = '';
      s.setEncoding('utf8');
      s.on('data', (d: string) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          log(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      });
    }
    const server = new CodeServer(child, `http://127.0.0.1:${port}`, extensionsDir);
    try {
      await server.waitUntilUp(60_000);
    } catch (e) {
      await server.stop();
      throw e;
    }
    return server;
  }

  /** The workbench URL with a folder open. */
  folderUrl(folder: string): string {
    return `${this.url}/?folder=${encodeURIComponent(folder)}`;
  }

  private async waitUntilUp(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exitedEarly = false;
    void this.exited.then(() => (exitedEarly = true));
    while (Date.now() < deadline) {
      if (exitedEarly) throw new Error(`code-server exited at start (exit code ${this.child.exitCode})`);
      try {
        const r = await fetch(`${this.url}/healthz`);
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`code-server did not answer on ${this.url} within ${timeoutMs / 1000} s`);
  }

  /** Ends code-server and everything it started (SIGTERM to the group, SIGKILL after 5 s). */
  async stop(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) {
      killGroup(pid, 'SIGKILL');
      return;
    }
    killGroup(pid, 'SIGTERM');
    const killed = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
    ]);
    // Extension hosts and terminals may linger after the main process: the group goes either way.
    killGroup(pid, 'SIGKILL');
    if (!killed) await this.exited;
  }
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
