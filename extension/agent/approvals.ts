/**
 * Pure: the approval policy. The workflow's `ask` patterns (destructive
 * commands) always ask; otherwise the per-tool setting
 * (`lean4Agentic.approvals`, tool → "auto" | "ask", missing = auto) decides.
 * A blocked call stays blocked: approval never overrides the verifier (with
 * enforcement `warn`, where a blocked call may run, it must be approved too).
 */
import type { GateResult } from '../../core/verifier/types';

export type ApprovalMode = 'auto' | 'ask';

/** The setting for one tool; anything but "ask" is auto. */
export function toolMode(approvals: Record<string, unknown>, tool: string): ApprovalMode {
  return Object.prototype.hasOwnProperty.call(approvals, tool) && approvals[tool] === 'ask' ? 'ask' : 'auto';
}

/** Whether a call the verifier did not block must be approved by the user. */
export function needsApproval(mode: ApprovalMode, askPattern: string | undefined): boolean {
  return askPattern !== undefined || mode === 'ask';
}

/** The gate's answer with the user's per-tool setting applied on top. */
export function applyApprovalPolicy(gate: GateResult, tool: string, approvals: Record<string, unknown>): GateResult {
  // A blocked call may still run under enforcement `warn`: it then needs the same approval.
  if (gate.decision === 'block')
    return toolMode(approvals, tool) === 'ask'
      ? { ...gate, askReason: `the setting lean4Agentic.approvals asks before ${tool} runs` }
      : gate;
  if (gate.decision !== 'allow') return gate;
  if (!needsApproval(toolMode(approvals, tool), gate.askPattern)) return gate;
  return { ...gate, decision: 'ask', reason: `the setting lean4Agentic.approvals asks before ${tool} runs` };
}
