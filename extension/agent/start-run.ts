/**
 * One run at a time from the chat: a message starts a run, or waits in the queue for the agent's next turn;
 * the checks that refuse one (a dialog open, no folder, Restricted Mode) answer the message's bubble.
 */
import * as vscode from 'vscode';
import { chipsField } from '../../core/protocol/attachments';
import { clip } from '../../core/protocol/chat';
import type { Running } from '../chat/state';
import { ChatRun, type RunChat, type StartOptions } from './run';
import { SendAnswer, droppedQueue, failureOf } from './send-answer';

/** Starts a run with the message, or queues it for the run in progress. */
export async function startRun(chat: RunChat, task: string, opts: StartOptions = {}): Promise<void> {
  const answer = new SendAnswer(opts.id, task, (m) => chat.post(m));
  const fail = failureOf(chat, answer);
  if (chat.busy) {
    fail(`${chat.busy} is in progress: finish it (or cancel its dialog), then send the message again.`);
    return;
  }
  if (chat.running) {
    // Typed while the agent works: it reaches the model at its next turn.
    const attachments = opts.attachments ?? [];
    chat.queued.push({ text: task, attachments, ...(opts.id !== undefined ? { id: opts.id } : {}) });
    chat.post({ type: 'queued', text: clip(task, 20_000), ...answer.queued(), ...chipsField(attachments) });
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') {
    fail('Open a folder first: the agent works in the first workspace folder (on disk).');
    return;
  }
  if (!vscode.workspace.isTrusted) {
    fail('The agent runs commands in the workspace: trust the workspace first (Restricted Mode is on).');
    return;
  }
  const running: Running = { ac: new AbortController(), approvals: new Map() };
  chat.running = running;
  chat.post({ type: 'state', running: true });
  void vscode.commands.executeCommand('setContext', 'lean4Agentic.agentRunning', true);
  const run = new ChatRun(chat, running, folder.uri.fsPath, opts, answer, fail);
  try {
    await run.execute(task);
  } catch (e) {
    run.failed(e);
  } finally {
    let gone = (): void => {};
    running.ending = new Promise((resolve) => (gone = resolve));
    await run.end();
    answer.settle();
    chat.running = undefined;
    gone();
    chat.post({ type: 'state', running: false });
    void vscode.commands.executeCommand('setContext', 'lean4Agentic.agentRunning', false);
    // A message typed after the model's last turn starts the follow-up, the others reach it at its
    // first turn; a run the user stopped drops the queue with it, each message marked not sent (Retry, Edit).
    if (running.ac.signal.aborted) for (const m of droppedQueue(chat.queued.splice(0))) chat.post(m);
    const next = chat.queued.shift();
    if (next !== undefined)
      void startRun(chat, next.text, {
        queued: true,
        ...(next.attachments?.length ? { attachments: next.attachments } : {}),
        ...(next.id !== undefined ? { id: next.id } : {}),
      });
  }
}
