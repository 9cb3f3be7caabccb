/**
 * What of the home folder the sandbox's empty home gives back (tool folders on PATH, the forwarder's
 * Node) and what it never does (secrets, credentials): kept apart from the plan so the rules are read whole.
 */
import { readdirSync } from 'node:fs';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { entryKind, realPath as real } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';

/** `p` is `root` or below it (whole segments; paths as the system spells them, real paths here). */
const inside = (root: string, p: string): boolean => isInside(root, p, false);

/** A host path as the workflow writes it: absolute, or in the home folder. */
export const isHostPath = (p: string): boolean => p.startsWith('/') || p === '~' || p.startsWith('~/');

/** `~/x` → home/x; absolute paths as they are. */
export function expandHostPath(p: string, home: string): string {
  return p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : resolve(p);
}

/**
 * The tool folders of PATH that the empty home would hide (a Node from nvm,
 * Python from pyenv, cargo's and rustup's toolchains): the top folder under
 * home that holds each PATH entry is made readable again, as its programs
 * load from around it (pyenv's shims run ~/.pyenv/libexec, npm lives in
 * nvm's lib), with its companions (cargo's proxies run rustup's toolchains).
 * Folders that also hold application data and credentials (~/.local,
 * ~/.config, ~/.cache) give only the PATH entry and its sibling lib, and the
 * folders their programs link into (pipx's and pnpm's). Credentials known to
 * live in the folders made readable stay hidden (CREDENTIAL_FILES).
 */
export function toolFoldersUnder(
  home: string,
  path: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const out = new Set<string>();
  const add = (p: string | undefined): void => {
    const r = p && real(p);
    if (r && inside(home, r) && r !== home && !SECRET_TOPS.has(r.slice(home.length + 1).split(sep)[0]!)) out.add(r);
  };
  for (const d of (path ?? '').split(delimiter)) {
    if (!d.startsWith('/')) continue;
    const r = real(d);
    if (!r || !inside(home, r) || r === home) continue;
    const top = r.slice(home.length + 1).split(sep)[0]!;
    if (SECRET_TOPS.has(top)) continue;
    // ~/code/bin, ~/Documents/tools/bin: folders of the user's own, not a toolchain's.
    if (!top.startsWith('.') || SHARED_TOPS.has(top)) {
      add(r);
      add(join(dirname(r), 'lib'));
      // Programs there are often links into a package folder elsewhere in home (pipx's venvs).
      for (const target of linkTargets(r)) {
        if (!inside(home, target)) continue;
        const pkg = dirname(dirname(target));
        if (pkg.slice(home.length + 1).split(sep).length >= 3) add(pkg);
      }
      continue;
    }
    add(join(home, top));
    for (const c of COMPANIONS[top] ?? []) add(join(home, c));
  }
  // Toolchains named by their own variables (passed into the sandbox by sandboxEnv).
  for (const k of [
    'RUSTUP_HOME',
    'CARGO_HOME',
    'JAVA_HOME',
    'GOROOT',
    'PYENV_ROOT',
    'NVM_DIR',
    'VIRTUAL_ENV',
    'CONDA_PREFIX',
  ])
    add(env[k]);
  return [...out];
}

/** Folders under home that hold more than tools: only the PATH entry itself is made readable. */
const SHARED_TOPS = new Set(['.local', '.config', '.cache', '.var', 'snap', 'Library']);
/** Never made readable, whatever PATH says. */
const SECRET_TOPS = new Set([
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.password-store',
  '.netrc',
  '.pki',
  '.mozilla',
  '.thunderbird',
]);
/** A tool folder whose programs need another one. */
const COMPANIONS: Record<string, string[]> = { '.cargo': ['.rustup'] };

/** The real targets of the links in a PATH folder (at most 500 entries looked at). */
function linkTargets(dir: string): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).slice(0, 500);
  } catch {
    return out;
  }
  for (const n of names) {
    const p = join(dir, n);
    if (entryKind(p) !== 'link') continue;
    const r = real(p);
    if (r) out.push(r);
  }
  return out;
}

/** Secrets inside tool folders that toolFoldersUnder makes readable. */
export const CREDENTIAL_FILES = [
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.npmrc',
  '.pypirc',
  '.netrc',
  '.docker/config.json',
];

/**
 * The folder of the Node that runs the forwarder, when the empty home would hide it (a Node
 * of nvm's not on PATH, VS Code's server under ~/.vscode-server, Electron installed in home):
 * that folder only (the program and what it loads beside it), never home itself or a secret's.
 */
export function nodeFolder(node: string, home: string): string[] {
  const dir = dirname(real(node) ?? node);
  return inside(home, dir) && dir !== home && !SECRET_TOPS.has(dir.slice(home.length + 1).split(sep)[0]!) ? [dir] : [];
}
