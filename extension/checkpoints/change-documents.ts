/**
 * Read-only documents holding a file's text before and after an agent's
 * write, so `vscode.diff` can show the change (with the file's language, from
 * the path kept at the end of the URI).
 */
import * as vscode from 'vscode';
import { CHANGE_ID } from '../../core/protocol/chat';
import type { FileChange, FileChanges } from './file-changes';

export const CHANGE_SCHEME = 'lean4agentic-change';

export function changeUri(c: FileChange, side: 'before' | 'after'): vscode.Uri {
  return vscode.Uri.from({ scheme: CHANGE_SCHEME, path: `/${c.id}/${side}/${c.path}` });
}

export function registerChangeDocuments(changes: FileChanges): vscode.Disposable {
  const provider: vscode.TextDocumentContentProvider = {
    provideTextDocumentContent(uri) {
      const [, id, side] = uri.path.split('/');
      const c = id && CHANGE_ID.test(id) ? changes.get(id) : undefined;
      if (!c) return '(this change is no longer kept)';
      return side === 'before' ? c.before : c.after;
    },
  };
  return vscode.workspace.registerTextDocumentContentProvider(CHANGE_SCHEME, provider);
}
