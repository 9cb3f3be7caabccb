import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/**
 * One running `lar-verify` (or a stand-in that speaks its protocol): requests
 * go to its stdin as JSON lines, responses come back on stdout as JSON lines
 * and are matched to their requests by `id`. A request that is not answered in
 * time is rejected and the process is stopped (it is presumably stuck); when
 * the process exits, every request still waiting is rejected.
 */

export class LarVerifyError extends Error {
  override name = 'LarVerifyError';
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Stopped on purpose (dispose), not a crash. */
  expected: boolean;
  /** Why it ended, for messages. */
  description: string;
}

interface Pending {
  op: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const STDERR_TAIL = 2000;

export class LarVerifyProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, Pending>();
  private buffer = '';
  private stderrTail = '';
  private ended = false;
  private stopReason: string | undefined;
  private expectedStop = false;

  constructor(
    readonly command: readonly string[],
    opts: { env?: NodeJS.ProcessEnv; cwd?: string },
    private readonly onExit: (info: ExitInfo) => void,
    private readonly log?: (message: string) => void,
  ) {
    const [cmd, ...args] = command;
    if (cmd === undefined) throw new LarVerifyError('empty lar-verify command');
    this.child = spawn(cmd, args, { env: { ...process.env, ...opts.env }, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.onData(chunk));
    this.child.stderr.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
    });
    // A write to a process that just died fails with EPIPE; the exit handler reports it.
    this.child.stdin.on('error', () => {});
    this.child.on('error', (err) => this.finish(null, null, `could not run ${cmd}: ${err.message}`));
    this.child.on('exit', (code, signal) => this.finish(code, signal));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Exited, or being stopped: no request can be sent to it any more. */
  get exited(): boolean {
    return this.ended || this.stopReason !== undefined;
  }

  /** Sends one request (it must carry `id`); resolves with `result`, rejects on `ok: false`, timeout or exit. */
  request(req: { id: number; op: string } & Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    if (this.exited) return Promise.reject(new LarVerifyError(`lar-verify is not running (it ${this.stopReason ?? 'exited'})`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(req.id)) return;
        reject(
          new LarVerifyError(
            `lar-verify did not answer "${req.op}" (request ${req.id}) within ${timeoutMs} ms; it was stopped and will be restarted on the next request`,
          ),
        );
        this.stop(`was stopped after not answering "${req.op}" (request ${req.id}) within ${timeoutMs} ms`, false);
      }, timeoutMs);
      this.pending.set(req.id, { op: req.op, resolve, reject, timer });
      this.child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  /** Stops the process. `expected`: on purpose (not counted as a crash). */
  stop(reason: string, expected = true): void {
    if (this.ended) return;
    this.stopReason ??= reason;
    this.expectedStop ||= expected;
    this.child.stdin.end();
    this.child.kill();
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line.trim() !== '') this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let msg: { id?: unknown; ok?: unknown; result?: unknown; error?: unknown };
    try {
      msg = JSON.parse(line) as typeof msg;
    } catch {
      this.log?.(`lar-verify wrote a line that is not JSON, ignored: ${line.slice(0, 200)}`);
      return;
    }
    const id = typeof msg.id === 'number' ? msg.id : undefined;
    const p = id === undefined ? undefined : this.pending.get(id);
    if (id === undefined || !p) {
      // A late answer to a request that timed out, or an error about a line that was not JSON.
      if (msg.ok === false) this.log?.(`lar-verify: ${String(msg.error)}`);
      return;
    }
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (msg.ok === true) p.resolve(msg.result);
    else p.reject(new LarVerifyError(`lar-verify rejected "${p.op}": ${typeof msg.error === 'string' ? msg.error : JSON.stringify(msg.error)}`));
  }

  private finish(code: number | null, signal: NodeJS.Signals | null, error?: string): void {
    if (this.ended) return;
    this.ended = true;
    const how = error ?? this.stopReason ?? (code !== null ? `exited with code ${code}` : `was killed by ${signal ?? 'a signal'}`);
    const stderr = this.stderrTail.trim() ? `; stderr: ${this.stderrTail.trim().split('\n').slice(-5).join(' | ')}` : '';
    const description = `${how}${stderr}`;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new LarVerifyError(`lar-verify ${description} before answering "${p.op}" (request ${id})`));
    }
    this.pending.clear();
    this.onExit({ code, signal, expected: this.expectedStop, description });
  }
}
