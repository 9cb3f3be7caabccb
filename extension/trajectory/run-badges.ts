/**
 * Pure: the mark a trajectory file gets in the explorer for how its run went
 * (the file icon is the same for all; this badge and colour tell them apart).
 */
import type { RunEntry } from '../../core/agent/history';

export interface RunBadge {
  badge: string;
  /** Which of the reward colours, or none. */
  tone: 'pass' | 'fail' | 'warn' | 'none';
  tooltip: string;
}

export function runBadge(r: Pick<RunEntry, 'status' | 'outcome' | 'steps' | 'return'>): RunBadge {
  const figures = r.return === undefined ? `${r.steps} steps` : `${r.steps} steps, return ${r.return.toFixed(3)}`;
  switch (r.status) {
    case 'submitted':
      return r.outcome === 1
        ? { badge: '✓', tone: 'pass', tooltip: `Submitted, outcome check passed (${figures})` }
        : { badge: '✗', tone: 'fail', tooltip: `Submitted, outcome check failed (${figures})` };
    case 'answered':
      return { badge: '↩', tone: 'none', tooltip: `Answered: the model replied and handed the turn back (${figures})` };
    case 'interrupted':
      return { badge: '!', tone: 'warn', tooltip: `Interrupted: the editor stopped during the run (${figures})` };
    case 'cancelled':
      return { badge: '■', tone: 'warn', tooltip: `Stopped by the user (${figures})` };
    case 'limit':
      return { badge: '✗', tone: 'fail', tooltip: `Stopped at a limit (${figures})` };
    case 'error':
      return { badge: '✗', tone: 'fail', tooltip: `Ended with an error (${figures})` };
    case 'unfinished':
      return { badge: '…', tone: 'none', tooltip: `No end yet: running, or the editor stopped during it (${figures})` };
  }
}
