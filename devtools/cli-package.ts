/**
 * The `lar` CLI as an npm tarball (`out/cli/lean4-agentic-lar-<version>.tgz`), written by `npm run package`: Harbor's
 * agent uploads it into a task's environment, which often has no network, so `npm i -g` of it must fetch nothing and
 * run no install script. It carries the minified bundle and node-pty's runtime JavaScript with the linux-x64 binary
 * `npm ci` built here; elsewhere (linux-arm64) node-pty cannot load and commands run over pipes.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './paths';

export const CLI_PACKAGE_NAME = 'lean4-agentic-lar';

/** node-pty's modules that `require('node-pty')` reaches on Linux (the Windows ones are left out). */
const PTY_MODULES = ['index.js', 'terminal.js', 'unixTerminal.js', 'utils.js', 'eventEmitter2.js'];
const PTY_BINARY = join('build', 'Release', 'pty.node');

const ptyDir = (): string => join(REPO_ROOT, 'node_modules', 'node-pty');

/** The node-pty binary `npm ci` built on this machine, or why it cannot go into a linux-x64 package. */
export function linuxX64PtyBinary(): { path: string } | { why: string } {
  const path = join(ptyDir(), PTY_BINARY);
  if (!existsSync(path)) return { why: 'node-pty was not built (run npm ci)' };
  if (!(process.platform === 'linux' && process.arch === 'x64'))
    return { why: `the node-pty binary here was built for ${process.platform}-${process.arch}` };
  return { path };
}

export interface CliPackage {
  file: string;
  bytes: number;
  /** Why the package has no node-pty binary (its commands then run over pipes), if it has none. */
  withoutPty?: string;
}

interface PackResult {
  filename: string;
  size: number;
}

/**
 * Writes the tarball into `outDir` from `bundle` (the esbuild CLI bundle; `npm run package` makes it minified) and
 * returns where it is. The package has no `scripts`, no `binding.gyp` and no dependency outside its bundle.
 */
export async function writeCliPackage(outDir: string, bundle = join(REPO_ROOT, 'dist', 'lar.js')): Promise<CliPackage> {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const ptyVersion = (JSON.parse(readFileSync(join(ptyDir(), 'package.json'), 'utf8')) as { version: string }).version;
  mkdirSync(outDir, { recursive: true });
  const stage = mkdtempSync(join(outDir, '.stage-'));
  try {
    const bin = join(stage, 'dist', 'lar.js');
    mkdirSync(dirname(bin), { recursive: true });
    copyFileSync(bundle, bin);
    chmodSync(bin, 0o755);
    copyFileSync(join(REPO_ROOT, 'LICENSE'), join(stage, 'LICENSE'));
    writeJson(join(stage, 'package.json'), {
      name: CLI_PACKAGE_NAME,
      version: manifest.version,
      description: 'lar: the Lean4 Agentic CLI (verified coding agent, trajectory verifier), for Harbor and terminals',
      license: 'MIT',
      bin: { lar: 'dist/lar.js' },
      files: ['dist/lar.js'],
      engines: { node: '>=20' },
      dependencies: { 'node-pty': ptyVersion },
      bundleDependencies: ['node-pty'],
    });
    const binary = linuxX64PtyBinary();
    stageNodePty(join(stage, 'node_modules', 'node-pty'), ptyVersion, 'path' in binary ? binary.path : undefined);
    const packed = await npmPack(stage, outDir);
    return {
      file: join(outDir, packed.filename),
      bytes: packed.size,
      ...('why' in binary ? { withoutPty: binary.why } : {}),
    };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** node-pty as npm will see it inside the bundle: a manifest with no scripts and no dependencies, nothing to build. */
function stageNodePty(dir: string, version: string, binary: string | undefined): void {
  mkdirSync(join(dir, 'lib'), { recursive: true });
  // No `scripts` (its install script would run node-gyp) and no `dependencies` (node-addon-api is for building it).
  writeJson(join(dir, 'package.json'), { name: 'node-pty', version, license: 'MIT', main: './lib/index.js' });
  copyFileSync(join(ptyDir(), 'LICENSE'), join(dir, 'LICENSE'));
  for (const m of PTY_MODULES) copyFileSync(join(ptyDir(), 'lib', m), join(dir, 'lib', m));
  if (binary) {
    mkdirSync(join(dir, dirname(PTY_BINARY)), { recursive: true });
    copyFileSync(binary, join(dir, PTY_BINARY));
  }
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

interface InstallEnvModule {
  installEnv(this: void, outer: NodeJS.ProcessEnv): Record<string, string>;
}

/** `npm pack` of the staged folder, in an environment without what an outer `npm run` set (its prefix is the clone). */
async function npmPack(stage: string, outDir: string): Promise<PackResult> {
  const href = pathToFileURL(join(REPO_ROOT, 'scripts', 'install-env.mjs')).href;
  const { installEnv } = (await import(href)) as InstallEnvModule;
  const json = execFileSync(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--loglevel', 'warn', '--pack-destination', outDir],
    {
      cwd: stage,
      env: installEnv(process.env),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [packed] = JSON.parse(json) as PackResult[];
  if (!packed) throw new Error(`npm pack wrote no tarball: ${json}`);
  return packed;
}
