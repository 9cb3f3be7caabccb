/**
 * An MCP stdio transport with bounds: one JSON-RPC message per line, each at most `maxMessageBytes`
 * (a larger one is skipped unread and said, never buffered whole), stderr kept as a short tail for
 * the message that says why a server failed, and the process group ended on close. The SDK's own
 * transport buffers a line without bound, which a flooding server would turn into the host's memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How the server's process starts: a program (the sandbox's launcher, or the server itself) and its arguments. */
export interface StdioLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface StdioBounds {
  maxMessageBytes: number;
  /** A message over the bound was skipped: its size so far. */
  onOversized: (bytes: number) => void;
}

const STDERR_TAIL = 4096;
const NEWLINE = 0x0a;
/** Bytes waiting to reach a server that stopped reading: past this, it is stopped (a flood of requests we answer). */
const MAX_PENDING_WRITE = 64 * 1024 * 1024;
/** Notices past this many in one second are dropped (a chatty log is not a fault); ten seconds of it in a row stop it. */
const MAX_NOTICES_PER_SECOND = 5000;
const MAX_FLOODED_SECONDS = 10;

/**
 * Every server's process group still running, ended when lar exits or is told to stop (SIGTERM, SIGHUP)
 * before it could close them: an unconfined server would outlive it (a confined one dies with bwrap).
 */
const running = new Set<number>();
const killAll = (): void => {
  for (const pid of running)
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
};
process.once('exit', killAll);
const onSignal = (signal: NodeJS.Signals): void => {
  killAll();
  process.removeListener(signal, onSignal);
  // The signal's own effect when nothing else listens for it: lar ends as it would have.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
};
const track = (pid: number): void => {
  if (running.size === 0) for (const s of ['SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  running.add(pid);
};
const untrack = (pid: number): void => {
  if (running.delete(pid) && running.size === 0)
    for (const s of ['SIGTERM', 'SIGHUP'] as const) process.removeListener(s, onSignal);
};

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  /** Bytes of an oversized message skipped so far; -1 when reading normally. */
  private skipping = -1;
  private stderrTail = '';
  private exit: string | undefined;
  private closed = false;
  private window = { start: 0, count: 0 };
  /** Seconds in a row that went past the notice bound. */
  private flooded = 0;
  private stopping = false;

  constructor(
    private readonly launch: StdioLaunch,
    private readonly bounds: StdioBounds,
  ) {}

  /** The last few KiB the server wrote to stderr: what people need when it fails. */
  get stderr(): string {
    return this.stderrTail;
  }

  /** How the process ended (`exit code 1`, `signal SIGKILL`), once it has. */
  get exited(): string | undefined {
    return this.exit;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.launch.file, this.launch.args, {
        env: this.launch.env,
        cwd: this.launch.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        // Its own process group: close ends whatever it started.
        detached: true,
      });
      this.child = child;
      if (child.pid !== undefined) track(child.pid);
      child.once('error', (e) => {
        this.exit ??= `it could not start: ${e.message}`;
        reject(e);
        this.onerror?.(e);
        this.finish();
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        this.exit ??= signal ? `signal ${signal}` : `exit code ${code}`;
        // What it left in its group ends with it, now: later its number may be another process's.
        this.kill('SIGKILL');
        if (child.pid !== undefined) untrack(child.pid);
      });
      child.once('close', () => this.finish());
      child.stdin.on('error', (e) => this.onerror?.(e));
      child.stdout.on('data', (b: Buffer) => this.read(b));
      child.stderr.on('data', (b: Buffer) => {
        this.stderrTail = (this.stderrTail + b.toString('utf8')).slice(-STDERR_TAIL);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) return Promise.reject(new Error('the server is not running'));
    if (stdin.writableLength > MAX_PENDING_WRITE) {
      this.stop('it stopped reading what was sent to it');
      return Promise.reject(new Error('the server stopped reading what was sent to it'));
    }
    return new Promise((resolve, reject) => {
      const ok = stdin.write(`${JSON.stringify(message)}\n`, (e) => (e ? reject(e) : undefined));
      if (ok) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.stdin?.end();
      this.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 2000).unref())]);
      // Still there: its whole group, at once (the exit handler then does the same for what is left).
      if (child.exitCode === null && child.signalCode === null) this.kill('SIGKILL');
    }
    this.finish();
  }

  /** Ends a server that misbehaves past a bound, once; its end is reported as any other. */
  private stop(why: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.exit ??= why;
    this.kill('SIGKILL');
  }

  private kill(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        this.child?.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.chunks = [];
    this.onclose?.();
  }

  /**
   * A notice (a message without an id) past the bound of its second is dropped; answers and requests are
   * always read. Ten seconds in a row past it, the server is stopped.
   */
  private overNoticeBound(text: string): boolean {
    const now = Date.now();
    if (now - this.window.start >= 1000) {
      const lastFlooded = this.window.count > MAX_NOTICES_PER_SECOND;
      this.flooded = lastFlooded && now - this.window.start < 2000 ? this.flooded + 1 : 0;
      this.window = { start: now, count: 0 };
      if (this.flooded >= MAX_FLOODED_SECONDS)
        this.stop(`it sent more than ${MAX_NOTICES_PER_SECOND} notices a second for ${MAX_FLOODED_SECONDS} seconds`);
    }
    // Cheap: a notice is a line without an "id" member (a false match only reads one more line).
    if (++this.window.count <= MAX_NOTICES_PER_SECOND || /"id"\s*:/.test(text)) return false;
    return true;
  }

  /** Cuts the stream into lines; a line past the bound is counted and dropped as it arrives. */
  private read(b: Buffer): void {
    let at = 0;
    while (at < b.length) {
      const nl = b.indexOf(NEWLINE, at);
      const end = nl < 0 ? b.length : nl;
      const piece = b.subarray(at, end);
      if (this.skipping >= 0) this.skipping += piece.length;
      else if (this.size + piece.length > this.bounds.maxMessageBytes) {
        this.skipping = this.size + piece.length;
        this.chunks = [];
        this.size = 0;
      } else if (piece.length) {
        this.chunks.push(piece);
        this.size += piece.length;
      }
      if (nl < 0) return;
      at = nl + 1;
      if (this.skipping >= 0) {
        const skipped = this.skipping;
        this.skipping = -1;
        this.bounds.onOversized(skipped);
      } else this.deliver();
    }
  }

  private deliver(): void {
    const text = Buffer.concat(this.chunks, this.size).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (!text.trim() || this.stopping) return;
    if (this.overNoticeBound(text)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      this.onerror?.(new Error(`the server wrote a line that is not JSON: ${(e as Error).message}`));
      return;
    }
    const m = JSONRPCMessageSchema.safeParse(parsed);
    if (m.success) this.onmessage?.(m.data);
    else this.onerror?.(new Error('the server wrote a line that is not a JSON-RPC message'));
  }
}
