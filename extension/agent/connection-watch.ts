/**
 * When the chat checks the connection by itself: every little while the view is visible, never during a run
 * (the run's own requests say how the server is) and never two checks at once. No `vscode` and an injected
 * clock, so the schedule is tested without real timers.
 */

/** The timers the watch uses (setTimeout/clearTimeout, or a test's fake clock). */
export interface WatchClock {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: WatchClock = {
  now: () => Date.now(),
  setTimeout: (f, ms) => setTimeout(f, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface WatchOptions {
  /** Asks the server and shows the answer; resolves when done. `quiet`: no "Checking…" in between. */
  check(quiet: boolean): Promise<void>;
  /** A run is in progress. */
  running(): boolean;
  intervalMs?: number;
  clock?: WatchClock;
}

export class ConnectionWatch {
  private visible = false;
  private disposed = false;
  private timer: unknown;
  private inFlight: Promise<void> | undefined;
  private lastCheck = Number.NEGATIVE_INFINITY;
  private readonly intervalMs: number;
  private readonly clock: WatchClock;

  constructor(private readonly opts: WatchOptions) {
    this.intervalMs = opts.intervalMs ?? 30_000;
    this.clock = opts.clock ?? realClock;
  }

  /** The view was shown or hidden: shown after a while away, it checks at once; hidden, it stops. */
  setVisible(visible: boolean): void {
    if (this.disposed || visible === this.visible) return;
    this.visible = visible;
    this.unschedule();
    if (!visible) return;
    const since = this.clock.now() - this.lastCheck;
    // During a run its own requests say whether the server answers: the check waits for a tick after it.
    if (since < this.intervalMs) this.schedule(this.intervalMs - since);
    else if (this.opts.running()) this.schedule(this.intervalMs);
    else void this.checkNow(true);
  }

  /**
   * Checks now (a send failed, the user asked), unless a check is on its way already: that one's answer is
   * the one shown. Resolves when the answer is shown.
   */
  checkNow(quiet = false): Promise<void> {
    if (this.disposed) return Promise.resolve();
    if (this.inFlight) return this.inFlight;
    this.unschedule();
    this.lastCheck = this.clock.now();
    const done = this.opts
      .check(quiet)
      .catch(() => {})
      .finally(() => {
        this.inFlight = undefined;
        this.lastCheck = this.clock.now();
        if (this.visible) this.schedule(this.intervalMs);
      });
    this.inFlight = done;
    return done;
  }

  dispose(): void {
    this.disposed = true;
    this.visible = false;
    this.unschedule();
  }

  private schedule(ms: number): void {
    this.unschedule();
    if (this.disposed || !this.visible) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      // A run's own requests say how the server is: look again once it is over.
      if (this.opts.running()) this.schedule(this.intervalMs);
      else void this.checkNow(true);
    }, ms);
  }

  private unschedule(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
