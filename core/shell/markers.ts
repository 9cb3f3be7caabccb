/**
 * Reading the markers the shell prints (protocol.ts) out of the terminal's
 * stream, cut anywhere: pure, so the framing of a command's output can be
 * tested without a shell. Text is the terminal's bytes as latin1.
 */

/** What a command's stream held, in order. */
export type CommandEvent =
  /** The begin marker: the command's output starts. */
  | { type: 'begin' }
  /** Text of the command's output arrived (`bytes` may be empty while a possible marker is held back). */
  | { type: 'output'; bytes: Buffer }
  /** The end marker, with the status the shell saw for the command's child. */
  | { type: 'end'; status: number };

/** Sync markers (of this or an earlier interruption) and their line ends. */
const SYNC_MARKERS = /(\r\n)?__LAR_[SYZ]_[0-9a-f]{16}__(\r\n)?/g;

/**
 * The stream of one command: skipped up to its begin marker, then output up
 * to its end marker. Holds back what could be the start of a marker.
 */
export class CommandReader {
  private phase: 'begin' | 'body' | 'ended' = 'begin';
  /** Text not yet classified (may hold the start of a marker). */
  private held = '';
  private skipNewline = false;

  /** The nonces of the command's begin and end markers. */
  constructor(
    private readonly begin: string,
    private readonly end: string,
  ) {}

  /**
   * The events in `text`. While the command is being stopped, sync markers are
   * never its output (fish's line editor also shows the sync line as it reads it).
   */
  read(text: string, stopping = false): CommandEvent[] {
    const events: CommandEvent[] = [];
    if (this.phase === 'ended') return events;
    let s = this.held + (stopping ? text.replace(SYNC_MARKERS, '') : text);
    this.held = '';
    if (this.phase === 'begin') {
      const begin = `__LAR_B_${this.begin}__`;
      const i = s.indexOf(begin);
      if (i < 0) {
        this.held = s.slice(-(begin.length + 2));
        return events;
      }
      s = s.slice(i + begin.length);
      this.phase = 'body';
      events.push({ type: 'begin' });
      this.skipNewline = true;
    }
    if (this.skipNewline) {
      // The begin marker's own line ending (`\n` alone on a terminal left without onlcr), however the stream is cut.
      if (s === '' || s === '\r') {
        this.held = s;
        return events;
      }
      this.skipNewline = false;
      if (s.startsWith('\r\n')) s = s.slice(2);
      else if (s.startsWith('\n')) s = s.slice(1);
    }
    if (s.length) events.push(...this.body(s));
    return events;
  }

  /** What is held of the output when the stream ends without an end marker. */
  flush(): Buffer | undefined {
    const held = this.held;
    this.held = '';
    return held && this.phase === 'body' ? Buffer.from(held, 'latin1') : undefined;
  }

  private body(s: string): CommandEvent[] {
    // `\r\n` before it, or `\n` alone on a terminal left without onlcr (the nonce is what counts).
    const endPrefix = `\n__LAR_E_${this.end}_`;
    const found = s.indexOf(endPrefix);
    if (found >= 0) {
      const i = found > 0 && s[found - 1] === '\r' ? found - 1 : found;
      const m = /^(\d+)__/.exec(s.slice(found + endPrefix.length));
      const output: CommandEvent = { type: 'output', bytes: Buffer.from(s.slice(0, i), 'latin1') };
      if (m) {
        this.phase = 'ended';
        return [output, { type: 'end', status: Number(m[1]) }];
      }
      this.held = s.slice(i);
      return [output];
    }
    // Keep back what could be the start of the end marker (and a `\r` before it).
    let cut = s.length - trailingPrefix(s, endPrefix);
    if (cut > 0 && s[cut - 1] === '\r') cut--;
    this.held = s.slice(cut);
    return [{ type: 'output', bytes: Buffer.from(s.slice(0, cut), 'latin1') }];
  }
}

/** The marker a starting shell prints once it is ready. */
export class ReadyMarker {
  private nonce = '';
  private buf = '';

  /** A shell starting with this nonce in its script. */
  expect(nonce: string): void {
    this.nonce = nonce;
  }

  /** Whether the marker ends in `text`. */
  seen(text: string): boolean {
    const marker = `__LAR_R_${this.nonce}__`;
    if (text.includes(marker) || (this.buf += text).includes(marker)) {
      this.buf = '';
      return true;
    }
    this.buf = this.buf.slice(-64);
    return false;
  }
}

/** The marker the shell prints in answer to a sync line. */
export class SyncMarker {
  private nonce = '';
  private buf = '';

  /** A sync line with this nonce sent (empty: none awaited). */
  expect(nonce: string): void {
    this.nonce = nonce;
    this.buf = '';
  }

  /** Whether the marker ends in `text`. */
  seen(text: string): boolean {
    const marker = `__LAR_S_${this.nonce}__`;
    const all = this.buf + text;
    if (!all.includes(marker)) {
      // Only a marker cut by the chunk's end can still complete.
      this.buf = all.slice(-(marker.length - 1));
      return false;
    }
    this.buf = '';
    return true;
  }
}

/** Length of the longest suffix of `s` that is a prefix of `prefix`. */
function trailingPrefix(s: string, prefix: string): number {
  for (let k = Math.min(s.length, prefix.length); k > 0; k--) if (s.endsWith(prefix.slice(0, k))) return k;
  return 0;
}
