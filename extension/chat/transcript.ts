/**
 * Pure: what the chat shows of a conversation read back from its
 * trajectories (core/agent/resume.ts), as the messages the live runs sent:
 * the user's messages, the answers, the step cards with their rewards, the
 * outcome, how each run ended; and when the last run was cut short, a notice
 * that offers Resume.
 */
import type { RecordedRun } from '../../core/agent/resume';
import { chatEvents, wasInterrupted } from '../../core/agent/resume';
import type { GateResult } from '../../core/verifier/types';
import type { RestoreEvent } from '../../core/schema/trajectory';
import { toStepCard } from './cards';
import { clip, type ToWebview } from '../../core/protocol/chat';
import { chipsField } from '../../core/protocol/attachments';
import { attachmentsOf } from '../../core/schema/message-parts';

/** A restore as the chat states it. */
export function restoreLine(r: RestoreEvent): string {
  if (r.step === undefined && !r.undo && r.run) {
    const n = r.reverted.length + r.deleted.length + r.restored.length;
    return `Undone from the changes of ${r.run}: ${n} file${n === 1 ? '' : 's'} put back as before the run (${r.reverted.length} changed back, ${r.deleted.length} deleted, ${r.restored.length} brought back)${r.leftovers?.length ? `; not put back: ${r.leftovers.join(', ')}` : ''}.`;
  }
  if (r.undo)
    return `Restore undone: the workspace is back as it was before it (${r.reverted.length + r.deleted.length + r.restored.length} files).`;
  const n = r.reverted.length + r.deleted.length + r.restored.length;
  return `Workspace restored to before step ${r.step ?? '?'}${r.run ? ` of ${r.run}` : ''}: ${n} file${n === 1 ? '' : 's'} (${r.reverted.length} changed back, ${r.deleted.length} deleted, ${r.restored.length} brought back)${r.leftovers?.length ? `; not put back: ${r.leftovers.join(', ')}` : ''}.`;
}

/** `after`: what the chat shows below a run (its Changes card). */
export function transcriptOf(
  runs: readonly RecordedRun[],
  after: (runFile: string) => ToWebview[] = () => [],
): ToWebview[] {
  const out: ToWebview[] = [];
  const last = runs[runs.length - 1];
  if (!last) return out;
  out.push({
    type: 'restored',
    text: clip(
      `Restored from ${runs.length === 1 ? 'its trajectory' : `the ${runs.length} trajectories of this chat`} (${last.file}).`,
      2000,
    ),
  });
  for (const run of runs) {
    for (const recorded of chatEvents(run)) out.push(...eventMessages(run, recorded));
    out.push(...after(run.file));
  }
  const notice = closingNotice(last);
  if (notice) out.push(notice);
  return out;
}

/** What the live run sent the chat for one recorded event. */
function eventMessages(run: RecordedRun, { line, event, step }: RecordedRun['events'][number]): ToWebview[] {
  switch (event.type) {
    case 'message':
      if (event.role === 'user')
        return [{ type: 'userMessage', text: clip(event.content, 20_000), ...chipsField(attachmentsOf(event.parts)) }];
      else if (event.role === 'assistant' && (event.content || event.reasoning)) {
        return [
          {
            type: 'assistant',
            text: clip(event.content, 200_000),
            ...(event.reasoning ? { reasoning: clip(event.reasoning, 200_000) } : {}),
          },
        ];
      }
      return [];
    case 'tool_call': {
      if (!step) return [];
      // The gate's decision is not recorded; a blocked status says all the card needs.
      const gate: GateResult = {
        decision: event.status === 'blocked' ? 'block' : 'allow',
        verdicts: [],
        reason: '',
        toolReward: step.toolReward ?? 0,
      };
      return [{ type: 'step', card: { ...toStepCard(line, event, step, gate), run: run.file } }];
    }
    case 'outcome':
      return [
        {
          type: 'outcome',
          command: clip(event.command, 2000),
          exitCode: event.exitCode ?? null,
          passed: run.report.summary?.outcome.reward === 1,
          excerpt: clip((event.output ?? '').trim(), 2000),
        },
      ];
    case 'compaction':
      return [
        {
          type: 'compaction',
          text: clip(
            `Context compacted to fit the model's ${event.window.toLocaleString()}-token window: ${event.tokensBefore.toLocaleString()} → ${event.tokensAfter.toLocaleString()} tokens.`,
            2000,
          ),
        },
      ];
    case 'restore':
      return [{ type: 'compaction', text: clip(restoreLine(event), 2000) }];
    case 'end': {
      const s = run.report.summary;
      return [
        {
          type: 'end',
          reason: clip(event.reason, 40),
          ...(event.detail ? { detail: clip(event.detail, 2000) } : {}),
          ...(s ? { summary: { return: s.return, outcome: s.outcome.reward, steps: s.steps } } : {}),
        },
      ];
    }
  }
  return [];
}

/** How the chat's last run stands: branched from a step, or cut short (resumable or maybe still running). */
function closingNotice(last: RecordedRun): ToWebview | undefined {
  if (last.cutAtStep !== undefined) {
    return {
      type: 'restored',
      text: clip(
        `Branched from before step ${last.cutAtStep} of ${last.file}: the conversation and the workspace are as they were there. Send a message to go on from that point.`,
        2000,
      ),
    };
  } else if (wasInterrupted(last)) {
    // A run with no end may still be going on in another window: it can be read, not resumed (the
    // next start of the editor marks it interrupted once it is old enough to be dead).
    return {
      type: 'interrupted',
      file: last.file,
      resumable: last.end !== undefined,
      text: clip(
        last.end
          ? `This run was interrupted: ${last.end.detail ?? 'the editor stopped during it'}.`
          : 'This run has no end: it may still be running in another window, or the editor stopped during it. It can be resumed once it is marked interrupted.',
        2000,
      ),
    };
  }
  return undefined;
}

/**
 * What Resume tells the model (recorded as the user's message: it is what the user asked for), with what the
 * interrupted run's end line says was lost (the command in flight).
 */
export function resumeMessage(detail: string | undefined): string {
  const lost = detail && /, while .* was running/.exec(detail)?.[0];
  return `The editor closed during your last run, which was interrupted${lost ? `${lost.replace(/^,/, '')}` : ''}. Continue the task from where you stopped.`;
}
