/**
 * The `@` picker's logic without the DOM (tested under node): which `@word` the caret is in, the choices
 * for it, and the text once a choice replaced the word with its readable `@name` token.
 */
import type { AttachmentRef, AttachOptions } from '../core/protocol/attachments';
import { chipLabel } from '../core/protocol/chip-label';

/** The `@word` ending at the caret: where its `@` is and what follows it. */
export interface AtToken {
  start: number;
  query: string;
}

/** The `@` token the caret ends, if any: an `@` at the start or after a space, then no space up to the caret. */
export function tokenAt(text: string, caret: number): AtToken | undefined {
  const m = /(^|\s)@([^\s@]{0,200})$/.exec(text.slice(0, caret));
  if (!m) return undefined;
  return { start: caret - m[2]!.length - 1, query: m[2]! };
}

/** One row of the picker: a kind to attach at once, "File…" (then a file), or a file. */
export interface Choice {
  id: string;
  label: string;
  detail: string;
  /** What choosing it attaches; none for "File…", which lists the files instead. */
  ref?: AttachmentRef;
}

const KINDS: { word: string; label: string; of: (o: AttachOptions) => Choice | undefined }[] = [
  { word: 'file', label: 'File…', of: () => ({ id: 'file', label: 'File…', detail: 'a file of the workspace' }) },
  {
    word: 'selection',
    label: 'Selection',
    of: (o) =>
      o.selection
        ? { id: 'selection', label: 'Selection', detail: o.selection, ref: { kind: 'selection' } }
        : undefined,
  },
  {
    word: 'problems',
    label: 'Problems',
    of: (o) =>
      o.problemsOf
        ? {
            id: 'problems',
            label: 'Problems',
            detail: `of ${o.problemsOf}`,
            ref: { kind: 'problems', path: o.problemsOf },
          }
        : undefined,
  },
  {
    word: 'terminal',
    label: 'Terminal output',
    of: (o) =>
      o.terminal
        ? { id: 'terminal', label: 'Terminal output', detail: o.terminal, ref: { kind: 'terminal' } }
        : undefined,
  },
  {
    word: 'terminal',
    label: 'Terminal output',
    of: (o) =>
      o.activeTerminal
        ? {
            id: 'active-terminal',
            label: 'Terminal output',
            detail: o.activeTerminal,
            ref: { kind: 'terminal', of: 'active' },
          }
        : undefined,
  },
];

/** Before the extension answered: only File… is offered. */
const NONE: AttachOptions = { type: 'attachOptions', query: '', files: [] };

/** The picker's rows: the kinds whose name starts with the query (not in file mode), then the matching files. */
export function choicesFor(options: AttachOptions | undefined, query: string, fileMode: boolean): Choice[] {
  const q = query.toLowerCase();
  const out: Choice[] = [];
  if (!fileMode) {
    for (const k of KINDS) {
      if (!k.word.startsWith(q) && !k.label.toLowerCase().startsWith(q)) continue;
      const c = k.of(options ?? NONE);
      if (c) out.push(c);
    }
  }
  // Files once a name is typed, or after File… (the extension filtered them for this query).
  if (options && options.query === query && (fileMode || q.length > 0)) {
    for (const path of options.files)
      out.push({ id: `f:${path}`, label: path.split('/').pop() ?? path, detail: path, ref: { kind: 'file', path } });
  }
  return out;
}

/** The text with the `@word` replaced by the chosen attachment's `@name` token and a space; the caret after it. */
export function insertToken(
  text: string,
  token: AtToken,
  caret: number,
  ref: AttachmentRef,
): { text: string; caret: number } {
  // One space after the token, unless the text after it starts with one.
  const name = /^\s/.test(text.slice(caret)) ? chipLabel(ref) : `${chipLabel(ref)} `;
  return { text: text.slice(0, token.start) + name + text.slice(caret), caret: token.start + name.length };
}

/** The text without one `@name` token of a removed attachment (the first, with the space after it). */
export function removeToken(text: string, label: string): string {
  const at = text.search(new RegExp(`(^|\\s)${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=\\s|$)`));
  if (at < 0) return text;
  const start = text[at] === '@' ? at : at + 1;
  return (text.slice(0, start) + text.slice(start + label.length)).replace(/^ /, '').replace(/ {2}/, ' ');
}

/** Two references to the same thing (attached once): the same kind, path and terminal. */
export function sameRef(a: AttachmentRef, b: AttachmentRef): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What the picker says when it has no row: for the terminal, which output the extension can read at all. */
export function emptyNote(query: string, fileMode: boolean): string {
  if (fileMode) return 'No matching file';
  if ('terminal'.startsWith(query.toLowerCase()) && query)
    return "No terminal output yet: the chat reads the agent terminal's commands, and a terminal of yours only through shell integration, from when the chat opened";
  return 'Nothing to attach';
}
