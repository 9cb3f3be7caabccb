/**
 * Entry point: wires the language client to the views that draw its rewards
 * (trajectory gutter, edited-file hints, status bar) and registers the
 * commands. Each concern lives in its own module next to this one.
 */
import * as vscode from 'vscode';
import { LarClient, type ClientEvents } from './client';
import { CHAT_VIEW_ID, ChatViewProvider } from './chat/view';
import { ApprovalAlerts } from './agent/approval-alerts';
import { registerConnectionCommands } from './agent/connection';
import { COMMANDS } from '../core/protocol/commands';
import { registerLanguageModels } from './lm/provider';
import { AgentSession } from './agent/session';
import { RunDecorations } from './trajectory/run-decorations';
import { z } from 'zod';
import { CheckpointId } from '../core/schema/trajectory';
import { RUN_FILE } from '../core/schema/trajectory';
import { registerChangeDocuments } from './checkpoints/change-documents';
import { registerCommands } from './commands';
import { registerMcpCommands } from './mcp/commands';
import { affectsGutter, affectsServer, readConfig, type Config } from './config';
import { EditedFiles } from './edits/edited-files';
import { TrajectoryGutter } from './trajectory/gutter';
import { RunRegistry } from './trajectory/runs';
import { StatusBar } from './trajectory/status-bar';

/** The arguments of the restore command (from a code lens of the language server). */
const RestoreArgs = z
  .object({
    commit: CheckpointId,
    step: z.number().int().positive().optional(),
    run: z.string().regex(RUN_FILE).optional(),
  })
  .strict();

let client: LarClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<{ client: LarClient; runs: RunRegistry }> {
  const output = vscode.window.createOutputChannel('Lean4 Agentic', { log: true });
  let config = readConfig();
  const views = createViews(context, output, () => config);
  client = new LarClient(context, output, clientEvents(views, output));
  const larClient = client;
  const { agent, chat } = createChat(context, larClient, output, views.status);

  context.subscriptions.push(
    new RunDecorations(),
    output,
    views.gutter,
    views.editedFiles,
    views.status,
    larClient,
    ...registerCommands({ client: larClient, runs: views.runs, editedFiles: views.editedFiles, output }),
    ...registerConnectionCommands(context, output),
    // The same models for other extensions, through vscode.lm.
    ...registerLanguageModels(context, output),
    agent,
    chat,
    registerChangeDocuments(agent.changes),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    ...registerChatCommands(context, agent, chat),
    ...registerMcpCommands(context),
    vscode.workspace.onDidChangeConfiguration((e) => {
      config = readConfig();
      settingsChanged(e, views, larClient, output);
    }),
    // Trust lifts Restricted Mode's builtin-only backend.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void larClient.restart()),
    vscode.workspace.onDidCloseTextDocument((doc) => views.gutter.forget(doc.uri.toString())),
  );

  await larClient.start();
  return { client: larClient, runs: views.runs };
}

/** What draws a run's rewards: the runs seen, the trajectory gutter, the edited-file hints and the status bar. */
interface Views {
  runs: RunRegistry;
  gutter: TrajectoryGutter;
  editedFiles: EditedFiles;
  status: StatusBar;
}

function createViews(context: vscode.ExtensionContext, output: vscode.LogOutputChannel, config: () => Config): Views {
  const runs = new RunRegistry();
  const gutter = new TrajectoryGutter(context, {
    enabled: () => config().gutterEnabled,
    debounceMs: () => config().debounceMs,
  });
  const editedFiles = new EditedFiles(context, () => config().editedFilesEnabled, output);
  const status = new StatusBar(runs);
  return { runs, gutter, editedFiles, status };
}

