import type { SandboxRecord, TrajectoryEvent } from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import type { VerifierBackend, VerifierSession } from '../verifier/backend';
import type { GateResult, ProposedCall, StepResult, TrajectorySummary } from '../verifier/types';
import { buildLarVerify, defaultCacheDir, findLeanSources } from './build';
import { detectLean } from './detect';
import { LarVerifyError, LarVerifyProcess, type ExitInfo } from './process';

/**
 * The Lean backend: the checks of docs/rewards.md decided by `lar-verify`, the
 * executable of the Lean package in lean/. One process is kept warm and shared
 * by every open session (requests name their session). When it dies it is
 * started again on the next request, and the open sessions are re-created by
 * replaying their workflow and the events it had confirmed; after repeated
 * crashes the backend gives up with an error instead of looping.
 */

export interface LeanBackendOptions {
  /** The `lake`/`lean` executable or the folder holding them (the extension setting). */
  leanPath?: string;
  /** Environment for detection, the build and the process (PATH, HOME, LAR_LEAN_PATH). */
  env?: NodeJS.ProcessEnv;
  /** Where built packages are kept; default `$LAR_CACHE_DIR`, else `~/.cache/lean4-agentic` (or `$XDG_CACHE_HOME/lean4-agentic`). */
  cacheDir?: string;
  /** The Lean package to build; default the lean/ folder of this repository. */
  sourceDir?: string;
  /** Runs this instead of detecting and building (tests use a stand-in; also a prebuilt binary). */
  verifyCommand?: string[];
  /** Time allowed for each request; default 10 s. */
  requestTimeoutMs?: number;
  /** Time allowed for `lake build`; default 30 min. */
  buildTimeoutMs?: number;
  /** Give up after this many crashes ... */
  maxCrashes?: number;
  /** ... within this window; default 3 crashes in 60 s. */
  crashWindowMs?: number;
  log?: (message: string) => void;
}

export class LeanUnavailableError extends Error {
  override name = 'LeanUnavailableError';
}

interface SessionRecord {
  id: string;
  workflow: Workflow;
  headerLine: number;
  sandbox?: SandboxRecord;
  /** Events the process confirmed, in order: what a restart replays. */
  events: { event: TrajectoryEvent; line: number }[];
}

export interface LeanBackendStats {
  pid: number | undefined;
  /** Processes started after the first one. */
  restarts: number;
  /** Crashes within the current window. */
  recentCrashes: number;
  sessions: number;
  gaveUp: boolean;
}

export class LeanBackend implements VerifierBackend {
  readonly name = 'lean' as const;
  private readonly timeoutMs: number;
  private readonly maxCrashes: number;
  private readonly crashWindowMs: number;
  private command: Promise<string[]> | undefined;
  private proc: LarVerifyProcess | undefined;
  private starting: Promise<LarVerifyProcess> | undefined;
  private readonly sessions = new Map<string, SessionRecord>();
  private crashes: number[] = [];
  private gaveUp: LarVerifyError | undefined;
  private disposed = false;
  private started = 0;
  private nextId = 1;
  private nextSession = 1;

  constructor(private readonly opts: LeanBackendOptions = {}) {
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.maxCrashes = opts.maxCrashes ?? 3;
    this.crashWindowMs = opts.crashWindowMs ?? 60_000;
  }

  /**
   * The command that runs `lar-verify`: the injected one, or the cached build
   * (detecting Lean and building first when needed). Rejects with a
   * `LeanUnavailableError` that says what to do when there is no toolchain.
   */
  prepare(): Promise<string[]> {
    if (!this.command) {
      const attempt = this.resolveCommand();
      this.command = attempt;
      // A failed attempt is not cached: installing Lean and trying again must work.
      attempt.catch(() => {
        if (this.command === attempt) this.command = undefined;
      });
    }
    return this.command;
  }

  private async resolveCommand(): Promise<string[]> {
    if (this.opts.verifyCommand) return [...this.opts.verifyCommand];
    const sourceDir = this.opts.sourceDir ?? findLeanSources();
    if (!sourceDir) throw new LeanUnavailableError('the Lean package (lean/lakefile.toml) was not found next to the extension');
    const detect = await detectLean({
      ...(this.opts.leanPath !== undefined ? { leanPath: this.opts.leanPath } : {}),
      ...(this.opts.env !== undefined ? { env: this.opts.env } : {}),
      cwd: sourceDir,
    });
    if (!detect.available) throw new LeanUnavailableError(detect.reason);
    this.opts.log?.(`Lean ${detect.version} at ${detect.lake}`);
    const built = await buildLarVerify({
      sourceDir,
      cacheDir: this.opts.cacheDir ?? defaultCacheDir(this.opts.env),
      lake: detect.lake,
      ...(this.opts.env !== undefined ? { env: this.opts.env } : {}),
      ...(this.opts.buildTimeoutMs !== undefined ? { timeoutMs: this.opts.buildTimeoutMs } : {}),
      ...(this.opts.log !== undefined ? { log: this.opts.log } : {}),
    });
    this.opts.log?.(`${built.built ? 'built' : 'reusing'} ${built.executable}`);
    return [built.executable];
  }

