/**
 * Stopping a running command and keeping its shell: the escalating steps, and
 * the sync line that tells when the shell is back, apart from the session.
 */
import type { Completion } from '../schema/trajectory';
import type { RunningCommand } from './command';
import { SyncMarker } from './markers';
import type { ShellProcess } from './process';
import { holdsTerminal, ignoresSignal, jobWaitingOnTerminal, killJob, procInfo } from './procs';
import { nonce, syncLine } from './protocol';
import type { RunResult } from './types';

/** What stopping needs of the session. */
export interface StopHost {
  /** The shell's process now (none, or another, once it was killed or exited). */
  pty(): ShellProcess | undefined;
  /** The shell's own pid, when it is known. */
  ownPid(): number | undefined;
  /** Kill the shell and all it started; the next command gets a fresh one. */
  killShell(): void;
  /** What ends a line typed to the shell. */
  readonly lineEnd: string;
  /** How long each step waits for the shell to come back. */
  readonly graceMs: number;
}

export class CommandStopper {
  private readonly marker = new SyncMarker();
  /** A sync line sent and not yet answered: its answer, and its cancellation. */
  private syncSeen: (() => void) | undefined;
  private cancelSync: (() => void) | undefined;

  constructor(private readonly host: StopHost) {}

  /** Whether `text` holds the answer to the sync line sent (see answered). */
  synced(text: string): boolean {
    return this.syncSeen !== undefined && this.marker.seen(text);
  }

  /** The shell answered the sync line (once the command had the same text). */
  answered(): void {
    this.syncSeen?.();
  }

  /** No sync line may be sent once the next command can start: it could read it as input. */
  cancel(): void {
    this.cancelSync?.();
  }

  /**
   * Stop the running command and keep the shell, step by step, done as soon
   * as the shell answers a sync marker: Ctrl-C; then end-of-file to a job
   * that waits on the terminal (a REPL shrugs off Ctrl-C: python3 prints
   * KeyboardInterrupt and reads on) and as long again for a slow Ctrl-C
   * clean-up; then the job killed under the frozen shell (stopJob). Only when
   * all of that fails is the shell killed with all it started, and the next
   * command gets a fresh one (`shellRestarted`).
   */
  async stop(active: RunningCommand, completion: Completion, extra: Partial<RunResult>): Promise<void> {
    const p = this.host.pty();
    if (active.done || active.stopping || !p) return;
    active.stopping = { completion, extra };
    if (p.mode === 'pipe') {
      // Without a terminal, Ctrl-C cannot reach the command's process group and a
      // non-interactive shell would go on with the rest of the script: end the shell
      // and all it started now (the next command gets a fresh one).
      this.host.killShell();
      return active.finish(completion, null, { ...extra, shellRestarted: true });
    }
    const steps: (() => boolean | Promise<boolean>)[] = [
      () => (p.interrupt(), true),
      () => {
        // Only to a job: the shell's own `read` would take it for end-of-file (it goes on reading,
        // see parentScript, should the job end in between).
        const shell = this.host.ownPid();
        if (shell !== undefined && jobWaitingOnTerminal(shell)) p.write('\x04');
        return true;
      },
      () => {
        const shell = this.host.ownPid();
        return shell === undefined ? false : stopJob(shell);
      },
    ];
    for (const [i, step] of steps.entries()) {
      if ((active.done as boolean) || this.host.pty() !== p) return;
      // A job killed outright could not restore the terminal it changed (a REPL's raw mode:
      // no line ends, no signal keys); bash restores it itself, the others do not.
      if ((await step()) && (await this.sync(this.host.graceMs, i === steps.length - 1)))
        return active.finish(completion, null, extra);
    }
    if (active.done as boolean) return;
    this.host.killShell();
    active.finish(completion, null, { ...extra, shellRestarted: true });
  }

  /**
   * Send a sync line (with `sane`, the shell first puts the terminal back with
   * `stty sane -echo`) until the shell prints its marker or `ms` pass.
   * Output before it is not the command's. The line is typed only while the
   * shell holds the terminal (or that cannot be told): a program holding it (a
   * REPL, a shell the command started) would take it for its own input. It
   * ends in a newline, which ends a line also where a program left the
   * terminal raw (a carriage return then is not turned into one).
   */
  private sync(ms: number, sane = false): Promise<boolean> {
    return new Promise((resolve) => {
      const p = this.host.pty();
      if (!p) return resolve(false);
      const n = nonce();
      this.marker.expect(n);
      let sent = -Infinity;
      const send = (): void => {
        if (this.host.pty() !== p) return end(false);
        const shell = this.host.ownPid();
        if (Date.now() - sent < 400 || (shell !== undefined && holdsTerminal(shell) === false)) return;
        sent = Date.now();
        p.write(`${syncLine(n, sane)}${this.host.lineEnd}`);
      };
      // Ctrl-C flushes pending input; give the line discipline a moment first.
      const ticks = setInterval(send, 100);
      const deadline = setTimeout(() => end(false), ms);
      const end = (ok: boolean): void => {
        clearInterval(ticks);
        clearTimeout(deadline);
        this.cancelSync = undefined;
        this.syncSeen = undefined;
        this.marker.expect('');
        resolve(ok);
      };
      this.syncSeen = () => end(true);
      this.cancelSync = () => end(false);
    });
  }
}

/**
 * Kill the job that holds the terminal and keep the shell: the shell frozen
 * (SIGSTOP on it alone), the job stopped and killed (killJob: the command's
 * child and everything under it, so no further part of the command runs),
 * SIGINT for the shell (its trap lets its loop go on), then the shell let
 * go; it prints the end marker, which the stopping command does not take
 * for its end. False, with nothing killed, when that cannot be done safely:
 * the shell is gone or does not stop, or ignores SIGINT (not the shell the
 * session set up).
 */
async function stopJob(shell: number): Promise<boolean> {
  if (ignoresSignal(shell, 'SIGINT')) return false;
  try {
    process.kill(shell, 'SIGSTOP');
  } catch {
    return false;
  }
  try {
    for (let waited = 0; !/^[Tt]/.test(procInfo(shell)?.state ?? ''); waited += 5) {
      if (waited >= 1000) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
    killJob(shell);
    process.kill(shell, 'SIGINT');
    return true;
  } catch {
    return false;
  } finally {
    try {
      process.kill(shell, 'SIGCONT');
    } catch {
      /* gone */
    }
  }
}
