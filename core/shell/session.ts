/**
 * A real shell in a pseudo-terminal (node-pty) that runs one command at a time
 * and observes its end itself.
 *
 * The shell never runs a command itself: after its set-up it runs a loop that
 * reads the terminal as data, and each command runs in a child of it (a
 * subshell; `zsh -f`; a `fish` process) from a file, framed by two markers
 * the shell prints:
 *
 *     __LAR_B_<begin>__
 *     …the command's output…
 *     __LAR_E_<end>_<status>__
 *
 * `status` is what the kernel reported for the child. Both nonces are random
 * per command and reach the shell through a FIFO only it holds, not the
 * terminal; the end nonce is read only after the child ended, so neither the
 * command nor anything it left running can print the end marker, and nothing
 * a command does (functions, aliases, traps, `enable -n`, hooks, a process
 * reading the terminal) changes how a later command's end is seen. What
 * carries from one command to the next is its folder and its exported
 * variables, as data (see shell-protocol.ts).
 * Everything between the markers is the command's output: saved raw to
 * `outputPath`, and given to the model stripped and capped (see output.ts).
 * How a run ended is its `completion` (see types.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Completion } from '../schema/trajectory';
import { Capture, CommandLogs } from './capture';
import { FifoFolder, writeRecords, type StateFifo } from './fifos';
import { commandScript, dialectOf, initLine, pickShell, shellKind, type ShellKind } from './kinds';
import { CommandReader, ReadyMarker, SyncMarker } from './markers';
import { usesPipes, type ShellMode, type ShellProcess } from './process';
import {
  alive,
  findShell,
  holdsTerminal,
  ignoresSignal,
  jobWaitingOnTerminal,
  killAll,
  killJob,
  killTree,
  procInfo,
  sessionProcesses,
  waitingOnTerminal,
} from './procs';
import { nonce, runLine, runnerPath, runnerScript, syncLine, type CarriedState } from './protocol';
import { assertTypable } from './quote';
import { closeChannel, executeOnlyCopy, launchShell, startDone, startFiles, type StartFiles } from './startup';
import { TerminalBusyError, timerMs, type RunOptions, type RunResult, type TerminalOptions } from './types';

interface Active {
  command: string;
  /** The nonces of the begin and the end marker (the end one reaches the shell only after the command ended). */
  begin: string;
  end: string;
  /** Where the command's child writes its folder and exported variables (undefined: they are not kept, as for a run in a folder of its own). */
  state?: StateFifo;
  done: boolean;
  /** Its markers in the terminal's stream. */
  reader: CommandReader;
  capture: Capture;
  started: number;
  finish: (completion: Completion, exitCode: number | null, extra?: Partial<RunResult>) => void;
  lastOutput: number;
  /** Set once the session started stopping the command: how the run ends whatever arrives. */
  stopping?: { completion: Completion; extra: Partial<RunResult> };
}

export class TerminalSession {
  private pty: ShellProcess | undefined;
  private kind: ShellKind;
  private shellPath: string;
  private active: Active | undefined;
  private listeners = new Set<(data: string) => void>();
  private exitListeners = new Set<(code: number) => void>();
  private seq = 0;
  private starting: Promise<void> | undefined;
  private readonly ready = new ReadyMarker();
  private readyResolve: (() => void) | undefined;
  private readonly syncMarker = new SyncMarker();
  private syncSeen: (() => void) | undefined;
  private disposed = false;
  /** Names this session's files apart from another session's in the same folder. */
  private readonly tag = randomBytes(3).toString('hex');
  /** The shell's own pid when a launcher started it (else the pty's pid is the shell's). */
  private innerPid: number | undefined;
  /** `pty` or `pipe`, as the shell last started. */
  private lastMode: ShellMode | undefined;
  private readonly logs: CommandLogs;
  private exitWhileStarting: ((code: number) => void) | undefined;
  /** The execute-only copy of the shell, made once per session (see startup.ts). */
  private shellCopy: string | undefined;
  /** The session's private folders (made at the first start). */
  private fifos: FifoFolder | undefined;
  /** The channel of the running shell (see protocol.ts). */
  private channel: { path: string; fd: number; baseline: StateFifo } | undefined;
  /** What child processes of the shell start with, as the shell last wrote it (undefined: not known). */
  private baseline: Map<string, string> | undefined;
  /** The folder and exported variables the last commands left: kept by the session, over a restart too. */
  private carried: CarriedState = {};

