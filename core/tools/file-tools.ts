import { createContext, runInContext } from 'node:vm';
import type { ToolResult } from '../schema/trajectory';
import type { ToolContext, ToolOutcome } from './types';
import type { ListEntry, WorkspaceFs } from '../workspace/fs';

/**
 * The file tools: read_file, write_file, edit_file, list_files, search. They
 * touch the disk only through a `WorkspaceFs`, which confines every path to
 * the workspace (lexically and by real path). Arguments are assumed validated
 * by the zod schemas, but odd ones give an error outcome, never a throw.
 */

export const FILE_TOOLS = ['read_file', 'write_file', 'edit_file', 'list_files', 'search'] as const;
export type FileTool = (typeof FILE_TOOLS)[number];

export function isFileTool(name: string): name is FileTool {
  return (FILE_TOOLS as readonly string[]).includes(name);
}

/** Limits on what the model is shown. */
export const FILE_LIMITS = {
  /** read_file: lines shown per call. */
  readLines: 2000,
  /** read_file: characters shown per line. */
  lineChars: 2000,
  /** read_file / edit_file / search: bytes read from one file. */
  readBytes: 10 * 1024 * 1024,
  /** list_files: entries shown. */
  listEntries: 1000,
  /** search: matches shown. */
  searchMatches: 200,
  /** search: files looked at. */
  searchFiles: 20000,
  /** search: files larger than this are skipped. */
  searchFileBytes: 2 * 1024 * 1024,
  /** search: characters of a matching line shown. */
  searchLineChars: 300,
  /** search: the time a regular expression may take over all files (a catastrophic one would freeze the editor). */
  searchRegexMs: 3000,
};

type Args = Record<string, unknown>;

class ArgError extends Error {}

function str(args: Args, key: string, fallback?: string): string {
  const v = args[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string') throw new ArgError(`"${key}" must be a string`);
  return v;
}

function optInt(args: Args, key: string): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new ArgError(`"${key}" must be a positive whole number`);
  return v;
}

