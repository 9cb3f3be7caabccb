/**
 * One agent run from the chat: the model client from the settings and the
 * secret, a real shell mirrored in the "Lean4 Agentic" terminal, file writes
 * through WorkspaceEdit (both through the core's openRun), and core runAgent
 * (the verified loop) with the gate answered by the language server
 * (live-gate.ts) and approvals from the chat's buttons. One run at a time;
 * Stop aborts it; a message typed meanwhile reaches the model at its next turn.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { prepareFollowUp, type FollowUp } from '../../core/agent/follow-up';
import { runAgent } from '../../core/agent/loop';
import { systemFor, toolSpecs } from '../../core/agent/prompts';
import type { AgentEvent, AgentOptions, AgentResult } from '../../core/agent/types';
import { rebuildConversation } from '../../core/agent/resume';
import { newRunId } from '../../core/agent/run-id';
import { readRules, type Rules } from '../../core/agent/rules';
import { endNotes, openRun, type OpenRun } from '../../core/agent/run-setup';
import type { CheckpointStore } from '../../core/checkpoints/store';
import { chipsField } from '../../core/protocol/attachments';
import { clip } from '../../core/protocol/chat';
import type { AttachmentPart } from '../../core/schema/message-parts';
import { describeSandbox, type SandboxSummary } from '../../core/sandbox/plan';
import { sandboxForChat } from '../chat/sandbox-view';
import type { RestoreEvent } from '../../core/schema/trajectory';
import { outcomeCommand, type Workflow } from '../../core/schema/workflow';
import { maskEndpoint } from '../../core/secrets/endpoint';
import { combineRedactors, redact, redactJsonStrings, secretRedactor } from '../../core/secrets/redact';
import { ensureLarDir, trajectoryFile } from '../../core/workspace/lar-layout';
import type { LarClient } from '../client';
import { forgetPending, rememberChat } from '../chat/persistence';
import type { Chat, ChatThread, Running } from '../chat/state';
import { shortArgs } from '../chat/cards';
import { postRunChanges } from '../chat/review';
import { actionsFor } from './connection-probe';
import { EventsToView } from './events-to-view';
import { createLiveGate, type LiveGate } from './live-gate';
import { LiveOutput } from './live-output';
import { AgentTerminal } from './terminal';
import type { ModelPicker } from './model-picker';
import { preflight, type Preflight } from './preflight';
import type { SendAnswer, Fail } from './send-answer';
import { VscodeWorkspaceFs } from './vscode-fs';
import type { RunWarnings } from './warnings';
import { RunMcp } from '../mcp/run-mcp';

/** What a run needs of the chat beyond its state. */
export interface RunChat extends Chat {
  readonly lar: LarClient;
  readonly warnings: RunWarnings;
  /** This chat's model pick. */
  readonly picker: ModelPicker;
  /** Numbers the approvals the chat asks for. */
  approvalSeq: number;
  /** Told of the sandbox of each run that starts: the status bar shows it. */
  onSandbox(summary: SandboxSummary | undefined): void;
  postHistory(): Promise<void>;
  /** Looks at the connection again (a request failed): the chat's connection line follows. */
  checkConnection(): void;
  /** The server answered (the checks before a run passed): a connection line saying otherwise is checked again. */
  serverAnswered(): void;
}

export interface StartOptions {
  /** The message was typed during the run before (the chat shows it already). */
  queued?: boolean;
  /** Resume: the chat's interrupted run goes on. */
  resume?: boolean;
  /** The webview's id of the message: its bubble is told whether it was sent. */
  id?: string;
  /** What the user attached to the message (`@`), read already. */
  attachments?: readonly AttachmentPart[];
}

/** Everything a run starts from, once the checks passed. */
interface Plan extends Preflight {
  runId: string;
  rules: Rules;
  trajectoryPath: string;
  /** The chat's thread as the run started. */
  thread: ChatThread | undefined;
  follow: FollowUp;
  store: CheckpointStore | undefined;
  /** The restores this run records first. */
  restores: RestoreEvent[];
  /** The MCP servers it starts, and what the chat shows of them. */
  mcp: RunMcp;
}

