/**
 * What the agent loop and the applications see of a run's MCP servers: apart from the hub so the
 * loop, the editor and tests depend on the contract, not on how servers are reached.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { McpCallRecord, McpServerRecord, McpToolsEvent } from '../schema/mcp';
import type { ToolOutcome } from '../tools/types';

/** A call's outcome, with the server and tool it went to (absent when it went nowhere). */
export type McpCallOutcome = ToolOutcome & { mcp?: McpCallRecord };

/** A sentence about the servers: for the user in full; for the model without any text a server wrote. */
export interface McpNote {
  user: string;
  model: string;
}

/** One server as the chat lists it. */
export interface McpServerState {
  server: string;
  label: string;
  transport: McpServerRecord['transport'];
  state: 'ready' | 'failed' | 'stopped';
  /** Its tools' stable names (mcp__SERVER__TOOL). */
  tools: string[];
  error?: string;
}

export interface McpTools {
  /** The servers as the header records them. */
  readonly servers: McpServerRecord[];
  /** Waits (2 s at most) for a list being read again after a server said it changed (a call's answer often comes with the notice). */
  settle(signal?: AbortSignal): Promise<void>;
  /**
   * What changed since the last take (the start's listings first): lines to record, and sentences for
   * the user (with what a server said: its stderr, its errors) and for the model (without it).
   */
  takeChanges(): { events: McpToolsEvent[]; notes: McpNote[] };
  /** The function definitions of the tools `permits` lets through (the current stage's). */
  definitions(permits: (name: string) => boolean): ChatCompletionTool[];
  /** Why a call of `name` needs the user's approval (the tool does not say it only reads), if it does. */
  approvalReason(name: string): string | undefined;
  /** Whether a call of `name` may change the workspace: its server runs here (stdio), not behind a URL. */
  touchesWorkspace(name: string): boolean;
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallOutcome>;
  state(): McpServerState[];
  close(): Promise<void>;
}
