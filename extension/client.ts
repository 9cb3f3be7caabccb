/**
 * The language client: starts the bundled server (`dist/server.js`) over IPC
 * for trajectories and workflows, hands validated `lar/rewards` notifications
 * on, and carries the custom requests of core/protocol/lsp.ts.
 */
import * as vscode from 'vscode';
import {
  LanguageClient,
  RevealOutputChannelOn,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { z } from 'zod';
import {
  AppendStepMethod,
  AppendStepParams,
  BackendLabel,
  BackendMethod,
  CheckToolCallMethod,
  CheckToolCallParams,
  CheckToolCallResult,
  RewardsMethod,
  RewardsParams,
  VerifyMethod,
  VerifyResult,
} from '../core/protocol/lsp';
import { initializationOptions, readConfig } from './config';

export const TRAJECTORY_LANGUAGE = 'lar-trajectory';
export const WORKFLOW_LANGUAGE = 'lar-workflow';

export interface ClientEvents {
  onRewards(params: RewardsParams): void;
  onBackend(label: BackendLabel): void;
  /** The client started, stopped or failed; `problem` says why it is not running. */
  onStateChange(running: boolean, problem?: string): void;
}

export class LarClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private problem: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly events: ClientEvents,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** How many times a server process reached Running: the live gate re-syncs a run with a new one. */
  get generation(): number {
    return this.starts;
  }

  private starts = 0;

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const module = this.context.asAbsolutePath('dist/server.js');
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc },
      debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
    };
    const init = initializationOptions(readConfig(), vscode.workspace.isTrusted);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: TRAJECTORY_LANGUAGE },
        { scheme: 'untitled', language: TRAJECTORY_LANGUAGE },
        { scheme: 'file', language: WORKFLOW_LANGUAGE },
        { scheme: 'untitled', language: WORKFLOW_LANGUAGE },
      ],
      initializationOptions: init,
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // Trajectories name their workflow by path: the server hears when one changes.
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*.larflow.json') },
      // Trajectories' diagnostics are pulled by part (docs/protocol.md): after each edit, and when the server
      // says a live run moved. A pull answers "unchanged" for a part that did not.
      diagnosticPullOptions: { onChange: true, onSave: false },
    };
    const client = new LanguageClient('lean4Agentic', 'Lean4 Agentic', serverOptions, clientOptions);
    this.client = client;
    client.onNotification(RewardsMethod, (raw: unknown) => this.receiveRewards(raw));
    client.onNotification(BackendMethod, (raw: unknown) => {
      const parsed = BackendLabel.safeParse(raw);
      if (parsed.success) this.events.onBackend(parsed.data);
      else this.output.warn(`ignored a malformed ${BackendMethod} notification:\n${z.prettifyError(parsed.error)}`);
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.starts++;
        this.setState(true);
      } else if (e.newState === State.Stopped && this.client === client)
        this.setState(false, this.problem ?? 'the language server stopped');
    });
    this.output.info(
      `starting the language server ${module} (backend ${init.backend}${init.leanPath ? `, leanPath ${init.leanPath}` : ''})`,
    );
    try {
      this.problem = undefined;
      await client.start();
    } catch (err) {
      this.problem = `the language server did not start: ${err instanceof Error ? err.message : String(err)}`;
      this.output.error(this.problem);
      this.setState(false, this.problem);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      await client.dispose(2000);
    } catch (err) {
      this.output.warn(`stopping the language server: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async restart(): Promise<void> {
    await this.starting;
    await this.stop();
    await this.start();
  }

  dispose(): void {
    void this.stop();
  }

  private setState(running: boolean, problem?: string): void {
    this.events.onStateChange(running, problem);
  }

  /** Validates a `lar/rewards` notification: bad params are logged, never thrown. */
  private receiveRewards(raw: unknown): void {
    const parsed = RewardsParams.safeParse(raw);
    if (!parsed.success) {
      const uri = typeof raw === 'object' && raw !== null && 'uri' in raw ? ` for ${String(raw.uri)}` : '';
      this.output.warn(`ignored a malformed ${RewardsMethod} notification${uri}:\n${z.prettifyError(parsed.error)}`);
      return;
    }
    try {
      this.events.onRewards(parsed.data);
    } catch (err) {
      this.output.error(
        `drawing ${RewardsMethod} for ${parsed.data.uri}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
    }
  }

  private requireClient(): LanguageClient {
    if (!this.client || this.client.state !== State.Running)
      throw new Error(this.problem ?? 'the Lean4 Agentic language server is not running');
    return this.client;
  }

  /** `lar/checkToolCall`: may this call run now? Params and result are validated. */
  async checkToolCall(params: CheckToolCallParams, token?: vscode.CancellationToken): Promise<CheckToolCallResult> {
    const client = this.requireClient();
    const result: unknown = await client.sendRequest(CheckToolCallMethod, CheckToolCallParams.parse(params), token);
    return CheckToolCallResult.parse(result);
  }

  /** `lar/appendStep`: a live run wrote one more line. */
  async appendStep(params: AppendStepParams): Promise<void> {
    await this.requireClient().sendNotification(AppendStepMethod, AppendStepParams.parse(params));
  }

  /** Verifies a document again from scratch (`lar/verify`). */
  async reverify(document: vscode.TextDocument): Promise<VerifyResult> {
    const client = this.requireClient();
    const uri = client.code2ProtocolConverter.asUri(document.uri);
    const result = VerifyResult.safeParse(await client.sendRequest(VerifyMethod, { uri }));
    if (!result.success) throw new Error(`unexpected answer to ${VerifyMethod}: ${z.prettifyError(result.error)}`);
    return result.data;
  }
}
