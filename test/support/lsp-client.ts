import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';

export const root = resolve(__dirname, '../../..');

/**
 * A real LSP client for tests: the server runs as its own process (the
 * bundled dist/server.js, or `lar lsp --stdio`) and we talk JSON-RPC over its
 * stdio, as an editor would.
 */
export class LspClient {
  readonly connection: ProtocolConnection;
  private readonly diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  private readonly waiters: { uri: string; count: number; resolve: (p: PublishDiagnosticsParams) => void }[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  private readonly rewardWaiters: ((p: unknown) => void)[] = [];

  private constructor(readonly child: ChildProcess) {
    this.connection = createProtocolConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    this.connection.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      const list = this.diagnostics.get(p.uri) ?? [];
      list.push(p);
      this.diagnostics.set(p.uri, list);
      for (const w of [...this.waiters]) {
        if (w.uri === p.uri && list.length >= w.count) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(p);
        }
      }
    });
    this.connection.onNotification('lar/rewards', (params: unknown) => {
      this.notifications.push({ method: 'lar/rewards', params });
      const waiter = this.rewardWaiters.shift();
      waiter?.(params);
    });
    this.connection.onNotification('lar/backend', (params: unknown) => {
      this.notifications.push({ method: 'lar/backend', params });
    });
    this.connection.onRequest('workspace/configuration', () => []);
    this.connection.onNotification('window/logMessage', () => {});
    this.connection.listen();
  }

  static async start(
    args: string[] = [resolve(root, 'dist/server.js'), '--stdio'],
    initializationOptions: unknown = { backend: 'builtin' },
    env: NodeJS.ProcessEnv = process.env,
  ): Promise<LspClient> {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
    const client = new LspClient(child);
    await client.connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
      initializationOptions,
    });
    await client.connection.sendNotification('initialized', {});
    return client;
  }

  /** Resolves with the n-th diagnostics published for `uri` (1-based, counting from the start). */
  nthDiagnostics(uri: string, n: number): Promise<PublishDiagnosticsParams> {
    const list = this.diagnostics.get(uri) ?? [];
    if (list.length >= n) return Promise.resolve(list[n - 1]!);
    return new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no diagnostics #${n} for ${uri} within 20 s`)), 20_000);
      this.waiters.push({ uri, count: n, resolve: (p) => (clearTimeout(timer), res(p)) });
    });
  }

  /** Resolves with the next lar/rewards notification (whatever its document). */
  nextRewards(): Promise<unknown> {
    return new Promise((res) => this.rewardWaiters.push(res));
  }

  published(uri: string): number {
    return this.diagnostics.get(uri)?.length ?? 0;
  }

  /** Sends a change and waits for the diagnostics it causes. */
  async next(uri: string, send: () => void | Promise<void>): Promise<PublishDiagnosticsParams> {
    const n = this.published(uri) + 1;
    await send();
    return this.nthDiagnostics(uri, n);
  }

  /** Opens a document; resolves with its diagnostics once its lar/rewards (for trajectories) has come too. */
  async open(uri: string, text: string, languageId = 'lar-trajectory', version = 1): Promise<PublishDiagnosticsParams> {
    const rewardsBefore = this.rewardsCount(uri);
    const published = await this.next(uri, () =>
      this.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version, text } }),
    );
    if (languageId === 'lar-trajectory')
      await this.waitFor(() => this.rewardsCount(uri) > rewardsBefore, `lar/rewards for ${uri}`);
    return published;
  }

  private rewardsCount(uri: string): number {
    return this.notifications.filter((n) => n.method === 'lar/rewards' && (n.params as { uri?: string }).uri === uri)
      .length;
  }

  private async waitFor(done: () => boolean, what: string): Promise<void> {
    for (const deadline = Date.now() + 20_000; !done();) {
      if (Date.now() > deadline) throw new Error(`no ${what} within 20 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  stop(): Promise<void> {
    return stopServer(this.connection, this.child);
  }
}

/** Shuts a server down as an editor does (shutdown, exit), killing it if it lingers past 3 s. */
export async function stopServer(connection: ProtocolConnection, child: ChildProcess): Promise<void> {
  try {
    await connection.sendRequest('shutdown');
    await connection.sendNotification('exit');
  } catch {
    // already gone
  }
  connection.dispose();
  await new Promise<void>((r) => {
    if (child.exitCode !== null) return r();
    const t = setTimeout(() => (child.kill('SIGKILL'), r()), 3000);
    child.once('exit', () => (clearTimeout(t), r()));
  });
}
