/**
 * The FIFOs of the shell protocol (protocol.ts): the folder they live in,
 * which no process can list; the state FIFO each command's child writes its
 * folder and exported variables to, read by the session without ever
 * waiting; and the channel the nonces reach the shell by.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { carriedName, nonce } from './protocol';

const END = Buffer.from('LAR_END\0', 'latin1');

/**
 * A state record (`pwd -P` output, NUL, `env -0` output, `LAR_END` NUL): the
 * last complete one in `bytes`, as latin1 text; undefined when there is none.
 * A folder that is not absolute is left out (the command's folder was gone).
 */
export function parseState(bytes: Buffer): { cwd?: string; env: Map<string, string> } | undefined {
  const end = bytes.lastIndexOf(END);
  if (end < 0) return undefined;
  const before = end === 0 ? -1 : bytes.lastIndexOf(END, end - 1);
  const record = bytes.subarray(before < 0 ? 0 : before + END.length, end).toString('latin1');
  const parts = record.split('\0');
  const dir = parts.shift()!.replace(/\n$/, '');
  const env = new Map<string, string>();
  for (const entry of parts) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    if (carriedName(name)) env.set(name, entry.slice(eq + 1));
  }
  return { ...(dir.startsWith('/') ? { cwd: dir } : {}), env };
}

/** Most bytes of one state record kept (an environment is at most a few MB: the kernel's argument limit). */
const STATE_MAX = 8 * 1024 * 1024;

/** A FIFO the session reads (opened read-write and non-blocking: it never sees end-of-file and never waits). */
export class StateFifo {
  private chunks: Buffer[] = [];
  private size = 0;
  private fd: number;

  constructor(
    readonly path: string,
    readonly name: string,
  ) {
    this.fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  }

  /** Everything written to it so far (past STATE_MAX, the rest is read and dropped). */
  drain(): void {
    if (this.fd < 0) return;
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      let n: number;
      try {
        n = readSync(this.fd, buf, 0, buf.length, null);
      } catch {
        return; // EAGAIN: nothing more for now
      }
      if (n <= 0) return;
      if (this.size <= STATE_MAX) this.chunks.push(Buffer.from(buf.subarray(0, n)));
      this.size += n;
    }
  }

  /** Drained, closed and removed: the record written to it, if a whole one was. */
  close(): ReturnType<typeof parseState> {
    this.drain();
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    try {
      unlinkSync(this.path);
    } catch {
      /* gone with its folder */
    }
    return this.size <= STATE_MAX ? parseState(Buffer.concat(this.chunks)) : undefined;
  }
}

/**
 * The session's private folders: `dir` (the runner and start files; the
 * shell must be able to read it) and in it `fifos`, mode 0311, which no
 * process can list (in the sandbox it is on a read-only mount, so no process
 * there can change its mode either): its FIFOs are found only by a name
 * given to the shell or the child. FIFOs are made ahead, a few at a time,
 * by `mkfifo` (Node has no call for it): the first at start, the rest
 * between commands.
 */
export class FifoFolder {
  readonly dir: string;
  readonly fifos: string;
  private readonly owned: boolean;
  private pool: string[] = [];
  private filling: Promise<void> | undefined;
  private disposed = false;

  /** In `base` (a folder the shell sees), else in a private temporary folder of its own. */
  constructor(base?: string) {
    this.owned = base === undefined;
    this.dir = base ?? mkdtempSync(join(tmpdir(), 'lar-shell-'));
    mkdirSync(this.dir, { recursive: true });
    this.fifos = join(this.dir, `fifo-${nonce()}`);
    mkdirSync(this.fifos, { mode: 0o700 });
    chmodSync(this.fifos, 0o311);
  }

  /** The path of the state FIFO `name`. */
  pathOf(name: string): string {
    return join(this.fifos, `st-${name}`);
  }

  /** The state FIFO `name`, opened. */
  open(name: string): StateFifo {
    return new StateFifo(this.pathOf(name), name);
  }

  /**
   * `count` state FIFOs made now (blocking: a shell start), and with
   * `withChannel` the channel too, opened read-write and non-blocking: one
   * `mkfifo` for all.
   */
  makeNow(count: number, withChannel = false): { channel?: { path: string; fd: number }; names: string[] } {
    const names = Array.from({ length: count }, () => nonce());
    const channel = withChannel ? join(this.fifos, `ch-${nonce()}`) : undefined;
    execFileSync('mkfifo', ['-m', '600', ...names.map((n) => this.pathOf(n)), ...(channel ? [channel] : [])], {
      stdio: 'ignore',
    });
    return {
      names,
      ...(channel
        ? { channel: { path: channel, fd: openSync(channel, constants.O_RDWR | constants.O_NONBLOCK) } }
        : {}),
    };
  }

  /** Names made ahead, for later commands. */
  add(names: string[]): void {
    this.pool.push(...names);
  }

  private fill(): Promise<void> {
    if (this.filling || this.disposed) return this.filling ?? Promise.resolve();
    const names = Array.from({ length: 16 }, () => nonce());
    this.filling = new Promise<void>((resolve) => {
      execFile('mkfifo', ['-m', '600', ...names.map((n) => this.pathOf(n))], (err) => {
        this.filling = undefined;
        if (this.disposed)
          this.remove(); // made while the folder was being removed
        else if (!err) this.pool.push(...names);
        resolve();
      });
    });
    return this.filling;
  }

  /** A state FIFO for the next command, opened; the pool is refilled in the background. */
  async take(): Promise<StateFifo> {
    if (this.pool.length === 0) await this.fill();
    if (this.pool.length === 0) this.pool.push(...this.makeNow(1).names);
    const name = this.pool.shift()!;
    if (this.pool.length < 4) void this.fill();
    return this.open(name);
  }

  /** Everything removed (the folder's mode put back first, so it can be); never throws. */
  dispose(): void {
    this.disposed = true;
    this.pool = [];
    this.remove();
  }

  private remove(): void {
    try {
      chmodSync(this.fifos, 0o700);
    } catch {
      /* gone */
    }
    try {
      rmSync(this.owned ? this.dir : this.fifos, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      /* a FIFO made meanwhile: removed when that mkfifo ends (fill) */
    }
  }
}

/** Writes a channel record; false when it cannot be written now (the FIFO is full of records no shell read). */
export function writeRecords(fd: number, text: string): boolean {
  try {
    const b = Buffer.from(text, 'latin1');
    return writeSync(fd, b) === b.length;
  } catch {
    return false;
  }
}
