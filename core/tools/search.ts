/**
 * The search tool, apart from the other file tools: it walks many files and runs the model's
 * regular expression under a time limit.
 */
import { createContext, runInContext } from 'node:vm';
import type { ToolContext, ToolOutcome } from './types';
import type { WorkspaceFs } from '../workspace/fs';
import { type Args, clip, fail, FILE_LIMITS, ok, optBool, plural, splitLines, str } from './file-tool-base';

/** What a search found so far. */
interface Found {
  hits: string[];
  total: number;
  skippedBinary: number;
  skippedLarge: number;
}

export async function search(fs: WorkspaceFs, a: Args, ctx: ToolContext): Promise<ToolOutcome> {
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
  const listed = await searchedFiles(fs, path);
  if ('error' in listed) return fail(listed.error);
  const found = await scan(fs, listed.files, matching, pattern, ctx);
  if ('status' in found) return found;
  const { hits, total, skippedBinary, skippedLarge } = found;
  const notes: string[] = [];
  if (total > hits.length)
    notes.push(`[${total} matches; the first ${hits.length} are shown: narrow the pattern or the path]`);
  if (listed.truncated) notes.push(`[only the first ${FILE_LIMITS.searchFiles} files were searched]`);
  if (skippedBinary) notes.push(`[${plural(skippedBinary, 'binary file')} skipped]`);
  if (skippedLarge) notes.push(`[${plural(skippedLarge, 'file')} over ${FILE_LIMITS.searchFileBytes} bytes skipped]`);
  const head =
    total === 0
      ? `No matches for ${JSON.stringify(pattern)}${useRegex ? ' (regex)' : ''} in ${path === '.' ? 'the workspace' : path}.`
      : `${plural(total, 'match', 'matches')} for ${JSON.stringify(pattern)}${useRegex ? ' (regex)' : ''}:`;
  return ok(
    [head, ...hits, ...notes].join('\n'),
    total > hits.length || listed.truncated ? { outputTruncated: true } : {},
  );
}

/** The files a search looks at: the one file, or every file under the folder up to the limit. */
async function searchedFiles(
  fs: WorkspaceFs,
  path: string,
): Promise<{ files: string[]; truncated: boolean } | { error: string }> {
  const st = await fs.stat(path);
  if (!st.ok) return { error: st.error };
  if (st.value.kind === 'file') {
    const c = await fs.realPath(path);
    if (!c.ok) return { error: c.error };
    return { files: [c.value.relative], truncated: false };
  } else if (st.value.kind === 'dir') {
    const l = await fs.list(path, { recursive: true, limit: FILE_LIMITS.searchFiles });
    if (!l.ok) return { error: l.error };
    // Symlinks are not followed: a linked file is searched where it really is.
    return { files: l.value.entries.filter((e) => e.kind === 'file').map((e) => e.path), truncated: l.value.truncated };
  } else {
    return { error: `"${path}" is neither a file nor a folder` };
  }
}

/** The matching lines of each file; the outcome instead when the search is cancelled or its regex runs out of time. */
async function scan(
  fs: WorkspaceFs,
  files: string[],
  matching: (lines: string[]) => number[],
  pattern: string,
  ctx: ToolContext,
): Promise<Found | ToolOutcome> {
  const found: Found = { hits: [], total: 0, skippedBinary: 0, skippedLarge: 0 };
  const { hits } = found;
  for (const f of files) {
    if (ctx.signal?.aborted) {
      return {
        status: 'interrupted',
        result: { error: 'cancelled', output: hits.join('\n') },
        observation: `Search cancelled after ${plural(found.total, 'match', 'matches')}.\n${hits.join('\n')}`,
      };
    }
    const r = await fs.readText(f, { maxBytes: FILE_LIMITS.searchFileBytes });
    if (!r.ok) continue; // vanished or refused since it was listed
    if (r.value.binary) {
      found.skippedBinary++;
      continue;
    }
    if (r.value.truncated) {
      found.skippedLarge++;
      continue;
    }
    const lines = splitLines(r.value.text);
    let at: number[];
    try {
      at = matching(lines);
    } catch (e) {
      if (e instanceof RegexTimeout) {
        return fail(
          `the regular expression ${JSON.stringify(pattern)} took longer than ${FILE_LIMITS.searchRegexMs} ms (in ${f}) and was stopped: it backtracks catastrophically. Simplify it (no nested quantifiers like (a+)+), or search for plain text.`,
        );
      }
      throw e;
    }
    for (const i of at) {
      found.total++;
      if (hits.length < FILE_LIMITS.searchMatches)
        hits.push(`${f}:${i + 1}: ${clip(lines[i]!.trim(), FILE_LIMITS.searchLineChars)}`);
    }
  }
  return found;
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
