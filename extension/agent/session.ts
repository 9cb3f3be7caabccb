/**
 * One agent run from the chat: the model client from the settings and the
 * secret, a real shell mirrored in the "Lean4 Agentic" terminal, file writes
 * through WorkspaceEdit, and core runAgent (the verified loop) with the gate
 * answered by the language server (`lar/checkToolCall`; when the server is not
 * running or fails, by a verifier state kept here from the same events) and
 * every written line sent live (`lar/appendStep`). Approvals come from the
 * chat's buttons. One run at a time; Stop aborts it.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { readRules } from '../../core/agent/rules';
import { rebuildConversation } from '../../core/agent/resume';
import { loadWorkflowRef } from '../../core/workflow/resolve';
import { Checkpoints } from '../checkpoints/checkpoints';
import type { RestoreEvent } from '../../core/schema/trajectory';
import { ensureLarDir, trajectoryFile, RUNS_DIR } from '../../core/workspace/lar-layout';
import { runAgent, type AgentEvent } from '../../core/agent/loop';
import { systemFor, toolSpecs } from '../../core/agent/prompts';
import { prepareFollowUp } from '../../core/agent/follow-up';
import { endNotes, openRun, type OpenRun } from '../../core/agent/run-setup';
import { describeSandbox, type SandboxSummary } from '../../core/sandbox/plan';
import { newRunId } from '../../core/agent/run-id';
import { ModelError } from '../../core/model/errors';
import type { LarClient } from '../client';
import { readAgentConfig } from '../config';
import { listRuns } from '../../core/agent/history';
import { RUN_FILE } from '../../core/schema/trajectory';
import { OutputTail, shortArgs } from '../chat/cards';
import { EventsToView } from './events-to-view';
import {
  clip,
  OUTPUT_TAIL,
  type ErrorAction,
  type FromWebview,
  type HistoryEntry,
  type ToWebview,
} from '../../core/protocol/chat';
import { FileChanges } from '../checkpoints/file-changes';
import { combineRedactors, redact, secretRedactor } from '../../core/secrets/redact';
import { changeUri } from '../checkpoints/change-documents';
import { modelClientFor, openSetting, readApiKey } from './connection';
import { createLiveGate } from './live-gate';
import { branchFrom, restoreCheckpoint } from '../chat/branching';
import { forgetChat, forgetPending, markInterrupted, rememberChat, restoreChat } from '../chat/persistence';
import type { Chat, ChatThread, Running } from '../chat/state';
import { actionsFor, ConnectionProbe } from './connection-probe';
import { RunWarnings } from './warnings';
import { COMMANDS } from '../../core/protocol/commands';
import { linkTarget } from '../chat/links';
import { AgentTerminal } from './terminal';
import { VscodeWorkspaceFs } from './vscode-fs';
import { maskEndpoint } from '../../core/secrets/endpoint';

/** The setting each "open setting" action shows (the search the Settings editor opens with). */
const SETTING_OF = {
  openSettings: 'lean4Agentic',
  openEndpointSetting: 'lean4Agentic.endpoint',
  openModelSetting: 'lean4Agentic.model',
  openWorkflowSetting: 'lean4Agentic.workflow',
} as const;

/** What Resume tells the model (recorded as the user's message: it is what the user asked for). */
export const RESUME_MESSAGE =
  'The editor closed during your last run, which was interrupted. Continue the task from where you stopped.';

/** Opens a link from the chat if linkTarget allows it: web pages outside, workspace files in the editor. */
async function openLink(href: string): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const target =
    folder?.uri.scheme === 'file' ? linkTarget(href, folder.uri.fsPath) : linkTarget(href, '/nonexistent-workspace');
  if (target.kind === 'refused') {
    void vscode.window.showWarningMessage(`Lean4 Agentic did not open the link: ${target.reason}.`);
    return;
  }
  if (target.kind === 'web') {
    await vscode.env.openExternal(vscode.Uri.parse(target.url, true));
    return;
  }
  const line = target.line ? Math.max(0, target.line - 1) : undefined;
  await vscode.window.showTextDocument(vscode.Uri.file(target.path), {
    preview: true,
    ...(line !== undefined ? { selection: new vscode.Range(line, 0, line, 0) } : {}),
  });
}

