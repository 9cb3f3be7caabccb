/**
 * Checkpoints in the editor: the workspace's store (core/checkpoints) in the
 * extension's global storage, the `lar-checkpoint:` documents the diff shows,
 * and "Restore to here": unsaved editors first, the diff of every file that
 * would change, a confirmation, the restore, what it did as a RestoreEvent.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CheckpointStore, type CheckpointChange } from '../../core/checkpoints/store';
import type { RestoreEvent } from '../../core/schema/trajectory';
import { isInside } from '../../core/workspace/fs';

export const CHECKPOINT_SCHEME = 'lar-checkpoint';

/** How long checkpoints are kept. */
const RETENTION_MS = 14 * 24 * 60 * 60 * 1000;

export class Checkpoints implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private stores = new Map<string, Promise<CheckpointStore | { unavailable: string }>>();
  private warned = false;
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.subs.push(vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, this));
  }

  /** The store of `workspace`, or undefined (said once in the log and a message) when there can be none. */
  async store(workspace: string): Promise<CheckpointStore | undefined> {
    let p = this.stores.get(workspace);
    if (!p) {
      p = CheckpointStore.open({ storage: this.context.globalStorageUri.fsPath, workspace });
      this.stores.set(workspace, p);
      // Once a session: checkpoints older than two weeks are forgotten, so the store does not only grow.
      void p
        .then((s) => ('unavailable' in s ? 0 : s.prune(RETENTION_MS)))
        .then(
          (n) => n && this.output.info(`forgot ${n} checkpoint(s) older than 14 days`),
          (e: unknown) =>
            this.output.warn(`could not prune old checkpoints: ${e instanceof Error ? e.message : String(e)}`),
        );
    }
    const s = await p.catch((e: unknown) => ({ unavailable: e instanceof Error ? e.message : String(e) }));
    if ('unavailable' in s) {
      this.output.warn(`checkpoints are off: ${s.unavailable}`);
      if (!this.warned) {
        this.warned = true;
        void vscode.window.showWarningMessage(
          `Lean4 Agentic takes no checkpoints, so steps cannot be restored: ${s.unavailable}`,
        );
      }
      this.stores.delete(workspace);
      return undefined;
    }
    return s;
  }

  /** `lar-checkpoint:/<path>?<commit>`: a file as it was at a checkpoint (empty when it did not exist there). */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder || !uri.query) return '';
    const store = await this.store(folder.uri.fsPath);
    const data = await store?.show(uri.query, uri.path.replace(/^\//, '')).catch(() => undefined);
    if (!data) return '';
    return data.includes(0) ? `(binary file, ${data.length} bytes)` : data.toString('utf8');
  }

  /** A file as it was at a checkpoint, as a read-only document (empty when it did not exist there). */
  uriAt(commit: string, path: string): vscode.Uri {
    return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${path}`, query: commit });
  }

  /**
   * Puts the workspace back to `commit` once the user has seen what changes
   * and agreed. Returns what it did, or undefined when nothing was done
   * (cancelled, nothing to change).
   */
  async restore(
    workspace: string,
    commit: string,
    where: { step?: number; run?: string; undo?: boolean },
    stillIdle: () => boolean = () => true,
  ): Promise<RestoreEvent | 'unchanged' | undefined> {
    const store = await this.store(workspace);
    if (!store) return undefined;
    // Unsaved edits would be lost under the restore, or undo it when saved.
    const dirty = vscode.workspace.textDocuments.filter(
      (d) => d.isDirty && d.uri.scheme === 'file' && isInside(workspace, d.uri.fsPath, false),
    );
    if (dirty.length) {
      const pick = await vscode.window.showWarningMessage(
        `${dirty.length} file${dirty.length === 1 ? ' has' : 's have'} unsaved changes in the workspace. Save before the restore?`,
        { modal: true, detail: dirty.map((d) => vscode.workspace.asRelativePath(d.uri)).join('\n') },
        'Save and Continue',
      );
      if (pick !== 'Save and Continue') return undefined;
      for (const d of dirty) await d.save();
    }
    const target = where.step
      ? `before step ${where.step}${where.run ? ` of ${where.run}` : ''}`
      : 'as it was before the last restore';
    const { pre, changes } = await store.preview(commit);
    if (!changes.length) return 'unchanged';
    await this.showDiff(workspace, changes, pre.commit, commit, target);
    const list = (kind: CheckpointChange['change'], label: string) => {
      const paths = changes.filter((c) => c.change === kind).map((c) => c.path);
      return paths.length
        ? `${label}: ${paths.slice(0, 15).join(', ')}${paths.length > 15 ? ` and ${paths.length - 15} more` : ''}`
        : '';
    };
    const detail = [
      list('modified', 'Changed back'),
      list('deleted', 'Deleted (made after that point)'),
      list('added', 'Brought back'),
      'Files ignored by .gitignore, node_modules, .lar and large files are left alone. Undo is offered in the chat.',
    ]
      .filter(Boolean)
      .join('\n');
    const ok = await vscode.window.showWarningMessage(
      `Restore the workspace to how it was ${target}? ${changes.length} file${changes.length === 1 ? '' : 's'} change.`,
      { modal: true, detail },
      'Restore',
    );
    if (ok !== 'Restore') return undefined;
    // A run may have begun while the dialog was open: the files are its now.
    if (!stillIdle()) throw new Error('a run started meanwhile; nothing was restored');
    const r = await store.restore(commit, pre.commit);
    this.output.info(
      `restored the workspace to ${commit} (${target}): ${r.changes.length} file(s) in ${r.ms} ms${r.leftovers.length ? `; not put back: ${r.leftovers.join(', ')}` : ''}`,
    );
    return {
      type: 'restore',
      checkpoint: commit,
      ...(where.step ? { step: where.step } : {}),
      ...(where.run ? { run: where.run } : {}),
      ...(where.undo ? { undo: true as const } : {}),
      before: pre.commit,
      reverted: r.changes.filter((c) => c.change === 'modified').map((c) => c.path),
      deleted: r.changes.filter((c) => c.change === 'deleted').map((c) => c.path),
      restored: r.changes.filter((c) => c.change === 'added').map((c) => c.path),
      ...(r.leftovers.length ? { leftovers: r.leftovers } : {}),
      at: new Date().toISOString(),
    };
  }

  /** Every file that would change, now against the checkpoint, in one multi-file diff (one diff for a single file). */
  private async showDiff(
    workspace: string,
    changes: CheckpointChange[],
    now: string,
    target: string,
    what: string,
  ): Promise<void> {
    const rows = changes.slice(0, 200).map((c) => {
      const file = vscode.Uri.file(join(workspace, c.path));
      // Left: as it is now (the snapshot just taken), right: as the restore leaves it.
      return [file, this.uriAt(now, c.path), this.uriAt(target, c.path)] as const;
    });
    const title = `Restore ${what} (now ↔ after the restore)`;
    try {
      await vscode.commands.executeCommand('vscode.changes', title, rows);
    } catch {
      const first = rows[0]!;
      await vscode.commands.executeCommand('vscode.diff', first[1], first[2], `${changes[0]!.path}: ${title}`);
    }
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}
