/**
 * The chat's controller: its state (one run at a time, the conversation it
 * continues, the messages queued meanwhile) and what each message of the
 * webview does. A run is in run.ts; what the chat shows of its events in
 * events-to-view.ts; the chat over a reload in chat/persistence.ts.
 */
import * as vscode from 'vscode';
import { clip, type ErrorAction, type FromWebview, type ToWebview } from '../../core/protocol/chat';
import type { SandboxSummary } from '../../core/sandbox/plan';
import type { UserInput } from '../../core/schema/user-message';
import { RUN_FILE, type RestoreEvent } from '../../core/schema/trajectory';
import { RUNS_DIR } from '../../core/workspace/lar-layout';
import type { LarClient } from '../client';
import type { AttachmentRef } from '../../core/protocol/attachments';
import { AttachmentSource } from '../chat/attachments';
import { branchFrom, restoreCheckpoint } from '../chat/branching';
import { openThread, postHistory } from '../chat/history';
import { reviewAction } from '../chat/review';
import { forgetChat, markInterrupted, restoreChat } from '../chat/persistence';
import { discardUnanswered } from '../../core/agent/follow-up';
import { resumeMessage } from '../chat/transcript';
import type { ChatThread, Running } from '../chat/state';
import { changeUri } from '../checkpoints/change-documents';
import { Checkpoints } from '../checkpoints/checkpoints';
import { FileChanges } from '../checkpoints/file-changes';
import { RunReviews } from '../checkpoints/run-review';
import { chatAction, openLink } from './chat-actions';
import { showTrajectory } from '../trajectory/open';
import { ConnectionProbe } from './connection-probe';
import { ConnectionWatch } from './connection-watch';
import { ModelPicker } from './model-picker';
import { choiceFromHeader } from '../../core/model/model-choice';
import type { RunChat, StartOptions } from './run';
import { startRun } from './start-run';
import { RunWarnings } from './warnings';

type MessageOf = { [K in FromWebview['type']]: Extract<FromWebview, { type: K }> };
type Handlers = { [K in keyof MessageOf]: (msg: MessageOf[K]) => void };

/** Each message to the handler of its type. */
function dispatch<K extends keyof MessageOf>(handlers: Handlers, type: K, msg: MessageOf[K]): void {
  handlers[type](msg);
}

export class AgentSession implements vscode.Disposable, RunChat {
  // The chat's state: chat/state.ts says what each part is for.
  running: Running | undefined;
  lastTrajectory: vscode.Uri | undefined;
  thread: ChatThread | undefined;
  queued: (UserInput & { id?: string })[] = [];
  busy: string | undefined;
  cleared = false;
  approvalSeq = 0;
  private readonly subs: vscode.Disposable[] = [];
  readonly changes = new FileChanges();
  readonly checkpoints: Checkpoints;
  readonly reviews: RunReviews;
  restores: RestoreEvent[] = [];
  readonly warnings: RunWarnings;
  private readonly probe: ConnectionProbe;
  /** The text of each message sent, by its webview id (the latest 200): Edit names one by id. */
  private readonly sent = new Map<string, string>();
  private readonly attachments: AttachmentSource;
  /** Checks the connection by itself while the chat is visible, and when a send fails. */
  private readonly watch: ConnectionWatch;
  readonly picker: ModelPicker;
  post: (msg: ToWebview) => void = () => {};
  reveal: () => Promise<void> = async () => {};
  /** Told of the sandbox of each run that starts: the status bar shows it. */
  onSandbox: (summary: SandboxSummary | undefined) => void = () => {};

