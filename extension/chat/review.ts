/**
 * What the Changes card's buttons do: a file's diff from the run's start to now, Keep (reviewed), and Undo of
 * one file or all, put back from the run's start checkpoint and nothing else touched; the user is asked first
 * when a file changed after the run ended. An Undo is recorded like a restore, so the next run knows.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { clip } from '../../core/protocol/chat';
import { actionTargets } from '../../core/protocol/review-text';
import { withState, type LaterFile, type ReviewAction, type ReviewFile } from '../../core/protocol/run-review';
import type { RestoreEvent } from '../../core/schema/trajectory';
import { isInside } from '../../core/workspace/fs';
import type { RunEnd, StoredReview } from '../checkpoints/run-review';
import { keepRestore } from './persistence';
import { afterEnding, type Chat } from './state';
import { restoreLine } from './transcript';

/** Does what the card asked, for a review and file ids the extension gave (anything else is refused). */
export async function reviewAction(chat: Chat, msg: ReviewAction): Promise<void> {
  const stored = chat.reviews.get(msg.run);
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!stored || !folder || folder.uri.scheme !== 'file') {
    chat.fail('That review is no longer kept: compare the files with the Timeline or source control.');
    return;
  }
  const ws = folder.uri.fsPath;
  if (msg.action === 'diff') {
    const f = stored.review.files.find((x) => x.id === msg.file);
    if (f && !f.untracked) await showDiff(chat, ws, stored, f);
    return;
  }
  const targets = actionTargets(stored.review.files, msg.file, msg.action);
  if (!targets.length) return;
  if (msg.action === 'keep') {
    const next = await chat.reviews.update(
      stored,
      withState(
        stored.review.files,
        targets.map((f) => f.id),
        'kept',
      ),
    );
    chat.post({ type: 'runChanges', review: next.review });
    return;
  }
  await afterEnding(chat);
  if (chat.running || chat.busy) {
    chat.fail(chat.running ? 'A run is in progress: stop it before undoing changes.' : `${chat.busy} is in progress.`);
    return;
  }
  chat.busy = 'An undo';
  try {
    await undo(chat, ws, stored, targets);
  } catch (e) {
    chat.fail(`Nothing was undone: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    chat.busy = undefined;
  }
}

/** The file at the run's start beside the file now (an empty side for a file made or removed). */
async function showDiff(chat: Chat, ws: string, stored: StoredReview, f: ReviewFile): Promise<void> {
  const onDisk = join(ws, f.path);
  const now =
    isInside(ws, onDisk, false) && existsSync(onDisk)
      ? vscode.Uri.file(onDisk)
      : chat.checkpoints.uriAt(stored.end, f.path);
  const title = `${f.path} (before the run ↔ now)`;
  await vscode.commands.executeCommand('vscode.diff', chat.checkpoints.uriAt(stored.start, f.path), now, title, {
    preview: true,
  });
}

/** Puts `targets` back as they were at the run's start, after a confirmation when the user changed them since. */
async function undo(chat: Chat, ws: string, stored: StoredReview, targets: ReviewFile[]): Promise<void> {
  const store = await chat.checkpoints.store(ws);
  if (!store) return;
  const paths = targets.map((f) => f.path);
  const dirty = vscode.workspace.textDocuments.filter(
    (d) => d.isDirty && d.uri.scheme === 'file' && paths.some((p) => d.uri.fsPath === join(ws, p)),
  );
  let plan = await store.previewFiles(stored.start, paths, stored.end);
  const edited = [...new Set([...plan.changedSince, ...dirty.map((d) => vscode.workspace.asRelativePath(d.uri))])];
  if (edited.length) {
    const one = edited.length === 1;
    const ok = await vscode.window.showWarningMessage(
      `${one ? `${edited[0]} was` : `${edited.length} files were`} changed after the run ended. Undo puts ${one ? 'it' : 'them'} back as before the run: your edits to ${one ? 'it' : 'them'} are lost.`,
      { modal: true, detail: edited.join('\n') },
      'Undo Anyway',
    );
    if (ok !== 'Undo Anyway') return;
    // Saved first, so the snapshot before the undo holds them (its Undo brings them back).
    for (const d of dirty) await d.save();
    if (dirty.length) plan = await store.previewFiles(stored.start, paths, stored.end);
  }
  if (chat.running) throw new Error('a run started meanwhile');
  const r = await store.restore(plan.target, plan.pre.commit);
  const event: RestoreEvent = {
    type: 'restore',
    checkpoint: plan.target,
    run: stored.review.run,
    before: plan.pre.commit,
    reverted: r.changes.filter((c) => c.change === 'modified').map((c) => c.path),
    deleted: r.changes.filter((c) => c.change === 'deleted').map((c) => c.path),
    restored: r.changes.filter((c) => c.change === 'added').map((c) => c.path),
    ...(r.leftovers.length ? { leftovers: r.leftovers } : {}),
    at: new Date().toISOString(),
  };
  chat.output.info(`undid ${targets.length} file(s) of ${stored.review.run}: ${restoreLine(event)}`);
  if (event.reverted.length + event.deleted.length + event.restored.length) keepRestore(chat, event);
  const left = new Set(r.leftovers);
  const done = targets.filter((f) => !left.has(f.path)).map((f) => f.id);
  // As it stands now (a Keep may have come meanwhile).
  const latest = chat.reviews.get(stored.review.run) ?? stored;
  const next = await chat.reviews.update(latest, withState(latest.review.files, done, 'undone'));
  chat.post({ type: 'runChanges', review: next.review });
  if (left.size) chat.fail(`Not put back (a file in the way, a permission): ${[...left].join(', ')}`);
  // The user's edits were overwritten: the notice's Undo brings them back.
  if (edited.length)
    chat.post({ type: 'checkpointRestored', text: clip(restoreLine(event), 4000), undo: plan.pre.commit });
}

/**
 * At a run's end: the Changes card of what it changed (the files that run later marked in it), or, with no
 * checkpoints to compare, the list of the changed files that run later alone.
 */
export async function postRunChanges(
  chat: Chat,
  end: RunEnd | undefined,
  later: readonly LaterFile[] = [],
): Promise<void> {
  if (end) {
    try {
      const stored = await chat.reviews.finish(end);
      if (stored) chat.post({ type: 'runChanges', review: stored.review });
      return;
    } catch (e) {
      chat.output.warn(`no review of the run's changes: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (!later.length) return;
  const shown = later.slice(0, 200);
  chat.post({
    type: 'laterChanges',
    files: shown.map((f) => ({
      path: clip(f.path, 2000),
      change: f.change,
      ...(f.diff ? { diff: clip(f.diff, 40_000) } : {}),
    })),
    more: later.length - shown.length,
  });
}
