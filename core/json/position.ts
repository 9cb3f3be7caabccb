/**
 * A small JSON scanner that knows where things are. JSON.parse stays the fast
 * path; this runs only to explain a failure (the exact offset and what was
 * expected) and to find the span of a value by its path, so that an error or a
 * diagnostic points at the text at fault.
 */

export type JsonPath = readonly (string | number)[];

export interface Span {
  /** Offset of the first character, 0-based. */
  start: number;
  /** Offset just past the last character. */
  end: number;
}

export interface JsonSyntaxError {
  offset: number;
  message: string;
}

/** An object or array the scanner is inside: its kind, the last member name read, the item index. */
interface Container {
  kind: '{' | '[';
  key: string;
  index: number;
}

class Scanner {
  pos = 0;
  constructor(readonly text: string) {}

  fail(message: string): never {
    throw new ScanError(this.pos, message);
  }

  ws(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos++;
      else break;
    }
  }

  peek(): string {
    return this.text[this.pos] ?? '';
  }

  /**
   * Scans one value; calls `onMember` for the members and items of the
   * outermost object or array when given (it returns true to stop there).
   * Iterative, with an explicit stack of open containers: a line nested
   * thousands deep must get its error message, not a stack overflow.
   */
  value(onMember?: (key: string | number, start: number) => boolean): void {
    const open: Container[] = [];
    for (;;) {
      this.ws();
      const c = this.peek();
      if (c === '{' || c === '[') {
        this.pos++;
        this.ws();
        if (this.peek() === (c === '{' ? '}' : ']')) {
          this.pos++;
        } else {
          const container: Container = { kind: c, key: '', index: 0 };
          open.push(container);
          if (this.member(container, open.length === 1 ? onMember : undefined)) return;
          continue;
        }
      } else if (c === '"') {
        this.string();
      } else if (c === '-' || (c >= '0' && c <= '9')) {
        this.number();
      } else {
        const word = ['true', 'false', 'null'].find((w) => this.text.startsWith(w, this.pos));
        if (word === undefined) {
          if (c === '') this.fail('unexpected end of line: expected a JSON value');
          this.fail(
            `unexpected ${describe(c)}: expected a JSON value (object, array, string, number, true, false or null)`,
          );
        }
        this.pos += word.length;
      }
      // A value ended: close the containers it ended, or go on to the next member.
      for (;;) {
        const top = open[open.length - 1];
        if (!top) return;
        this.ws();
        const d = this.peek();
        if (d === ',') {
          this.pos++;
          top.index++;
          if (this.member(top, open.length === 1 ? onMember : undefined)) return;
          break;
        }
        if (d === (top.kind === '{' ? '}' : ']')) {
          this.pos++;
          open.pop();
          continue;
        }
        this.fail(
          top.kind === '{'
            ? `unexpected ${describe(d)}: expected ',' or '}' after the value of "${top.key}"`
            : `unexpected ${describe(d)}: expected ',' or ']' after an array item`,
        );
      }
    }
  }

  /** Reads up to the value of the next member (for an object, its name and ':'); true when `onMember` says stop. */
  private member(container: Container, onMember?: (key: string | number, start: number) => boolean): boolean {
    this.ws();
    if (container.kind === '[') return onMember !== undefined && onMember(container.index, this.pos);
    if (this.peek() !== '"') this.fail(`unexpected ${describe(this.peek())}: expected a member name in double quotes`);
    const key = this.string();
    container.key = key;
    this.ws();
    if (this.peek() !== ':')
      this.fail(`unexpected ${describe(this.peek())}: expected ':' after the member name "${key}"`);
    this.pos++;
    this.ws();
    return onMember !== undefined && onMember(key, this.pos);
  }

  string(): string {
    const start = ++this.pos;
    const t = this.text;
    for (;;) {
      const c = t[this.pos];
      if (c === undefined) this.fail("unterminated string: expected a closing '\"'");
      if (c === '"') break;
      if (c === '\\') {
        const e = t[this.pos + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(t.slice(this.pos + 2, this.pos + 6))) {
            this.pos++;
            this.fail('bad \\u escape: expected four hexadecimal digits');
          }
          this.pos += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) {
          this.pos++;
          this.fail(
            `bad escape ${describe(e ?? '')} in a string: expected one of \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX`,
          );
        }
        this.pos += 2;
        continue;
      }
      if (c.charCodeAt(0) < 0x20) this.fail('control character in a string: expected it escaped (e.g. \\n)');
      this.pos++;
    }
    const raw = t.slice(start, this.pos);
    this.pos++; // closing quote
    return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
  }

  number(): void {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.text.slice(this.pos, this.pos + 400));
    if (!m || m[0] === '-') this.fail('bad number: expected digits');
    this.pos += m[0].length;
  }
}

class ScanError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

function describe(c: string): string {
  if (c === '') return 'end of line';
  if (c === '\t') return 'tab';
  return `'${c}'`;
}

/** Finds where and why `text` is not one JSON value; undefined when it is. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const s = new Scanner(text);
  try {
    s.value();
    s.ws();
    if (s.pos < text.length)
      s.fail(`unexpected ${describe(s.peek())} after the JSON value: expected the end of the line`);
    return undefined;
  } catch (e) {
    if (e instanceof ScanError) return { offset: e.offset, message: e.message };
    throw e;
  }
}

/**
 * The span of the value at `path` inside the JSON text, or of its deepest
 * existing ancestor when the path does not exist (a missing member points at
 * the object that lacks it). Undefined only when the text is not JSON.
 */
export function locateJsonValue(text: string, path: JsonPath): Span | undefined {
  const s = new Scanner(text);
  try {
    s.ws();
    let start = s.pos;
    for (const step of path) {
      const open = s.peek();
      if ((typeof step === 'string' && open !== '{') || (typeof step === 'number' && open !== '[')) break;
      let found = -1;
      const containerStart = s.pos;
      s.value((key, at) => {
        if (key === step) {
          found = at;
          return true;
        }
        return false;
      });
      if (found < 0) {
        s.pos = containerStart;
        break;
      }
      s.pos = found;
      start = found;
    }
    s.pos = start;
    s.value();
    return { start, end: s.pos };
  } catch (e) {
    if (e instanceof ScanError) return undefined;
    throw e;
  }
}
