import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { isDirectory, isExecutableFile } from '../workspace/path-kind';

/**
 * Finding a Lean toolchain: `lake` and `lean` at an explicit path (the
 * extension's setting), at `$LAR_LEAN_PATH`, on `PATH`, or in `~/.elan/bin`,
 * in that order. Nothing here imports `vscode`.
 */

/** The extension setting that the explicit path comes from (documented in docs/lean.md). */
export const LEAN_PATH_SETTING = 'lean4Agentic.leanPath';
/** The environment variable honoured when no explicit path is given. */
export const LEAN_PATH_ENV = 'LAR_LEAN_PATH';

export interface DetectOptions {
  /**
   * The `lake` or `lean` executable, or a folder holding them (a `bin` folder or
   * a toolchain folder with `bin/` inside). Overrides everything else.
   */
  leanPath?: string;
  /** Environment to search (PATH, HOME, LAR_LEAN_PATH); defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where `lean --version` runs; a folder with a `lean-toolchain` file makes elan pick that toolchain. */
  cwd?: string;
  /** Time allowed for `lean --version` (elan may be installing the pinned toolchain). Default 120 s. */
  versionTimeoutMs?: number;
}

export type LeanDetection =
  | { available: true; lake: string; lean: string; version: string }
  | { available: false; reason: string };

const EXE = process.platform === 'win32' ? '.exe' : '';

/** `lake` and `lean` in one folder, if both are there. */
function pairIn(dir: string): { lake: string; lean: string } | undefined {
  const lake = path.join(dir, `lake${EXE}`);
  const lean = path.join(dir, `lean${EXE}`);
  return isExecutableFile(lake) && isExecutableFile(lean) ? { lake, lean } : undefined;
}

/** Resolves an explicit path: an executable (`lake` or `lean`), a bin folder, or a toolchain folder. */
function resolveExplicit(p: string): { lake: string; lean: string } | string {
  const abs = path.resolve(p);
  if (isDirectory(abs)) {
    const found = pairIn(abs) ?? pairIn(path.join(abs, 'bin'));
    return found ?? `${abs} is a folder without lake${EXE} and lean${EXE} (nor a bin/ folder holding them)`;
  }
  if (isExecutableFile(abs)) {
    const found = pairIn(path.dirname(abs));
    return found ?? `${abs} exists, but lake${EXE} and lean${EXE} are not both in ${path.dirname(abs)}`;
  }
  return `${abs} does not exist or is not executable`;
}

function homeOf(env: NodeJS.ProcessEnv): string | undefined {
  return env.HOME || env.USERPROFILE || undefined;
}

const INSTALL_HINT =
  'Install Lean with elan (https://github.com/leanprover/elan: on Linux and macOS ' +
  '`curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh`), ' +
  `or set the "${LEAN_PATH_SETTING}" setting (or the ${LEAN_PATH_ENV} environment variable) ` +
  'to the folder that holds lake and lean. Until then the builtin TypeScript verifier decides.';

/** Finds `lake` and `lean` and asks `lean --version`. Never throws. */
export async function detectLean(opts: DetectOptions = {}): Promise<LeanDetection> {
  const env = opts.env ?? process.env;
  const searched: string[] = [];
  let found: { lake: string; lean: string } | undefined;

  const explicit = opts.leanPath ?? (env[LEAN_PATH_ENV] || undefined);
  if (explicit !== undefined) {
    const r = resolveExplicit(explicit);
    const source = opts.leanPath !== undefined ? `the "${LEAN_PATH_SETTING}" setting` : `$${LEAN_PATH_ENV}`;
    // An explicit path that does not work is an error to fix, not something to search past.
    if (typeof r === 'string') return { available: false, reason: `No Lean toolchain at ${source}: ${r}. ${INSTALL_HINT}` };
    found = r;
  } else {
    searched.push(`the "${LEAN_PATH_SETTING}" setting (not set)`, `$${LEAN_PATH_ENV} (not set)`);
    const pathDirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter((d) => d !== '');
    for (const dir of pathDirs) {
      found = pairIn(dir);
      if (found) break;
    }
    if (!found) searched.push(pathDirs.length ? `PATH (${pathDirs.join(path.delimiter)})` : 'PATH (empty)');
    if (!found) {
      const home = homeOf(env);
      if (home) {
        const elanBin = path.join(home, '.elan', 'bin');
        found = pairIn(elanBin);
        if (!found) searched.push(`${elanBin} (${isDirectory(elanBin) ? 'no lake and lean in it' : 'does not exist'})`);
      } else {
        searched.push('~/.elan/bin (HOME is not set)');
      }
    }
  }
  if (!found) return { available: false, reason: `No Lean toolchain found. Searched: ${searched.join('; ')}. ${INSTALL_HINT}` };

  const version = await leanVersion(found.lean, opts.cwd, opts.versionTimeoutMs ?? 120_000, env);
  if (!version.ok) return { available: false, reason: `Found ${found.lean}, but \`lean --version\` failed: ${version.error}. ${INSTALL_HINT}` };
  return { available: true, lake: found.lake, lean: found.lean, version: version.version };
}

function leanVersion(
  lean: string,
  cwd: string | undefined,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
): Promise<{ ok: true; version: string } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    execFile(lean, ['--version'], { cwd, env: { ...process.env, ...env }, timeout: timeoutMs, windowsHide: true }, (err, stdout, stderr) => {
      if (err) {
        const detail = String(stderr || err.message).trim().split('\n').slice(-3).join(' ');
        resolve({ ok: false, error: detail || Error.prototype.toString.call(err) });
        return;
      }
      const text = String(stdout).trim();
      // "Lean (version 4.34.1, x86_64-unknown-linux-gnu, commit …, Release)"
      const m = /version\s+([0-9][^\s,)]*)/.exec(text);
      resolve({ ok: true, version: m?.[1] ?? text.split('\n')[0] ?? text });
    });
  });
}
