/** Pure: what the chat shows of a step and of a proposed call. */
import type { ToolCallEvent } from '../../core/schema/trajectory';
import type { GateResult, StepResult } from '../../core/verifier/types';
import { stripTerminal } from '../../core/shell/output';
import { clip, OUTPUT_TAIL, type McpToolLabel, type StepCard } from '../../core/protocol/chat';
import { parseMcpName } from '../../core/schema/mcp';

/** An MCP tool's server and name as the card shows them (the server's own name for the tool once a call reached it). */
export function mcpLabel(tool: string, recorded?: { tool: string }): { mcp?: McpToolLabel } {
  const parts = parseMcpName(tool);
  return parts ? { mcp: { server: clip(parts.server, 200), tool: clip(recorded?.tool ?? parts.tool, 200) } } : {};
}

/** The command, the path, or short JSON. */
export function shortArgs(tool: string, args: unknown, max = 400): string {
  if (args && typeof args === 'object') {
    const a = args as Record<string, unknown>;
    if (tool === 'run_command' && typeof a.command === 'string') return clip(a.command, max);
    if (
      typeof a.path === 'string' &&
      (tool === 'read_file' || tool === 'write_file' || tool === 'edit_file' || tool === 'list_files')
    )
      return clip(a.path, max);
    if (tool === 'enter_stage' && typeof a.stage === 'string') return clip(a.stage, max);
  }
  let json: string;
  try {
    json = JSON.stringify(args) ?? 'null';
  } catch {
    json = String(args);
  }
  return clip(json, max);
}

/** A command that ran but failed says its exit code, not "ok" (the call itself went through). */
function stepStatus(event: ToolCallEvent): string {
  const code = event.result?.exitCode;
  if (event.status === 'ok' && event.tool === 'run_command' && typeof code === 'number' && code !== 0)
    return `exit ${code}`;
  return event.status;
}

export function toStepCard(line: number, event: ToolCallEvent, result: StepResult, gate: GateResult): StepCard {
  const text = event.result?.error ?? event.result?.output;
  return {
    line,
    ...(event.id ? { id: clip(event.id, 200) } : {}),
    ...(event.checkpoint ? { checkpoint: event.checkpoint } : {}),
    ...(event.result?.durationMs !== undefined ? { durationMs: Math.max(0, Math.round(event.result.durationMs)) } : {}),
    ...(result.step !== undefined ? { step: result.step } : {}),
    tool: clip(event.tool, 200),
    ...mcpLabel(event.tool, event.mcp),
    args:
      event.argsError !== undefined
        ? clip(`(arguments not JSON: ${event.argsError})`, 400)
        : shortArgs(event.tool, event.args),
    status: clip(stepStatus(event), 40),
    ...(result.toolReward !== undefined ? { toolReward: result.toolReward } : {}),
    ...(result.stage ? { stage: clip(result.stage, 200) } : {}),
    failed: result.verdicts
      .filter((v) => !v.ok)
      .slice(0, 50)
      .map((v) => ({ check: clip(v.check, 100), reason: clip(v.reason, 1000) })),
    ...(result.stageVisit
      ? { stageVisit: { stage: clip(result.stageVisit.stage, 200), reward: result.stageVisit.reward } }
      : {}),
    ...(text ? { excerpt: clip(text.trim(), 2000) } : {}),
    ...(event.status === 'blocked' || gate.decision === 'block' ? { blocked: true } : {}),
  };
}

/**
 * The end of a running command's output as a live card shows it: terminal
 * escapes and overwrites applied, the last `maxLines` lines of at most
 * `maxChars`. Raw data is kept a little past that so an escape sequence or a
 * \r-overwritten progress line split across chunks still comes out right.
 */
export class OutputTail {
  private raw = '';
  bytes = 0;

  constructor(
    private readonly maxChars = OUTPUT_TAIL,
    private readonly maxLines = 20,
  ) {}

  push(data: string): void {
    this.bytes += Buffer.byteLength(data);
    this.raw += data;
    const keep = this.maxChars * 4;
    if (this.raw.length > keep * 2) {
      // Cut at a line start so no escape sequence is cut in half.
      const from = this.raw.length - keep;
      const nl = this.raw.indexOf('\n', from);
      this.raw = nl >= 0 ? this.raw.slice(nl + 1) : this.raw.slice(from);
    }
  }

  get text(): string {
    const lines = stripTerminal(this.raw).replace(/\n+$/, '').split('\n');
    const tail = lines.slice(-this.maxLines).join('\n');
    return tail.length > this.maxChars ? tail.slice(tail.length - this.maxChars) : tail;
  }
}
