/**
 * The protected paths as they were before the first step: copied to a
 * private folder outside the workspace (the sandbox cannot see it: its /tmp
 * is its own), with a manifest of what each held, so the outcome check can
 * put back whatever a run changed, removed or added there.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { cp, lstat, mkdir, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface SnapshotLimits {
  /** Most bytes of files copied. Default 2 GiB. */
  maxBytes?: number;
  /** Most entries (files, folders, links). Default 250 000. */
  maxEntries?: number;
}

export class SnapshotTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotTooLargeError';
  }
}

interface Entry {
  /** Workspace-relative path as the workflow names it. */
  rel: string;
  /** What was there: a manifest line per file, folder and link below it; null when nothing was. */
  manifest: string | null;
  /** The copy, when something was there. */
  copy?: string;
}

export interface ProtectedSnapshot {
  readonly dir: string;
  readonly entries: readonly Entry[];
}

/** One line per entry below `abs`: kind, mode, and a hash of the content (files) or the target (links). */
async function manifestOf(
  abs: string,
  budget: { bytes: number; entries: number },
  limits: Required<SnapshotLimits>,
  rel: string,
): Promise<string | null> {
  let st;
  try {
    st = await lstat(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw e;
  }
  const lines: string[] = [];
  const walk = async (p: string, name: string, s: Awaited<ReturnType<typeof lstat>>): Promise<void> => {
    if (++budget.entries > limits.maxEntries)
      throw new SnapshotTooLargeError(
        `the protected path "${rel}" has more than ${limits.maxEntries} entries: name narrower protected paths in the workflow's sandbox section`,
      );
    const mode = (Number(s.mode) & 0o7777).toString(8);
    if (s.isSymbolicLink()) lines.push(`l ${mode} ${name} -> ${await readlink(p)}`);
    else if (s.isDirectory()) {
      lines.push(`d ${mode} ${name}`);
      const names = (await readdir(p)).sort();
      for (const n of names) await walk(join(p, n), `${name}/${n}`, await lstat(join(p, n)));
    } else if (s.isFile()) {
      budget.bytes += Number(s.size);
      if (budget.bytes > limits.maxBytes)
        throw new SnapshotTooLargeError(
          `the protected paths hold more than ${limits.maxBytes} bytes (at "${rel}"): name narrower protected paths in the workflow's sandbox section`,
        );
      lines.push(`f ${mode} ${name} ${await hashFile(p)}`);
    } else lines.push(`o ${mode} ${name}`);
  };
  await walk(abs, '.', st);
  return lines.join('\n');
}

function hashFile(p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(p)
      .on('data', (b) => h.update(b))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}

/**
 * `rel` below `workspace` with every folder on the way a real folder, never a
 * link: a run that swapped a parent of a protected path for a link to
 * elsewhere must not make the snapshot read, or the restore delete, files
 * outside the workspace. Undefined when the way is not clean.
 */
async function below(workspace: string, rel: string): Promise<{ abs: string; blocked?: 'link' | 'file' }> {
  const parts = rel.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return { abs: join(workspace, rel), blocked: 'link' };
  let at = workspace;
  for (const p of parts.slice(0, -1)) {
    at = join(at, p);
    try {
      const st = await lstat(at);
      if (st.isSymbolicLink()) return { abs: join(workspace, rel), blocked: 'link' };
      if (!st.isDirectory()) return { abs: join(workspace, rel), blocked: 'file' };
    } catch {
      // A missing folder on the way: nothing is there, a state like any other.
      break;
    }
  }
  return { abs: join(workspace, rel) };
}

const defaults = (l: SnapshotLimits): Required<SnapshotLimits> => ({
  maxBytes: l.maxBytes ?? 2 * 1024 ** 3,
  maxEntries: l.maxEntries ?? 250_000,
});

/** Snapshot the protected paths of `workspace` (already checked to be inside it). */
export async function takeSnapshot(
  workspace: string,
  paths: readonly string[],
  limits: SnapshotLimits = {},
): Promise<ProtectedSnapshot> {
  const l = defaults(limits);
  const dir = await mkdtemp(join(tmpdir(), 'lar-protected-'));
  const budget = { bytes: 0, entries: 0 };
  const entries: Entry[] = [];
  try {
    for (const [i, rel] of paths.entries()) {
      const way = await below(workspace, rel);
      if (way.blocked === 'link')
        throw new Error(
          `the protected path "${rel}" is reached through a symbolic link: protect the folder it leads to, or remove the link`,
        );
      const abs = way.abs;
      const manifest = way.blocked ? null : await manifestOf(abs, budget, l, rel);
      if (manifest === null) {
        entries.push({ rel, manifest: null });
        continue;
      }
      const copy = join(dir, String(i));
      await cp(abs, copy, {
        recursive: true,
        verbatimSymlinks: true,
        preserveTimestamps: true,
        errorOnExist: true,
        force: false,
      });
      // What was copied is what the manifest says (a file changed meanwhile would make them differ).
      if ((await manifestOf(copy, { bytes: 0, entries: 0 }, l, rel)) !== manifest)
        throw new Error(`the protected path "${rel}" changed while it was being copied; start the run again`);
      entries.push({ rel, manifest, copy });
    }
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return { dir, entries };
}

type RestoreOptions = { onlyAbsent?: boolean; always?: ReadonlySet<string> };

/**
 * Whether the snapshot's entry differs from the workspace now (changed, removed or added during the
 * run), and where it is; `blocked` when a folder on the way was replaced by a link or a file.
 */
async function differs(
  workspace: string,
  e: Entry,
  l: ReturnType<typeof defaults>,
  opts: RestoreOptions,
): Promise<{ abs: string; blocked?: 'link' | 'file' } | undefined> {
  // In the sandbox what existed was read-only to the run: a change there is the user's own, kept.
  // `always`: paths that were not read-only in the sandbox (past the bound of mounts): whatever changed there was the run's.
  if (opts.onlyAbsent && e.manifest !== null && !opts.always?.has(e.rel)) return undefined;
  const way = await below(workspace, e.rel);
  // Still nothing there: a file in place of a folder on the way is not this path.
  if (way.blocked === 'file' && e.manifest === null) return undefined;
  if (way.blocked) return way;
  let now: string | null;
  try {
    now = await manifestOf(way.abs, { bytes: 0, entries: 0 }, l, e.rel);
  } catch {
    now = '(unreadable)';
  }
  return now === e.manifest ? undefined : { abs: way.abs };
}

/**
 * Put every protected path back as the snapshot has it; returns the paths
 * that had to be restored (changed, removed or added during the run). With
 * `leave`, nothing is put back: the paths it would put back (a folder on the way
 * replaced included), what a check run before the end must not read.
 */
export async function restoreSnapshot(
  workspace: string,
  snap: ProtectedSnapshot,
  limits: SnapshotLimits = {},
  opts: RestoreOptions & { leave?: boolean } = {},
): Promise<string[]> {
  const l = defaults(limits);
  const restored: string[] = [];
  for (const e of snap.entries) {
    const d = await differs(workspace, e, l, opts);
    if (!d) continue;
    if (opts.leave) {
      restored.push(e.rel);
      continue;
    }
    if (d.blocked)
      throw new RestoreError(
        `a folder on the way to the protected path "${e.rel}" was replaced by a ${d.blocked === 'link' ? 'symbolic link' : 'file'} during the run; it could not be restored`,
      );
    await rm(d.abs, { recursive: true, force: true });
    if (e.copy) {
      await mkdir(dirname(d.abs), { recursive: true });
      await cp(e.copy, d.abs, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    }
    restored.push(e.rel);
  }
  return restored;
}

export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreError';
  }
}

export async function disposeSnapshot(snap: ProtectedSnapshot): Promise<void> {
  await rm(snap.dir, { recursive: true, force: true });
}
