/**
 * History by conversation: the list of the workspace's chats the webview shows, and opening one of them back
 * in the chat to continue it, named by its id and looked up again on disk (a webview never names a path).
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { listThreads, type ThreadSummary } from '../../core/agent/threads';
import { clip, ThreadId, type ThreadEntry } from '../../core/protocol/chat';
import { RUNS_DIR } from '../../core/workspace/lar-layout';
import { openChat, recordedHere } from './persistence';
import { afterEnding, type Chat } from './state';

/** The folder whose `.lar/runs` History lists: the first workspace folder, on disk. */
function workspaceDir(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
}

const oneLine = (s: string, max: number) => clip(s.replace(/\s+/g, ' ').trim() || '(no task)', max);

/** A conversation as the protocol carries it; none for an id the chat could not send back. */
function entryOf(t: ThreadSummary): ThreadEntry[] {
  if (!ThreadId.safeParse(t.id).success) return [];
  return [
    {
      id: t.id,
      task: oneLine(t.task, 300),
      started: clip(t.started, 40),
      lastActive: clip(t.lastActive, 40),
      turns: t.runs.length,
      status: t.status,
      ...(t.model ? { model: clip(t.model, 300) } : {}),
      ...(t.steps !== undefined ? { steps: t.steps } : {}),
      ...(t.return !== undefined ? { return: t.return } : {}),
      ...(t.outcome !== undefined ? { outcome: t.outcome } : {}),
      ...(t.note ? { note: clip(t.note, 500) } : {}),
      runs: t.runs.slice(-100).map((r) => ({
        file: r.file,
        task: oneLine(r.task, 200),
        started: clip(r.started, 40),
        status: r.status,
      })),
    },
  ];
}

/** The workspace's conversations, newest activity first, and which one the chat shows. */
export async function postHistory(chat: Chat): Promise<void> {
  const ws = workspaceDir();
  const threads = ws ? await listThreads(ws) : [];
  const current = chat.thread?.id;
  chat.post({
    type: 'history',
    threads: threads.flatMap(entryOf),
    ...(current && ThreadId.safeParse(current).success ? { current } : {}),
  });
}

/**
 * Brings conversation `id` back in the chat, continued by the next message; refused while a run or a restore
 * is on its way. The id must be one History lists now: its latest run file comes from the listing, on disk.
 */
export async function openThread(chat: Chat, id: string): Promise<void> {
  await afterEnding(chat);
  const refusal = (): string | undefined =>
    chat.running
      ? 'A run is in progress: stop it, or wait for it to end, before opening another conversation.'
      : chat.busy
        ? `${chat.busy} is on its way: open the conversation once it is done.`
        : undefined;
  // The conversation the chat already shows (a run of it may be live): History closing was all it took.
  if (chat.thread?.id === id) return;
  if (refusal()) return chat.fail(refusal()!);
  const ws = workspaceDir();
  if (!ws || !vscode.workspace.isTrusted) {
    return chat.fail('Past conversations open from a trusted workspace folder on disk.');
  }
  const thread = (await listThreads(ws, { figures: false })).find((t) => t.id === id);
  // The listing took a moment: a run may have started meanwhile.
  if (refusal()) return chat.fail(refusal()!);
  if (!thread) return chat.fail('That conversation is no longer in .lar/runs: open History again to see what is.');
  const latest = thread.runs[thread.runs.length - 1]!.file;
  if (
    !recordedHere(
      chat.context,
      thread.runs.map((r) => r.file),
    )
  ) {
    const go = 'Open and Continue';
    const pick = await vscode.window.showWarningMessage(
      'This conversation was not recorded by this editor: it may have come with the repository or another tool.',
      {
        modal: true,
        detail:
          "Its messages, answers and tool results become the model's context when you continue it. Open its trajectories from History to read it first.",
      },
      go,
    );
    if (pick !== go || refusal() || chat.thread?.id === id) return;
  }
  if (!openChat(chat, join(ws, RUNS_DIR), latest))
    chat.fail(`${latest} cannot be read back as a chat: its trajectory is still in History's Trajectories list.`);
  else void chat.reveal();
}
