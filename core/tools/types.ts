import type { ToolName } from '../schema/tools';
import type { CallStatus, ToolResult } from '../schema/trajectory';

/**
 * What a tool produces: the status and result recorded in the trajectory, and
 * the text the model reads on its next turn.
 */
export interface ToolOutcome {
  status: CallStatus;
  result: ToolResult;
  /** Plain text for the model (already capped and free of terminal escapes). */
  observation: string;
}

export interface ToolContext {
  /** Absolute path of the workspace folder; no tool touches anything outside it. */
  workspace: string;
  signal?: AbortSignal;
}

/** Runs one of the workspace tools (everything but enter_stage and submit). */
export type ToolExecutor = (tool: ToolName, args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolOutcome>;
