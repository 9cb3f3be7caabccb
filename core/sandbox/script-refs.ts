/**
 * Which workspace files a hook's, a hook manager's or a package.json script's
 * text names: what the protections (runs-later.ts) follow from what runs
 * later and from the outcome check's command into the scripts they run.
 */
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { entryKind, realPath as real } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';

/**
 * What splits a hook's or a configuration's text into words that may be paths: white space,
 * quotes and the shell's, YAML's and JSON's punctuation. Splitting first and then testing each
 * word whole keeps the work linear in the text (a pattern searched through the text, with `/`
 * both inside a path and before one, took minutes on a 256 KiB package.json).
 */
const WORD_DELIMITERS = /[\s'"`=:(),[\]{};&|<>]+/;
/** The longest word, or quoted string, taken for a path. */
const MAX_WORD = 400;
/** A relative path, whole: folders and a name (after what leads it to the top of the repository is stripped). */
const PATH_WORD = /^(?:[\w@+.-]+\/)*[\w@+.-]+$/;
/** A script's extension. */
const SCRIPT_EXT = /\.(?:sh|bash|zsh|fish|js|cjs|mjs|ts|cts|mts|py|rb|pl|php|ps1)$/;
/** What leads a path from the top of the repository: `/`, `$ROOT/`, `${ROOT}/`, `$(git rev-parse --show-toplevel)/`. */
const ROOT_PREFIX = /^(?:\$(?:\w+|\{\w+\}|\([^()\n]*\)))?\/+/;
/** A quoted string on one line (a path with spaces: `"./my scripts/check"`), at most MAX_WORD long. */
const QUOTED = /(["'])([^"'\n]{1,400})\1/g;
/** GitLab CI's `include: local:` files, which run as part of the pipeline. */
const GITLAB_LOCAL = /\blocal:\s*["']?([^"'\s#]+)/g;

const MAX_CONFIG_BYTES = 256 * 1024;
/** Most distinct words of one text looked up in the workspace. */
const MAX_WORDS_LOOKED_UP = 5000;

/**
 * What one search for referenced scripts may spend, so that no workspace makes a run's start
 * slow (it is synchronous): words looked up in the workspace (each ~15 µs) and bytes of text
 * read. `spent` says the search stopped short.
 */
export interface FollowBudget {
  lookups: number;
  bytes: number;
  spent: boolean;
}
export const followBudget = (): FollowBudget => ({ lookups: 50_000, bytes: 16 * 1024 * 1024, spent: false });

/** A text to follow, within the budget. */
export function readFollowed(budget: FollowBudget, p: string): string | undefined {
  if (budget.bytes <= 0) {
    budget.spent = true;
    return undefined;
  }
  const text = readSmall(p);
  if (text !== undefined) budget.bytes -= text.length;
  return text;
}

const rel = (root: string, abs: string): string => relative(root, abs).split(sep).join('/');

/** The mode of the regular file at `p` (following links); undefined for anything else, without throwing for a missing one. */
function fileMode(p: string): number | undefined {
  try {
    const st = statSync(p, { throwIfNoEntry: false });
    return st?.isFile() ? st.mode : undefined;
  } catch {
    return undefined; // a file where a folder is named (ENOTDIR), a loop of links
  }
}

/** A regular file's text, when it is at most 256 KiB. */
function readSmall(p: string): string | undefined {
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

/**
 * Programs that run, or load, the file named after them (`sh tools/check`, `. ./env`,
 * direnv's `source_env`): that file need not be executable to be code.
 */
const INTERPRETERS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'fish',
  'source',
  '.',
  'node',
  'deno',
  'bun',
  'tsx',
  'ts-node',
  'python',
  'python2',
  'python3',
  'ruby',
  'perl',
  'php',
  'pwsh',
  'source_env',
  'source_env_if_exists',
  'dotenv',
  'dotenv_if_exists',
]);

/**
 * The paths a text names that may be scripts: a word or quoted string (a quoted one may hold
 * spaces), stripped of what leads it to the top of the repository, that has a script's
 * extension or names a folder; each with whether an interpreter names it (the word before
 * it, options skipped, is one). Linear in the text.
 */
function pathWords(text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  const consider = (word: string, quoted: boolean, interpreted: boolean): void => {
    if (word.length > MAX_WORD) return;
    const w = word.replace(ROOT_PREFIX, '');
    if (!w || w.endsWith('/') || (!quoted && !PATH_WORD.test(w))) return;
    if (SCRIPT_EXT.test(w) || w.includes('/')) out.set(w, interpreted || out.get(w) === true);
  };
  let command = '';
  for (const word of text.split(WORD_DELIMITERS)) {
    if (!word) continue;
    consider(word, false, INTERPRETERS.has(command));
    if (!word.startsWith('-')) command = word;
  }
  for (const m of text.matchAll(QUOTED)) {
    const before = text
      .slice(Math.max(0, m.index - 64), m.index)
      .split(WORD_DELIMITERS)
      .filter((w) => w && !w.startsWith('-'));
    consider(m[2]!, true, INTERPRETERS.has(before[before.length - 1] ?? ''));
  }
  return out;
}

/**
 * Workspace files a hook or hook-manager configuration text names (relative to the workspace, or
 * to the file's folder) that are code: a script's extension, an executable file (a script run
 * by its path must be one), a file an interpreter is given, or GitLab CI's local include. Not
 * a data file a step reads (`data/train.csv`, `./fixtures/input.json`) nor a bare path that
 * is not executable.
 */
export function referencedScripts(root: string, fromRel: string, text: string, budget: FollowBudget): string[] {
  const out = new Set<string>();
  const refs = pathWords(text);
  if (/\.gitlab-ci\.ya?ml$|^\.gitlab\//.test(fromRel))
    for (const m of text.matchAll(GITLAB_LOCAL)) refs.set(m[1]!.replace(/^\//, ''), true);
  if (refs.size > MAX_WORDS_LOOKED_UP) budget.spent = true;
  let n = 0;
  for (const [ref, interpreted] of refs) {
    if (++n > MAX_WORDS_LOOKED_UP) break;
    // What npm installs is the package manager's: listed when changed, not made read-only.
    if (/(?:^|\/)node_modules\//.test(ref)) continue;
    for (const base of new Set([root, dirname(join(root, fromRel))])) {
      if (--budget.lookups < 0) {
        budget.spent = true;
        return [...out];
      }
      const p = join(base, ref);
      // Most words name nothing: asked without a thrown error first (a throw costs ~50 µs, 40 000 words 8 s).
      const mode = fileMode(p);
      if (mode === undefined || !(interpreted || SCRIPT_EXT.test(ref) || (mode & 0o111) !== 0)) continue;
      const r = real(p);
      if (r && r !== root && isInside(root, r, false) && entryKind(r) === 'file') out.add(rel(root, r));
    }
  }
  return [...out];
}

/** Scripts npm runs on its own when the user installs (`npm install`, `npm ci`) or packs. */
export const LIFECYCLE = [
  'preinstall',
  'install',
  'postinstall',
  'prepare',
  'preprepare',
  'postprepare',
  'prepublish',
  'prepack',
  'postpack',
];

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
export function scriptTexts(
  pkg: Record<string, unknown> | undefined,
  name: string,
  depth = 0,
  seen = new Set<string>(),
): string[] {
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
