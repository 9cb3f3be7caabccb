/**
 * Going back from the chat: the workspace restored to a checkpoint (Restore to here, Undo), or workspace and
 * conversation both as they were before a step, continued from there in a new run (Branch from here).
 */
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import { branchCheckpoint, threadOf } from '../../core/agent/resume';
import { clip } from '../../core/protocol/chat';
import { RUN_FILE } from '../../core/schema/trajectory';
import { RUNS_DIR } from '../../core/workspace/lar-layout';
import { keepRestore, readChat, rememberChat, savePending } from './persistence';
import { afterEnding, type Chat } from './state';
import { restoreLine, transcriptOf } from './transcript';

/**
 * Restore to here: the workspace as it was at a checkpoint, after the diff
 * and a confirmation. The chat says what changed (with Undo); the chat's
 * next run records it and tells the model.
 */
export async function restoreCheckpoint(
  chat: Chat,
  commit: string,
  where: { step?: number; run?: string },
): Promise<void> {
  await afterEnding(chat);
  if (chat.running || chat.busy) {
    chat.fail(
      chat.running ? 'A run is in progress: stop it before restoring the workspace.' : `${chat.busy} is in progress.`,
    );
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file' || !vscode.workspace.isTrusted) {
    chat.fail('Checkpoints need a trusted workspace folder on disk.');
    return;
  }
  chat.busy = 'A restore';
  try {
    const undo = where.step === undefined;
    const event = await chat.checkpoints.restore(
      folder.uri.fsPath,
      commit,
      { ...where, ...(undo ? { undo: true } : {}) },
      () => !chat.running,
    );
    if (event === 'unchanged') {
      void vscode.window.showInformationMessage(
        `The workspace is already ${undo ? 'as it was before the last restore' : `as it was before step ${where.step}`}: nothing to restore.`,
      );
      return;
    }
    if (!event) return;
    keepRestore(chat, event);
    chat.post({ type: 'checkpointRestored', text: clip(restoreLine(event), 4000), undo: event.before });
  } catch (e) {
    chat.fail(`The workspace was not restored: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    chat.busy = undefined;
  }
}

/**
 * Branch from here: the workspace restored to the checkpoint before `step`
 * (diff and confirmation first) and the chat's conversation as it was
 * there; the next message continues from that point in a new run whose
 * header names the run and the step it branched from.
 */
export async function branchFrom(chat: Chat, commit: string, step: number, runFile?: string): Promise<void> {
  await afterEnding(chat);
  if (chat.running || chat.busy) {
    chat.fail(chat.running ? 'A run is in progress: stop it before branching.' : `${chat.busy} is in progress.`);
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  const run = runFile ?? (chat.lastTrajectory ? basename(chat.lastTrajectory.fsPath) : undefined);
  if (!folder || folder.uri.scheme !== 'file' || !vscode.workspace.isTrusted || !run || !RUN_FILE.test(run)) {
    chat.fail('Branching needs a trusted workspace folder on disk and the run to branch from.');
    return;
  }
  chat.busy = 'A branch';
  try {
    await branchAt(chat, folder.uri.fsPath, { commit, step, run });
  } catch (e) {
    chat.fail(`Could not branch: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    chat.busy = undefined;
  }
}

async function branchAt(chat: Chat, ws: string, at: { commit: string; step: number; run: string }): Promise<void> {
  const { commit, step, run } = at;
  const runs = readChat(join(ws, RUNS_DIR), run);
  const thread = threadOf(runs);
  const last = runs[runs.length - 1];
  if (!thread || !last) {
    chat.fail(`${run} cannot be read back as a chat.`);
    return;
  }
  // The workspace as it was at the branch point, as the run itself recorded it (not whatever id came with the request).
  const point = branchCheckpoint(last, step);
  if ('error' in point) {
    chat.fail(`Cannot branch from step ${step}: ${point.error}.`);
    return;
  }
  if (point.commit !== commit)
    chat.output.info(
      `branch from step ${step} of ${run}: the workspace goes back to the checkpoint of the reply's first call that could change files (${point.commit.slice(0, 12)})`,
    );
  const event = await chat.checkpoints.restore(ws, point.commit, { step, run }, () => !chat.running);
  if (!event) return;
  if (event !== 'unchanged') chat.restores.push(event);
  last.cutAtStep = step;
  chat.changes.clear();
  chat.thread = { ...thread, step, restored: runs };
  // A reload before the next message brings the branch back, not the chat before it.
  rememberChat(chat.context, run);
  savePending(chat, { run, step });
  chat.post({ type: 'clear' });
  for (const m of transcriptOf(runs)) chat.post(m);
  if (event !== 'unchanged')
    chat.post({ type: 'checkpointRestored', text: clip(restoreLine(event), 4000), undo: event.before });
  void chat.reveal();
}
