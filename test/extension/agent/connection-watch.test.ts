// When the chat re-checks the connection by itself (extension/agent/connection-watch.ts), on a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionWatch, type WatchClock } from '../../../extension/agent/connection-watch';

class FakeClock implements WatchClock {
  t = 0;
  private timers = new Map<number, { at: number; f: () => void }>();
  private seq = 0;
  now(): number {
    return this.t;
  }
  setTimeout(f: () => void, ms: number): unknown {
    this.timers.set(++this.seq, { at: this.t + ms, f });
    return this.seq;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  get pending(): number {
    return this.timers.size;
  }
  /** Moves time on, firing what falls due in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      // What the last timer started (a check, its answer) settles before time moves on.
      await new Promise((r) => setImmediate(r));
      const due = [...this.timers].filter(([, v]) => v.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].f();
    }
    this.t = end;
  }
}

function setUp(opts: { running?: () => boolean; hold?: boolean } = {}) {
  const clock = new FakeClock();
  const checks: { quiet: boolean; release: () => void }[] = [];
  const watch = new ConnectionWatch({
    clock,
    intervalMs: 30_000,
    running: opts.running ?? (() => false),
    check: (quiet) =>
      new Promise<void>((resolve) => {
        checks.push({ quiet, release: resolve });
        if (!opts.hold) resolve();
      }),
  });
  return { clock, checks, watch };
}

test('while the view is visible the connection is checked every 30 s, quietly', async () => {
  const { clock, checks, watch } = setUp();
  watch.setVisible(true);
  await clock.advance(0);
  assert.equal(checks.length, 1, 'at once when the view shows');
  await clock.advance(29_000);
  assert.equal(checks.length, 1);
  await clock.advance(1_000);
  assert.equal(checks.length, 2);
  await clock.advance(60_000);
  assert.equal(checks.length, 4);
  assert.ok(checks.every((c) => c.quiet));
});

test('hidden or disposed, the view is not checked', async () => {
  const { clock, checks, watch } = setUp();
  watch.setVisible(true);
  await clock.advance(0);
  watch.setVisible(false);
  await clock.advance(120_000);
  assert.equal(checks.length, 1);
  assert.equal(clock.pending, 0);
  watch.setVisible(true);
  await clock.advance(0);
  assert.equal(checks.length, 2, 'shown again after a while away: at once');
  watch.dispose();
  await clock.advance(120_000);
  assert.equal(checks.length, 2);
  watch.setVisible(true);
  assert.equal(clock.pending, 0);
});

test('shown again soon after a check, the view waits for the rest of the interval', async () => {
  const { clock, checks, watch } = setUp();
  watch.setVisible(true);
  await clock.advance(10_000);
  watch.setVisible(false);
  watch.setVisible(true);
  await clock.advance(19_000);
  assert.equal(checks.length, 1);
  await clock.advance(1_000);
  assert.equal(checks.length, 2);
});

test('during a run no check is made; the next comes after it', async () => {
  let running = true;
  const { clock, checks, watch } = setUp({ running: () => running });
  watch.setVisible(true);
  await clock.advance(0);
  assert.equal(checks.length, 0, "not even when the view shows: the run's requests say it");
  await clock.advance(90_000);
  assert.equal(checks.length, 0);
  running = false;
  await clock.advance(30_000);
  assert.equal(checks.length, 1);
});

test('checks never overlap: a send that fails during a slow check waits for its answer', async () => {
  const { clock, checks, watch } = setUp({ hold: true });
  watch.setVisible(true);
  await clock.advance(0);
  const again = watch.checkNow();
  await clock.advance(120_000);
  assert.equal(checks.length, 1, 'no second check while the first is out');
  let answered = false;
  void again.then(() => (answered = true));
  checks[0]!.release();
  await clock.advance(0);
  assert.ok(answered);
  await clock.advance(30_000);
  assert.equal(checks.length, 2, 'the schedule goes on from the answer');
});

test('a check asked for (a send failed) is made at once and shows “Checking…”', async () => {
  const { clock, checks, watch } = setUp();
  await watch.checkNow();
  assert.deepEqual(
    checks.map((c) => c.quiet),
    [false],
  );
  await clock.advance(120_000);
  assert.equal(checks.length, 1, 'a hidden view schedules nothing after it');
});