  constructor(private readonly options: TerminalOptions) {
    this.shellPath = pickShell(options.env, options.shell);
    // fish cannot read its commands from a pipe (it fails with "Unable to read input
    // file"): without a terminal, a POSIX shell runs them instead.
    if (usesPipes(options.mode) && shellKind(this.shellPath) === 'fish') this.shellPath = pickShell({});
    this.kind = shellKind(this.shellPath) ?? 'posix';
    // The shell's own script is in this folder (or a private one of the session's), and its path
    // is typed on the shell's input line at start: quoting makes it one word, but a control
    // character in it would act on the terminal.
    const scripts = options.scriptDir ?? options.outputDir;
    assertTypable(
      scripts,
      `the ${options.scriptDir ? 'command file' : 'output'} folder ${JSON.stringify(scripts)}`,
      dialectOf(this.kind),
    );
    mkdirSync(options.outputDir, { recursive: true });
    if (options.scriptDir) mkdirSync(options.scriptDir, { recursive: true });
    this.logs = new CommandLogs(options.outputDir, this.tag);
    this.prepareLog();
  }

  /** `pty` (node-pty) or `pipe` (the fallback when node-pty cannot load); undefined before the shell first started. */
  get mode(): ShellMode | undefined {
    return this.lastMode;
  }

  /** The pid of the process node-pty started (the launcher's, when there is one) while it runs. */
  get pid(): number | undefined {
    return this.pty?.pid;
  }

  /** The shell's own pid (inside a launcher: found once it is ready). */
  get shellPid(): number | undefined {
    return this.pty ? (this.innerPid ?? this.pty.pid) : undefined;
  }

  /** Whether the shell runs through a launcher (the sandbox). */
  get launched(): boolean {
    return this.options.launcher !== undefined;
  }

  get shell(): string {
    return this.shellPath;
  }

