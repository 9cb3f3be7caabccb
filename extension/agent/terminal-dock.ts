/**
 * One editor terminal for the agent's runs, not one per run: a run writes on in the terminal of the run
 * before once that run ended, if it is named the same (confined the same way); else the ended one is closed.
 * Pure (no `vscode`), so the policy is tested on its own.
 */
export interface Dockable {
  /** The terminal's name: it says how the run's commands are confined, so a differently confined run gets its own. */
  readonly name: string;
  /** The user closed it. */
  readonly closed: boolean;
  dispose(): void;
}

export class TerminalDock<T extends Dockable> {
  private last: T | undefined;
  private readonly inUse = new Set<T>();

  /** The terminal for a run that starts now: the ended run's when it fits (`reused` is told), else a new one. */
  take(name: string, create: () => T, reused: (t: T) => void): T {
    const prev = this.last;
    if (prev && !prev.closed && !this.inUse.has(prev)) {
      if (prev.name === name) {
        this.inUse.add(prev);
        reused(prev);
        return prev;
      }
      prev.dispose();
    }
    const t = create();
    this.inUse.add(t);
    this.last = t;
    return t;
  }

  /** The run is over: its terminal stays open to read, and the next run may write on in it. */
  release(t: T): void {
    this.inUse.delete(t);
  }
}
