/**
 * Pure: what the agent's terminal mirror shows of the raw pty stream. The
 * session frames each command with marker lines (`__LAR_B_<nonce>__`,
 * `__LAR_E_<nonce>_<code>__`, plus `__LAR_R_…`/`__LAR_S_…` for readiness and
 * sync), types lines of the same form for the shell's loop to read
 * (`__LAR_C_<n>__`, `__LAR_Y_…`/`__LAR_Z_…`: fish's line editor shows them)
 * and, before echo is off, the shell may echo its set-up line: those lines are
 * dropped. Everything else passes through as soon as it arrives,
 * except a trailing partial line that could still become a marker.
 */
const MARKER_LINE = /^__LAR_[BERSCYZ]_[0-9a-f]+(?:_-?\d+)?__$/;
/** The shell's own set-up or framing input, echoed before `stty -echo` took effect (the set-up line sources the shell's start file). */
const FRAMING_INPUT = /printf '\\?n?__LAR_|^stty -echo 2>\/dev\/null;.*\/start-[0-9a-f]+\.(?:sh|fish)'$/;

/**
 * Terminal control sequences: CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ST`),
 * DCS/SOS/PM/APC strings (`ESC P|X|^|_ … ST`) and other escapes (`ESC`,
 * intermediates, a final). A shell's line editor writes them around the
 * lines it runs (bash's `ESC[?2004l` when it leaves bracketed paste, zsh's
 * keypad and title sequences), so a marker can arrive as
 * `ESC[?2004l\r__LAR_R_…__`; when that happens is a matter of timing.
 * Without intermediates, `P X ^ _` (and `[ ]`) only ever start a string (a
 * CSI, an OSC): an unfinished one is not a complete two-character escape.
 */
const CONTROL_SOURCE = String.raw`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[ -/]+[0-Z\\^-~]|[0-OQ-WYZ\\\x60-~])`;
const CONTROL = new RegExp(CONTROL_SOURCE, 'g');
/** Control sequences and carriage returns at the start of a text. */
const LEADING_CONTROL = new RegExp(String.raw`^(?:${CONTROL_SOURCE}|\r)*`);
/** The start of a control sequence a chunk cut off. */
const CONTROL_START = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[ -/]*)?$/;
/**
 * The longest unfinished line held back: far more than a marker or the echoed
 * set-up line, so longer text is shown as it comes and holding costs little.
 */
const HOLD_MAX = 8192;

function core(line: string): string {
  // What a marker test looks at: no terminator, no carriage returns, no control sequences.
  return line
    .replace(/\r?\n$/, '')
    .replace(CONTROL, '')
    .replace(/\r/g, '');
}

/** Whether an unfinished line may still turn into a marker line. */
function mayBecomeMarker(partial: string): boolean {
  const p = partial.replace(CONTROL, '').replace(CONTROL_START, '').replace(/\r/g, '');
  if (p.length === 0) return partial.length > 0;
  if ('__LAR_'.startsWith(p)) return true;
  return /^__LAR_(?:[BERSCYZ](?:_[0-9a-f]*(?:_-?\d*)?_?_?)?)?$/.test(p);
}

export function isHiddenLine(line: string): boolean {
  const c = core(line);
  return MARKER_LINE.test(c) || FRAMING_INPUT.test(c);
}

/** The ready marker anywhere in a line (the shell may put a prompt or escape codes before it). */
const READY_LINE = /__LAR_R_[0-9a-f]+__[^\n]*\n/;

export class MarkerLineFilter {
  private pending = '';
  private waiting: boolean;

  /**
   * With `hideUntilReady`, everything the shell prints while it starts — its
   * first prompt (before the set-up line empties PS1), the echoed set-up line,
   * rc-file output — is dropped up to and including the ready marker line;
   * otherwise the prompt, printed without a newline, stays in the mirror and
   * the next output overwrites only part of it.
   */
  constructor(options: { hideUntilReady?: boolean } = {}) {
    this.waiting = options.hideUntilReady ?? false;
  }

  /** A fresh shell starts (after the previous one exited): hide its start-up again. */
  restart(): void {
    this.pending = '';
    this.waiting = true;
  }

  /** The part of `chunk` to show now. */
  push(chunk: string): string {
    let text = this.pending + chunk;
    this.pending = '';
    if (this.waiting) {
      const m = READY_LINE.exec(text);
      if (!m) {
        this.pending = text.slice(-256);
        return '';
      }
      this.waiting = false;
      text = text.slice(m.index + m[0].length);
    }
    let out = '';
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      const line = text.slice(start, nl + 1);
      if (!isHiddenLine(line)) out += line;
      start = nl + 1;
    }
    const rest = text.slice(start);
    if (!rest || rest.length > HOLD_MAX) return out + rest;
    // Complete control sequences before the text are shown at once (a screen
    // cleared before a long sleep); what follows them is held while it could
    // still become a marker or the echoed set-up line.
    const lead = LEADING_CONTROL.exec(rest)![0];
    const tail = rest.slice(lead.length);
    if (!tail) {
      if (/^\r+$/.test(lead)) this.pending = rest;
      else out += rest;
    } else if (mayBecomeMarker(tail) || FRAMING_INPUT.test(tail) || tail.startsWith('stty -echo')) {
      out += lead;
      this.pending = tail;
    } else out += rest;
    return out;
  }

  /** What is held back, when the stream ends. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    return this.waiting || isHiddenLine(rest) ? '' : rest;
  }
}

/**
 * Control characters of a command's own text, shown instead of acted on by
 * the terminal: C0 as `^X`, DEL as `^?`, C1 (which xterm.js takes as CSI, OSC,
 * DCS … without an ESC) as `\x9b`. Newlines are kept only where asked.
 */
const visible = (s: string, keepNewlines: boolean): string =>
  s.replace(keepNewlines ? /[\x00-\x09\x0b-\x1f\x7f-\x9f]/g : /[\x00-\x1f\x7f-\x9f]/g, (c) => {
    const code = c.charCodeAt(0);
    if (code === 0x7f) return '^?';
    if (code >= 0x80) return `\\x${code.toString(16)}`;
    return `^${String.fromCharCode(code + 64)}`;
  });

/**
 * The line shown before a command runs: `$ command`, multi-line commands
 * indented, CRLF for the terminal, and the folder it runs in when it is not
 * the workspace. Only the banner's own styling reaches the terminal as
 * escape sequences.
 */
export function commandBanner(command: string, cwd?: string): string {
  const where = cwd ? `\x1b[2m(in ${visible(cwd, false)})\x1b[0m\x1b[1m ` : '';
  return `\x1b[1m${where}$ ${visible(command.replace(/\r?\n/g, '\n'), true).replace(/\n/g, '\r\n  ')}\x1b[0m\r\n`;
}
