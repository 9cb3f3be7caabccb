import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { normalizeWorkspacePath } from '../policy/path';

/**
 * The file system the file tools see: every path is workspace-relative, every
 * path is confined to the workspace, and every failure is a value with a
 * message the model can read (never a thrown stack trace).
 *
 * The CLI uses `NodeWorkspaceFs` (node-fs.ts, on node:fs/promises). The extension can
 * implement the same interface with writes through VS Code's `WorkspaceEdit`
 * (so the user can undo them) and reuse `confinePath` for the checks.
 */

export type FsResult<T> = { ok: true; value: T } | { ok: false; error: string };

export type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

export interface FileStat {
  kind: 'file' | 'dir' | 'other';
  size: number;
  mtimeMs: number;
}

export interface ListEntry {
  /** Workspace-relative, `/`-separated. */
  path: string;
  kind: EntryKind;
}

export interface ListOptions {
  recursive?: boolean;
  /** Stop after this many entries (then `truncated` is true). */
  limit?: number;
  /** Folder names neither listed nor descended into (default: `.git`, `node_modules`). */
  skip?: readonly string[];
}

export interface ListResult {
  entries: ListEntry[];
  truncated: boolean;
  /** Names from `skip` that were present and left out. */
  skipped: string[];
}

export interface ReadResult {
  text: string;
  /** The file's size in bytes. */
  size: number;
  /** Only the first `maxBytes` were read. */
  truncated: boolean;
  /** NUL bytes in the first 8 KiB: the text is not meant for the model. */
  binary: boolean;
}

export interface WriteResult {
  /** Workspace-relative real path of the file written (a symlink inside the workspace is followed). */
  path: string;
  created: boolean;
  bytes: number;
}

export interface WorkspaceFs {
  /** Absolute path of the workspace folder. */
  readonly workspace: string;
  /** The confined absolute real path and its workspace-relative form; refuses anything outside. */
  realPath(path: string): Promise<FsResult<ConfinedPath>>;
  stat(path: string): Promise<FsResult<FileStat>>;
  readText(path: string, opts?: { maxBytes?: number }): Promise<FsResult<ReadResult>>;
  /** Creates missing parent folders. */
  writeText(path: string, content: string): Promise<FsResult<WriteResult>>;
  list(path: string, opts?: ListOptions): Promise<FsResult<ListResult>>;
}

export interface ConfinedPath {
  /** Absolute path on disk with every existing symlink resolved. */
  absolute: string;
  /** Workspace-relative, `/`-separated, `.` for the workspace itself. */
  relative: string;
  /** Whether the path exists. */
  exists: boolean;
}

export const DEFAULT_SKIP: readonly string[] = ['.git', 'node_modules'];
/** The most a file tool reads of one file, whatever the caller asks. */
export const MAX_READ_BYTES = 64 * 1024 * 1024;
/** The most a file tool writes in one call. */
export const MAX_WRITE_BYTES = 32 * 1024 * 1024;

/** Whether `child` is `root` or below it; both absolute real paths. */
export function isInside(root: string, child: string, caseInsensitive: boolean): boolean {
  const r = caseInsensitive ? root.toLowerCase() : root;
  const c = caseInsensitive ? child.toLowerCase() : child;
  if (c === r) return true;
  const prefix = r.endsWith(nodePath.sep) ? r : r + nodePath.sep;
  return c.startsWith(prefix);
}

export function relativeOf(root: string, abs: string): string {
  const rel = nodePath.relative(root, abs);
  return rel === '' ? '.' : rel.split(nodePath.sep).join('/');
}

export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : undefined;
}

