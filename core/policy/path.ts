/**
 * Lexical path policy. A path argument must be relative and must not climb
 * out of the workspace; it is judged after normalizing `\` to `/`, dropping
 * `.` and empty segments and resolving `..`. Symlinks are the tool runner's
 * business (it resolves real paths before touching the disk); the verifier
 * judges what the model asked for.
 */
export type PathVerdict = { ok: true; normalized: string } | { ok: false; reason: string };

/** Already-normal relative paths (the usual case) need no splitting. `[\s\S]`, not `.`: a line break must not hide a `..` segment. */
const PLAIN_RELATIVE = /^(?![\/~]|[A-Za-z]:)(?![\s\S]*(?:^|\/)\.{1,2}(?:\/|$))(?![\s\S]*\/\/)[^\\]*[^\\/]$/;

export function normalizeWorkspacePath(path: string): PathVerdict {
  return PLAIN_RELATIVE.test(path) ? { ok: true, normalized: path } : normalizeByParts(path);
}

/** The definition in docs/rewards.md, step by step; `normalizeWorkspacePath` is this with a fast path. */
export function normalizeByParts(path: string): PathVerdict {
  const p = path.replace(/\\/g, '/');
  if (p.startsWith('/'))
    return { ok: false, reason: `"${path}" is an absolute path; paths must be relative to the workspace` };
  if (p.startsWith('~'))
    return { ok: false, reason: `"${path}" starts with "~" (the home folder), which is outside the workspace` };
  if (/^[A-Za-z]:/.test(p))
    return { ok: false, reason: `"${path}" names a drive; paths must be relative to the workspace` };
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return { ok: false, reason: `"${path}" climbs out of the workspace with ".."` };
      out.pop();
    } else {
      out.push(seg);
    }
  }
  return { ok: true, normalized: out.length ? out.join('/') : '.' };
}
