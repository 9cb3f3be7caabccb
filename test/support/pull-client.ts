import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type ClientCapabilities,
  type Diagnostic,
  type DocumentDiagnosticReport,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
  type RegistrationParams,
  type WorkspaceDiagnosticReport,
  type WorkspaceDocumentDiagnosticReport,
  WorkspaceDiagnosticRequest,
} from 'vscode-languageserver-protocol/node';
import { root, stopServer } from './lsp-client';

/** What a client says it can do, as the editors we know say it (checked against their sources, 2026-12). */
export const CLIENTS = {
  /** vscode-languageclient 11: pull with dynamic registration and refresh, workspace pull held open. */
  vscode: {
    textDocument: { diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false } },
    workspace: { diagnostics: { refreshSupport: true } },
  },
  /** Neovim's newest vim.lsp.diagnostic: every registered provider pulled with its result id, refresh handled. */
  neovim: {
    textDocument: { diagnostic: { dynamicRegistration: true }, publishDiagnostics: { relatedInformation: true } },
    workspace: { diagnostics: { refreshSupport: true } },
  },
  /** A pulling client without dynamic registration (the static provider only), with refresh. */
  staticPull: {
    textDocument: { diagnostic: { dynamicRegistration: false }, publishDiagnostics: { versionSupport: true } },
    workspace: { diagnostics: { refreshSupport: true } },
  },
  /** Pull but no refresh (the server cannot tell it about a live run's steps): it must get push. */
  pullNoRefresh: { textDocument: { diagnostic: { dynamicRegistration: false } } },
  /** Push only: Helix before pull diagnostics, Neovim 0.9 and older, most other clients. */
  push: { textDocument: { publishDiagnostics: { relatedInformation: true, versionSupport: true } } },
} satisfies Record<string, ClientCapabilities>;

interface Provider {
  identifier: string | undefined;
  workspace: boolean;
  /** What this provider holds, by document. */
  held: Map<string, Diagnostic[]>;
  /** Result ids by document: from document pulls (`doc`) and from workspace reports (`ws`). */
  doc: Map<string, string | undefined>;
  ws: Map<string, string | undefined>;
}

/**
 * A pull-diagnostics LSP client modelled on vscode-languageclient 11's (lib/common/diagnostic.js): each
 * registered identifier keeps its own diagnostics; open documents are pulled on open, on change and on
 * refresh with their previous result id; a workspace request per identifier is held open and its partial
 * results applied to the documents it does not pull itself. Push is kept apart, as editors keep it.
 */
export class PullClient {
  readonly connection: ProtocolConnection;
  readonly providers: Provider[] = [];
  readonly pushed = new Map<string, Diagnostic[]>();
  private readonly open = new Set<string>();
  /** Open documents the editor does not show: never pulled (vscode-languageclient pulls visible ones only). */
  private readonly hidden = new Set<string>();
  /** Refuse the server's client/registerCapability (a client that will not take the parts). */
  refuseRegistration = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly active = new Map<string, { again: boolean }>();
  private readonly listeners = new Set<() => void>();
  private readonly rewardWaiters: ((p: unknown) => void)[] = [];
  /** Called for each full report: its identifier, how many diagnostics it carried, and how it came. */
  onReport?: (identifier: string | undefined, items: number, via: 'document' | 'workspace', uri: string) => void;
  /** Counts what arrived: partial results, document reports (full or unchanged), pushes. */
  readonly received = { partial: 0, full: 0, unchanged: 0, pushed: 0, refresh: 0 };