/** A readable message for a Node file-system error about `path`. */
export function describeFsError(e: unknown, path: string): string {
  switch (errnoCode(e)) {
    case 'ENOENT':
      return `"${path}" does not exist`;
    case 'EISDIR':
      return `"${path}" is a folder, not a file`;
    case 'ENOTDIR':
      return `a part of "${path}" is a file, not a folder`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied for "${path}"`;
    case 'ELOOP':
      return `"${path}" is a symbolic link that cannot be followed safely`;
    case 'EEXIST':
      return `"${path}" already exists`;
    case 'ENOSPC':
      return `no space left on the device writing "${path}"`;
    case 'EROFS':
      return `"${path}" is on a read-only file system`;
    case 'ENAMETOOLONG':
      return `"${path}" is too long a name`;
    default: {
      const msg = e instanceof Error ? e.message : String(e);
      return `cannot access "${path}": ${msg}`;
    }
  }
}

/** Whether the file system holding `dir` ignores case (probed by stat-ing a case-swapped path). */
export async function probeCaseInsensitive(dir: string): Promise<boolean> {
  const swapped = dir.replace(/[A-Za-z]/g, (ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()));
  if (swapped === dir) return process.platform === 'darwin' || process.platform === 'win32';
  try {
    const [a, b] = await Promise.all([fsp.stat(dir), fsp.stat(swapped)]);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

export interface Workspace {
  /** Real path of the workspace folder. */
  root: string;
  caseInsensitive: boolean;
  /** Workspace-relative paths (and what lies below them) that are never written: protected and always read-only. */
  readOnly?: readonly string[];
}

/** The workspace's real path and whether its file system ignores case. */
export async function openWorkspace(workspace: string): Promise<FsResult<Workspace>> {
  try {
    const root = await fsp.realpath(nodePath.resolve(workspace));
    const st = await fsp.stat(root);
    if (!st.isDirectory()) return { ok: false, error: `the workspace "${workspace}" is not a folder` };
    return { ok: true, value: { root, caseInsensitive: await probeCaseInsensitive(root) } };
  } catch (e) {
    return { ok: false, error: `the workspace folder is not usable: ${describeFsError(e, workspace)}` };
  }
}

/**
 * Confine a workspace-relative path: the lexical policy first (no absolute
 * path, no `~`, no drive, no climbing out with `..`), then segment by segment
 * on disk: every existing symlink is resolved and its real target must stay in
 * the workspace's real path; a dangling symlink is refused (writing through it
 * would create its target, wherever that is). Segments that do not exist yet
 * are appended to the real path of the nearest existing folder.
 */
export async function confinePath(ws: Workspace, path: string): Promise<FsResult<ConfinedPath>> {
  if (typeof path !== 'string' || path.length === 0) return { ok: false, error: 'the path is empty' };
  if (path.includes('\0')) return { ok: false, error: 'the path contains a NUL character' };
  const verdict = normalizeWorkspacePath(path);
  if (!verdict.ok) return { ok: false, error: verdict.reason };
  const outside = (what: string) => ({
    ok: false as const,
    error: `"${path}" is outside the workspace (${what}); paths must stay inside the workspace`,
  });
  const segments = verdict.normalized === '.' ? [] : verdict.normalized.split('/');
  let cur = ws.root;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const next = nodePath.join(cur, seg);
    let st;
    try {
      st = await fsp.lstat(next);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOENT') {
        const abs = nodePath.join(cur, ...segments.slice(i));
        if (!isInside(ws.root, abs, ws.caseInsensitive)) return outside('it resolves outside');
        return { ok: true, value: { absolute: abs, relative: relativeOf(ws.root, abs), exists: false } };
      }
      if (code === 'ENOTDIR')
        return { ok: false, error: `"${segments.slice(0, i).join('/')}" in "${path}" is a file, not a folder` };
      return { ok: false, error: describeFsError(e, path) };
    }
    if (st.isSymbolicLink()) {
      let real: string;
      try {
        real = await fsp.realpath(next);
      } catch (e) {
        const code = errnoCode(e);
        if (code === 'ENOENT')
          return {
            ok: false,
            error: `"${segments.slice(0, i + 1).join('/')}" is a symbolic link to something that does not exist; refusing to follow it`,
          };
        if (code === 'ELOOP')
          return { ok: false, error: `"${segments.slice(0, i + 1).join('/')}" is a symbolic link loop` };
        return { ok: false, error: describeFsError(e, path) };
      }
      if (!isInside(ws.root, real, ws.caseInsensitive)) {
        return outside(`"${segments.slice(0, i + 1).join('/')}" is a symbolic link pointing out of it`);
      }
      cur = real;
    } else {
      if (i < segments.length - 1 && !st.isDirectory()) {
        return { ok: false, error: `"${segments.slice(0, i + 1).join('/')}" in "${path}" is a file, not a folder` };
      }
      cur = next;
    }
  }
  if (!isInside(ws.root, cur, ws.caseInsensitive)) return outside('it resolves outside');
  return { ok: true, value: { absolute: cur, relative: relativeOf(ws.root, cur), exists: true } };
}

/** A confined write target: what `confinePath` says, and for an existing path whether it is a regular file. */
export interface WriteTarget extends ConfinedPath {
  regularFile: boolean;
}

/**
 * Everything every writer does before writing, whatever writes (Node, or
 * VS Code's WorkspaceEdit): confine the path, refuse the workspace folder
 * itself and folders, and for a new file make its parent folders and confine
 * again (in case a folder was swapped for a symlink meanwhile).
 */
export async function prepareWrite(ws: Workspace, path: string, makeParents = true): Promise<FsResult<WriteTarget>> {
  const c = await confinePath(ws, path);
  if (!c.ok) return c;
  const { absolute, relative, exists } = c.value;
  if (relative === '.') return { ok: false, error: `"${path}" is the workspace folder itself, not a file` };
  // Checked on the real path: a link elsewhere in the workspace leads here too.
  const ro = readOnlyOf(ws, relative);
  if (ro !== undefined)
    return { ok: false, error: `"${path}" is read-only for the agent ("${ro}" may be read, not changed)` };
  try {
    if (exists) {
      // The real path: confinePath resolved every link, so what is there is the target itself.
      const st = await fsp.lstat(absolute);
      if (st.isDirectory()) return { ok: false, error: `"${path}" is a folder, not a file` };
      if (!st.isFile())
        return {
          ok: false,
          error: `"${path}" is not a regular file (a FIFO, a device or a socket): the file tools do not write it`,
        };
      // Another name of the same file may be outside the workspace: a write here would change it there.
      if (st.nlink > 1)
        return {
          ok: false,
          error: `"${path}" has ${st.nlink} hard links: writing it would change the file under its other names too (which may be outside the workspace); the file tools do not write it`,
        };
      return { ok: true, value: { ...c.value, regularFile: true } };
    }
    // The Node writer on Linux makes them itself, folder by folder from the workspace (openBeneath).
    if (!makeParents) return { ok: true, value: { ...c.value, regularFile: false } };
    await fsp.mkdir(nodePath.dirname(absolute), { recursive: true });
    const again = await confinePath(ws, path);
    return again.ok ? { ok: true, value: { ...again.value, regularFile: false } } : again;
  } catch (e) {
    return { ok: false, error: describeFsError(e, path) };
  }
}

/** The read-only path that `relative` (a real, workspace-relative path) is or lies below. */
export function readOnlyOf(ws: Workspace, relative: string): string | undefined {
  const fold = (s: string): string => (ws.caseInsensitive ? s.toLowerCase() : s);
  const r = fold(relative);
  for (const p of ws.readOnly ?? []) {
    const q = fold(p.replace(/\/+$/, ''));
    if (r === q || r.startsWith(`${q}/`)) return p;
  }
  return undefined;
}