export class AgentSession implements vscode.Disposable, Chat {
  running: Running | undefined;
  lastTrajectory: vscode.Uri | undefined;
  thread: ChatThread | undefined;
  queued: string[] = [];
  busy: string | undefined;
  cleared = false;
  private approvalSeq = 0;
  private readonly warnings: RunWarnings;
  private readonly probe: ConnectionProbe;
  private readonly subs: vscode.Disposable[] = [];
  readonly changes = new FileChanges();
  readonly checkpoints: Checkpoints;
  restores: RestoreEvent[] = [];
  post: (msg: ToWebview) => void = () => {};
  reveal: () => Promise<void> = async () => {};

  constructor(
    readonly context: vscode.ExtensionContext,
    private readonly lar: LarClient,
    readonly output: vscode.LogOutputChannel,
  ) {
    this.checkpoints = new Checkpoints(context, output);
    this.warnings = new RunWarnings(context, output);
    this.probe = new ConnectionProbe(context.secrets, (msg) => this.post(msg));
    // A changed endpoint, model or key: the chat says at once whether the server answers.
    this.subs.push(
      this.checkpoints,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('lean4Agentic.endpoint') || e.affectsConfiguration('lean4Agentic.model'))
          void this.postConnection();
      }),
      context.secrets.onDidChange(() => void this.postConnection()),
    );
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  handle(msg: FromWebview): void {
    switch (msg.type) {
      case 'start':
        void this.start(msg.task);
        return;
      case 'stop':
        this.stop();
        return;
      case 'approve': {
        const resolve = this.running?.approvals.get(msg.id);
        if (!resolve) return;
        this.running!.approvals.delete(msg.id);
        resolve(msg.approved);
        this.post({ type: 'approvalDone', id: msg.id, approved: msg.approved });
        return;
      }
      case 'action':
        if (msg.action in SETTING_OF) void openSetting(SETTING_OF[msg.action as keyof typeof SETTING_OF]);
        else if (msg.action === 'testConnection') void vscode.commands.executeCommand(COMMANDS.testConnection);
        else void vscode.commands.executeCommand(COMMANDS.setApiKey);
        return;
      case 'openTrajectory':
        if (this.lastTrajectory)
          void vscode.window.showTextDocument(this.lastTrajectory, {
            preview: false,
            viewColumn: vscode.ViewColumn.Beside,
          });
        return;
      case 'newChat':
        if (this.running)
          this.post({
            type: 'error',
            message: 'A run is in progress: stop it before starting a new chat.',
            actions: [],
          });
        else {
          this.changes.clear();
          // A reload brings back no chat the user cleared (nor one a restore still on its way would bring).
          this.cleared = true;
          // A new chat is a fresh conversation: the restores of the old one are not its story.
          this.restores = [];
          forgetChat(this.context);
          this.thread = undefined;
          this.post({ type: 'clear' });
        }
        return;
      case 'resume':
        void this.resume(msg.file);
        return;
      case 'branchFrom':
        void this.branchFrom(msg.commit, msg.step, msg.run);
        return;
      case 'restoreCheckpoint':
        void this.restoreCheckpoint(msg.commit, {
          ...(msg.step ? { step: msg.step } : {}),
          ...(msg.run ? { run: msg.run } : {}),
        });
        return;
      case 'showChange':
        this.showChange(msg.id).catch((e: unknown) =>
          this.fail(`Could not show the change: ${e instanceof Error ? e.message : String(e)}`),
        );
        return;
      case 'history':
        this.postHistory().catch((e: unknown) =>
          this.fail(`Could not list the runs: ${e instanceof Error ? e.message : String(e)}`),
        );
        return;
      case 'openRun': {
        const folder = vscode.workspace.workspaceFolders?.[0];
        if (!folder || !RUN_FILE.test(msg.file)) return;
        const uri = vscode.Uri.joinPath(folder.uri, ...RUNS_DIR.split(/[\\/]/), msg.file);
        void vscode.window
          .showTextDocument(uri, { preview: false, viewColumn: vscode.ViewColumn.Beside })
          .then(undefined, (e: unknown) => {
            this.fail(`Could not open ${msg.file}: ${e instanceof Error ? e.message : String(e)}`);
          });
        return;
      }
      case 'copy':
        void vscode.env.clipboard.writeText(msg.text);
        return;
      case 'openLink':
        void openLink(msg.href).then(undefined, (e: unknown) =>
          this.fail(`Could not open ${clip(msg.href, 200)}: ${e instanceof Error ? e.message : String(e)}`),
        );
        return;
      case 'checkConnection':
      case 'ready':
        void this.postConnection();
        return;
    }
  }

  /** Whether the server answers (and with which model), or what is wrong: only the latest check is shown. */
  postConnection(): Promise<void> {
    return this.probe.check();
  }

  /** Told of the sandbox of each run that starts: the status bar shows it. */
  onSandbox: (summary: SandboxSummary | undefined) => void = () => {};

  /** Runs a crashed or killed editor left without an end are marked interrupted. */
  markInterruptedRuns(): Promise<void> {
    return markInterrupted(this.output);
  }

  /** Brings back the workspace's latest chat from its trajectories (after a reload or a restart). */
  restore(): Promise<void> {
    return restoreChat(this);
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
    await this.start(RESUME_MESSAGE, { resume: true });
  }

  /** The runs recorded in the first workspace folder, newest first. */
  async postHistory(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const runs = folder?.uri.scheme === 'file' ? await listRuns(folder.uri.fsPath) : [];
    const entries: HistoryEntry[] = runs.map((r) => ({
      file: r.file,
      task: clip(r.task.replace(/\s+/g, ' ').trim() || '(no task)', 300),
      started: clip(r.started, 40),
      ...(r.model ? { model: clip(r.model, 300) } : {}),
      status: r.status,
      steps: r.steps,
      ...(r.return !== undefined ? { return: r.return } : {}),
      ...(r.outcome !== undefined ? { outcome: r.outcome } : {}),
      ...(r.note ? { note: clip(r.note, 500) } : {}),
    }));
    this.post({ type: 'history', runs: entries });
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

  async start(task: string, opts: { queued?: boolean; resume?: boolean } = {}): Promise<void> {
    if (this.busy) {
      this.fail(`${this.busy} is in progress: finish it (or cancel its dialog), then send the message again.`);
      return;
    }
    if (this.running) {
      // Typed while the agent works: it reaches the model at its next turn.
      this.queued.push(task);
      this.post({ type: 'queued', text: clip(task, 20_000) });
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder || folder.uri.scheme !== 'file') {
      this.fail('Open a folder first: the agent works in the first workspace folder (on disk).');
      return;
    }
    if (!vscode.workspace.isTrusted) {
      this.fail('The agent runs commands in the workspace: trust the workspace first (Restricted Mode is on).');
      return;
    }
    const running: Running = { ac: new AbortController(), approvals: new Map() };
    this.running = running;
    const signal = running.ac.signal;
    this.post({ type: 'state', running: true });
    void vscode.commands.executeCommand('setContext', 'lean4Agentic.agentRunning', true);
    let run: OpenRun<AgentTerminal> | undefined;
    let apiKey: string | undefined;
    let mask: (text: string) => string = (t) => redact(t, apiKey);
    try {
      const ws = folder.uri.fsPath;
      const config = readAgentConfig();
      apiKey = await readApiKey(this.context.secrets);
      // The key, and the values of environment variables that look secret (the terminal inherits them).
      const key = apiKey;
      mask = combineRedactors((t) => redact(t, key), secretRedactor(process.env));
      const wf = loadWorkflowRef(config.workflow, ws);
      if ('error' in wf) {
        this.fail(`The workflow setting (${config.workflow}) is not usable: ${wf.error}`, ['openWorkflowSetting']);
        return;
      }
      const workflow = wf.workflow;
      const model = modelClientFor(config, apiKey);
      let modelName: string;
      try {
        // The server is asked first even when the model is named: a run it could never answer is
        // said once and leaves no trajectory (a listing it refuses for another reason does not stop the run).
        const served = await model.servedModels(signal).catch((e: unknown) => {
          const err = model.classify(e);
          if (err.kind === 'unreachable' || err.kind === 'unauthorized' || err.kind === 'cancelled') throw err;
          return undefined;
        });
        if (served?.length && config.model && !served.some((m) => m.id === config.model)) {
          this.fail(
            `The server does not serve the model "${config.model}" (it serves: ${served.map((m) => m.id).join(', ')}). Change the model setting or leave it empty.`,
            ['openModelSetting'],
          );
          return;
        }
        modelName = await model.resolveModel(signal, served);
      } catch (e) {
        const err = model.classify(e);
        if (err.kind !== 'cancelled') this.fail(redact(err.message, apiKey), actionsFor(err));
        return;
      }
      const runId = newRunId();
      const rules = readRules(ws, config.rules);
      for (const p of rules.problems) this.output.warn(`rules: ${p}`);
      const thread = this.thread;
      // A chat read back from its trajectories: the model's context is rebuilt from them, under today's prompt.
      const follow = prepareFollowUp(
        thread?.conversation ??
          (thread?.restored
            ? rebuildConversation(thread.restored, systemFor(workflow, rules), toolSpecs())
            : undefined),
        task,
        opts,
      );
      ensureLarDir(ws);
      const trajectoryPath = trajectoryFile(ws, runId);
      const trajectoryUri = vscode.Uri.file(trajectoryPath);
      this.lastTrajectory = trajectoryUri;
      this.cleared = false;
      rememberChat(this.context, basename(trajectoryPath));
      this.warnings.warnIfNoPty();
      const store = config.checkpoints ? await this.checkpoints.store(ws) : undefined;
      const restores = this.restores;
      const view = new EventsToView({
        mask: (t) => mask(t),
        expectExitCode: workflow.outcome.expectExitCode,
        runFile: basename(trajectoryPath),
      });
      const onWrite = (path: string, before: string | undefined, after: string) => {
        view.wrote(this.changes.add(path, before, after));
      };
      run = await openRun({
        workspace: ws,
        workflow,
        sandbox: config.sandbox,
        breakHardLinks: config.breakHardLinks,
        hostEnv: process.env,
        ...(apiKey ? { apiKey } : {}),
        rules,
        runId,
        trajectoryPath,
        // Writes go through WorkspaceEdit (undoable, open editors follow); the terminal is mirrored in the editor.
        makeFs: (readOnly) => new VscodeWorkspaceFs(ws, onWrite, readOnly),
        makeTerminal: (options, box) =>
          new AgentTerminal(options, box.plan.confined ? describeSandbox(box.summary) : 'unconfined'),
      });
      const box = run.sandbox;
      const terminal = run.terminal;
      mask = run.redact;
      this.warnings.warnIfUnconfined(box);
      this.onSandbox(box.summary);
      running.terminal = terminal;
      this.post({
        type: 'runStarted',
        // The chat shows the message as typed (the task may carry messages the model never answered, shown already).
        task: clip(task, 20_000),
        model: clip(modelName, 300),
        endpoint: clip(maskEndpoint(config.endpoint), 1000),
        trajectory: clip(vscode.workspace.asRelativePath(trajectoryUri), 2000),
        sandbox: { confined: box.plan.confined, text: clip(box.refusal ?? describeSandbox(box.summary), 2000) },
        ...(rules.files.length ? { rules: rules.files.map((f) => clip(f.path, 500)) } : {}),
        ...(opts.queued || follow.reasked ? { shown: true } : {}),
        ...(opts.resume ? { resumed: true } : {}),
      });
      this.output.info(
        `agent run ${runId}: ${modelName} at ${maskEndpoint(config.endpoint)}, workflow ${workflow.id}, trajectory ${trajectoryPath}`,
      );

      // The live run as the server sees it; a shadow verifier decides when it cannot.
      const live = createLiveGate({
        server: this.lar,
        uri: trajectoryUri.toString(),
        trajectoryPath,
        workflow,
        approvals: config.approvals,
        log: (m) => this.output.warn(m),
      });
      const approve = (req: { tool: string; args: unknown; reason: string }): Promise<boolean> =>
        new Promise((resolve) => {
          if (signal.aborted) return resolve(false);
          const id = `a${++this.approvalSeq}`;
          running.approvals.set(id, resolve);
          this.post({
            type: 'approval',
            id,
            tool: clip(req.tool, 200),
            args: mask(shortArgs(req.tool, req.args, 20_000)),
            reason: clip(req.reason, 1000),
          });
          void this.reveal();
        });
      /** The running command's output for its live card, sent at most every 150 ms. */
      let liveOutput: { dispose(): void } | undefined;
      const endLiveOutput = () => {
        liveOutput?.dispose();
        liveOutput = undefined;
      };
      const watchOutput = (id: string) => {
        endLiveOutput();
        const tail = new OutputTail();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const flush = () => {
          timer = undefined;
          this.post({
            type: 'toolOutput',
            id: clip(id, 200),
            tail: clip(mask(tail.text), OUTPUT_TAIL),
            bytes: tail.bytes,
          });
        };
        const sub = terminal.onOutput((text) => {
          tail.push(text);
          timer ??= setTimeout(flush, 150);
        });
        liveOutput = {
          dispose: () => {
            sub.dispose();
            if (timer) clearTimeout(timer);
          },
        };
      };
      // The events written to the trajectory go to the live gate, then what the chat shows of each to the chat.
      const onEvent = (e: AgentEvent) => {
        if (e.kind === 'step') endLiveOutput();
        if ('line' in e) live.observe(e);
        for (const m of view.map(e)) this.post(m);
        if (e.kind === 'toolStart' && e.tool === 'run_command') watchOutput(e.id);
      };
      follow.takeUnanswered();
      const result = await runAgent({
        ...run.agentOptions,
        task: follow.task,
        workflow,
        workflowRef: config.workflow.startsWith('builtin:') ? config.workflow : workflow,
        model,
        modelInfo: { name: modelName, endpoint: maskEndpoint(config.endpoint) },
        approve,
        enforcement: config.enforcement,
        toolFormat: config.toolCallFormat,
        onIdle: 'end',
        nextUserMessage: () => this.queued.shift(),
        ...(store
          ? {
              checkpoint: async (c: { step: number }) => {
                try {
                  return (await store.snapshot(`runs/${runId}/steps/${c.step}`, `${runId}: before step ${c.step}`))
                    .commit;
                } catch (e) {
                  this.output.warn(
                    `no checkpoint before step ${c.step}: ${e instanceof Error ? e.message : String(e)}`,
                  );
                  return undefined;
                }
              },
            }
          : {}),
        ...(restores.length ? { restored: restores } : {}),
        ...(follow.conversation ? { conversation: follow.conversation } : {}),
        thread: {
          id: thread?.id ?? runId,
          turn: (thread?.turn ?? 0) + 1,
          ...(thread ? { previous: thread.previous } : {}),
          ...(thread?.step ? { step: thread.step } : {}),
        },
        gate: live.gate,
        limits: {
          maxOutputTokens: config.maxTokens,
          maxSteps: config.maxSteps,
          maxRepeatedFailures: config.maxRepeatedFailures,
          maxTimeMs: config.maxMinutes * 60_000,
          ...(config.maxRunTokens > 0 ? { maxTokens: config.maxRunTokens } : {}),
        },
        onEvent,
        signal,
        onStart: (h) => {
          running.interrupt = h.interrupt;
          // Recorded in this run's file now: the next run does not record them again.
          if (this.restores === restores) {
            this.restores = [];
            forgetPending(this.context);
          }
        },
      }).finally(endLiveOutput);
      await live.flushed();
      // The next message continues this conversation (what the model did not answer is asked again with it).
      this.thread = {
        id: thread?.id ?? runId,
        turn: (thread?.turn ?? 0) + 1,
        conversation: result.conversation,
        previous: basename(trajectoryPath),
      };
      const s = result.summary;
      this.post({
        type: 'end',
        reason: result.endReason,
        ...(result.detail ? { detail: clip(mask(result.detail), 2000) } : {}),
        summary: { return: s.return, outcome: s.outcome.reward, steps: s.steps },
      });
      if (result.endReason === 'error' && result.detail)
        this.fail(mask(result.detail), ['testConnection', 'openEndpointSetting']);
      void this.postHistory();
    } catch (e) {
      const message = mask(e instanceof Error ? e.message : String(e));
      this.output.error(`agent run failed: ${message}`);
      this.fail(`The run failed: ${message}`, actionsFor(e));
    } finally {
      for (const resolve of running.approvals.values()) resolve(false);
      // The status bar keeps saying how the last run's commands were confined.
      const end = await run?.close();
      for (const n of end ? endNotes(end) : []) {
        this.output[n.level](n.detail ? `${n.text}\n${n.detail}` : n.text);
        if (n.kind === 'quarantined') void vscode.window.showWarningMessage(`Lean4 Agentic ${n.text}`);
      }
      if (end?.later?.length) {
        const shown = end.later.slice(0, 200);
        this.post({
          type: 'laterChanges',
          files: shown.map((f) => ({
            path: clip(f.path, 2000),
            change: f.change,
            ...(f.diff ? { diff: clip(f.diff, 40_000) } : {}),
          })),
          more: end.later.length - shown.length,
        });
      }
      this.running = undefined;
      this.post({ type: 'state', running: false });
      void vscode.commands.executeCommand('setContext', 'lean4Agentic.agentRunning', false);
      // A message typed after the model's last turn starts the follow-up, the others reach it at its
      // first turn; a run the user stopped drops the queue with it.
      if (signal.aborted) this.queued = [];
      const next = this.queued.shift();
      if (next !== undefined) void this.start(next, { queued: true });
    }
  }

  dispose(): void {
    // The extension host is stopping (a reload, a closed window): the loop will not get to
    // write its end, so the file is ended here, synchronously, and says why.
    this.running?.interrupt?.('the editor closed or reloaded during the run');
    this.running?.terminal?.dispose();
    this.stop();
    for (const s of this.subs) s.dispose();
  }
}
