/**
 * The one place a value becomes shell text.
 *
 * Anything that is not itself meant to be a command (a folder, a file name, a
 * path the harness made) reaches a shell line only through `shellQuote`, as a
 * single word the shell cannot expand: no `$(…)`, backticks, `${…}`, globs,
 * `;`, newlines or quotes inside it do anything. Values that must not be text
 * at all (timeouts, environment) are passed as arguments or environment, never
 * spliced.
 */

/** The shell families whose quoting differs: POSIX sh, bash and zsh share it; fish does not. */
export type QuoteDialect = 'posix' | 'fish';

export class ShellTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShellTextError';
  }
}

/**
 * `value` as one shell word, taken literally.
 *
 * POSIX shells: inside single quotes every character is literal and only `'`
 * ends them, so each `'` is written `'\''` (close, an escaped quote, reopen).
 * fish: inside single quotes `\'` and `\\` are escapes, so a bare backslash
 * before the closing quote would swallow it; both are escaped instead.
 *
 * A NUL cannot be in a shell word (shells cut or drop it), so it is refused
 * rather than silently changing the value.
 */
export function shellQuote(value: string, dialect: QuoteDialect = 'posix'): string {
  if (value.includes('\0'))
    throw new ShellTextError(`a NUL character cannot be passed to a shell: ${JSON.stringify(value.slice(0, 80))}`);
  if (dialect === 'fish') return `'${value.replace(/[\\']/g, '\\$&')}'`;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * C0 control characters but Tab, DEL and the C1 controls: typed into a
 * terminal they are not text but actions of the line discipline (Ctrl-C
 * interrupts, Ctrl-U erases the line typed so far, Ctrl-D ends input, Ctrl-V
 * quotes the next key, DEL erases) or of a terminal's escape parser, whatever
 * quotes they sit in.
 */
const TERMINAL_ACTION = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;

/**
 * Refuses a value that would act, not be read, when typed on the input line of
 * a shell of `dialect` (see TERMINAL_ACTION; for fish also Tab, which its line
 * editor, one that cannot be switched off, takes for completion). Quoting
 * cannot help there: the terminal acts on it before the shell sees any quote.
 */
export function assertTypable(value: string, what: string, dialect: QuoteDialect = 'posix'): void {
  const m = TERMINAL_ACTION.exec(value) ?? (dialect === 'fish' ? /\t/.exec(value) : null);
  if (m) {
    const code = m[0].charCodeAt(0).toString(16).padStart(2, '0');
    throw new ShellTextError(
      `${what} has a control character (0x${code}) that a terminal would act on instead of reading: ${JSON.stringify(value.slice(0, 120))}`,
    );
  }
}
