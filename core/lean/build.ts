import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Building `lar-verify` once per version of the Lean sources: the sources
 * (lean/ of this repository) are copied to `<cacheDir>/lean-<hash>/` and built
 * there with `lake build lar-verify`; a later run with the same sources reuses
 * the binary. A build happens in a temporary folder that is renamed into place
 * only when it succeeded, so an interrupted or concurrent build never leaves a
 * half-built folder where a finished one is expected.
 */

export const EXE_NAME = `lar-verify${process.platform === 'win32' ? '.exe' : ''}`;

/** `$LAR_CACHE_DIR` (the one tool cache setup and the tests use too), else `$XDG_CACHE_HOME/lean4-agentic`, else `~/.cache/lean4-agentic`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  // As scripts/paths.mjs: one cache folder for setup, the demo, the tests and the Lean build.
  // Relative values are ignored here (the editor's working folder is anyone's guess); setup refuses them.
  const own = env.LAR_CACHE_DIR;
  if (own && path.isAbsolute(own)) return own;
  const xdg = env.XDG_CACHE_HOME;
  const home = env.HOME || env.USERPROFILE || os.homedir();
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.cache'), 'lean4-agentic');
}

/** The repository's lean/ folder: the nearest `lean/lakefile.toml` above `from`. */
export function findLeanSources(from: string = __dirname): string | undefined {
  let dir = path.resolve(from);
  for (;;) {
    const candidate = path.join(dir, 'lean');
    if (fs.existsSync(path.join(candidate, 'lakefile.toml'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Lean source without its comments (`--` to the end of the line, nested block comments). */
function withoutComments(text: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const two = text.slice(i, i + 2);
    if (two === '/-') {
      depth++;
      i++;
    } else if (two === '-/' && depth > 0) {
      depth--;
      i++;
    } else if (depth === 0 && two === '--') {
      const end = text.indexOf('\n', i);
      i = (end === -1 ? text.length : end) - 1;
    } else if (depth === 0) out += text.charAt(i);
  }
  return out;
}

/** The modules a Lean file imports: the `import` lines of its header (`module` and `prelude` aside). */
export function leanHeaderImports(text: string): string[] {
  const imports: string[] = [];
  for (const line of withoutComments(text).split('\n')) {
    const t = line.trim();
    if (t === '' || t === 'module' || t === 'prelude') continue;
    const m = /^(?:(?:public|private|meta)\s+)*import\s+(.+)$/.exec(t);
    if (!m) break;
    imports.push(...(m[1] ?? '').split(/\s+/));
  }
  return imports;
}

/**
 * The package's modules `root` imports, directly or not, itself included (paths relative to `dir`);
 * a module with no file here is Lean's own (`Lean.*`, `Std.*`, `Init.*`) and is not followed.
 */
export function importClosure(dir: string, root: string): string[] {
  const seen = new Set<string>();
  const visit = (rel: string): void => {
    const file = path.join(dir, rel);
    if (seen.has(rel) || !fs.existsSync(file)) return;
    seen.add(rel);
    for (const mod of leanHeaderImports(fs.readFileSync(file, 'utf8'))) visit(`${mod.split('.').join('/')}.lean`);
  };
  visit(root);
  return [...seen];
}

/**
 * The files `lake build lar-verify` reads: the lakefile, the toolchain pin and the modules of
 * `Main.lean`'s import closure. The proofs (`LarProofs/`) and the specification (`Lar/Spec/`) are not
 * among them, so editing a proof never rebuilds the checker (docs/lean.md, "Two libraries").
 */
export function sourceFiles(dir: string): string[] {
  const config = ['lakefile.toml', 'lakefile.lean', 'lean-toolchain', 'lake-manifest.json'].filter((f) => fs.existsSync(path.join(dir, f)));
  return [...config, ...importClosure(dir, 'Main.lean')].sort();
}

/** A short hash of the sources' paths and contents. */
export function hashSources(dir: string): string {
  const h = createHash('sha256');
  for (const f of sourceFiles(dir)) {
    h.update(f);
    h.update('\0');
    h.update(fs.readFileSync(path.join(dir, f)));
    h.update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

export interface BuildOptions {
  sourceDir: string;
  cacheDir: string;
  /** The `lake` executable. */
  lake: string;
  env?: NodeJS.ProcessEnv;
  /** Default 30 minutes: a first build also fetches nothing but compiles the package. */
  timeoutMs?: number;
  log?: (message: string) => void;
}

export interface BuildResult {
  /** The built executable. */
  executable: string;
  /** The package folder it was built in. */
  dir: string;
  /** False when an earlier build was reused. */
  built: boolean;
}

function builtExecutable(dir: string): string {
  return path.join(dir, '.lake', 'build', 'bin', EXE_NAME);
}

/** Builds (or reuses) `lar-verify` for the sources in `sourceDir`. */
export async function buildLarVerify(opts: BuildOptions): Promise<BuildResult> {
  const hash = hashSources(opts.sourceDir);
  const dir = path.join(opts.cacheDir, `lean-${hash}`);
  if (fs.existsSync(builtExecutable(dir))) return { executable: builtExecutable(dir), dir, built: false };

  fs.mkdirSync(opts.cacheDir, { recursive: true });
  const tmp = path.join(opts.cacheDir, `lean-${hash}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    fs.mkdirSync(tmp, { recursive: true });
    for (const f of sourceFiles(opts.sourceDir)) {
      const to = path.join(tmp, f);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(path.join(opts.sourceDir, f), to);
    }
    opts.log?.(`building lar-verify in ${tmp} (${opts.lake} build lar-verify)`);
    await run(opts.lake, ['build', 'lar-verify'], tmp, opts.env, opts.timeoutMs ?? 30 * 60_000);
    if (!fs.existsSync(builtExecutable(tmp))) {
      throw new Error(`lake build finished but ${builtExecutable(tmp)} is missing`);
    }
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      // Another build of the same sources won the race: use it.
      if (!fs.existsSync(builtExecutable(dir))) throw e;
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    return { executable: builtExecutable(dir), dir, built: true };
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv | undefined, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const childEnv = { ...process.env, ...env };
    // elan's proxies and lake find their siblings on PATH.
    childEnv.PATH = [path.dirname(cmd), childEnv.PATH ?? ''].filter((p) => p !== '').join(path.delimiter);
    execFile(cmd, args, { cwd, env: childEnv, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, windowsHide: true }, (err, stdout, stderr) => {
      if (!err) return resolve();
      const output = `${String(stdout)}\n${String(stderr)}`.trim().split('\n').slice(-40).join('\n');
      const why = err.killed ? `timed out after ${timeoutMs} ms` : `failed (${err.code ?? err.signal ?? err.message})`;
      reject(new Error(`\`${path.basename(cmd)} ${args.join(' ')}\` in ${cwd} ${why}:\n${output}`));
    });
  });
}
