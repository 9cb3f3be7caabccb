/**
 * The values of `${input:ID}` in the workspace's `.vscode/mcp.json`: asked once per server (the box
 * is input-box.ts), kept in SecretStorage by workspace folder, server name and id, and forgotten with
 * "Lean4 Agentic: Forget MCP Inputs". Per server: a server added later that names an input kept
 * for another is asked, never handed the other's secret. SecretStorage cannot list its keys, so the
 * keys stored are indexed in the workspace's state (a folder, a server's name and an id are no
 * secrets). Pure of the editor: the storage and the box are given.
 */
import type { McpInput } from '../../core/mcp/config';

/** What of the extension's context the inputs use (vscode.ExtensionContext has both). */
export interface InputStorage {
  readonly secrets: {
    get(key: string): PromiseLike<string | undefined>;
    store(key: string, value: string): PromiseLike<void>;
    delete(key: string): PromiseLike<void>;
  };
  readonly workspaceState: {
    get<T>(key: string): T | undefined;
    update(key: string, value: unknown): PromiseLike<void>;
  };
}

/** Asks the user for an input's value on behalf of a server; undefined when the box was dismissed. */
export type AskInput = (input: McpInput, server: string) => PromiseLike<string | undefined>;

/** The secret keys stored, in the workspace's state. */
const KEYS_INDEX = 'lean4Agentic.mcpInputKeys';
/** Before values were kept per server: folder → ids, each stored as `lean4Agentic.mcpInput:FOLDER:ID`. */
const LEGACY_INDEX = 'lean4Agentic.mcpInputIds';

/** A key no folder, server name or id can make collide with another's (each may hold `:`). */
export const secretKey = (folder: string, server: string, id: string): string =>
  `lean4Agentic.mcpInput:${JSON.stringify([folder, server, id])}`;

export class McpInputs {
  /** Asked during this run, by server and id: a box the user dismissed is not shown again for that server. */
  private readonly asked = new Map<string, string | undefined>();

  constructor(
    private readonly storage: InputStorage,
    /** The workspace folder's URI, as text. */
    private readonly folder: string,
    private readonly ask: AskInput,
  ) {}

  /** The value kept for this server, else the user's answer (kept); undefined when the user dismissed the box. */
  async value(input: McpInput, server: string): Promise<string | undefined> {
    const key = secretKey(this.folder, server, input.id);
    if (this.asked.has(key)) return this.asked.get(key);
    const stored = await this.storage.secrets.get(key);
    if (stored !== undefined) return stored;
    const answer = await this.ask(input, server);
    this.asked.set(key, answer);
    if (answer === undefined) return undefined;
    // Indexed first: a key stored and not indexed could never be forgotten.
    const keys = this.storage.workspaceState.get<string[]>(KEYS_INDEX) ?? [];
    if (!keys.includes(key)) await this.storage.workspaceState.update(KEYS_INDEX, [...keys, key]);
    await this.storage.secrets.store(key, answer);
    return answer;
  }
}

/** Forgets every input value kept for this workspace's folders (those kept before per-server keys too); returns how many. */
export async function forgetMcpInputs(storage: InputStorage): Promise<number> {
  const keys = storage.workspaceState.get<string[]>(KEYS_INDEX) ?? [];
  const legacy = storage.workspaceState.get<Record<string, string[]>>(LEGACY_INDEX) ?? {};
  const all = [
    ...keys,
    ...Object.entries(legacy).flatMap(([folder, ids]) => ids.map((id) => `lean4Agentic.mcpInput:${folder}:${id}`)),
  ];
  for (const key of all) await storage.secrets.delete(key);
  await storage.workspaceState.update(KEYS_INDEX, undefined);
  await storage.workspaceState.update(LEGACY_INDEX, undefined);
  return all.length;
}
