import type { ToolContext, ToolOutcome } from './types';
import type { ListEntry, WorkspaceFs } from '../workspace/fs';
import {
  type Args,
  ArgError,
  clip,
  fail,
  FILE_LIMITS,
  ok,
  optBool,
  optInt,
  plural,
  splitLines,
  str,
} from './file-tool-base';
import { search } from './search';

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