/** A run once it may start: its set-up, its live output, and its end. */
export class ChatRun {
  private readonly signal: AbortSignal;
  private apiKey: string | undefined;
  /** Masks the key (and, once read, the host's secret-looking values) in all the chat is shown. */
  private mask: (text: string) => string = (t) => redact(t, this.apiKey);
  private open: OpenRun<AgentTerminal> | undefined;
  /** What the Changes card at the end compares from: the run's first checkpoint, in its store. */
  private review: { store: CheckpointStore; run: string; runId: string; start?: string } | undefined;
  /** The running command's output on its live card. */
  private readonly liveOutput = new LiveOutput(
    (msg) => this.chat.post(msg),
    (t) => this.mask(t),
  );

  constructor(
    private readonly chat: RunChat,
    private readonly running: Running,
    private readonly ws: string,
    private readonly opts: StartOptions,
    private readonly answer: SendAnswer,
    private readonly fail: Fail,
  ) {
    this.signal = running.ac.signal;
  }

  async execute(task: string): Promise<void> {
    const pre = await preflight({
      secrets: this.chat.context.secrets,
      ws: this.ws,
      signal: this.signal,
      choice: this.chat.picker.current,
      onKey: (key) => {
        this.apiKey = key;
        // The key, and the values of environment variables that look secret (the terminal inherits them).
        this.mask = combineRedactors((t) => redact(t, key), secretRedactor(process.env));
      },
      fail: this.fail,
    });
    if (!pre) return;
    this.chat.serverAnswered();
    const { config, workflow } = pre;
    // Asked before anything is written: a run stopped at the MCP prompt leaves no trajectory.
    const mcp = await this.prepareMcp(workflow);
    if (this.signal.aborted) return;
    const runId = newRunId();
    const rules = readRules(this.ws, config.rules);
    for (const p of rules.problems) this.chat.output.warn(`rules: ${p}`);
    const thread = this.chat.thread;
    // A chat read back from its trajectories: the model's context is rebuilt from them, under today's prompt.
    const follow = prepareFollowUp(
      thread?.conversation ??
        (thread?.restored ? rebuildConversation(thread.restored, systemFor(workflow, rules), toolSpecs()) : undefined),
      task,
      this.opts,
    );
    ensureLarDir(this.ws);
    const trajectoryPath = trajectoryFile(this.ws, runId);
    const trajectoryUri = vscode.Uri.file(trajectoryPath);
    this.chat.lastTrajectory = trajectoryUri;
    this.chat.cleared = false;
    rememberChat(this.chat.context, basename(trajectoryPath));
    this.chat.warnings.warnIfNoPty();
    const store = config.checkpoints ? await this.chat.checkpoints.store(this.ws) : undefined;
    const restores = this.chat.restores;
    const plan: Plan = { ...pre, runId, rules, thread, follow, store, restores, trajectoryPath, mcp };
    if (store) this.review = { store, run: basename(trajectoryPath), runId };
    const view = new EventsToView({
      mask: (t) => this.mask(t),
      expectExitCode: outcomeCommand(workflow)?.expectExitCode ?? 0,
      runFile: basename(trajectoryPath),
    });
    const run = await this.openRun(plan, view);
    // The chat shows the message as typed (the task may carry messages the model never answered, shown already).
    this.announce(plan, run, task, trajectoryUri);
    // The live run as the server sees it; a shadow verifier decides when it cannot.
    const live = createLiveGate({
      server: this.chat.lar,
      uri: trajectoryUri.toString(),
      trajectoryPath,
      workflow,
      approvals: config.approvals,
      log: (m) => this.chat.output.warn(m),
    });
    follow.takeUnanswered();
    const result = await runAgent(
      this.agentOptions(plan, run, live, (e) => this.onEvent(e, { live, view, mcp }, run.terminal)),
    ).finally(() => this.liveOutput.end());
    await live.flushed();
    this.finish(result, plan);
  }

