/**
 * The MCP commands: Forget MCP Inputs (the `${input:…}` values kept for this workspace) and Reset MCP
 * Server Permissions (the answers to the allow prompt: each workspace server is asked for again).
 */
import * as vscode from 'vscode';
import { COMMANDS } from '../../core/protocol/commands';
import { forgetMcpInputs } from './inputs';
import { CONSENT_KEY } from './run-mcp';

export function registerMcpCommands(context: vscode.ExtensionContext): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(COMMANDS.forgetMcpInputs, async () => {
      const n = await forgetMcpInputs(context);
      void vscode.window.showInformationMessage(
        n
          ? `Lean4 Agentic: forgot ${n} MCP input value${n === 1 ? '' : 's'} of this workspace; the next run asks again.`
          : 'Lean4 Agentic: no MCP input values are kept for this workspace.',
      );
    }),
    vscode.commands.registerCommand(COMMANDS.resetMcpPermissions, async () => {
      const answers = context.workspaceState.get<Record<string, unknown>>(CONSENT_KEY) ?? {};
      await context.workspaceState.update(CONSENT_KEY, undefined);
      const n = Object.keys(answers).length;
      void vscode.window.showInformationMessage(
        n
          ? `Lean4 Agentic: forgot whether you allowed ${n} MCP server configuration${n === 1 ? '' : 's'} of this workspace; the next run asks again.`
          : 'Lean4 Agentic: no answer about MCP servers is kept for this workspace.',
      );
    }),
  ];
}
