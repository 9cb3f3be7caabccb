/**
 * The git metadata git runs programs from (config, hooks, what config names),
 * read later by the user's own git outside the sandbox (the editor's git runs
 * `git status` in every repository it finds): the workspace's own and those
 * of the repositories below it, which the sandbox keeps read-only (plan.ts,
 * run.ts), and the user's identity for commits made inside.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { entryKind, isDirectory, realPath as real } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';

/** `p` is `root` or below it (whole segments; paths as the system spells them, real paths here). */
const inside = (root: string, p: string): boolean => isInside(root, p, false);

/** What git runs programs from in a git folder, kept as it is whether it exists or not. */
export const GIT_PROGRAM_FILES = ['config', 'config.worktree', 'commondir', 'hooks'];
/** Most git metadata paths for one repository. */
const MAX_GIT_METADATA = 400;

/**
 * The workspace-relative paths of git metadata that makes git run programs
 * (config, config.worktree, commondir, hooks) for the repository whose `.git`
 * is at `dotGit` (workspace-relative; a folder, or a file naming one with its
 * `gitdir:` line: a linked worktree, a submodule checkout, `git init
 * --separate-git-dir`): its git folder and its commondir where they are in
 * the workspace, and every git folder inside them (submodules under modules/,
 * linked worktrees under worktrees/), whether they exist or not (at most
 * 400); and the hooks folders `core.hooksPath` names (husky's `.husky`) and
 * the config files git includes, where they are in the workspace.
 */
export function gitMetadata(workspace: string, dotGit = '.git'): string[] {
  const root = real(workspace);
  if (!root) return [];
  const out: string[] = [];
  const visited = new Set<string>();
  const visit = (rel: string, depth: number): void => {
    if (visited.has(rel)) return;
    visited.add(rel);
    for (const name of GIT_PROGRAM_FILES) out.push(`${rel}/${name}`);
    if (depth >= 4 || out.length > MAX_GIT_METADATA) return;
    // git reads config and hooks from the commondir a linked worktree's (or any) git folder names.
    const common = relInside(root, linkedPath(join(root, rel, 'commondir'), join(root, rel)));
    if (common) visit(common, depth + 1);
    for (const sub of ['modules', 'worktrees']) {
      let names: string[];
      try {
        names = readdirSync(join(root, rel, sub));
      } catch {
        continue;
      }
      for (const m of names) if (entryKind(join(root, rel, sub, m)) === 'dir') visit(`${rel}/${sub}/${m}`, depth + 1);
    }
  };
  const at = join(root, dotGit);
  const gitDir = isDirectory(at) ? real(at) : linkedPath(at, dirname(at), 'gitdir: ');
  if (!gitDir) return [];
  // First, so that no bound leaves them out: what the repository's config names.
  for (const p of gitConfigPaths(gitDir, dirname(at))) {
    const rel = relInside(root, p);
    if (rel) out.push(rel);
  }
  const rel = relInside(root, gitDir);
  if (rel) visit(rel, 0);
  return [...new Set(out)].slice(0, MAX_GIT_METADATA);
}

/** Workspace-relative `abs` (a real path) when it is in the workspace and not its top. */
function relInside(root: string, abs: string | undefined): string | undefined {
  return abs && inside(root, abs) && abs !== root
    ? abs
        .slice(root.length + 1)
        .split(sep)
        .join('/')
    : undefined;
}

/**
 * Where a small file of git's that names a path leads (a `.git` file's `gitdir: <path>`, a git
 * folder's `commondir`), relative to `from`: its real path, or where it would be made when it
 * does not exist yet (a run could make it); undefined when the file names nothing.
 */
function linkedPath(file: string, from: string, prefix = ''): string | undefined {
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size > 4096) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  // As git reads them: trailing white space dropped, the rest after the prefix is the path.
  const line = text.trimEnd();
  if (!line.startsWith(prefix) || line.includes('\n') || line.length === prefix.length) return undefined;
  const abs = resolve(from, line.slice(prefix.length));
  // The real path of the nearest folder above that exists, and the rest as named.
  for (let d = abs, rest = ''; ; rest = join(basename(d), rest), d = dirname(d)) {
    const r = real(d);
    if (r) return join(r, rest);
    if (dirname(d) === d) return undefined;
  }
}