  /** The MCP servers of the user's setting and of the workspace that the workflow could use, allowed and with their inputs. */
  private prepareMcp(workflow: Workflow): Promise<RunMcp> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.toString() ?? vscode.Uri.file(this.ws).toString();
    return RunMcp.prepare(
      {
        context: this.chat.context,
        output: this.chat.output,
        ws: this.ws,
        folder,
        said: this.chat.warnings.mcpSaid,
        signal: this.signal,
      },
      workflow,
    );
  }

  /** The sandbox and the terminal in it (mirrored in the editor), file writes through WorkspaceEdit. */
  private async openRun(plan: Plan, view: EventsToView): Promise<OpenRun<AgentTerminal>> {
    const { config, workflow, rules, runId, trajectoryPath } = plan;
    const onWrite = (path: string, before: string | undefined, after: string) => {
      view.wrote(this.chat.changes.add(path, before, after));
    };
    const run = await openRun({
      workspace: this.ws,
      workflow,
      sandbox: config.sandbox,
      breakHardLinks: config.breakHardLinks,
      hostEnv: process.env,
      ...(this.apiKey ? { apiKey: this.apiKey } : {}),
      rules,
      runId,
      trajectoryPath,
      // Writes go through WorkspaceEdit (undoable, open editors follow); the terminal is mirrored in the editor.
      makeFs: (readOnly) => new VscodeWorkspaceFs(this.ws, onWrite, readOnly),
      makeTerminal: (options, box) =>
        new AgentTerminal(options, box.plan.confined ? describeSandbox(box.summary) : 'unconfined'),
      ...plan.mcp.forRun(),
    });
    this.open = run;
    this.mask = run.redact;
    view.confinedBy(run.sandbox.summary, this.ws);
    this.chat.warnings.warnIfUnconfined(run.sandbox);
    this.chat.onSandbox(run.sandbox.summary);
    this.running.terminal = run.terminal;
    return run;
  }

  /** The chat's header of the run, and the log's line. */
  private announce(plan: Plan, run: OpenRun, typed: string, trajectory: vscode.Uri): void {
    const { config, workflow, modelName, endpointName, rules, runId, trajectoryPath } = plan;
    const box = run.sandbox;
    this.chat.post({
      type: 'runStarted',
      task: clip(typed, 20_000),
      model: clip(modelName, 300),
      endpoint: clip(maskEndpoint(config.endpoint), 1000),
      trajectory: clip(vscode.workspace.asRelativePath(trajectory), 2000),
      sandbox: sandboxForChat(box.plan.confined, box.summary, box.refusal),
      ...(rules.files.length ? { rules: rules.files.map((f) => clip(f.path, 500)) } : {}),
      ...(this.opts.queued || plan.follow.reasked ? { shown: true } : {}),
      ...(this.opts.resume ? { resumed: true } : {}),
      ...this.answer.started(),
      ...chipsField(this.opts.attachments ?? []),
    });
    plan.mcp.started((m) => this.chat.post(m), {
      tools: run.agentOptions.mcp,
      workflow,
      runFile: basename(trajectoryPath),
      mask: (t) => this.mask(t),
    });
    this.chat.output.info(
      `agent run ${runId}: ${modelName} at ${maskEndpoint(config.endpoint)} (${endpointName}), workflow ${workflow.id}, trajectory ${trajectoryPath}`,
    );
  }

  /** runAgent's options: the set-up's, the settings', and the chat's conversation, restores and thread. */
  private agentOptions(plan: Plan, run: OpenRun, live: LiveGate, onEvent: (e: AgentEvent) => void): AgentOptions {
    const { config, workflow, model, modelName, endpointName, runId, thread, follow, store, restores } = plan;
    return {
      ...run.agentOptions,
      task: follow.task,
      // A Retry's message is in the task already, attachments and all.
      ...(this.opts.attachments?.length && !follow.repeated ? { attachments: this.opts.attachments } : {}),
      workflow,
      workflowRef: config.workflow.startsWith('builtin:') ? config.workflow : workflow,
      model,
      modelInfo: { name: modelName, endpoint: maskEndpoint(config.endpoint), endpointName },
      approve: (req) => this.approve(req),
      enforcement: config.enforcement,
      toolFormat: config.toolCallFormat,
      onIdle: 'end',
      nextUserMessage: () => this.chat.queued.shift(),
      ...(store ? { checkpoint: (c: { step: number }) => this.checkpoint(store, runId, c.step) } : {}),
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
      signal: this.signal,
      onStart: (h) => {
        this.running.interrupt = h.interrupt;
        // Recorded in this run's file now: the next run does not record them again.
        if (this.chat.restores === restores) {
          this.chat.restores = [];
          forgetPending(this.chat.context);
        }
      },
    };
  }

  /** The workspace before a step, in the checkpoints (a step without one still runs). */
  private async checkpoint(store: CheckpointStore, runId: string, step: number): Promise<string | undefined> {
    try {
      const { commit } = await store.snapshot(`runs/${runId}/steps/${step}`, `${runId}: before step ${step}`);
      if (this.review && !this.review.start) this.review.start = commit;
      return commit;
    } catch (e) {
      this.chat.output.warn(`no checkpoint before step ${step}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  }

  /**
   * Asks the chat (its buttons); Stop answers no. The side bar is left as the user has it: the view's badge, the status
   * bar and, when the chat cannot be seen, a notification say that it waits (approval-alerts.ts).
   */
  private approve(req: { tool: string; args: unknown; reason: string }): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.signal.aborted) return resolve(false);
      const id = `a${++this.chat.approvalSeq}`;
      this.running.approvals.set(id, resolve);
      this.chat.post({
        type: 'approval',
        id,
        tool: clip(req.tool, 200),
        // Each value masked on its own: masking the JSON text could drop a key from what is approved.
        args: shortArgs(req.tool, redactJsonStrings(req.args, this.mask), 20_000),
        reason: clip(req.reason, 1000),
      });
    });
  }

  /** An event of the run: to the live gate (the events written to the trajectory), then to the chat. */
  private onEvent(
    e: AgentEvent,
    { live, view, mcp }: { live: LiveGate; view: EventsToView; mcp: RunMcp },
    terminal: AgentTerminal,
  ): void {
    if (e.kind === 'step') this.liveOutput.end();
    if ('line' in e) live.observe(e);
    for (const m of view.map(e)) this.chat.post(m);
    // After the step: the gate's state has the stage it led to.
    mcp.onEvent(e, live.stage, (m) => this.chat.post(m));
    if (e.kind === 'toolStart' && e.tool === 'run_command') this.liveOutput.watch(e.id, terminal);
  }

  /** The next message continues this conversation (what the model did not answer is asked again with it). */
  private finish(result: AgentResult, plan: Plan): void {
    const { thread, runId, trajectoryPath } = plan;
    this.chat.thread = {
      id: thread?.id ?? runId,
      turn: (thread?.turn ?? 0) + 1,
      conversation: result.conversation,
      previous: basename(trajectoryPath),
    };
    const s = result.summary;
    this.chat.post({
      type: 'end',
      reason: result.endReason,
      ...(result.detail ? { detail: clip(this.mask(result.detail), 2000) } : {}),
      summary: { return: s.return, outcome: s.outcome.reward, steps: s.steps },
    });
    if (result.endReason === 'error' && result.detail) {
      const reason = this.mask(result.detail);
      // The model never answered the message: its bubble says so, with Retry, rather than a box under it.
      const unanswered = s.steps === 0 && result.conversation.awaitsModel;
      if (!(unanswered && this.answer.unanswered(reason, ['testConnection', 'openEndpointSetting'])))
        this.chat.fail(reason, ['testConnection', 'openEndpointSetting']);
      this.chat.checkConnection();
    }
    void this.chat.postHistory();
  }

  failed(e: unknown): void {
    const message = this.mask(e instanceof Error ? e.message : String(e));
    this.chat.output.error(`agent run failed: ${message}`);
    this.fail(`The run failed: ${message}`, actionsFor(e));
  }

  /** Approvals still open say no; every process stops and the sandbox puts back what it must, and says so. */
  async end(): Promise<void> {
    for (const resolve of this.running.approvals.values()) resolve(false);
    // The status bar keeps saying how the last run's commands were confined.
    const end = await this.open?.close();
    for (const n of end ? endNotes(end) : []) {
      this.chat.output[n.level](n.detail ? `${n.text}\n${n.detail}` : n.text);
      if (n.kind === 'quarantined') void vscode.window.showWarningMessage(`Lean4 Agentic ${n.text}`);
    }
    const r = this.review;
    await postRunChanges(
      this.chat,
      r?.start ? { ...r, start: r.start, later: end?.later ?? [] } : undefined,
      end?.later,
    );
  }
}
