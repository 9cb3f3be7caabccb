/**
 * What a run changed, file by file, between two checkpoints of the shadow repository, and the commit that puts
 * back only some files: the review of a run undoes one file without touching any other.
 */
import { rmSync } from 'node:fs';
import type { ShadowGit } from './shadow-git';

/** One file a run changed, read from the run's start to its end. */
export interface FileDiff {
  path: string;
  /** `added`: the run made it; `deleted`: the run removed it. */
  change: 'added' | 'deleted' | 'modified';
  /** Lines added and removed; absent for a binary file. */
  added?: number;
  removed?: number;
}

/** The -z records of `diff-tree --name-status` or `--numstat` (never renames), as [fields, path] pairs. */
function records(out: Buffer, numstat: boolean): [string, string][] {
  const parts = out.toString('utf8').split('\0');
  const rows: [string, string][] = [];
  if (numstat) {
    // "added<TAB>removed<TAB>path" per record.
    for (const p of parts) {
      const m = /^([0-9-]+)\t([0-9-]+)\t([\s\S]*)$/.exec(p);
      if (m) rows.push([`${m[1]}\t${m[2]}`, m[3]!]);
    }
  } else {
    for (let i = 0; i + 1 < parts.length; i += 2) if (parts[i]) rows.push([parts[i]!, parts[i + 1]!]);
  }
  return rows;
}

/** Every file that differs from `from` to `to`, in path order, with its line counts. */
export async function diffFiles(repo: ShadowGit, from: string, to: string): Promise<FileDiff[]> {
  const base = ['diff-tree', '-r', '-z', '--no-renames'];
  const status = await repo.run([...base, '--name-status', from, to]);
  const numstat = records((await repo.run([...base, '--numstat', from, to])).stdout, true);
  const counts = new Map(numstat.map(([n, path]) => [path, n]));
  return records(status.stdout, false)
    .map(([s, path]): FileDiff => {
      const n = counts.get(path)?.split('\t');
      const lines = n && n[0] !== '-' && n[1] !== '-' ? { added: Number(n[0]), removed: Number(n[1]) } : ({} as const);
      return { path, change: s === 'A' ? 'added' : s === 'D' ? 'deleted' : 'modified', ...lines };
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The paths of `among` that differ from `from` to `to`. */
export async function changedAmong(repo: ShadowGit, from: string, to: string, among: string[]): Promise<string[]> {
  const out = await repo.run(['diff-tree', '-r', '-z', '--no-renames', '--name-only', from, to]);
  const changed = new Set(out.stdout.toString('utf8').split('\0'));
  return among.filter((p) => changed.has(p));
}

/**
 * A commit of `base` with only `paths` as they are in `source` (removed where `source` has none), built in an
 * index of its own (the store's index, its stat cache, is left alone). Restoring it from `base` changes only
 * those paths, through the store's restore and its checks.
 */
export async function withPathsFrom(
  repo: ShadowGit,
  indexFile: string,
  at: { base: string; source: string; paths: string[] },
): Promise<string> {
  const env = { GIT_INDEX_FILE: indexFile, GIT_LITERAL_PATHSPECS: '1' };
  rmSync(indexFile, { force: true });
  try {
    await repo.run(['read-tree', at.base], { env });
    const wanted = new Set(at.paths);
    const found = new Map<string, string>();
    for (let i = 0; i < at.paths.length; i += 500) {
      const chunk = at.paths.slice(i, i + 500);
      const out = await repo.run(['ls-tree', '-r', '-z', '--full-tree', at.source, '--', ...chunk], { env });
      for (const rec of out.stdout.toString('utf8').split('\0')) {
        // "<mode> <type> <object>\t<path>"
        const tab = rec.indexOf('\t');
        const [mode, , oid] = rec.slice(0, tab).split(' ');
        const path = rec.slice(tab + 1);
        if (tab > 0 && mode && oid && wanted.has(path)) found.set(path, `${mode} ${oid}`);
      }
    }
    const zero = '0'.repeat(40);
    const info = at.paths.map((p) => `${found.get(p) ?? `0 ${zero}`}\t${p}\0`).join('');
    await repo.run(['update-index', '-z', '--index-info'], { env, input: info });
    const tree = (await repo.run(['write-tree'], { env })).stdout.toString().trim();
    return (await repo.run(['commit-tree', tree, '-m', 'files put back from a run review'])).stdout.toString().trim();
  } finally {
    rmSync(indexFile, { force: true });
  }
}
