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
 * variables, as data (see protocol.ts).
 * Everything between the markers is the command's output: saved raw to
 * `outputPath`, and given to the model stripped and capped (see output.ts).
 * How a run ended is its `completion` (see types.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Capture, CommandLogs } from './capture';
import { RunningCommand, type StateRecord } from './command';
import { FifoFolder, writeRecords, type StateFifo } from './fifos';
import { commandScript, dialectOf, initLine, pickShell, shellKind, type ShellKind } from './kinds';
import { ReadyMarker } from './markers';
import { usesPipes, type ShellMode, type ShellProcess } from './process';
import { alive, findShell, killAll, killTree, killUntilGone, sessionProcesses, waitingOnTerminal } from './procs';
import { carryOver, runLine, runnerPath, runnerScript, type CarriedState } from './protocol';
import { assertTypable } from './quote';
import { closeChannel, executeOnlyCopy, launchShell, startDone, startFiles, type StartFiles } from './startup';
import { CommandStopper } from './stopping';
import { TerminalBusyError, timerMs, type RunOptions, type RunResult, type TerminalOptions } from './types';

export class TerminalSession {
  private pty: ShellProcess | undefined;
  private kind: ShellKind;
  private shellPath: string;
  /** `pty` or `pipe`, as the shell last started. */
  private lastMode: ShellMode | undefined;
  /** The shell's own pid when a launcher started it (else the pty's pid is the shell's). */
  private innerPid: number | undefined;
  /** The execute-only copy of the shell, made once per session (see startup.ts). */
  private shellCopy: string | undefined;
  private disposed = false;
  private leaveJobs = false;
  /** Names this session's files apart from another session's in the same folder. */
  private readonly tag = randomBytes(3).toString('hex');
  private readonly logs: CommandLogs;
  private listeners = new Set<(data: string) => void>();
  private exitListeners = new Set<(code: number) => void>();
  private readonly ready = new ReadyMarker();
  /** The shell's start, while it runs; its ready marker seen, and its exit while starting. */
  private starting: Promise<void> | undefined;
  private readyResolve: (() => void) | undefined;
  private exitWhileStarting: ((code: number) => void) | undefined;
  /** Stops the running command (and answers whether the shell is back). */
  private readonly stopper: CommandStopper;
  /** The command running, and the number of the last one. */
  private active: RunningCommand | undefined;
  private seq = 0;
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
    this.stopper = new CommandStopper({
      pty: () => this.pty,
      ownPid: () => this.ownPid,
      killShell: () => this.killShell(),
      lineEnd: this.kind === 'fish' ? '\r' : '\n',
      graceMs: timerMs(options.graceMs ?? 1500),
    });
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

  /** Whether the shell process is alive. */
  get running(): boolean {
    return this.pty !== undefined && alive(this.pty.pid);
  }

  /** The shell's own pid, when it is known (inside a launcher: once found). */
  private get ownPid(): number | undefined {
    return this.options.launcher && this.innerPid === undefined ? undefined : this.shellPid;
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
    const scriptPath = join(this.options.scriptDir ?? this.options.outputDir, `cmd-${this.tag}-${seq}.sh`);
    writeFileSync(scriptPath, commandScript(command, this.kind, options.cwd));
    // A run in a folder of its own leaves the carried folder and variables as they were (as a subshell did).
    const save = options.cwd === undefined;
    const keep = Math.max(64 * 1024, 4 * (this.options.cap?.maxBytes ?? 16 * 1024));
    const capture = new Capture(this.logs.path(seq), keep, this.logs.take(seq));
    const active: RunningCommand = new RunningCommand(command, capture, {
      cap: this.options.cap ?? {},
      signal: options.signal,
      ended: (record) => this.commandEnded(active, record, save),
    });
    this.active = active;
    if (!(await this.writeRunner(active, seq, scriptPath, save)) || !this.sendNonces(active, seq)) return active.result;
    // Time the command, not the shell's start.
    active.started = Date.now();
    active.lastOutput = active.started;
    this.pty!.write(`${runLine(seq)}${this.kind === 'fish' ? '\r' : '\n'}`);
    active.watch(
      timerMs(options.timeoutMs ?? this.options.timeoutMs ?? 120_000),
      timerMs(options.inputIdleMs ?? this.options.inputIdleMs ?? 3000),
      () => this.pty?.mode === 'pty' && waitingOnTerminal(this.shellPid!) === true,
      (completion, extra) => void this.stopper.stop(active, completion, extra),
    );
    return active.result;
  }

