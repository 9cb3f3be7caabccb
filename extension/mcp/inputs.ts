/**
 * The values of `${input:ID}` in the workspace's `.vscode/mcp.json`: asked once (a password box when
 * the input says so, a pick for pickString), kept in SecretStorage by workspace folder and id, and
 * forgotten with "Lean4 Agentic: Forget MCP Inputs". SecretStorage cannot list its keys, so the ids
 * stored are indexed in the workspace's state (an id is no secret).
 */
import * as vscode from 'vscode';
import type { McpInput } from '../../core/mcp/config';

const INDEX_KEY = 'lean4Agentic.mcpInputIds';
const secretKey = (folder: string, id: string): string => `lean4Agentic.mcpInput:${folder}:${id}`;

type Index = Record<string, string[]>;

export class McpInputs {
  /** Asked during this run: a box the user dismissed is not shown again for the next server. */
  private readonly asked = new Map<string, string | undefined>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    /** The workspace folder's URI, as text. */
    private readonly folder: string,
  ) {}

  /** The stored value, else the user's answer (stored); undefined when the user dismissed the box. */
  async value(input: McpInput, server: string): Promise<string | undefined> {
    if (this.asked.has(input.id)) return this.asked.get(input.id);
    const stored = await this.context.secrets.get(secretKey(this.folder, input.id));
    if (stored !== undefined) return stored;
    const answer = await ask(input, server);
    this.asked.set(input.id, answer);
    if (answer === undefined) return undefined;
    await this.context.secrets.store(secretKey(this.folder, input.id), answer);
    const index = this.context.workspaceState.get<Index>(INDEX_KEY) ?? {};
    const ids = new Set([...(index[this.folder] ?? []), input.id]);
    await this.context.workspaceState.update(INDEX_KEY, { ...index, [this.folder]: [...ids] });
    return answer;
  }
}

async function ask(input: McpInput, server: string): Promise<string | undefined> {
  const title = `Lean4 Agentic: MCP server "${server}" needs ${input.description ?? input.id}`;
  const kept = `Asked once for \${input:${input.id}} and kept in the editor's secret storage ("Lean4 Agentic: Forget MCP Inputs" clears it).`;
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

/** Forgets every input value kept for this workspace's folders; returns how many. */
export async function forgetMcpInputs(context: vscode.ExtensionContext): Promise<number> {
  const index = context.workspaceState.get<Index>(INDEX_KEY) ?? {};
  let n = 0;
  for (const [folder, ids] of Object.entries(index))
    for (const id of ids) {
      await context.secrets.delete(secretKey(folder, id));
      n++;
    }
  await context.workspaceState.update(INDEX_KEY, undefined);
  return n;
}
