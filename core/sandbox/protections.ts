/**
 * What a run may not change, found when it starts, each with why: the
 * always read-only paths, the workflow's protected paths, its write-deny
 * patterns (which bind commands as they bind the file tools), and what the
 * user's own tools run later outside any sandbox — git hooks and the hook
 * managers' scripts and configuration, direnv, dev containers, CI workflows,
 * editor tasks — found by reading the repository's configuration, not from
 * a fixed list alone. The sandbox mounts each read-only; the run's end puts
 * each back from the snapshot taken before the first step (runs-later.ts
 * finds what runs later).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { globMatch } from '../policy/glob';
import { ALWAYS_READ_ONLY, type Workflow } from '../schema/workflow';
import { entryKind, realPath as real } from '../workspace/path-kind';
import { isHostPath } from './home';
import { outcomeReach, RUNS_LATER, runsLater } from './runs-later';

export type ProtectionWhy = 'always' | 'workflow' | 'outcome' | 'path_deny' | 'git' | 'runs_later' | 'hard_link';

export interface Protection {
  /** Workspace-relative, `/`-separated. */
  path: string;
  why: ProtectionWhy;
  /** What found it, for the header and the chat (e.g. "named by .husky/pre-commit"). */
  note?: string;
}

export interface ProtectionScan {
  protections: Protection[];
  /** What runs later that is not there at the start: kept absent (the snapshot removes it at the end if the run made it). */
  absent: string[];
  /** Past the bound of read-only mounts: snapshotted and put back at the end whatever the sandbox, not mounted. */
  restoreOnly: string[];
  /** Files that matched a write-deny pattern at the start: a file matching one that the run adds is moved away at its end. */
  denied: ReadonlySet<string>;
  /** What a bound left out, in a sentence each (said in the header and to the user). */
  bounded: string[];
}

export interface ProtectionLimits {
  /** Most entries looked at when matching the deny patterns. Default 50 000. */
  maxEntries?: number;
  /** Most paths protected (each is a mount). Default 2 000. */
  maxPaths?: number;
}

/** Whether every path below folder `d` matches the pattern (it ends in `*` and its head matches `d/`). */
function covers(pattern: string, d: string): boolean {
  return pattern.endsWith('*') && globMatch(pattern.slice(0, -1), `${d}/`);
}

/**
 * The workspace paths the write-deny patterns reach: a folder whole when every
 * path below it matches, else each matching file. `.git` (git must still
 * commit; its metadata is protected apart), `.lar` and `node_modules` are not
 * looked in.
 */
function deniedPaths(
  root: string,
  patterns: readonly string[],
  maxEntries: number,
): { paths: string[]; complete: boolean } {
  const out: string[] = [];
  if (!patterns.length) return { paths: out, complete: true };
  let budget = maxEntries;
  let complete = true;
  const walk = (dir: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (--budget < 0) {
        complete = false;
        return;
      }
      const p = dir ? `${dir}/${e.name}` : e.name;
      if (!dir && (e.name === '.git' || e.name === '.lar' || e.name === 'node_modules')) continue;
      if (e.isDirectory()) {
        if (patterns.some((pat) => covers(pat, p))) out.push(p);
        else if (depth < 32) walk(p, depth + 1);
      } else if (patterns.some((pat) => globMatch(pat, p))) out.push(p);
    }
  };
  walk('', 0);
  return { paths: out, complete };
}

/** Whether `p` is `q` or below it (workspace-relative paths). */
const atOrBelow = (p: string, q: string): boolean => p === q || p.startsWith(`${q}/`);

/**
 * Everything a run may not change, with why. `gitMeta` is gitMetadata(workspace)
 * (it asked git for core.hooksPath, whose value is `hooksPath`).
 */
export function scanProtections(
  workspace: string,
  wf: Workflow,
  gitMeta: readonly string[],
  hooksPath: string | undefined,
  limits: ProtectionLimits = {},
): ProtectionScan {
  const root = real(workspace) ?? workspace;
  const bounded: string[] = [];
  const all = new Map<string, Protection>();
  const put = (p: Protection): void => {
    const key = p.path.replace(/\/+$/, '');
    if (!key || all.has(key)) return;
    all.set(key, { ...p, path: key });
  };
  for (const p of ALWAYS_READ_ONLY) put({ path: p, why: 'always' });
  for (const p of wf.sandbox.protected) put({ path: p, why: 'workflow' });
  for (const p of gitMeta) put({ path: p, why: 'git' });
  for (const p of outcomeReach(root, wf)) put(p);
  // A workflow grants one of these by naming it, or a path inside it, in sandbox.writable (workspace-relative).
  const grants = wf.sandbox.writable
    .filter((w) => !isHostPath(w))
    .map((w) => w.replace(/^\.\//, '').replace(/\/+$/, ''));
  const granted = (p: string): boolean => grants.some((g) => atOrBelow(p, g) || atOrBelow(g, p));
  for (const p of runsLater(root, hooksPath, bounded)) if (!granted(p.path)) put(p);
  const absent = RUNS_LATER.filter((p) => !all.has(p) && !granted(p) && entryKind(join(root, p)) === undefined);
  // Write-deny patterns bind commands too (not .git: git must commit; its metadata is protected above).
  const patterns = wf.policy.paths.deny.filter(
    (d) => d !== '.git' && !d.startsWith('.git/') && d !== '.lar' && !d.startsWith('.lar/'),
  );
  const denied = deniedPaths(root, patterns, limits.maxEntries ?? 50_000);
  if (!denied.complete)
    bounded.push(
      `the workspace has more than ${limits.maxEntries ?? 50_000} entries: files matching the workflow's path deny patterns were looked for only among the first ones`,
    );
  // Below a path already kept (looked up by its folders, not by scanning every kept path).
  const keptAbove = (p: string): boolean => {
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) if (all.has(p.slice(0, i))) return true;
    return all.has(p);
  };
  for (const p of denied.paths) if (!keptAbove(p)) put({ path: p, why: 'path_deny' });
  let protections = [...all.values()];
  let restoreOnly: string[] = [];
  const max = limits.maxPaths ?? 2000;
  if (protections.length > max) {
    // The earlier reasons first: a read-only mount each; the rest are put back at the end from the snapshot.
    bounded.push(
      `${protections.length - max} paths matching the workflow's path deny patterns are not read-only in the sandbox (more than ${max}): they are put back before the outcome check`,
    );
    restoreOnly = protections.slice(max).map((p) => p.path);
    protections = protections.slice(0, max);
  }
  return { protections, restoreOnly, absent, denied: new Set(denied.paths), bounded };
}

/** The files that match the deny patterns now and did not at the start (a run's additions), workspace-relative. */
export function addedDenied(
  workspace: string,
  wf: Workflow,
  atStart: ReadonlySet<string>,
  maxEntries = 50_000,
): string[] {
  const patterns = wf.policy.paths.deny.filter(
    (d) => d !== '.git' && !d.startsWith('.git/') && d !== '.lar' && !d.startsWith('.lar/'),
  );
  return deniedPaths(real(workspace) ?? workspace, patterns, maxEntries).paths.filter(
    (p) => !atStart.has(p) && ![...atStart].some((q) => atOrBelow(p, q)),
  );
}
