import { createHash, type Hash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Header, TrajectoryEvent } from '../schema/trajectory';
import { redactJsonStrings } from '../secrets/redact';

/** The trajectory file was written by someone else during the run. */
export class TrajectoryConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrajectoryConflictError';
  }
}

/**
 * Writes a run's trajectory: one JSON line per event, each written and
 * flushed to disk (fsync) before the call returns, so the file is complete up
 * to the last step whatever happens next. Secrets are removed on the way out.
 *
 * It continues only on the file it wrote: before each line the file at the
 * path must still be the one it opened (same device and inode: not renamed,
 * replaced or turned into a link), hold exactly as many bytes as it wrote,
 * and be unchanged since its last write (the inode's change time, which no
 * process can set back, moves with any write, truncation or touch, even one
 * that keeps the size). `digest` is the sha-256 of everything it wrote, for
 * checking the file afterwards.
 */
export class TrajectoryWriter {
  private fd: number | undefined;
  private lines = 0;
  private ended = false;
  /** Bytes this writer put in the file: anything more was written by someone else. */
  private bytes = 0;
  private hash: Hash = createHash('sha256');
  private last: { ctimeNs: bigint; ino: bigint; dev: bigint } | undefined;
  private finalDigest: string | undefined;
  /** The header line exactly as written. */
  headerText = '';

  private constructor(
    readonly path: string,
    private readonly redact: (text: string) => string,
  ) {}

  /** Creates the file (and its folder) with the header as line 1. */
  static create(path: string, header: Header, redact: (text: string) => string = (t) => t): TrajectoryWriter {
    mkdirSync(dirname(path), { recursive: true });
    const w = new TrajectoryWriter(path, redact);
    // Append mode: every write lands at the end, even after someone else's.
    w.fd = openSync(path, 'ax');
    w.headerText = w.write(header).text;
    return w;
  }

  /** Lines written so far; the next event goes on line `lineCount + 1`. */
  get lineCount(): number {
    return this.lines;
  }

  /** Appends one event; returns its 1-based line and the exact text written. */
  append(event: TrajectoryEvent): { line: number; text: string } {
    if (event.type === 'end') this.ended = true;
    return this.write(event);
  }

  private write(value: Header | TrajectoryEvent): { line: number; text: string } {
    if (this.fd === undefined) throw new Error(`the trajectory ${this.path} is closed`);
    const changed = this.changedBySomeoneElse();
    if (changed) {
      // Another writer (a second process, or a command the agent ran) changed the file:
      // its lines and ours would interleave. Say so at the end of the file and stop.
      const end: TrajectoryEvent = {
        type: 'end',
        reason: 'error',
        detail: `the trajectory was changed by another writer (${changed}); the run stopped so its record is not mixed with other writes`,
        at: new Date().toISOString(),
      };
      const lead = fstatSync(this.fd).size > 0 ? '\n' : '';
      writeSync(this.fd, `${lead}${JSON.stringify(end)}\n`);
      fsyncSync(this.fd);
      this.ended = true;
      closeSync(this.fd);
      this.fd = undefined;
      throw new TrajectoryConflictError(end.detail!);
    }
    // Each string (keys too) is redacted on its own, never the JSON text: a mask whose pattern
    // crosses a quote would swallow the end of one value and the next key (a cwd, a command).
    const text = JSON.stringify(redactJsonStrings(value, this.redact));
    const line = `${text}\n`;
    writeSync(this.fd, line);
    fsyncSync(this.fd);
    this.bytes += Buffer.byteLength(line, 'utf8');
    this.hash.update(line, 'utf8');
    const st = fstatSync(this.fd, { bigint: true });
    this.last = { ctimeNs: st.ctimeNs, ino: st.ino, dev: st.dev };
    return { line: ++this.lines, text };
  }

  /** Why the file is no longer only this writer's, or undefined while it is. */
  private changedBySomeoneElse(): string | undefined {
    const st = fstatSync(this.fd!, { bigint: true });
    if (Number(st.size) !== this.bytes) return `${st.size} bytes on disk, ${this.bytes} written by this run`;
    if (this.last && st.ctimeNs !== this.last.ctimeNs)
      return 'it was written to or touched since the last line, though its size is the same';
    let at;
    try {
      at = lstatSync(this.path, { bigint: true });
    } catch {
      return 'it was moved or deleted';
    }
    if (at.ino !== st.ino || at.dev !== st.dev) return 'another file took its place (renamed over it, or a link)';
    return undefined;
  }

  /** The sha-256 (hex) of everything written, once closed. */
  get digest(): string | undefined {
    return this.finalDigest;
  }

  /** Closes the file; a run that stopped without an `end` event is marked interrupted. */
  close(detail = 'the run stopped before it ended'): void {
    if (this.fd === undefined) return;
    if (!this.ended) {
      try {
        this.append({ type: 'end', reason: 'interrupted', detail, at: new Date().toISOString() });
      } catch (e) {
        if (!(e instanceof TrajectoryConflictError)) throw e;
        return;
      }
    }
    // A last look: a change after the last line leaves the file without a digest (it is not this run's record).
    if (!this.changedBySomeoneElse()) this.finalDigest = this.hash.digest('hex');
    closeSync(this.fd);
    this.fd = undefined;
  }
}
