/**
 * `WorkspaceFs` on node:fs/promises, with opens that a link swapped in between the check and the
 * open cannot redirect, and every read and write bounded in time.
 */
import { constants as fsConstants, existsSync, promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import {
  DEFAULT_SKIP,
  describeFsError,
  errnoCode,
  MAX_READ_BYTES,
  MAX_WRITE_BYTES,
  confinePath,
  openWorkspace,
  prepareWrite,
  relativeOf,
  type ConfinedPath,
  type EntryKind,
  type FileStat,
  type FsResult,
  type ListEntry,
  type ListOptions,
  type ListResult,
  type ReadResult,
  type Workspace,
  type WorkspaceFs,
  type WriteResult,
} from './fs';

const BINARY_SAMPLE = 8192;

/** Node's O_NOFOLLOW where the platform has it (not on Windows): the final component must not be a symlink. */
const NOFOLLOW = (fsConstants as Record<string, number | undefined>).O_NOFOLLOW ?? 0;
/** Opening a FIFO for reading blocks until a writer comes: non-blocking, it opens at once and is then refused as not a file. */
const NONBLOCK = (fsConstants as Record<string, number | undefined>).O_NONBLOCK ?? 0;

/** The longest one read or write of a file tool may take (a file on a hung network mount must not hang the run). */
const FILE_IO_TIMEOUT_MS = 15_000;

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
