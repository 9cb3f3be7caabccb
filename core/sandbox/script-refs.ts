/**
 * Which workspace files a hook's, a hook manager's or a package.json script's
 * text names: what the protections (protections.ts) follow from what runs
 * later and from the outcome check's command into the scripts they run.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { entryKind, realPath as real } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';

/** A script named in a hook or a hook manager's configuration: a relative path with a folder or a script's extension. */
const SCRIPT_REF = /(?:^|[\s'"`=:(),[{};&|/])((?:\.{1,2}\/)?(?:[\w@+.-]+\/)*[\w@+.-]+\.(?:sh|bash|zsh|fish|js|cjs|mjs|ts|cts|mts|py|rb|pl|php|ps1)|\.\.?\/(?:[\w@+.-]+\/)*[\w@+.-]+|(?:[\w@+.-]+\/)+[\w@+.-]+)(?=$|[\s'"`)\],;&|}])/g;
/** A quoted path with a folder or a script's extension, spaces allowed (`"./my scripts/check"`). */
const QUOTED_REF = /(["'])((?:[^"'\n/]*\/)+[^"'\n/]+|[^"'\n]+\.(?:sh|bash|zsh|fish|js|cjs|mjs|ts|py|rb|pl))\1/g;
/** GitLab CI's `include: local:` files, which run as part of the pipeline. */
const GITLAB_LOCAL = /\blocal:\s*["']?([^"'\s#]+)/g;


const MAX_CONFIG_BYTES = 256 * 1024;

const rel = (root: string, abs: string): string => relative(root, abs).split(sep).join('/');

/** A regular file's text, when it is at most 256 KiB. */
export function readSmall(p: string): string | undefined {
  try {
    const st = lstatSync(p);
    if (!st.isFile() || st.size > MAX_CONFIG_BYTES) return undefined;
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
}

/** The regular files below `dir` (at most `max`, 4 deep), workspace-relative. */
export function filesBelow(root: string, dir: string, max: number): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      if (out.length >= max) return;
      const p = join(d, n);
      const k = entryKind(p);
      if (k === 'file') out.push(rel(root, p));
      else if (k === 'dir' && depth < 4) walk(p, depth + 1);
    }
  };
  walk(dir, 0);
  return out;
}

/** Workspace files a hook or hook-manager configuration text names (relative to the workspace, or to the file's folder). */
export function referencedScripts(root: string, fromRel: string, text: string): string[] {
  const out = new Set<string>();
  const refs = [...text.matchAll(SCRIPT_REF)].map((m) => m[1]!);
  refs.push(...[...text.matchAll(QUOTED_REF)].map((m) => m[2]!.replace(/^\$\(git rev-parse --show-toplevel\)\//, '')));
  if (/\.gitlab-ci\.ya?ml$|^\.gitlab\//.test(fromRel)) refs.push(...[...text.matchAll(GITLAB_LOCAL)].map((m) => m[1]!.replace(/^\//, '')));
  for (const ref of refs) {
    // What npm installs is the package manager's: listed when changed, not made read-only.
    if (/(?:^|\/)node_modules\//.test(ref)) continue;
    for (const base of [root, dirname(join(root, fromRel))]) {
      const r = real(join(base, ref));
      if (r && r !== root && isInside(root, r, false) && entryKind(r) === 'file') out.add(rel(root, r));
    }
  }
  return [...out];
}

/** Scripts npm runs on its own when the user installs (`npm install`, `npm ci`) or packs. */
export const LIFECYCLE = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare', 'prepublish', 'prepack', 'postpack'];

/** The workspace's package.json, when it is a JSON object. */
export function packageJson(root: string): Record<string, unknown> | undefined {
  const text = readSmall(join(root, 'package.json'));
  if (text === undefined) return undefined;
  try {
    const j = JSON.parse(text) as unknown;
    return j && typeof j === 'object' && !Array.isArray(j) ? (j as Record<string, unknown>) : undefined;
  } catch {
    return undefined; // not JSON: nothing read from it
  }
}

/** The texts npm runs for script `name`: its pre- and post- scripts with it, and the scripts they run with `npm run X` (five deep). */
export function scriptTexts(pkg: Record<string, unknown> | undefined, name: string, depth = 0, seen = new Set<string>()): string[] {
  const scripts = pkg?.scripts;
  if (!scripts || typeof scripts !== 'object' || depth > 5 || seen.has(name)) return [];
  seen.add(name);
  const out: string[] = [];
  for (const n of [`pre${name}`, name, `post${name}`]) {
    const t = (scripts as Record<string, unknown>)[n];
    if (typeof t !== 'string') continue;
    out.push(t);
    for (const m of t.matchAll(/\b(?:npm|yarn|pnpm|bun)\s+(?:run(?:-script)?\s+)?(?:--?[\w-]+\s+)*([\w:.@/-]+)/g)) {
      const next = m[1] === 't' || m[1] === 'tst' ? 'test' : m[1]!;
      if (next !== 'install' && next !== 'ci' && next !== 'exec') out.push(...scriptTexts(pkg, next, depth + 1, seen));
    }
  }
  return out;
}
