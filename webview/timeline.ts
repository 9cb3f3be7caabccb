/**
 * The chat's stage timeline, built from the step cards as they arrive: one
 * entry per stage visit, open while the agent works in it, then closed with
 * the visit's reward. Pure (no DOM, no `vscode`), so the webview only draws it.
 */
import type { StepCard } from '../core/protocol/chat';

export interface TimelineVisit {
  stage: string;
  /** Set once the visit has ended. */
  reward?: number;
  /** Steps taken in the visit so far. */
  steps: number;
}

export class StageTimeline {
  readonly visits: TimelineVisit[] = [];

  /** Takes a card in; returns whether the timeline changed. */
  apply(card: StepCard): boolean {
    let changed = false;
    const last = this.visits.at(-1);
    if (card.stage) {
      if (!last || last.reward !== undefined || last.stage !== card.stage) {
        this.visits.push({ stage: card.stage, steps: 0 });
      }
      this.visits.at(-1)!.steps++;
      changed = true;
    }
    if (card.stageVisit) {
      const open = [...this.visits].reverse().find((v) => v.reward === undefined && v.stage === card.stageVisit!.stage);
      if (open) open.reward = card.stageVisit.reward;
      else this.visits.push({ stage: card.stageVisit.stage, steps: 0, reward: card.stageVisit.reward });
      changed = true;
    }
    // A stage entered opens its visit now, not at its first step: the timeline shows where the agent is.
    if (card.tool === 'enter_stage' && card.status === 'ok' && !card.blocked && card.args && card.stageVisit) {
      this.visits.push({ stage: card.args, steps: 0 });
      changed = true;
    }
    return changed;
  }

  clear(): void {
    this.visits.length = 0;
  }
}
