/**
 * Each command's raw output: its log file, opened ahead between commands, and
 * what is kept in memory of it for the model's text.
 */
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { binarySummary, capOutput, looksBinary, omissionMarker, stripTerminal, type CapOptions } from './output';

/**
 * Raw output of one command: written to its file as it arrives, with only a
 * bounded head and tail kept in memory (a 200 MB command stays cheap).
 */
export class Capture {
  private fd: number;
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  bytes = 0;
  newlines = 0;

  constructor(
    readonly path: string,
    private readonly keep: number,
    /** The file, already opened for writing (see CommandLogs). */
    fd?: number,
  ) {
    this.fd = fd ?? openSync(path, 'w');
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.bytes += chunk.length;
    for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) this.newlines++;
    if (this.fd >= 0) writeSync(this.fd, chunk);
    if (this.headLen < this.keep) {
      const take = chunk.subarray(0, this.keep - this.headLen);
      this.head.push(take);
      this.headLen += take.length;
      chunk = chunk.subarray(take.length);
      if (chunk.length === 0) return;
    }
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailLen - (this.tail[0]?.length ?? 0) >= this.keep) this.tailLen -= this.tail.shift()!.length;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  /** The model's text: binary summarized, else stripped and capped with head and tail. */
  text(cap: CapOptions): { text: string; truncated: boolean; binary: boolean } {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    const whole = this.bytes === head.length + tail.length;
    const check = looksBinary(whole ? Buffer.concat([head, tail]) : head);
    const tailCheck = whole ? check : looksBinary(tail);
    if (check.binary || tailCheck.binary) {
      return { text: binarySummary({ ...check, bytes: this.bytes }, this.path), truncated: true, binary: true };
    }
    const decode = (b: Buffer): string => stripTerminal(new TextDecoder('utf-8').decode(b));
    if (whole) {
      const c = capOutput(decode(Buffer.concat([head, tail])), cap);
      return { text: c.text, truncated: c.truncated, binary: false };
    }
    // Too big to hold: cap the head and the tail separately and name what lies between.
    const maxBytes = cap.maxBytes ?? 16 * 1024;
    const maxLines = cap.maxLines ?? 400;
    const frac = cap.headFraction ?? 0.5;
    const h = headPart(decode(head), Math.floor(maxBytes * frac), Math.floor(maxLines * frac));
    const t = tailPart(decode(tail), maxBytes - Math.floor(maxBytes * frac), maxLines - Math.floor(maxLines * frac));
    // Counted on the raw stream, so an approximation once escape sequences were stripped.
    const omittedBytes = Math.max(0, this.bytes - Buffer.byteLength(h, 'utf8') - Buffer.byteLength(t, 'utf8'));
    const omittedLines = Math.max(0, this.newlines + 1 - h.split('\n').length - t.split('\n').length);
    return { text: h + omissionMarker(omittedLines, omittedBytes) + t, truncated: true, binary: false };
  }
}

function headPart(s: string, bytes: number, lines: number): string {
  const c = capOutput(s, { maxBytes: bytes * 2, maxLines: lines * 2, headFraction: 0.5 });
  return c.truncated ? c.text.slice(0, c.text.indexOf('\n… ')) : s;
}

function tailPart(s: string, bytes: number, lines: number): string {
  const c = capOutput(s, { maxBytes: bytes * 2, maxLines: lines * 2, headFraction: 0.5 });
  return c.truncated ? c.text.slice(c.text.indexOf(' omitted …\n') + ' omitted …\n'.length) : s;
}

/**
 * The session's log files, `cmd-<tag>-<seq>.log` in the output folder: the
 * next command's is opened ahead of it (a file creation costs half a
 * millisecond on some disks, a third of a short command's round trip).
 */
export class CommandLogs {
  private next: { seq: number; fd: number } | undefined;

  constructor(
    private readonly dir: string,
    /** Names this session's files apart from another session's in the same folder. */
    private readonly tag: string,
  ) {}

  path(seq: number): string {
    return join(this.dir, `cmd-${this.tag}-${seq}.log`);
  }

  /** Opens the log file of command `seq` ahead of it (left out when it cannot be made: the command opens it then). */
  prepare(seq: number): void {
    if (this.next) return;
    try {
      this.next = { seq, fd: openSync(this.path(seq), 'w') };
    } catch {
      this.next = undefined;
    }
  }

  /** The file opened ahead for command `seq`, if it was; nothing is kept ahead afterwards. */
  take(seq: number): number | undefined {
    const fd = this.next?.seq === seq ? this.next.fd : undefined;
    this.next = undefined;
    return fd;
  }

  /** The log file made ahead for a command that never came: closed and removed. */
  drop(): void {
    const n = this.next;
    if (!n) return;
    this.next = undefined;
    try {
      closeSync(n.fd);
      unlinkSync(this.path(n.seq));
    } catch {
      // already gone
    }
  }
}