/**
 * The hooks folders `core.hooksPath` names (each value, as includeIf may pick any; relative to
 * the work tree, where hooks run) and the config files git includes (relative to the file that
 * includes them), for the repository with git folder `gitDir` and work tree `workTree`; as
 * resolved paths, at most 50. Read on the host with `git config`, which runs nothing.
 */
function gitConfigPaths(gitDir: string, workTree: string): string[] {
  try {
    const r = spawnSync(
      'git',
      [
        `--git-dir=${gitDir}`,
        'config',
        '--null',
        '--show-origin',
        '--get-regexp',
        '^(core\\.hookspath|include(if\\..*)?\\.path)$',
      ],
      { cwd: workTree, encoding: 'utf8', timeout: 3000, env: gitEnv(process.env) },
    );
    if (r.status !== 0) return [];
    const out: string[] = [];
    const fields = r.stdout.split('\0');
    for (let i = 0; i + 1 < fields.length && out.length < 50; i += 2) {
      const origin = fields[i]!;
      const kv = fields[i + 1]!;
      const nl = kv.indexOf('\n');
      const key = kv.slice(0, nl);
      const value = kv.slice(nl + 1);
      if (nl < 0 || !value || value.startsWith('~')) continue;
      if (key === 'core.hookspath') out.push(resolve(workTree, value));
      else if (origin.startsWith('file:')) out.push(resolve(workTree, dirname(origin.slice('file:'.length)), value));
    }
    return out;
  } catch {
    return [];
  }
}

/**
 * The environment git is asked in: without what would point it at another repository or add
 * config of the caller's own (GIT_DIR and the like, set when the editor runs inside a hook).
 */
function gitEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) if (!GIT_LOCATING.test(k)) out[k] = v;
  return out;
}
const GIT_LOCATING =
  /^GIT_(?:DIR|WORK_TREE|COMMON_DIR|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|NAMESPACE|CEILING_DIRECTORIES|DISCOVERY_ACROSS_FILESYSTEM|PREFIX|CONFIG|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+)$/;

/** One value of the workspace's git config, read on the host (`git config` runs nothing); undefined when unset or unreadable. */
export function gitConfigValue(
  workspace: string,
  key: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  try {
    const r = spawnSync('git', ['-C', workspace, 'config', '--get', key], {
      encoding: 'utf8',
      timeout: 3000,
      env: gitEnv(env),
    });
    const v = r.status === 0 ? r.stdout.replace(/\n$/, '') : '';
    return v && !/[\0\n]/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The user's git identity (global config, read on the host: ~/.gitconfig is not in the sandbox), for commits made inside. */
export function gitIdentity(
  workspace: string,
  env: Readonly<Record<string, string | undefined>>,
): { name?: string; email?: string } {
  // As git would pick it for this repository (its own config, includeIf rules, the user's).
  const name = gitConfigValue(workspace, 'user.name', env);
  const email = gitConfigValue(workspace, 'user.email', env);
  return { ...(name ? { name } : {}), ...(email ? { email } : {}) };
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

/**
 * What git runs programs from in the repositories below the workspace's top: a `.git` file, and
 * gitMetadata's paths for each (its git folder's config, commondir and hooks, also where a `.git`
 * file names one elsewhere in the workspace; the hooks folder its core.hooksPath names and the
 * config files it includes), at most 400 paths.
 */
export function nestedGitMetadata(workspace: string, repositories: readonly Repository[]): string[] {
  const out = new Set<string>();
  for (const r of repositories) {
    if (r.rel === '.git') continue;
    if (out.size >= 400) break;
    if (entryKind(join(workspace, r.rel)) !== 'dir') out.add(r.rel);
    for (const p of gitMetadata(workspace, r.rel)) out.add(p);
  }
  return [...out].slice(0, 400);
}