/** The language server's news, drawn by the views. */
function clientEvents({ runs, gutter, editedFiles, status }: Views, output: vscode.LogOutputChannel): ClientEvents {
  return {
    onRewards(params) {
      if (!runs.current()) void vscode.commands.executeCommand('setContext', 'lean4Agentic.hasRun', true);
      const whole = runs.update(params);
      status.refresh();
      gutter.update(whole);
      editedFiles
        .update(whole)
        .catch((err: unknown) => output.error(`edited-file hints for ${params.uri}: ${String(err)}`));
    },
    onBackend(label) {
      status.setBackend(label);
    },
    onStateChange(running, problem) {
      status.setServer(running ? undefined : problem);
    },
  };
}

/** The agent: the chat view drives one verified run at a time. */
function createChat(
  context: vscode.ExtensionContext,
  larClient: LarClient,
  output: vscode.LogOutputChannel,
  status: StatusBar,
): { agent: AgentSession; chat: ChatViewProvider } {
  const agent = new AgentSession(context, larClient, output);
  const chat = new ChatViewProvider(context.extensionUri, output, (msg) => agent.handle(msg));
  // The chat's messages also tell when an approval waits: a badge, the status bar and, unseen, a notification.
  const alerts = new ApprovalAlerts({
    view: chat,
    status,
    answer: (id, approved) => agent.handle({ type: 'approve', id, approved }),
  });
  agent.post = (msg) => {
    chat.post(msg);
    alerts.observe(msg);
  };
  chat.onVisible = (visible) => agent.setVisible(visible);
  agent.onSandbox = (s) => status.setSandbox(s);
  // Runs a crashed editor left open are marked first; then the latest chat comes back.
  void agent.markInterruptedRuns().then(() => agent.restore());
  agent.reveal = () => chat.reveal();
  return { agent, chat };
}

/** The commands that drive the agent and its chat, and the sample run. */
function registerChatCommands(
  context: vscode.ExtensionContext,
  agent: AgentSession,
  chat: ChatViewProvider,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(COMMANDS.stopAgent, () => agent.stop()),
    vscode.commands.registerCommand(COMMANDS.focusChat, () => chat.focusInput()),
    vscode.commands.registerCommand(COMMANDS.showApproval, () => chat.showApproval()),
    // From a trajectory's "Restore to before step N" lens: only a checkpoint id, a step and a run file name get through.
    vscode.commands.registerCommand(COMMANDS.restoreCheckpoint, async (arg: unknown) => {
      const a = RestoreArgs.safeParse(arg);
      if (!a.success) return void vscode.window.showErrorMessage('Lean4 Agentic: that is not a checkpoint to restore.');
      await chat.reveal();
      await agent.restoreCheckpoint(a.data.commit, {
        ...(a.data.step ? { step: a.data.step } : {}),
        ...(a.data.run ? { run: a.data.run } : {}),
      });
    }),
    vscode.commands.registerCommand(COMMANDS.branchFromCheckpoint, async (arg: unknown) => {
      const a = RestoreArgs.safeParse(arg);
      if (!a.success || !a.data.step || !a.data.run)
        return void vscode.window.showErrorMessage('Lean4 Agentic: that is not a step to branch from.');
      await chat.reveal();
      await agent.branchFrom(a.data.commit, a.data.step, a.data.run);
    }),
    // A recorded run shipped with the extension: the gutter, diagnostics and lenses without any model.
    vscode.commands.registerCommand(COMMANDS.openSample, () =>
      vscode.window.showTextDocument(
        vscode.Uri.file(context.asAbsolutePath('test-fixtures/trajectories/fix-failing-test.lar.jsonl')),
        { preview: false },
      ),
    ),
  ];
}

function settingsChanged(
  e: vscode.ConfigurationChangeEvent,
  { gutter, editedFiles }: Views,
  larClient: LarClient,
  output: vscode.LogOutputChannel,
): void {
  if (affectsGutter(e)) {
    gutter.redrawAll();
    editedFiles.redrawAll();
  }
  if (affectsServer(e)) {
    output.info('backend settings changed: restarting the language server');
    void larClient.restart();
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
