/**
 * The agent's file system in the editor: reads, stats and listings through
 * the Node implementation, writes through `vscode.WorkspaceEdit` so the user
 * can undo them (a new file: createFile with its contents; an existing one: a
 * full-range replace, then saved so commands see it). Every path is confined
 * to the workspace (symlinks included) before anything happens.
 */
import * as vscode from 'vscode';
import {
  describeFsError,
  prepareWrite,
  MAX_WRITE_BYTES,
  type ConfinedPath,
  type FileStat,
  type FsResult,
  type ListOptions,
  type ListResult,
  type ReadResult,
  type WorkspaceFs,
  type WriteResult,
} from '../../core/workspace/fs';
import { NodeWorkspaceFs } from '../../core/workspace/node-fs';

export class VscodeWorkspaceFs implements WorkspaceFs {
  private readonly node: NodeWorkspaceFs;

  /**
   * @param onWrite told of every write that was applied, with the text before
   *   (undefined for a new file) and after, for the diff on request.
   */
  constructor(
    readonly workspace: string,
    private readonly onWrite?: (path: string, before: string | undefined, after: string) => void,
    readOnly: readonly string[] = [],
  ) {
    this.node = new NodeWorkspaceFs(workspace, readOnly);
  }

  realPath(path: string): Promise<FsResult<ConfinedPath>> {
    return this.node.realPath(path);
  }

  stat(path: string): Promise<FsResult<FileStat>> {
    return this.node.stat(path);
  }

  readText(path: string, opts?: { maxBytes?: number }): Promise<FsResult<ReadResult>> {
    return this.node.readText(path, opts);
  }

  list(path: string, opts?: ListOptions): Promise<FsResult<ListResult>> {
    return this.node.list(path, opts);
  }

  async writeText(path: string, content: string): Promise<FsResult<WriteResult>> {
    const ws = await this.node.open();
    if (!ws.ok) return ws;
    const target = await prepareWrite(ws.value, path);
    if (!target.ok) return target;
    const { absolute, relative, exists, regularFile } = target.value;
    const uri = vscode.Uri.file(absolute);
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > MAX_WRITE_BYTES)
      return { ok: false, error: `the content is ${bytes} bytes; the file tools write at most ${MAX_WRITE_BYTES}` };
    let before: string | undefined;
    try {
      const edit = new vscode.WorkspaceEdit();
      if (exists) {
        if (!regularFile) return { ok: false, error: `"${path}" is not a regular file` };
        const doc = await vscode.workspace.openTextDocument(uri);
        before = doc.getText();
        const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(before.length));
        edit.replace(uri, whole, content, { label: `Lean4 Agentic: write ${relative}`, needsConfirmation: false });
        if (!(await vscode.workspace.applyEdit(edit)))
          return { ok: false, error: `the editor refused the change to "${path}"` };
        if (doc.isDirty && !(await doc.save()))
          return { ok: false, error: `"${path}" was changed in the editor but could not be saved` };
      } else {
        edit.createFile(
          uri,
          { overwrite: true, contents: Buffer.from(content, 'utf8') },
          { label: `Lean4 Agentic: create ${relative}`, needsConfirmation: false },
        );
        if (!(await vscode.workspace.applyEdit(edit)))
          return { ok: false, error: `the editor refused to create "${path}"` };
      }
      this.onWrite?.(relative, before, content);
      return { ok: true, value: { path: relative, created: !exists, bytes } };
    } catch (e) {
      return { ok: false, error: describeFsError(e, path) };
    }
  }
}