  constructor(
    readonly context: vscode.ExtensionContext,
    readonly lar: LarClient,
    readonly output: vscode.LogOutputChannel,
  ) {
    this.checkpoints = new Checkpoints(context, output);
    this.reviews = new RunReviews(context.workspaceState);
    this.warnings = new RunWarnings(context, output);
    this.picker = new ModelPicker(context, (msg) => this.post(msg), output);
    this.probe = new ConnectionProbe(
      context.secrets,
      (msg) => this.post(msg),
      () => this.picker.current,
    );
    this.watch = new ConnectionWatch({ check: (quiet) => this.probe.check(quiet), running: () => this.isRunning });
    this.attachments = new AttachmentSource(context.secrets);
    // A changed endpoint, model or key: the chat says at once whether the server answers.
    this.subs.push(
      this.checkpoints,
      this.attachments,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (['endpoint', 'endpoints', 'model'].some((k) => e.affectsConfiguration(`lean4Agentic.${k}`))) {
          void this.postConnection();
          this.listModels();
        }
      }),
      context.secrets.onDidChange(() => void this.postConnection()),
    );
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  handle(msg: FromWebview): void {
    dispatch(this.handlers, msg.type, msg);
  }

  private readonly handlers: Handlers = {
    start: (msg) => {
      // The webview waits a few seconds for this, then marks the message failed (the extension is not answering).
      this.post({ type: 'sendReceived', id: msg.id });
      this.sent.set(msg.id, msg.task);
      if (this.sent.size > 200) this.sent.delete(this.sent.keys().next().value!);
      void this.send(msg.task, msg.attachments ?? [], msg.id);
    },
    // Edit took the message back: the model is not asked it again with the next one.
    discardFailed: (msg) => {
      const text = this.sent.get(msg.id);
      if (text === undefined || !this.thread) return;
      this.thread.conversation = discardUnanswered(this.thread.conversation, text);
    },
    attachQuery: (msg) =>
      void this.attachments.options(msg.query, this.lastTrajectory).then(
        (o) => this.post(o),
        (e: unknown) => this.fail(`Could not list what to attach: ${e instanceof Error ? e.message : String(e)}`),
      ),
    stop: () => this.stop(),
    approve: (msg) => this.approve(msg.id, msg.approved),
    action: (msg) => chatAction(this, msg.action),
    openTrajectory: () => {
      if (this.lastTrajectory) void showTrajectory(this.lastTrajectory);
    },
    newChat: () => this.newChat(),
    resume: (msg) => void this.resume(msg.file),
    branchFrom: (msg) => void this.branchFrom(msg.commit, msg.step, msg.run),
    restoreCheckpoint: (msg) =>
      void this.restoreCheckpoint(msg.commit, {
        ...(msg.step ? { step: msg.step } : {}),
        ...(msg.run ? { run: msg.run } : {}),
      }),
    showChange: (msg) =>
      void this.showChange(msg.id).catch((e: unknown) =>
        this.fail(`Could not show the change: ${e instanceof Error ? e.message : String(e)}`),
      ),
    history: () =>
      void this.postHistory().catch((e: unknown) =>
        this.fail(`Could not list the conversations: ${e instanceof Error ? e.message : String(e)}`),
      ),
    openThread: (msg) =>
      void this.openThread(msg.id).catch((e: unknown) =>
        this.fail(`Could not open the conversation: ${e instanceof Error ? e.message : String(e)}`),
      ),
    openRun: (msg) => this.openRun(msg.file),
    copy: (msg) => void vscode.env.clipboard.writeText(msg.text),
    openLink: (msg) =>
      void openLink(msg.href).then(undefined, (e: unknown) =>
        this.fail(`Could not open ${clip(msg.href, 200)}: ${e instanceof Error ? e.message : String(e)}`),
      ),
    reviewChange: (msg) =>
      void reviewAction(this, msg).catch((e: unknown) =>
        this.fail(`The review could not do that: ${e instanceof Error ? e.message : String(e)}`),
      ),
    checkConnection: () => void this.postConnection(),
    ready: () => {
      // Through the watch: the view showing has most likely just asked the same; during a run its requests say it.
      if (!this.isRunning) void this.watch.checkNow();
      // The button names the model the server lists first when the setting leaves it empty.
      this.picker.postChoice();
      this.listModels();
    },
    listModels: () => this.listModels(),
    chooseModel: (msg) => {
      const problem = this.picker.choose({ endpoint: msg.endpoint, model: msg.model }, this.running !== undefined);
      if (problem) this.fail(problem);
      else void this.postConnection();
    },
  };

  /** What every endpoint serves, for the model picker (its menu, and the name of the default model). */
  private listModels(): void {
    void this.picker.list().catch((e: unknown) => {
      this.fail(`Could not list the models: ${e instanceof Error ? e.message : String(e)}`);
    });
  }

  private approve(id: string, approved: boolean): void {
    const resolve = this.running?.approvals.get(id);
    if (!resolve) return;
    this.running!.approvals.delete(id);
    resolve(approved);
    this.post({ type: 'approvalDone', id, approved });
  }

  private newChat(): void {
    if (this.running) {
      this.post({ type: 'error', message: 'A run is in progress: stop it before starting a new chat.', actions: [] });
      return;
    }
    this.changes.clear();
    // A reload brings back no chat the user cleared (nor one a restore still on its way would bring).
    this.cleared = true;
    // A new chat is a fresh conversation: the restores of the old one are not its story.
    this.restores = [];
    forgetChat(this.context);
    this.thread = undefined;
    this.post({ type: 'clear' });
    // A new chat starts with the settings' model.
    if (this.picker.current) {
      this.picker.reset();
      void this.postConnection();
    }
  }

  /** A recorded run's trajectory (by file name in .lar/runs, nothing else), beside the chat. */
  private openRun(file: string): void {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder || !RUN_FILE.test(file)) return;
    const uri = vscode.Uri.joinPath(folder.uri, ...RUNS_DIR.split(/[\\/]/), file);
    void showTrajectory(uri).then(undefined, (e: unknown) => {
      this.fail(`Could not open ${file}: ${e instanceof Error ? e.message : String(e)}`);
    });
  }

  /** Whether the server answers (and with which model), or what is wrong: only the latest check is shown. */
  postConnection(): Promise<void> {
    return this.probe.check();
  }

  /** A request failed: the connection line says at once whether the server still answers. */
  checkConnection(): void {
    void this.watch.checkNow();
  }

  /** The server just answered a run: a connection line still saying it does not is checked again. */
  serverAnswered(): void {
    if (this.probe.failed) void this.watch.checkNow(true);
  }

  /** The chat was shown or hidden: while it is visible, the connection is checked every little while. */
  setVisible(visible: boolean): void {
    this.watch.setVisible(visible);
  }

  /** Runs a crashed or killed editor left without an end are marked interrupted. */
  markInterruptedRuns(): Promise<void> {
    return markInterrupted(this.output);
  }

  /** Brings back the workspace's latest chat from its trajectories (after a reload or a restart). */
  async restore(): Promise<void> {
    await restoreChat(this);
    this.pickFromRecord();
  }

  /** A past conversation from History, back in the chat with the model it ran on. */
  private async openThread(id: string): Promise<void> {
    const before = this.thread;
    await openThread(this, id);
    if (this.thread === before) return;
    // Its own pick, not the one of the chat it replaces.
    this.picker.reset();
    this.pickFromRecord();
    void this.postConnection();
  }

  /** The chat read back takes the model its last run recorded (a run on the settings' default was no pick). */
  private pickFromRecord(): void {
    const runs = this.thread?.restored;
    if (runs?.length) this.picker.restore(choiceFromHeader(runs[runs.length - 1]!.header.model));
  }

  /** Restore to here: the workspace as it was at a checkpoint, after the diff and a confirmation. */
  restoreCheckpoint(commit: string, where: { step?: number; run?: string }): Promise<void> {
    return restoreCheckpoint(this, commit, where);
  }

  /** Branch from here: workspace and conversation as they were before `step`, continued by the next message. */
  branchFrom(commit: string, step: number, runFile?: string): Promise<void> {
    return branchFrom(this, commit, step, runFile);
  }

  /** Continues the chat's interrupted run in a new run of the same chat. */
  private async resume(file: string): Promise<void> {
    if (this.running) {
      this.fail('A run is in progress: Resume continues the interrupted run once it is over.');
      return;
    }
    if (this.thread?.previous !== file) {
      this.fail('Only the latest run of this chat can be resumed.');
      return;
    }
    await this.start(resumeMessage(this.thread.restored?.at(-1)?.end?.detail), { resume: true });
  }

  /** The conversations recorded in the first workspace folder, newest activity first. */
  postHistory(): Promise<void> {
    return postHistory(this);
  }

  private async showChange(id: string): Promise<void> {
    const c = this.changes.get(id);
    if (!c) {
      this.fail(
        'That change is no longer kept (only the most recent changes are, up to 32 MB): open the file and use the Timeline or source control to compare.',
      );
      return;
    }
    const title = `${c.path} (${c.created ? 'created' : 'changed'} by the agent)`;
    await vscode.commands.executeCommand('vscode.diff', changeUri(c, 'before'), changeUri(c, 'after'), title, {
      preview: true,
    });
  }

  stop(): void {
    const r = this.running;
    if (!r) return;
    r.ac.abort();
    for (const [id, resolve] of r.approvals) {
      resolve(false);
      this.post({ type: 'approvalDone', id, approved: false });
    }
    r.approvals.clear();
  }

  fail(message: string, actions: ErrorAction[] = []): void {
    this.post({ type: 'error', message: clip(message, 4000), actions });
  }

  /** The message with what the user attached, read now; one that cannot be read puts the message back in the input. */
  private async send(task: string, refs: AttachmentRef[], id: string): Promise<void> {
    if (!refs.length) return this.start(task, { id });
    const r = await this.attachments.resolve(refs, this.lastTrajectory);
    if (!r.ok) {
      this.post({
        type: 'unsent',
        id,
        text: clip(task, 20_000),
        attachments: refs,
        reason: clip(`Not sent: ${r.error}.`, 2000),
      });
      return;
    }
    await this.start(task, { id, attachments: r.parts });
  }

  /** Starts a run with the message, or queues it for the run in progress. */
  start(task: string, opts: StartOptions = {}): Promise<void> {
    return startRun(this, task, opts);
  }

  dispose(): void {
    // The extension host is stopping (a reload, a closed window): the loop will not get to
    // write its end, so the file is ended here, synchronously, and says why.
    this.running?.interrupt?.('the editor closed or reloaded during the run');
    this.running?.terminal?.dispose();
    this.stop();
    this.watch.dispose();
    for (const s of this.subs) s.dispose();
  }
}