  /** Raw pty data, for mirroring into an editor terminal. */
  onData(listener: (data: string) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The shell exited (by itself or killed). */
  onExit(listener: (code: number) => void): { dispose(): void } {
    this.exitListeners.add(listener);
    return { dispose: () => this.exitListeners.delete(listener) };
  }

  resize(cols: number, rows: number): void {
    this.pty?.resize(Math.max(1, cols), Math.max(1, rows));
  }

  /** Start the shell (runs also happen to start it). */
  start(): Promise<void> {
    if (this.disposed) return Promise.reject(new Error('the terminal session was disposed'));
    if (this.pty) return this.starting ?? Promise.resolve();
    const launcher = this.options.launcher;
    const shellFile =
      launcher && this.options.shellCopyDir ? this.unreadableCopy(this.options.shellCopyDir) : this.shellPath;
    let files: StartFiles;
    try {
      const base = this.options.scriptDir ?? (launcher ? this.options.outputDir : undefined);
      this.fifos ??= new FifoFolder(base);
      const piped = usesPipes(this.options.mode);
      files = startFiles(this.fifos, { kind: this.kind, tag: this.tag, shellFile, piped });
    } catch (e) {
      return Promise.reject(new Error(`the shell's private channel could not be made: ${(e as Error).message}`));
    }
    this.ready.expect(files.readyNonce);
    const p = launchShell(this.options, this.kind, this.shellPath, shellFile);
    this.pty = p;
    this.innerPid = undefined;
    this.lastMode = p.mode;
    this.channel = { ...files.channel, baseline: files.baseline };
    p.onData((d) => this.data(d));
    p.onExit((code) => this.exited(p, code));
    const s = (this.starting = this.whenReady(p, files));
    p.write(`${initLine(this.kind, files.script)}\r`);
    const clear = (): void => {
      if (this.starting === s) this.starting = undefined;
    };
    s.then(clear, clear);
    return s;
  }

  /** Resolves when the shell printed its ready marker; rejects when it exits first or takes too long (killed then). */
  private whenReady(p: ShellProcess, files: StartFiles): Promise<void> {
    const startTimeout = timerMs(this.options.startTimeoutMs ?? 10_000);
    const launcher = this.options.launcher;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyResolve = undefined;
        reject(new Error(`the shell ${this.shellPath} did not become ready within ${startTimeout} ms`));
        this.killShell();
      }, startTimeout);
      this.readyResolve = () => {
        clearTimeout(timer);
        this.readyResolve = undefined;
        this.exitWhileStarting = undefined;
        // The shell has printed: it exists, below the launcher's processes.
        if (launcher && this.pty === p) this.innerPid = findShell(p.pid, launcher.file);
        this.baseline = startDone(files, this.kind);
        resolve();
      };
      this.exitWhileStarting = (code) => {
        clearTimeout(timer);
        reject(new Error(`the shell ${this.shellPath} exited with code ${code} while starting`));
      };
    });
  }

  /** The execute-only copy of the shell (made once per session); the shell itself when it cannot be made. */
  private unreadableCopy(dir: string): string {
    this.shellCopy ??= executeOnlyCopy(this.shellPath, dir, this.tag);
    return this.shellCopy ?? this.shellPath;
  }

  /** Kill the shell and everything it started, then start a fresh one. */
  async restart(): Promise<void> {
    this.killShell();
    await this.start();
  }

  /**
   * Run one command. Rejects with TerminalBusyError while another runs. Never
   * rejects for the command's own failure: that is in the result.
   */
  async run(command: string, options: RunOptions = {}): Promise<RunResult> {
    if (this.disposed) throw new Error('the terminal session was disposed');
    if (this.active) throw new TerminalBusyError(this.active.command);
    const seq = ++this.seq;
    // Named without the nonces: a command can read its own file's name ($BASH_SOURCE, /proc).
    const outputPath = this.logs.path(seq);
    const scriptPath = join(this.options.scriptDir ?? this.options.outputDir, `cmd-${this.tag}-${seq}.sh`);
    writeFileSync(scriptPath, commandScript(command, this.kind, options.cwd));
    // A run in a folder of its own leaves the carried folder and variables as they were (as a subshell did).
    const save = options.cwd === undefined;
    let runner: string | undefined;
    const started = Date.now();
    const capture = new Capture(
      outputPath,
      Math.max(64 * 1024, 4 * (this.options.cap?.maxBytes ?? 16 * 1024)),
      this.logs.take(seq),
    );
    let finishRun!: (r: RunResult) => void;
    const done = new Promise<RunResult>((resolve) => (finishRun = resolve));
    const timers: NodeJS.Timeout[] = [];
    let onAbort: (() => void) | undefined;
    const begin = nonce();
    const end = nonce();
    const active: Active = {
      command,
      begin,
      end,
      done: false,
      reader: new CommandReader(begin, end),
      capture,
      started,
      lastOutput: started,
      finish: (completion, exitCode, extra = {}) => {
        if (active.done) return;
        active.done = true;
        for (const t of timers) clearTimeout(t);
        if (onAbort) options.signal?.removeEventListener('abort', onAbort);
        if (this.active === active) this.active = undefined;
        // No sync line may be sent once the next command can start: it could read it as input.
        this.cancelSync?.();
        capture.close();
        // What the command's child wrote of its folder and exported variables (a whole record only).
        const record = active.state?.close();
        active.state = undefined;
        if (record && save)
          this.carried = {
            ...(record.cwd !== undefined
              ? { cwd: record.cwd }
              : this.carried.cwd !== undefined
                ? { cwd: this.carried.cwd }
                : {}),
            env: record.env,
          };
        if (runner) rmSync(runner, { force: true });
        // The next command's log file is made now, between commands, not while one waits (a file
        // creation costs half a millisecond on some disks, a third of a short command's round trip).
        setImmediate(() => this.prepareLog());
        const text = capture.text(this.options.cap ?? {});
        finishRun({
          exitCode,
          completion,
          output: text.text,
          truncated: text.truncated,
          outputPath,
          durationMs: Date.now() - active.started,
          outputBytes: capture.bytes,
          ...(text.binary ? { binary: true } : {}),
          ...extra,
        });
      },
    };
    this.active = active;
    try {
      await this.start();
      // The child's script, with what earlier commands left (the shell's baseline is known now).
      if (save) active.state = await this.fifos!.take();
      runner = runnerPath({ runnerDir: this.fifos!.dir, tag: this.tag }, this.kind, seq);
      const text = runnerScript({
        kind: this.kind,
        commandFile: scriptPath,
        fifoDir: this.fifos!.fifos,
        home: this.options.cwd,
        state: this.carried,
        baseline: this.baseline,
        save,
        ownFolder: !save,
      });
      writeFileSync(runner, Buffer.from(text, 'latin1'), { mode: 0o600 });
    } catch (e) {
      active.finish('unobserved', null, { output: `the shell could not start: ${(e as Error).message}` });
      return done;
    }
    if (active.done) return done;
    if (!this.pty || !this.channel) {
      active.finish('unobserved', null, { output: 'the shell exited before the command could start' });
      return done;
    }
    // The nonces go to the shell by its channel, the begin one with the name of the state FIFO; the
    // end one is read only once the command's child ended. Records no shell read (of commands
    // interrupted before it got to them) are passed over; should they fill the FIFO, a fresh shell.
    if (
      !writeRecords(this.channel.fd, `${seq} b ${active.begin} ${active.state?.name ?? '-'}\n${seq} e ${active.end}\n`)
    ) {
      this.killShell();
      active.finish('unobserved', null, {
        output: "the shell's channel was full: the shell was restarted and the command did not run",
        shellRestarted: true,
      });
      return done;
    }
    // Time the command, not the shell's start.
    active.started = Date.now();
    active.lastOutput = active.started;
    this.pty.write(`${runLine(seq)}${this.kind === 'fish' ? '\r' : '\n'}`);
    // A state larger than the FIFO holds (64 KiB) must not keep the child from ending.
    if (active.state) {
      const drain = (): void => {
        if (active.done) return;
        active.state?.drain();
        timers.push(setTimeout(drain, 200));
      };
      timers.push(setTimeout(drain, 200));
    }

    // Timeout: interrupt, then kill.
    const timeoutMs = timerMs(options.timeoutMs ?? this.options.timeoutMs ?? 120_000);
    timers.push(setTimeout(() => void this.interrupt(active, 'timeout', {}), timeoutMs));
    // Waiting for input: quiet for inputIdleMs while reading the terminal.
    const idleMs = timerMs(options.inputIdleMs ?? this.options.inputIdleMs ?? 3000);
    const checkIdle = (): void => {
      if (active.done) return;
      const quiet = Date.now() - active.lastOutput;
      if (quiet >= idleMs && this.pty?.mode === 'pty' && waitingOnTerminal(this.shellPid!) === true) {
        void this.interrupt(active, 'unobserved', { waitingForInput: true });
        return;
      }
      timers.push(setTimeout(checkIdle, Math.max(50, Math.min(idleMs, idleMs - quiet))));
    };
    if (idleMs > 0 && Number.isFinite(idleMs)) timers.push(setTimeout(checkIdle, idleMs));
    if (options.signal) {
      onAbort = () => void this.interrupt(active, 'unobserved', { cancelled: true });
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
    }
    return done;
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
  private async interrupt(active: Active, completion: Completion, extra: Partial<RunResult>): Promise<void> {
    if (active.done || active.stopping || !this.pty) return;
    active.stopping = { completion, extra };
    const p = this.pty;
    const grace = timerMs(this.options.graceMs ?? 1500);
    if (p.mode === 'pipe') {
      // Without a terminal, Ctrl-C cannot reach the command's process group and a
      // non-interactive shell would go on with the rest of the script: end the shell
      // and all it started now (the next command gets a fresh one).
      this.killShell();
      return active.finish(completion, null, { ...extra, shellRestarted: true });
    }
    const steps: (() => boolean | Promise<boolean>)[] = [
      () => (p.interrupt(), true),
      () => {
        // Only to a job: the shell's own `read` would take it for end-of-file (it goes on reading,
        // see parentScript, should the job end in between).
        const shell = this.ownPid;
        if (shell !== undefined && jobWaitingOnTerminal(shell)) p.write('\x04');
        return true;
      },
      () => this.stopJob(),
    ];
    for (const [i, step] of steps.entries()) {
      if ((active.done as boolean) || this.pty !== p) return;
      // A job killed outright could not restore the terminal it changed (a REPL's raw mode:
      // no line ends, no signal keys); bash restores it itself, the others do not.
      if ((await step()) && (await this.sync(grace, i === steps.length - 1)))
        return active.finish(completion, null, extra);
    }
    if (active.done as boolean) return;
    this.killShell();
    active.finish(completion, null, { ...extra, shellRestarted: true });
  }

  /** The shell's own pid, when it is known (inside a launcher: once found). */
  private get ownPid(): number | undefined {
    return this.options.launcher && this.innerPid === undefined ? undefined : this.shellPid;
  }

  /**
   * Kill the job that holds the terminal and keep the shell: the shell frozen
   * (SIGSTOP on it alone), the job stopped and killed (killJob: the command's
   * child and everything under it, so no further part of the command runs),
   * SIGINT for the shell (its trap lets its loop go on), then the shell let
   * go; it prints the end marker, which the stopping command does not take
   * for its end. False, with nothing killed, when that cannot be done safely:
   * the shell is not known by its pid, is gone or does not stop, or ignores
   * SIGINT (not the shell the session set up).
   */
  private async stopJob(): Promise<boolean> {
    const shell = this.ownPid;
    if (shell === undefined || ignoresSignal(shell, 'SIGINT')) return false;
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
      const p = this.pty;
      if (!p) return resolve(false);
      const n = nonce();
      this.syncMarker.expect(n);
      let sent = -Infinity;
      const send = (): void => {
        if (this.pty !== p) return end(false);
        const shell = this.ownPid;
        if (Date.now() - sent < 400 || (shell !== undefined && holdsTerminal(shell) === false)) return;
        sent = Date.now();
        p.write(`${syncLine(n, sane)}${this.kind === 'fish' ? '\r' : '\n'}`);
      };
      // Ctrl-C flushes pending input; give the line discipline a moment first.
      const ticks = setInterval(send, 100);
      const deadline = setTimeout(() => end(false), ms);
      const end = (ok: boolean): void => {
        clearInterval(ticks);
        clearTimeout(deadline);
        this.cancelSync = undefined;
        this.syncSeen = undefined;
        this.syncMarker.expect('');
        resolve(ok);
      };
      this.syncSeen = () => end(true);
      this.cancelSync = () => end(false);
    });
  }

  private data(chunk: Buffer): void {
    if (this.listeners.size) {
      const s = chunk.toString('utf8');
      for (const l of this.listeners) l(s);
    }
    const text = chunk.toString('latin1');
    if (this.readyResolve) {
      if (this.ready.seen(text)) this.readyResolve();
      return;
    }
    const synced = this.syncSeen !== undefined && this.syncMarker.seen(text);
    const a = this.active;
    if (a && !a.done) this.feed(a, text);
    if (synced) this.syncSeen?.();
  }

  private cancelSync: (() => void) | undefined;

  private feed(a: Active, text: string): void {
    for (const e of a.reader.read(text, a.stopping !== undefined)) {
      if (e.type === 'end') {
        if (a.stopping) a.finish(a.stopping.completion, null, a.stopping.extra);
        else a.finish('marker', e.status);
        return;
      }
      a.lastOutput = Date.now();
      if (e.type === 'output') a.capture.push(e.bytes);
    }
  }

  private exited(p: ShellProcess, code: number): void {
    // Reap what the shell left behind, whichever shell it was.
    killAll(sessionProcesses(p.pid), 'SIGKILL');
    // A shell we killed ourselves (killShell) was already let go: its exit must not
    // touch the shell that replaced it, nor the command now running there.
    if (this.pty !== p) return;
    this.pty = undefined;
    this.dropChannel();
    this.exitWhileStarting?.(code);
    this.exitWhileStarting = undefined;
    this.readyResolve = undefined;
    const a = this.active;
    if (a && !a.done) {
      // Let trailing output arrive first. What the command's child did is not known: the
      // shell's own exit status is not the command's (a command could end the shell on purpose).
      setTimeout(() => {
        const held = a.reader.flush();
        if (held && !a.done) a.capture.push(held);
        a.finish('exit', null);
      }, 50);
    }
    for (const l of this.exitListeners) l(code);
  }

  private killShell(): void {
    const p = this.pty;
    if (!p) return;
    this.pty = undefined;
    // Not p.kill() afterwards: node-pty reaps on its own thread, so the pid may already be another process's.
    killTree(p.pid);
    this.dropChannel();
    // Told now, before a new shell can start: its own exit event will be ignored (see exited).
    this.exitWhileStarting?.(128 + 9);
    this.exitWhileStarting = undefined;
    this.readyResolve = undefined;
    for (const l of this.exitListeners) l(128 + 9);
  }

  /** The channel closed and removed (its shell is gone). */
  private dropChannel(): void {
    const c = this.channel;
    this.channel = undefined;
    if (c) closeChannel(c);
  }

  /**
   * dispose(), then wait until every process of the session is gone (the
   * sandbox's included), at most `timeoutMs`: what runs next (the outcome
   * check) must not share the workspace with anything the run left behind.
   * False when some are still there.
   */
  async close(timeoutMs = 5000): Promise<boolean> {
    const root = this.pty?.pid;
    const pids = root === undefined ? [] : [root, ...sessionProcesses(root)];
    this.dispose();
    const until = Date.now() + timeoutMs;
    while (pids.some(alive) && Date.now() < until) {
      killAll(pids.filter(alive), 'SIGKILL');
      await new Promise((r) => setTimeout(r, 20));
    }
    return !pids.some(alive);
  }

  /** Opens the log file of the next command ahead of it, between commands. */
  private prepareLog(): void {
    if (!this.disposed && !this.active) this.logs.prepare(this.seq + 1);
  }

  /** Kill the shell and every process it started. The session cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.logs.drop();
    const a = this.active;
    this.killShell();
    if (a && !a.done) a.finish('unobserved', null, { cancelled: true });
    this.listeners.clear();
    this.fifos?.dispose();
    this.fifos = undefined;
  }

  /** Whether the shell process is alive. */
  get running(): boolean {
    return this.pty !== undefined && alive(this.pty.pid);
  }
}