  private constructor(
    readonly child: ChildProcess,
    readonly capabilities: ClientCapabilities,
  ) {
    this.connection = createProtocolConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    this.connection.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      this.received.pushed++;
      this.pushed.set(p.uri, p.diagnostics);
      this.changed();
    });
    this.connection.onRequest('client/registerCapability', (p: RegistrationParams) => {
      if (this.refuseRegistration) throw new Error('registration refused');
      for (const r of p.registrations) {
        if (r.method !== 'textDocument/diagnostic') continue;
        const o = r.registerOptions as { identifier?: string; workspaceDiagnostics?: boolean };
        this.addProvider(o.identifier, o.workspaceDiagnostics === true);
      }
      return null;
    });
    this.connection.onRequest('workspace/diagnostic/refresh', () => {
      this.received.refresh++;
      for (const uri of this.open) this.pullAll(uri);
      return null;
    });
    this.connection.onRequest('workspace/configuration', () => []);
    this.connection.onNotification('window/logMessage', () => {});
    this.connection.onNotification('lar/rewards', (params: unknown) => this.rewardWaiters.shift()?.(params));
    this.connection.onNotification('lar/backend', () => {});
    this.connection.listen();
  }

  static async start(
    capabilities: ClientCapabilities,
    initializationOptions: unknown = { backend: 'builtin' },
    args: string[] = [resolve(root, 'dist/server.js'), '--stdio'],
    refuseRegistration = false,
  ): Promise<PullClient> {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const client = new PullClient(child, capabilities);
    client.refuseRegistration = refuseRegistration;
    const init = await client.connection.sendRequest<{
      capabilities: { diagnosticProvider?: { identifier?: string } };
    }>('initialize', { processId: process.pid, rootUri: null, capabilities, initializationOptions });
    const stat = init.capabilities.diagnosticProvider;
    if (stat) client.addProvider(stat.identifier, false);
    await client.connection.sendNotification('initialized', {});
    await client.settle();
    return client;
  }

  /** Every diagnostic the editor shows for `uri`: each identifier's and the pushed ones. */
  diagnostics(uri: string): Diagnostic[] {
    const all = [...(this.pushed.get(uri) ?? [])];
    for (const p of this.providers) all.push(...(p.held.get(uri) ?? []));
    return all;
  }

  /** `shown: false`: a document opened with no editor showing it (an extension read it): it is never pulled. */
  async didOpen(uri: string, text: string, languageId = 'lar-trajectory', version = 1, shown = true): Promise<void> {
    await this.connection.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId, version, text },
    });
    this.open.add(uri);
    if (!shown) this.hidden.add(uri);
    this.pullAll(uri);
  }

  async didChange(uri: string, version: number, contentChanges: unknown[]): Promise<void> {
    await this.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges,
    });
    this.pullAll(uri);
  }

  /** Like vscode-languageclient: a last pull whose answer is dropped, then the document is no longer pulled. */
  async didClose(uri: string): Promise<void> {
    this.open.delete(uri);
    for (const p of this.providers) {
      if (p.workspace) {
        p.doc.delete(uri);
      } else {
        p.held.delete(uri);
        p.doc.delete(uri);
      }
    }
    await this.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  /** Resolves once the pulls under way (and those they queued) are answered. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  /** Resolves once every answer to what was sent so far is in: a round trip, then every pull it started. */
  async settle(): Promise<void> {
    for (;;) {
      await this.connection.sendRequest('textDocument/hover', {
        textDocument: { uri: 'file:///settle.lar.jsonl' },
        position: { line: 0, character: 0 },
      });
      if (this.inFlight.size === 0) return;
      await Promise.all([...this.inFlight]);
    }
  }

  /** Resolves with the next lar/rewards notification (whatever its document). */
  nextRewards(): Promise<unknown> {
    return new Promise((res) => this.rewardWaiters.push(res));
  }

  /** Resolves when `done()` holds after something arrived. */
  until(done: () => boolean, what: string, ms = 20_000): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((res, rej) => {
      const timer = setTimeout(() => (this.listeners.delete(check), rej(new Error(`no ${what} within ${ms} ms`))), ms);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        res();
      };
      this.listeners.add(check);
    });
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  private addProvider(identifier: string | undefined, workspace: boolean): void {
    const p: Provider = { identifier, workspace, held: new Map(), doc: new Map(), ws: new Map() };
    this.providers.push(p);
    for (const uri of this.open) this.pull(p, uri);
    if (workspace) this.pullWorkspace(p);
  }

  private pullAll(uri: string): void {
    if (this.hidden.has(uri)) return;
    for (const p of this.providers) this.pull(p, uri);
  }

  /** One pull at a time per identifier and document; one asked meanwhile goes out when it returns (as VS Code's). */
  private pull(p: Provider, uri: string): void {
    const key = `${p.identifier}\n${uri}`;
    const active = this.active.get(key);
    if (active) {
      active.again = true;
      return;
    }
    const state = { again: false };
    this.active.set(key, state);
    const params = {
      textDocument: { uri },
      ...(p.identifier !== undefined ? { identifier: p.identifier } : {}),
      ...(p.doc.get(uri) !== undefined ? { previousResultId: p.doc.get(uri) } : {}),
    };
    const req = this.connection
      .sendRequest<DocumentDiagnosticReport>('textDocument/diagnostic', params)
      .then((r) => {
        if (!this.open.has(uri)) return; // closed meanwhile: the answer is dropped
        if (r.kind === 'full') {
          this.received.full++;
          this.onReport?.(p.identifier, r.items.length, 'document', uri);
          p.held.set(uri, r.items);
        } else this.received.unchanged++;
        p.doc.set(uri, r.resultId);
        this.changed();
      })
      .finally(() => {
        this.inFlight.delete(req);
        this.active.delete(key);
        if (state.again && this.open.has(uri)) this.pull(p, uri);
      });
    this.inFlight.add(req);
  }

  private pullWorkspace(p: Provider): void {
    const token = randomUUID();
    const apply = (items: WorkspaceDocumentDiagnosticReport[]) => {
      for (const item of items) {
        if (item.kind === 'full') this.onReport?.(p.identifier, item.items.length, 'workspace', item.uri);
        // A document pulled by itself wins over workspace reports (vscode-languageclient does the same).
        if (item.kind === 'full' && !p.doc.has(item.uri)) p.held.set(item.uri, item.items);
        p.ws.set(item.uri, item.resultId);
      }
      this.changed();
    };
    const progress = this.connection.onProgress(WorkspaceDiagnosticRequest.partialResult, token, (partial) => {
      this.received.partial++;
      apply(partial.items);
    });
    const previousResultIds = [...p.ws].flatMap(([uri, value]) => (value === undefined ? [] : [{ uri, value }]));
    void this.connection
      .sendRequest<WorkspaceDiagnosticReport>('workspace/diagnostic', {
        identifier: p.identifier,
        previousResultIds,
        partialResultToken: token,
      })
      .then(
        (r) => {
          progress.dispose();
          apply(r.items);
          if (!this.stopped) setTimeout(() => this.pullWorkspace(p), 50);
        },
        () => progress.dispose(),
      );
  }

  private stopped = false;

  stop(): Promise<void> {
    this.stopped = true;
    return stopServer(this.connection, this.child);
  }
}
