import { constants as fsConstants, existsSync, promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { normalizeWorkspacePath } from '../policy/path';

/**
 * The file system the file tools see: every path is workspace-relative, every
 * path is confined to the workspace, and every failure is a value with a
 * message the model can read (never a thrown stack trace).
 *
 * The CLI uses `NodeWorkspaceFs` (node:fs/promises). The extension can
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
const BINARY_SAMPLE = 8192;

/** Whether `child` is `root` or below it; both absolute real paths. */
export function isInside(root: string, child: string, caseInsensitive: boolean): boolean {
  const r = caseInsensitive ? root.toLowerCase() : root;
  const c = caseInsensitive ? child.toLowerCase() : child;
  if (c === r) return true;
  const prefix = r.endsWith(nodePath.sep) ? r : r + nodePath.sep;
  return c.startsWith(prefix);
}

function relativeOf(root: string, abs: string): string {
  const rel = nodePath.relative(root, abs);
  return rel === '' ? '.' : rel.split(nodePath.sep).join('/');
}

function errnoCode(e: unknown): string | undefined {
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

/** Node's O_NOFOLLOW where the platform has it (not on Windows): the final component must not be a symlink. */
const NOFOLLOW = (fsConstants as Record<string, number | undefined>).O_NOFOLLOW ?? 0;
/** Opening a FIFO for reading blocks until a writer comes: non-blocking, it opens at once and is then refused as not a file. */
const NONBLOCK = (fsConstants as Record<string, number | undefined>).O_NONBLOCK ?? 0;

/** The longest one read or write of a file tool may take (a file on a hung network mount must not hang the run). */
export const FILE_IO_TIMEOUT_MS = 15_000;

/** `p`, or an error once `ms` passed. */
async function bounded<T>(p: Promise<T>, what: string, ms = FILE_IO_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s and was given up`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Where an open file really is. On Linux the kernel says (/proc/self/fd);
 * elsewhere undefined, and the caller compares device and inode with the path.
 */
async function openedPath(fh: fsp.FileHandle): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    return await fsp.readlink(`/proc/self/fd/${fh.fd}`);
  } catch {
    return undefined;
  }
}

/** Linux: folders can be walked by open file descriptor (/proc/self/fd/N/name), which no link swap can redirect. */
const BENEATH = process.platform === 'linux' && existsSync('/proc/self/fd');
const DIRECTORY = (fsConstants as Record<string, number | undefined>).O_DIRECTORY ?? 0;

/**
 * The folder `segments` below `root`, opened one real folder at a time, each
 * relative to the one before and never through a link (made when missing).
 */
async function openBeneath(root: string, segments: readonly string[]): Promise<fsp.FileHandle> {
  let fh = await fsp.open(root, fsConstants.O_RDONLY | DIRECTORY);
  try {
    for (const seg of segments) {
      const p = `/proc/self/fd/${fh.fd}/${seg}`;
      await fsp.mkdir(p).catch((e: unknown) => {
        if (errnoCode(e) !== 'EEXIST') throw e;
      });
      const next = await fsp.open(p, fsConstants.O_RDONLY | DIRECTORY | NOFOLLOW);
      await fh.close();
      fh = next;
    }
    return fh;
  } catch (e) {
    await fh.close().catch(() => undefined);
    throw e;
  }
}

/**
 * The opened file is the one the checked path names: a folder on the way
 * swapped for a link between the check and the open would have led elsewhere.
 */
async function isWhereChecked(fh: fsp.FileHandle, absolute: string): Promise<boolean> {
  const at = await openedPath(fh);
  if (at !== undefined) return at === absolute;
  try {
    const [a, b] = await Promise.all([fh.stat(), fsp.lstat(absolute)]);
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  }
}

/** `WorkspaceFs` on node:fs/promises. */
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

export class NodeWorkspaceFs implements WorkspaceFs {
  private ws: Promise<FsResult<Workspace>> | undefined;

  /** @param readOnly workspace-relative paths the file tools must not write (protected paths, .lar, .git/config …). */
  constructor(
    readonly workspace: string,
    private readonly readOnly: readonly string[] = [],
  ) {}

  /** The workspace's real path and case sensitivity, found once. */
  open(): Promise<FsResult<Workspace>> {
    this.ws ??= openWorkspace(this.workspace).then((r) =>
      r.ok ? { ok: true, value: { ...r.value, readOnly: this.readOnly } } : r,
    );
    return this.ws;
  }

  async realPath(path: string): Promise<FsResult<ConfinedPath>> {
    const ws = await this.open();
    if (!ws.ok) return ws;
    return confinePath(ws.value, path);
  }

  async stat(path: string): Promise<FsResult<FileStat>> {
    const c = await this.realPath(path);
    if (!c.ok) return c;
    if (!c.value.exists) return { ok: false, error: `"${path}" does not exist` };
    try {
      const st = await fsp.stat(c.value.absolute);
      return {
        ok: true,
        value: { kind: st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other', size: st.size, mtimeMs: st.mtimeMs },
      };
    } catch (e) {
      return { ok: false, error: describeFsError(e, path) };
    }
  }

  async readText(path: string, opts: { maxBytes?: number } = {}): Promise<FsResult<ReadResult>> {
    const c = await this.realPath(path);
    if (!c.ok) return c;
    if (!c.value.exists) return { ok: false, error: `"${path}" does not exist` };
    let fh: fsp.FileHandle | undefined;
    try {
      fh = await bounded(fsp.open(c.value.absolute, fsConstants.O_RDONLY | NOFOLLOW | NONBLOCK), `opening "${path}"`);
      const st = await fh.stat();
      if (st.isDirectory()) return { ok: false, error: `"${path}" is a folder, not a file` };
      if (!st.isFile())
        return {
          ok: false,
          error: `"${path}" is not a regular file (a FIFO, a device or a socket): the file tools do not read it`,
        };
      if (!(await isWhereChecked(fh, c.value.absolute)))
        return {
          ok: false,
          error: `"${path}" changed while it was being opened (a folder on the way was replaced by a link); try again`,
        };
      const max = Math.min(opts.maxBytes ?? MAX_READ_BYTES, MAX_READ_BYTES);
      const want = Math.min(st.size, max);
      const buf = Buffer.alloc(want);
      let got = 0;
      while (got < want) {
        const { bytesRead } = await bounded(fh.read(buf, got, want - got, got), `reading "${path}"`);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const bytes = buf.subarray(0, got);
      const binary = bytes.subarray(0, BINARY_SAMPLE).includes(0);
      return {
        ok: true,
        value: { text: binary ? '' : bytes.toString('utf8'), size: st.size, truncated: st.size > got, binary },
      };
    } catch (e) {
      return { ok: false, error: describeFsError(e, path) };
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  async writeText(path: string, content: string): Promise<FsResult<WriteResult>> {
    const ws = await this.open();
    if (!ws.ok) return ws;
    const target = await prepareWrite(ws.value, path, !BENEATH);
    if (!target.ok) return target;
    const { absolute, relative, exists } = target.value;
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > MAX_WRITE_BYTES)
      return { ok: false, error: `the content is ${bytes} bytes; the file tools write at most ${MAX_WRITE_BYTES}` };
    // A new file next to the target, then renamed over it: the target's name never points at
    // half a write, and a link or a hard link put there meanwhile is replaced, not written through.
    // On Linux the folder is reached one real folder at a time from the workspace (never through a
    // link) and held open, and the file is made and renamed in that very folder, so a folder on
    // the way swapped for a link cannot lead the write anywhere else.
    const name = nodePath.basename(absolute);
    const tempName = `.${name}.lar-${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
    let dir: fsp.FileHandle | undefined;
    let fh: fsp.FileHandle | undefined;
    let temp: string | undefined;
    try {
      let at: (n: string) => string;
      if (BENEATH) {
        const segs = relative.split('/').slice(0, -1);
        dir = await bounded(openBeneath(ws.value.root, segs), `opening the folder of "${path}"`);
        const d = dir;
        at = (n) => `/proc/self/fd/${d.fd}/${n}`;
      } else {
        const d = nodePath.dirname(absolute);
        at = (n) => nodePath.join(d, n);
      }
      const existing = await fsp.lstat(at(name)).catch(() => undefined);
      if (existing && (!existing.isFile() || existing.nlink > 1))
        return {
          ok: false,
          error: `"${path}" changed while it was being written (it is no longer a file with one name); nothing was written`,
        };
      const mode = existing ? existing.mode & 0o7777 : 0o666;
      temp = at(tempName);
      fh = await bounded(
        fsp.open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | NOFOLLOW, mode),
        `creating "${path}"`,
      );
      if (!BENEATH && !(await isWhereChecked(fh, nodePath.join(nodePath.dirname(absolute), tempName)))) {
        return {
          ok: false,
          error: `"${path}" changed while it was being written (a folder on the way was replaced by a link); nothing was written`,
        };
      }
      await bounded(fh.writeFile(content, 'utf8'), `writing "${path}"`);
      if (existing) await fh.chmod(mode);
      await fh.close();
      fh = undefined;
      await fsp.rename(temp, at(name));
      temp = undefined;
      return { ok: true, value: { path: relative, created: !exists && !existing, bytes } };
    } catch (e) {
      return {
        ok: false,
        error: e instanceof Error && /given up$/.test(e.message) ? e.message : describeFsError(e, path),
      };
    } finally {
      await fh?.close().catch(() => undefined);
      if (temp) await fsp.rm(temp, { force: true }).catch(() => undefined);
      await dir?.close().catch(() => undefined);
    }
  }

  async list(path: string, opts: ListOptions = {}): Promise<FsResult<ListResult>> {
    const c = await this.realPath(path);
    if (!c.ok) return c;
    if (!c.value.exists) return { ok: false, error: `"${path}" does not exist` };
    const ws = await this.open();
    if (!ws.ok) return ws;
    const root = ws.value.root;
    const limit = opts.limit ?? 1000;
    const skip = new Set(opts.skip ?? DEFAULT_SKIP);
    const entries: ListEntry[] = [];
    const skipped = new Set<string>();
    try {
      const st = await fsp.stat(c.value.absolute);
      if (!st.isDirectory()) return { ok: false, error: `"${path}" is a file, not a folder` };
    } catch (e) {
      return { ok: false, error: describeFsError(e, path) };
    }
    // Depth-first in name order (a folder's contents follow it); symlinked folders are listed, not followed (no loops, no escapes).
    let truncated = false;
    const walk = async (dir: string, top: boolean): Promise<string | undefined> => {
      let dirents;
      try {
        dirents = await fsp.readdir(dir, { withFileTypes: true });
      } catch (e) {
        return top ? describeFsError(e, path) : undefined; // an unreadable subfolder is left out
      }
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const d of dirents) {
        if (truncated) return undefined;
        if (skip.has(d.name)) {
          skipped.add(d.name);
          continue;
        }
        if (entries.length >= limit) {
          truncated = true;
          return undefined;
        }
        const abs = nodePath.join(dir, d.name);
        const kind: EntryKind = d.isSymbolicLink()
          ? 'symlink'
          : d.isDirectory()
            ? 'dir'
            : d.isFile()
              ? 'file'
              : 'other';
        entries.push({ path: relativeOf(root, abs), kind });
        if (kind === 'dir' && opts.recursive) await walk(abs, false);
      }
      return undefined;
    };
    const failed = await walk(c.value.absolute, true);
    if (failed !== undefined) return { ok: false, error: failed };
    return { ok: true, value: { entries, truncated, skipped: [...skipped].sort() } };
  }
}