  /** The shell started if need be, and the command's child script written; false when the run ended instead. */
  private async writeRunner(active: RunningCommand, seq: number, scriptPath: string, save: boolean): Promise<boolean> {
    try {
      await this.start();
      // The child's script, with what earlier commands left (the shell's baseline is known now).
      if (save) active.state = await this.fifos!.take();
      active.runner = runnerPath({ runnerDir: this.fifos!.dir, tag: this.tag }, this.kind, seq);
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
      writeFileSync(active.runner, Buffer.from(text, 'latin1'), { mode: 0o600 });
    } catch (e) {
      active.finish('unobserved', null, { output: `the shell could not start: ${(e as Error).message}` });
      return false;
    }
    if (active.done) return false;
    if (!this.pty || !this.channel) {
      active.finish('unobserved', null, { output: 'the shell exited before the command could start' });
      return false;
    }
    return true;
  }

  /**
   * The nonces go to the shell by its channel, the begin one with the name of the state FIFO; the
   * end one is read only once the command's child ended. Records no shell read (of commands
   * interrupted before it got to them) are passed over; should they fill the FIFO, a fresh shell.
   */
  private sendNonces(active: RunningCommand, seq: number): boolean {
    const records = `${seq} b ${active.begin} ${active.state?.name ?? '-'}\n${seq} e ${active.end}\n`;
    if (writeRecords(this.channel!.fd, records)) return true;
    this.killShell();
    active.finish('unobserved', null, {
      output: "the shell's channel was full: the shell was restarted and the command did not run",
      shellRestarted: true,
    });
    return false;
  }

  /** A command ended: the session is free, and keeps what it left of its folder and variables. */
  private commandEnded(active: RunningCommand, record: StateRecord, save: boolean): void {
    if (this.active === active) this.active = undefined;
    this.stopper.cancel();
    if (record && save) this.carried = carryOver(this.carried, record);
    // The next command's log file is made now, between commands, not while one waits.
    setImmediate(() => this.prepareLog());
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
    const synced = this.stopper.synced(text);
    const a = this.active;
    if (a && !a.done) a.read(text);
    if (synced) this.stopper.answered();
  }

  private exited(p: ShellProcess, code: number): void {
    // Reap what the shell left behind, whichever shell it was (unless let go: dispose's leaveJobs).
    if (!this.leaveJobs) killAll(sessionProcesses(p.pid), 'SIGKILL');
    // A shell we killed (killShell) was let go: its exit must not touch the one that replaced it, nor its command.
    if (this.pty !== p) return;
    this.pty = undefined;
    this.shellGone(code);
    const a = this.active;
    // Let trailing output arrive first. What the command's child did is not known: the
    // shell's own exit status is not the command's (a command could end the shell on purpose).
    if (a && !a.done) setTimeout(() => a.shellExited(), 50);
    for (const l of this.exitListeners) l(code);
  }

  private killShell(): void {
    const p = this.pty;
    if (!p) return;
    this.pty = undefined;
    // Not p.kill() afterwards: node-pty reaps on its own thread, so the pid may already be another process's.
    if (this.leaveJobs) killAll([p.pid], 'SIGKILL');
    else killTree(p.pid);
    // Told now, before a new shell can start: its own exit event will be ignored (see exited).
    this.shellGone(128 + 9);
    for (const l of this.exitListeners) l(128 + 9);
  }

  /** The shell is gone: its channel closed and removed, and a start that waited for it failed. */
  private shellGone(code: number): void {
    const c = this.channel;
    this.channel = undefined;
    if (c) closeChannel(c);
    this.exitWhileStarting?.(code);
    this.exitWhileStarting = undefined;
    this.readyResolve = undefined;
  }

  /**
   * dispose(), then wait until every process of the session is gone (the
   * sandbox's included), at most `timeoutMs`: what runs next (the outcome
   * check) must not share the workspace with anything the run left behind.
   * False when some are still there.
   */
  close(timeoutMs = 5000): Promise<boolean> {
    const root = this.pty?.pid;
    const pids = root === undefined ? [] : [root, ...sessionProcesses(root)];
    this.dispose();
    return killUntilGone(pids, timeoutMs);
  }

  /** Opens the log file of the next command ahead of it, between commands. */
  private prepareLog(): void {
    if (!this.disposed && !this.active) this.logs.prepare(this.seq + 1);
  }

  /** Kill the shell and all it started (`leaveJobs`: the shell only, as in a container whose tests need its jobs). */
  dispose(leaveJobs = false): void {
    if (this.disposed) return;
    this.disposed = true;
    this.leaveJobs = leaveJobs;
    this.logs.drop();
    const a = this.active;
    this.killShell();
    if (a && !a.done) a.finish('unobserved', null, { cancelled: true });
    this.listeners.clear();
    this.fifos?.dispose();
    this.fifos = undefined;
  }
}
