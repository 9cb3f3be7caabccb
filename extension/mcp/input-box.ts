/**
 * The box that asks for an `${input:ID}` of the workspace's `.vscode/mcp.json`, for one server: a
 * password box when the input says so, a pick for pickString (kept by inputs.ts).
 */
import * as vscode from 'vscode';
import type { McpInput } from '../../core/mcp/config';

export async function askMcpInput(input: McpInput, server: string): Promise<string | undefined> {
  const title = `Lean4 Agentic: MCP server "${server}" needs ${input.description ?? input.id}`;
  const kept = `Asked once for \${input:${input.id}} of this server and kept in the editor's secret storage ("Lean4 Agentic: Forget MCP Inputs" clears it).`;
  if (input.type === 'pickString') {
    const items = (input.options ?? []).map((label) => ({
      label,
      ...(label === input.default ? { description: '(default)' } : {}),
    }));
    const picked = await vscode.window.showQuickPick(items, { title, placeHolder: kept, ignoreFocusOut: true });
    return picked?.label;
  }
  return vscode.window.showInputBox({
    title,
    prompt: kept,
    password: input.password,
    ignoreFocusOut: true,
    ...(input.default !== undefined ? { value: input.default } : {}),
  });
}