  async open(workflow: Workflow, headerLine = 1, sandbox?: SandboxRecord): Promise<VerifierSession> {
    const id = `s${this.nextSession++}`;
    await this.send({ op: 'load', session: id, workflow, headerLine, ...(sandbox ? { sandbox } : {}) });
    const record: SessionRecord = { id, workflow, headerLine, ...(sandbox ? { sandbox } : {}), events: [] };
    this.sessions.set(id, record);
    let closed = false;
    const live = (): void => {
      if (closed) throw new LarVerifyError(`Lean session ${id} is closed`);
    };
    return {
      append: async (event, line) => {
        live();
        const result = (await this.send({ op: 'append', session: id, line, event })) as StepResult;
        record.events.push({ event, line });
        return result;
      },
      gate: async (call: ProposedCall) => {
        live();
        return (await this.send({ op: 'gate', session: id, call })) as GateResult;
      },
      summary: async () => {
        live();
        return (await this.send({ op: 'summary', session: id })) as TrajectorySummary;
      },
      close: () => {
        if (closed) return;
        closed = true;
        this.sessions.delete(id);
        if (this.proc && !this.proc.exited) this.proc.request({ id: this.nextId++, op: 'close', session: id }, this.timeoutMs).catch(() => {});
      },
    };
  }

  /** Process and crash counters, for a status display. */
  stats(): LeanBackendStats {
    this.pruneCrashes();
    return {
      pid: this.proc && !this.proc.exited ? this.proc.pid : undefined,
      restarts: Math.max(0, this.started - 1),
      recentCrashes: this.crashes.length,
      sessions: this.sessions.size,
      gaveUp: this.gaveUp !== undefined,
    };
  }

  dispose(): void {
    this.disposed = true;
    this.sessions.clear();
    this.proc?.stop('the Lean backend was disposed');
    this.proc = undefined;
  }

  private async send(req: { op: string } & Record<string, unknown>): Promise<unknown> {
    const proc = await this.ensureProcess();
    return proc.request({ id: this.nextId++, ...req }, this.timeoutMs);
  }

  private ensureProcess(): Promise<LarVerifyProcess> {
    if (this.disposed) return Promise.reject(new LarVerifyError('the Lean backend was disposed'));
    if (this.gaveUp) return Promise.reject(this.gaveUp);
    if (this.proc && !this.proc.exited) return Promise.resolve(this.proc);
    if (!this.starting) {
      const starting = this.start();
      this.starting = starting;
      const clear = (): void => {
        if (this.starting === starting) this.starting = undefined;
      };
      starting.then(clear, clear);
    }
    return this.starting;
  }

  /** Starts the process and replays the open sessions into it. */
  private async start(): Promise<LarVerifyProcess> {
    const command = await this.prepare();
    if (this.disposed) throw new LarVerifyError('the Lean backend was disposed');
    if (this.gaveUp) throw this.gaveUp;
    const proc: LarVerifyProcess = new LarVerifyProcess(
      command,
      this.opts.env !== undefined ? { env: this.opts.env } : {},
      (info) => this.onExit(proc, info),
      this.opts.log,
    );
    this.started++;
    if (this.started > 1) this.opts.log?.(`lar-verify restarted (pid ${proc.pid}); replaying ${this.sessions.size} session(s)`);
    for (const s of this.sessions.values()) {
      await proc.request({ id: this.nextId++, op: 'load', session: s.id, workflow: s.workflow, headerLine: s.headerLine, ...(s.sandbox ? { sandbox: s.sandbox } : {}) }, this.timeoutMs);
      for (const { event, line } of s.events) {
        await proc.request({ id: this.nextId++, op: 'append', session: s.id, line, event }, this.timeoutMs);
      }
    }
    this.proc = proc;
    return proc;
  }

  private onExit(proc: LarVerifyProcess, info: ExitInfo): void {
    if (this.proc === proc) this.proc = undefined;
    if (info.expected || this.disposed) return;
    this.opts.log?.(`lar-verify ${info.description}`);
    this.crashes.push(Date.now());
    this.pruneCrashes();
    if (this.crashes.length >= this.maxCrashes) {
      this.gaveUp = new LarVerifyError(
        `lar-verify stopped unexpectedly ${this.crashes.length} times within ${Math.round(this.crashWindowMs / 1000)} s, ` +
          `so the Lean backend gave up (last: it ${info.description}). ` +
          'Fix the cause and restart the Lean backend, or use the builtin backend.',
      );
    }
  }

  private pruneCrashes(): void {
    const since = Date.now() - this.crashWindowMs;
    this.crashes = this.crashes.filter((t) => t >= since);
  }
}
