/** Pure: what the chat shows of a step and of a proposed call. */
import type { ToolCallEvent } from '../../core/schema/trajectory';
import type { GateResult, StepResult } from '../../core/verifier/state';
import { clip, type StepCard } from './chatProtocol';

/** The command, the path, or short JSON. */
export function shortArgs(tool: string, args: unknown, max = 400): string {
  if (args && typeof args === 'object') {
    const a = args as Record<string, unknown>;
    if (tool === 'run_command' && typeof a.command === 'string') return clip(a.command, max);
    if (typeof a.path === 'string' && (tool === 'read_file' || tool === 'write_file' || tool === 'edit_file' || tool === 'list_files')) return clip(a.path, max);
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

export function toStepCard(line: number, event: ToolCallEvent, result: StepResult, gate: GateResult): StepCard {
  const text = event.result?.error ?? event.result?.output;
  return {
    line,
    ...(result.step !== undefined ? { step: result.step } : {}),
    tool: clip(event.tool, 200),
    args: event.argsError !== undefined ? clip(`(arguments not JSON: ${event.argsError})`, 400) : shortArgs(event.tool, event.args),
    status: clip(event.status, 40),
    ...(result.toolReward !== undefined ? { toolReward: result.toolReward } : {}),
    ...(result.stage ? { stage: clip(result.stage, 200) } : {}),
    failed: result.verdicts
      .filter((v) => !v.ok)
      .slice(0, 50)
      .map((v) => ({ check: clip(v.check, 100), reason: clip(v.reason, 1000) })),
    ...(result.stageVisit ? { stageVisit: { stage: clip(result.stageVisit.stage, 200), reward: result.stageVisit.reward } } : {}),
    ...(text ? { excerpt: clip(text.trim(), 2000) } : {}),
    ...(event.status === 'blocked' || gate.decision === 'block' ? { blocked: true } : {}),
  };
}