function optBool(args: Args, key: string): boolean {
  const v = args[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new ArgError(`"${key}" must be true or false`);
  return v;
}

function ok(observation: string, result: ToolResult = {}): ToolOutcome {
  return { status: 'ok', result, observation };
}

function fail(error: string, result: ToolResult = {}): ToolOutcome {
  return { status: 'error', result: { ...result, error }, observation: `Error: ${error}` };
}

/** Run one file tool. Never throws. */
export async function runFileTool(
  fs: WorkspaceFs,
  tool: string,
  args: unknown,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const started = performance.now();
  let out: ToolOutcome;
  try {
    if (ctx.signal?.aborted) {
      out = {
        status: 'interrupted',
        result: { error: 'cancelled before it ran' },
        observation: 'Cancelled before it ran.',
      };
    } else if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      out = fail(`the arguments of ${tool} must be an object`);
    } else {
      const a = args as Args;
      switch (tool) {
        case 'read_file':
          out = await readFile(fs, a);
          break;
        case 'write_file':
          out = await writeFile(fs, a);
          break;
        case 'edit_file':
          out = await editFile(fs, a);
          break;
        case 'list_files':
          out = await listFiles(fs, a);
          break;
        case 'search':
          out = await search(fs, a, ctx);
          break;
        default:
          out = fail(`"${tool}" is not a file tool`);
      }
    }
  } catch (e) {
    out =
      e instanceof ArgError
        ? fail(`invalid arguments: ${e.message}`)
        : fail(`${tool} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  out.result.durationMs = Math.max(0, Math.round((performance.now() - started) * 1000) / 1000);
  return out;
}

/** Split text into lines the way an editor shows them (a final newline does not start a line). */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function clip(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}… [${line.length - max} more characters]`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

async function readFile(fs: WorkspaceFs, a: Args): Promise<ToolOutcome> {
  const path = str(a, 'path');
  const startArg = optInt(a, 'startLine');
  const endArg = optInt(a, 'endLine');
  if (startArg !== undefined && endArg !== undefined && endArg < startArg) {
    return fail(`endLine (${endArg}) is before startLine (${startArg})`);
  }
  const r = await fs.readText(path, { maxBytes: FILE_LIMITS.readBytes });
  if (!r.ok) return fail(r.error);
  const { text, size, truncated, binary } = r.value;
  if (binary) return fail(`"${path}" is a binary file (${plural(size, 'byte')}); it is not shown`);
  const lines = splitLines(text);
  const total = lines.length;
  if (total === 0) return ok(`${path} is empty (0 lines).`);
  const start = startArg ?? 1;
  if (start > total) return fail(`startLine ${start} is past the end of "${path}", which has ${plural(total, 'line')}`);
  const wanted = Math.min(endArg ?? total, total);
  const end = Math.min(wanted, start + FILE_LIMITS.readLines - 1);
  const width = String(end).length;
  const body = lines
    .slice(start - 1, end)
    .map((l, i) => `${String(start + i).padStart(width)}\t${clip(l, FILE_LIMITS.lineChars)}`)
    .join('\n');
  const notes: string[] = [];
  if (end < wanted)
    notes.push(
      `[shown lines ${start}-${end} of ${total}: at most ${FILE_LIMITS.readLines} lines per call; read on with startLine=${end + 1}]`,
    );
  else if (endArg !== undefined && endArg > total) notes.push(`[the file ends at line ${total}]`);
  if (truncated)
    notes.push(`[the file is ${plural(size, 'byte')}; only its first ${FILE_LIMITS.readBytes} bytes were read]`);
  const head =
    start === 1 && end === total && !truncated
      ? `${path} (${plural(total, 'line')}):`
      : `${path} (lines ${start}-${end} of ${total}${truncated ? '+' : ''}):`;
  return ok([head, body, ...notes].join('\n'), notes.length ? { outputTruncated: true } : {});
}

async function writeFile(fs: WorkspaceFs, a: Args): Promise<ToolOutcome> {
  const path = str(a, 'path');
  const content = str(a, 'content');
  const w = await fs.writeText(path, content);
  if (!w.ok) return fail(w.error);
  const lines = splitLines(content).length;
  return ok(
    `${w.value.created ? 'Created' : 'Overwrote'} ${w.value.path} (${plural(lines, 'line')}, ${plural(w.value.bytes, 'byte')}).`,
    {
      filesChanged: [w.value.path],
    },
  );
}

/** 1-based line number of a character offset. */
function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/** Lines whose text matches the search's first non-blank line, ignoring indentation and spacing. Cheap hints, not a diff. */
function nearMatches(lines: string[], search: string): number[] {
  const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
  const first = splitLines(search)
    .map(squash)
    .find((l) => l !== '');
  if (first === undefined) return [];
  const exact: number[] = [];
  const partial: number[] = [];
  lines.forEach((l, i) => {
    const s = squash(l);
    if (s === '') return;
    if (s === first) exact.push(i + 1);
    else if (first.length >= 8 && (s.includes(first) || (s.length >= 8 && first.includes(s)))) partial.push(i + 1);
  });
  return (exact.length ? exact : partial).slice(0, 5);
}

async function editFile(fs: WorkspaceFs, a: Args): Promise<ToolOutcome> {
  const path = str(a, 'path');
  const search = str(a, 'search');
  const replace = str(a, 'replace');
  if (search === '') return fail('"search" is empty; give the exact text to replace');
  const r = await fs.readText(path, { maxBytes: FILE_LIMITS.readBytes });
  if (!r.ok) return fail(r.error);
  const { text, binary, truncated, size } = r.value;
  if (binary) return fail(`"${path}" is a binary file; it cannot be edited as text`);
  if (truncated)
    return fail(`"${path}" is too large to edit (${plural(size, 'byte')}; the limit is ${FILE_LIMITS.readBytes})`);
  let needle = search;
  let replacement = replace;
  let at = occurrences(text, needle);
  // A file with CRLF line ends and a search written with LF: match it line end for line end.
  if (at.length === 0 && text.includes('\r\n') && search.includes('\n') && !search.includes('\r\n')) {
    const crlf = search.replace(/\n/g, '\r\n');
    const alt = occurrences(text, crlf);
    if (alt.length > 0) {
      needle = crlf;
      replacement = replace.replace(/\r?\n/g, '\r\n');
      at = alt;
    }
  }
  if (at.length === 0) {
    const near = nearMatches(splitLines(text), search);
    const hint = near.length
      ? ` Similar text (different whitespace or only part of it) is at ${near.length === 1 ? 'line' : 'lines'} ${near.join(', ')}; read the file there and copy the text exactly.`
      : ' Read the file and copy the text to replace exactly, including whitespace and indentation.';
    return fail(`the search text was not found in "${path}".${hint}`);
  }
  if (at.length > 1) {
    const lines = at.slice(0, 10).map((o) => lineAt(text, o));
    return fail(
      `the search text was found ${at.length} times in "${path}" (at lines ${lines.join(', ')}${at.length > 10 ? ', …' : ''}); it must match exactly once. Include more surrounding lines in "search" to make it unique.`,
    );
  }
  const offset = at[0]!;
  const updated = text.slice(0, offset) + replacement + text.slice(offset + needle.length);
  const firstLine = lineAt(text, offset);
  const oldCount = splitLines(needle).length || 1;
  const newCount = splitLines(replacement).length;
  if (updated === text)
    return ok(`No change: the replacement equals the search text in ${path} (line ${firstLine}).`, {
      filesChanged: [],
    });
  const w = await fs.writeText(path, updated);
  if (!w.ok) return fail(w.error);
  return ok(
    `Edited ${w.value.path}: replaced ${plural(oldCount, 'line')} at line ${firstLine} with ${plural(newCount, 'line')}.`,
    { filesChanged: [w.value.path] },
  );
}

function entryLabel(e: ListEntry): string {
  return e.kind === 'dir' ? `${e.path}/` : e.kind === 'symlink' ? `${e.path} (symlink)` : e.path;
}

async function listFiles(fs: WorkspaceFs, a: Args): Promise<ToolOutcome> {
  const path = str(a, 'path', '.');
  const recursive = optBool(a, 'recursive');
  const l = await fs.list(path, { recursive, limit: FILE_LIMITS.listEntries });
  if (!l.ok) return fail(l.error);
  const { entries, truncated, skipped } = l.value;
  const lines = entries.map(entryLabel);
  const notes: string[] = [];
  if (entries.length === 0) notes.push(`(${path} is empty)`);
  if (truncated) notes.push(`[listing stopped at ${FILE_LIMITS.listEntries} entries; list a subfolder to see more]`);
  if (skipped.length) notes.push(`[not listed: ${skipped.join(', ')}]`);
  return ok([...lines, ...notes].join('\n'), truncated ? { outputTruncated: true } : {});
}

async function search(fs: WorkspaceFs, a: Args, ctx: ToolContext): Promise<ToolOutcome> {
  const pattern = str(a, 'pattern');
  const path = str(a, 'path', '.');
  const useRegex = optBool(a, 'regex');
  if (pattern === '') return fail('the search pattern is empty');
  let matching: (lines: string[]) => number[];
  if (useRegex) {
    const compiled = compileTimedRegex(pattern, FILE_LIMITS.searchRegexMs);
    if ('error' in compiled) return fail(compiled.error);
    matching = compiled.matching;
  } else {
    matching = (lines) => lines.flatMap((l, i) => (l.includes(pattern) ? [i] : []));
  }

  const st = await fs.stat(path);
  if (!st.ok) return fail(st.error);
  let files: string[];
  let listTruncated = false;
  if (st.value.kind === 'file') {
    const c = await fs.realPath(path);
    if (!c.ok) return fail(c.error);
    files = [c.value.relative];
  } else if (st.value.kind === 'dir') {
    const l = await fs.list(path, { recursive: true, limit: FILE_LIMITS.searchFiles });
    if (!l.ok) return fail(l.error);
    // Symlinks are not followed: a linked file is searched where it really is.
    files = l.value.entries.filter((e) => e.kind === 'file').map((e) => e.path);
    listTruncated = l.value.truncated;
  } else {
    return fail(`"${path}" is neither a file nor a folder`);
  }

  const hits: string[] = [];
  let total = 0;
  let skippedBinary = 0;
  let skippedLarge = 0;
  for (const f of files) {
    if (ctx.signal?.aborted) {
      return {
        status: 'interrupted',
        result: { error: 'cancelled', output: hits.join('\n') },
        observation: `Search cancelled after ${plural(total, 'match', 'matches')}.\n${hits.join('\n')}`,
      };
    }
    const r = await fs.readText(f, { maxBytes: FILE_LIMITS.searchFileBytes });
    if (!r.ok) continue; // vanished or refused since it was listed
    if (r.value.binary) {
      skippedBinary++;
      continue;
    }
    if (r.value.truncated) {
      skippedLarge++;
      continue;
    }
    const lines = splitLines(r.value.text);
    let found: number[];
    try {
      found = matching(lines);
    } catch (e) {
      if (e instanceof RegexTimeout) {
        return fail(
          `the regular expression ${JSON.stringify(pattern)} took longer than ${FILE_LIMITS.searchRegexMs} ms (in ${f}) and was stopped: it backtracks catastrophically. Simplify it (no nested quantifiers like (a+)+), or search for plain text.`,
        );
      }
      throw e;
    }
    for (const i of found) {
      total++;
      if (hits.length < FILE_LIMITS.searchMatches)
        hits.push(`${f}:${i + 1}: ${clip(lines[i]!.trim(), FILE_LIMITS.searchLineChars)}`);
    }
  }
  const notes: string[] = [];
  if (total > hits.length)
    notes.push(`[${total} matches; the first ${hits.length} are shown: narrow the pattern or the path]`);
  if (listTruncated) notes.push(`[only the first ${FILE_LIMITS.searchFiles} files were searched]`);
  if (skippedBinary) notes.push(`[${plural(skippedBinary, 'binary file')} skipped]`);
  if (skippedLarge) notes.push(`[${plural(skippedLarge, 'file')} over ${FILE_LIMITS.searchFileBytes} bytes skipped]`);
  const head =
    total === 0
      ? `No matches for ${JSON.stringify(pattern)}${useRegex ? ' (regex)' : ''} in ${path === '.' ? 'the workspace' : path}.`
      : `${plural(total, 'match', 'matches')} for ${JSON.stringify(pattern)}${useRegex ? ' (regex)' : ''}:`;
  return ok(
    [head, ...hits, ...notes].join('\n'),
    total > hits.length || listTruncated ? { outputTruncated: true } : {},
  );
}

class RegexTimeout extends Error {}

/**
 * The model's regular expression, run where it can be stopped: in a vm
 * context with a time limit shared by all the files of one search, so a
 * pattern that backtracks catastrophically ends the search with an error
 * instead of freezing the process (in the editor: every extension).
 */
function compileTimedRegex(
  pattern: string,
  budgetMs: number,
): { matching: (lines: string[]) => number[] } | { error: string } {
  const sandbox = createContext({ pattern, lines: [] as string[] });
  try {
    runInContext(
      'var re = new RegExp(pattern); function scan(ls) { var out = []; for (var i = 0; i < ls.length; i++) if (re.test(ls[i])) out.push(i); return out; }',
      sandbox,
      { timeout: budgetMs },
    );
  } catch (e) {
    return {
      error: `invalid regular expression ${JSON.stringify(pattern)}: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  let spent = 0;
  return {
    matching: (lines) => {
      const left = budgetMs - spent;
      if (left <= 0) throw new RegexTimeout();
      sandbox.lines = lines;
      const t0 = performance.now();
      try {
        return Array.from(
          runInContext('scan(lines)', sandbox, { timeout: Math.max(1, Math.ceil(left)) }) as ArrayLike<number>,
        );
      } catch (e) {
        if (e instanceof Error && /Script execution timed out/.test(e.message)) throw new RegexTimeout();
        if ((e as { code?: string } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new RegexTimeout();
        throw e;
      } finally {
        spent += performance.now() - t0;
        sandbox.lines = [];
      }
    },
  };
}
