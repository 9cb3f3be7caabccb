/** Opens a trajectory from the chat in the group that already shows it, or the active one (editor-column.ts). */
import * as vscode from 'vscode';
import { columnFor } from './editor-column';

export function showTrajectory(uri: vscode.Uri): Thenable<vscode.TextEditor> {
  const groups = vscode.window.tabGroups.all.map((g) => ({
    column: g.viewColumn,
    uris: g.tabs.flatMap((t) => (t.input instanceof vscode.TabInputText ? [t.input.uri.toString()] : [])),
  }));
  const column = columnFor(uri.toString(), groups, vscode.window.tabGroups.activeTabGroup.viewColumn);
  return vscode.window.showTextDocument(uri, { preview: false, viewColumn: column });
}
