/**
 * One command of a terminal session from its start to its result: its markers
 * read from the stream, its output captured, the timers that stop it.
 */
import { rmSync } from 'node:fs';
import type { Completion } from '../schema/trajectory';
import type { Capture } from './capture';
import type { StateFifo } from './fifos';
import { CommandReader } from './markers';
import type { CapOptions } from './output';
import { nonce } from './protocol';
import type { RunResult } from './types';

/** What a command's child wrote of its folder and exported variables (a whole record only). */
export type StateRecord = ReturnType<StateFifo['close']>;

/** How the session stops a command: the completion and what the result adds. */
export type Stop = (completion: Completion, extra: Partial<RunResult>) => void;

export class RunningCommand {
  /** The nonces of the begin and the end marker (the end one reaches the shell only after the command ended). */
  readonly begin = nonce();
  readonly end = nonce();
  done = false;
  started = Date.now();
  lastOutput = this.started;
  /** Where the command's child writes its folder and exported variables (undefined: they are not kept, as for a run in a folder of its own). */
  state: StateFifo | undefined;
  /** The child's script, removed at the end. */
  runner: string | undefined;
  /** Set once the session started stopping the command: how the run ends whatever arrives. */
  stopping: { completion: Completion; extra: Partial<RunResult> } | undefined;
  readonly result: Promise<RunResult>;
  private resolve!: (r: RunResult) => void;
  private readonly reader = new CommandReader(this.begin, this.end);
  private readonly timers: NodeJS.Timeout[] = [];
  private onAbort: (() => void) | undefined;

  constructor(
    readonly command: string,
    private readonly capture: Capture,
    private readonly o: {
      cap: CapOptions;
      signal: AbortSignal | undefined;
      /** It ended, before its result is made. */
      ended: (record: StateRecord) => void;
    },
  ) {
    this.result = new Promise<RunResult>((resolve) => (this.resolve = resolve));
  }

  /** The terminal's text (latin1) while the command runs. */
  read(text: string): void {
    for (const e of this.reader.read(text, this.stopping !== undefined)) {
      if (e.type === 'end') {
        if (this.stopping) this.finish(this.stopping.completion, null, this.stopping.extra);
        else this.finish('marker', e.status);
        return;
      }
      this.lastOutput = Date.now();
      if (e.type === 'output') this.capture.push(e.bytes);
    }
  }

  /** The shell exited: what it printed of the command's output is kept; how the command ended is not known. */
  shellExited(): void {
    if (this.done) return;
    const held = this.reader.flush();
    if (held) this.capture.push(held);
    this.finish('exit', null);
  }

  /**
   * The timers that stop the command by `stop`: at `timeoutMs`; when quiet for
   * `idleMs` while `waiting()` (it reads the terminal); when the signal aborts.
   */
  watch(timeoutMs: number, idleMs: number, waiting: () => boolean, stop: Stop): void {
    // A state larger than the FIFO holds (64 KiB) must not keep the child from ending.
    if (this.state) {
      const drain = (): void => {
        if (this.done) return;
        this.state?.drain();
        this.timers.push(setTimeout(drain, 200));
      };
      this.timers.push(setTimeout(drain, 200));
    }
    // Timeout: interrupt, then kill.
    this.timers.push(setTimeout(() => stop('timeout', {}), timeoutMs));
    // Waiting for input: quiet for idleMs while reading the terminal.
    const checkIdle = (): void => {
      if (this.done) return;
      const quiet = Date.now() - this.lastOutput;
      if (quiet >= idleMs && waiting()) {
        stop('unobserved', { waitingForInput: true });
        return;
      }
      this.timers.push(setTimeout(checkIdle, Math.max(50, Math.min(idleMs, idleMs - quiet))));
    };
    if (idleMs > 0 && Number.isFinite(idleMs)) this.timers.push(setTimeout(checkIdle, idleMs));
    const signal = this.o.signal;
    if (signal) {
      this.onAbort = () => stop('unobserved', { cancelled: true });
      if (signal.aborted) this.onAbort();
      else signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  /** The run's end (the first one counts): its timers stopped, its files closed, its result made. */
  finish(completion: Completion, exitCode: number | null, extra: Partial<RunResult> = {}): void {
    if (this.done) return;
    this.done = true;
    for (const t of this.timers) clearTimeout(t);
    if (this.onAbort) this.o.signal?.removeEventListener('abort', this.onAbort);
    // A file that cannot be closed or removed must not leave the terminal busy and its caller waiting.
    attempt(() => this.capture.close());
    const record = attempt(() => this.state?.close());
    this.state = undefined;
    const runner = this.runner;
    if (runner) attempt(() => rmSync(runner, { force: true }));
    this.o.ended(record);
    const text = this.capture.text(this.o.cap);
    this.resolve({
      exitCode,
      completion,
      output: text.text,
      truncated: text.truncated,
      outputPath: this.capture.path,
      durationMs: Date.now() - this.started,
      outputBytes: this.capture.bytes,
      ...(text.binary ? { binary: true } : {}),
      ...extra,
    });
  }
}

/** `f()`, or undefined where it throws. */
function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}
