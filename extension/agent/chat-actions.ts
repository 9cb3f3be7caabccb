/**
 * What the chat's buttons and links do in the editor: a button under an error or the connection line acts on
 * the endpoint the chat runs on (its pick); a link from model text opens only what linkTarget allows.
 */
import * as vscode from 'vscode';
import { DEFAULT_ENDPOINT_NAME } from '../../core/model/endpoints';
import type { ErrorAction } from '../../core/protocol/chat';
import { COMMANDS } from '../../core/protocol/commands';
import { linkTarget } from '../chat/links';
import { openSetting, testConnection } from './connection';
import { chatConfig, type ModelPicker } from './model-picker';

/** The setting each "open setting" action shows (the search the Settings editor opens with). */
const SETTING_OF = {
  openSettings: 'lean4Agentic',
  openEndpointSetting: 'lean4Agentic.endpoint',
  openModelSetting: 'lean4Agentic.model',
  openWorkflowSetting: 'lean4Agentic.workflow',
} as const;

/** Runs a button's action for the chat. */
export function chatAction(
  chat: {
    readonly picker: ModelPicker;
    readonly context: vscode.ExtensionContext;
    readonly output: vscode.LogOutputChannel;
    fail(message: string): void;
  },
  action: ErrorAction,
): void {
  const target = chatConfig(chat.picker.current);
  const named = !('error' in target) && target.endpointName !== DEFAULT_ENDPOINT_NAME;
  if (action === 'openEndpointSetting' && named) void openSetting('lean4Agentic.endpoints');
  else if (action in SETTING_OF) void openSetting(SETTING_OF[action as keyof typeof SETTING_OF]);
  else if (action === 'testConnection') {
    if ('error' in target) chat.fail(target.error);
    else void testConnection(chat.context.secrets, chat.output, target);
  } else void vscode.commands.executeCommand(COMMANDS.setApiKey);
}

/** Opens a link from the chat if linkTarget allows it: web pages outside, workspace files in the editor. */
export async function openLink(href: string): Promise<void> {
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
