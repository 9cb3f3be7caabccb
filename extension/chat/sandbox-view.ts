/** Pure: how a run's sandbox is shown under its task: a line, and what the commands cannot change with why. */
import { clip, type ToWebview } from '../../core/protocol/chat';
import { describeSandbox, type SandboxSummary } from '../../core/sandbox/plan';
import { PROTECTION_WHY } from '../../core/sandbox/refusals';

export function sandboxForChat(
  confined: boolean,
  summary: SandboxSummary,
  refusal: string | undefined,
): Extract<ToWebview, { type: 'runStarted' }>['sandbox'] {
  const protections = confined ? (summary.protections ?? []) : [];
  return {
    confined,
    text: clip(refusal ?? describeSandbox(summary), 2000),
    ...(protections.length
      ? {
          protections: protections.slice(0, 300).map((p) => ({
            path: clip(p.path, 2000),
            why: clip(p.note ? `${PROTECTION_WHY[p.why]}: ${p.note}` : PROTECTION_WHY[p.why], 300),
          })),
        }
      : {}),
  };
}
