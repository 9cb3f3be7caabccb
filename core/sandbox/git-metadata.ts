/**
 * The git metadata git runs programs from (config, hooks, what config names),
 * read later by the user's own git outside the sandbox (the editor's git runs
 * `git status` in every repository it finds): the workspace's own and those
 * of the repositories below it, which the sandbox keeps read-only (plan.ts,
 * run.ts).
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { entryKind, realPath as real } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';

/** `p` is `root` or below it (whole segments; paths as the system spells them, real paths here). */
const inside = (root: string, p: string): boolean => isInside(root, p, false);

/**
 * The workspace-relative paths of git metadata that makes git run programs
 * (config, config.worktree, commondir, hooks), for the repository's own git
 * folder and every one inside it (submodules under modules/, linked worktrees
 * under worktrees/), whether they exist or not (at most 400); and the hooks
 * folder `core.hooksPath` names (husky's `.husky`), when it is in the workspace.
 */
export function gitMetadata(workspace: string): string[] {
  const out: string[] = [];
  const visit = (rel: string, depth: number): void => {
    for (const name of ['config', 'config.worktree', 'commondir', 'hooks']) out.push(`${rel}/${name}`);
    if (depth >= 4 || out.length > 400) return;
    for (const sub of ['modules', 'worktrees']) {
      let names: string[];
      try {
        names = readdirSync(join(workspace, rel, sub));
      } catch {
        continue;
      }
      for (const m of names) if (entryKind(join(workspace, rel, sub, m)) === 'dir') visit(`${rel}/${sub}/${m}`, depth + 1);
    }
  };
  if (entryKind(join(workspace, '.git')) === 'dir') visit('.git', 0);
  const root = real(workspace);
  const add = (p: string, from: string): void => {
    const abs = resolve(from, p);
    if (root && inside(root, abs) && abs !== root) out.push(abs.slice(root.length + 1).split(sep).join('/'));
  };
  const hooksPath = gitConfigValue(workspace, 'core.hooksPath');
  if (hooksPath) add(hooksPath, workspace);
  // Config files git includes (include.path, includeIf.<cond>.path): one in the workspace is config git runs programs from.
  for (const p of gitIncludes(workspace)) add(p, join(workspace, '.git'));
  return out;
}

/** The paths of the config files the repository's git config includes (relative ones are relative to the .git folder), at most 50. */
function gitIncludes(workspace: string): string[] {
  try {
    const r = spawnSync('git', ['-C', workspace, 'config', '--local', '--null', '--get-regexp', '^include(if\\..*)?\\.path$'], { encoding: 'utf8', timeout: 3000 });
    if (r.status !== 0) return [];
    return r.stdout
      .split('\0')
      .filter(Boolean)
      .map((kv) => kv.slice(kv.indexOf('\n') + 1))
      .filter((p) => p && !p.startsWith('~'))
      .slice(0, 50);
  } catch {
    return [];
  }
}

/** One value of the workspace's git config, read on the host (`git config` runs nothing); undefined when unset or unreadable. */
export function gitConfigValue(workspace: string, key: string, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  try {
    const r = spawnSync('git', ['-C', workspace, 'config', '--get', key], { encoding: 'utf8', timeout: 3000, env: env });
    const v = r.status === 0 ? r.stdout.replace(/\n$/, '') : '';
    return v && !/[\0\n]/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A git repository in the workspace: where its `.git` is, and what it is (device and inode: a repository moved by the user is the same one). */
export interface Repository {
  rel: string;
  id: string;
}

/** The `.git` folders and files in the workspace (not inside .git, node_modules or .lar; at most 20 000 folders looked at, 12 deep). */
export function findRepositories(workspace: string): Repository[] {
  const out: Repository[] = [];
  let budget = 20_000;
  const walk = (rel: string, depth: number): void => {
    if (--budget < 0) return;
    let entries;
    try {
      entries = readdirSync(join(workspace, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === '.git') {
        try {
          const st = lstatSync(join(workspace, r));
          out.push({ rel: r, id: `${st.dev}:${st.ino}` });
        } catch {
          // gone meanwhile
        }
      } else if (e.isDirectory() && depth < 12 && e.name !== 'node_modules' && e.name !== '.lar') walk(r, depth + 1);
    }
  };
  walk('', 0);
  return out;
}

/** What git runs programs from in the repositories below the workspace's top: a `.git` file, or a `.git` folder's config, commondir and hooks (at most 400 paths). */
export function nestedGitMetadata(workspace: string, repositories: readonly Repository[]): string[] {
  const out: string[] = [];
  for (const r of repositories) {
    if (r.rel === '.git') continue;
    if (entryKind(join(workspace, r.rel)) === 'dir') out.push(...['config', 'config.worktree', 'commondir', 'hooks'].map((f) => `${r.rel}/${f}`));
    else out.push(r.rel);
  }
  return out.slice(0, 400);
}
