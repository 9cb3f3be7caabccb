/**
 * The workspace's files with more than one link: a command writing to one
 * changes the file wherever its other names are (a pnpm store, the
 * repository a local clone came from). Found before the first step; the
 * sandbox mounts each read-only, or makes each its own copy when the user
 * allows it (run.ts).
 */
import { chmodSync, copyFileSync, lstatSync, readdirSync, renameSync, utimesSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { realPath as real } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';

export interface HardLinkLimits {
  /** Most entries looked at. Default 400 000. */
  maxEntries?: number;
  /** Longest the search may take, in ms. Default 8 000. */
  maxMs?: number;
  /** Most read-only mounts for them (after folders wholly of them are taken whole). Default 3 000 (their paths go on bwrap's command line). */
  maxMounts?: number;
}

export interface HardLinkScan {
  /** What to mount read-only: files, or folders (outside .git) every file below which is multiply linked. Workspace-relative. */
  paths: string[];
  /** Every multiply-linked regular file found, workspace-relative. */
  files: string[];
  /** Every entry was looked at in time. */
  complete: boolean;
}

/**
 * The workspace's regular files with more than one link (a pnpm store's
 * node_modules, a local `git clone`'s objects): a command writing to one
 * changes the file outside too, whatever the mounts. Paths at or below
 * `skip` (already read-only), and at or below where they really are, are not
 * looked in.
 */
export function hardLinked(workspace: string, skip: Iterable<string>, limits: HardLinkLimits = {}): HardLinkScan {
  const skipped = withRealPaths(workspace, skip);
  const first = linkScan(workspace, skipped, limits, undefined);
  if (!first.complete) return first;
  // A file whose every link was found here, none in a protected path, leads nowhere outside: a write through one
  // name changes only another unprotected workspace file (links an earlier run or a `cp -al` made among its own files).
  // A name in a protected path was not looked at, so a file with one is never counted whole.
  const within = new Set<string>();
  for (const [ino, { names, nlink }] of first.inodes) if (names === nlink) within.add(ino);
  return within.size ? linkScan(workspace, skipped, limits, within) : first;
}

/**
 * Workspace-relative `paths` and, for those that lead elsewhere in the workspace (a protected
 * `eslint.config.js -> tools/x.js`, `test -> spec`, a path below a linked folder), where they
 * really are: what the sandbox mounts read-only is the real path, so a hard link's other name
 * there is a name in a protected path.
 */
function withRealPaths(workspace: string, paths: Iterable<string>): Set<string> {
  const root = real(workspace) ?? workspace;
  const out = new Set<string>();
  for (const p of paths) {
    out.add(p);
    const r = real(join(root, p));
    if (r && r !== root && isInside(root, r, false)) out.add(relative(root, r).split(sep).join('/'));
  }
  return out;
}

function linkScan(
  workspace: string,
  skipped: ReadonlySet<string>,
  limits: HardLinkLimits,
  within: ReadonlySet<string> | undefined,
): HardLinkScan & { inodes: Map<string, { names: number; nlink: number }> } {
  const root = real(workspace) ?? workspace;
  const maxEntries = limits.maxEntries ?? 400_000;
  const until = Date.now() + (limits.maxMs ?? 8000);
  const inodes = new Map<string, { names: number; nlink: number }>();
  let seen = 0;
  let complete = true;
  const files: string[] = [];
  const folders: string[] = [];
  const every: string[] = [];
  /** Returns [regular files below, multiply-linked files below]. */
  const walk = (dir: string, depth: number): [number, number] => {
    let entries;
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      return [0, 0];
    }
    let total = 0;
    let linked = 0;
    const mine: string[] = [];
    const sub: string[] = [];
    for (const e of entries) {
      if (++seen > maxEntries || (seen % 1024 === 0 && Date.now() > until)) {
        complete = false;
        break;
      }
      const p = dir ? `${dir}/${e.name}` : e.name;
      if (skipped.has(p)) continue;
      if (e.isDirectory()) {
        if (depth >= 64) {
          // Not looked in: the search is not complete (a linked file there would be missed).
          complete = false;
          continue;
        }
        const before = files.length;
        const foldersBefore = folders.length;
        const [t, l] = walk(p, depth + 1);
        total += t;
        linked += l;
        if (t > 0 && t === l && !p.startsWith('.git/') && p !== '.git') {
          // Every file below is linked: one mount for the folder instead of one per file.
          files.splice(before);
          folders.splice(foldersBefore);
          sub.push(p);
        }
      } else if (e.isFile()) {
        total++;
        try {
          const st = lstatSync(join(root, p));
          const ino = `${st.dev}:${st.ino}`;
          if (st.nlink > 1 && !within?.has(ino)) {
            const i = inodes.get(ino);
            if (i) i.names++;
            else inodes.set(ino, { names: 1, nlink: st.nlink });
            linked++;
            mine.push(p);
            every.push(p);
          }
        } catch {
          // gone meanwhile
        }
      }
      if (!complete) break;
    }
    files.push(...mine);
    folders.push(...sub);
    return [total, linked];
  };
  walk('', 0);
  return { paths: [...folders, ...files], files: every, complete, inodes };
}

/** Makes each file its own copy (same content, mode and times), so writing to it changes nothing outside. */
export function breakHardLinks(workspace: string, files: readonly string[]): number {
  const root = real(workspace) ?? workspace;
  let broken = 0;
  for (const f of files) {
    const abs = join(root, f);
    const st = lstatSync(abs);
    if (!st.isFile() || st.nlink < 2) continue;
    const tmp = join(dirname(abs), `.lar-unlink-${process.pid}-${broken}`);
    copyFileSync(abs, tmp);
    chmodSync(tmp, st.mode & 0o7777);
    utimesSync(tmp, st.atime, st.mtime);
    renameSync(tmp, abs);
    broken++;
  }
  return broken;
}
