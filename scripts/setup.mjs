#!/usr/bin/env node
// What `npm ci` cannot install: the Debian packages the build, the tests and
// the demo need (scripts/debian-packages.mjs), and code-server (the real VS
// Code, its tree pinned by scripts/code-server-lock.json) with the exact Node
// 24 it requires, in a cache folder outside the clone so later clones on the
// same machine reuse it. Plain Node, no dependencies: it runs before `npm ci`.
// Idempotent: what is there already is left alone.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEBIAN_PACKAGES } from './debian-packages.mjs';
import { harborSetup } from './harbor-setup.mjs';
import { installEnv } from './install-env.mjs';
import {
  CODE_SERVER_LOCK,
  CODE_SERVER_VERSION,
  NODE_LOCK,
  NODE_FOR_CODE_SERVER,
  cacheDir,
  codeServerBin,
  codeServerDir,
  codeServerPackage,
  nodeBinDir,
  nodeDir,
  nodePackage,
} from './paths.mjs';

function log(msg) {
  process.stdout.write(`setup: ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

function installed(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

function debianPackages() {
  if (spawnSync('dpkg-query', ['--version']).status !== 0) {
    log(
      `not a Debian-like system: install these yourself if missing: ${DEBIAN_PACKAGES.join(', ')} (Chromium as /usr/bin/chromium or set LAR_CHROMIUM)`,
    );
    return;
  }
  const missing = DEBIAN_PACKAGES.filter((p) => !installed(p));
  if (!missing.length) {
    log('Debian packages: all present');
    return;
  }
  const root = process.getuid?.() === 0;
  const sudo = root ? [] : ['sudo', '-n'];
  if (!root && spawnSync('sudo', ['-n', 'true']).status !== 0) {
    throw new Error(
      `these Debian packages are missing and sudo needs a password: ${missing.join(' ')}\n  run: sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}\n  then run this again`,
    );
  }
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) =>
    sudo.length ? run(sudo[0], [...sudo.slice(1), 'apt-get', ...args], { env }) : run('apt-get', args, { env });
  apt(['update', '-qq']);
  apt(['install', '-y', '-qq', '--no-install-recommends', ...missing]);
}

/** Written last, so an install that was interrupted (Ctrl+C, a full disk) is not taken for a finished one. */
const MARKER = 'installed.json';

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * `npm ci` of `pkg` with the committed `lockFile` into `dir`, unless `dir`
 * already holds a finished install of exactly that: its marker names `holds`
 * (versions) and the lockfile's hash, and `check` holds. Otherwise whatever is
 * there (an interrupted or different install) goes first. The install gets a
 * clean environment (install-env.mjs), with `firstOnPath` first on PATH.
 */
function lockedInstall({ name, dir, pkg, lockFile, holds, check, firstOnPath, verify, takes = '' }) {
  const want = { ...holds, lock: sha256(lockFile) };
  try {
    const m = JSON.parse(readFileSync(join(dir, MARKER), 'utf8'));
    if (Object.entries(want).every(([k, v]) => m[k] === v) && check()) {
      log(`${name}: present in ${dir}`);
      return;
    }
  } catch {
    // no marker: not finished
  }
  if (existsSync(dir)) {
    log(`${name}: ${dir} holds an unfinished or different install; starting it again`);
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  copyFileSync(lockFile, join(dir, 'package-lock.json'));
  log(`installing ${name} into ${dir}${takes ? ` (${takes})` : ''}`);
  run(npm, ['ci', '--no-audit', '--no-fund'], { cwd: dir, env: installEnv(process.env, firstOnPath) });
  verify();
  writeFileSync(join(dir, MARKER), `${JSON.stringify({ ...want, at: new Date().toISOString() })}\n`);
  log(`${name}: installed`);
}

const nodeVersion = () => execFileSync(join(nodeBinDir(), 'node'), ['--version'], { encoding: 'utf8' }).trim();

// Node first, in a folder of its own: it must be on PATH before code-server's
// install scripts run, which refuse unless npm itself runs on Node 24.
function nodeForCodeServer() {
  const want = `v${NODE_FOR_CODE_SERVER}`;
  lockedInstall({
    name: `Node ${NODE_FOR_CODE_SERVER}`,
    dir: nodeDir(),
    pkg: nodePackage(),
    lockFile: NODE_LOCK,
    holds: { node: want },
    check: () => nodeVersion() === want,
    verify: () => {
      const version = nodeVersion();
      if (version !== want) throw new Error(`expected Node ${want} in ${nodeBinDir()}, found ${version}`);
    },
  });
}

/** code-server, every package at the version scripts/code-server-lock.json names, built with that Node. */
function codeServer() {
  lockedInstall({
    name: `code-server ${CODE_SERVER_VERSION}`,
    dir: codeServerDir(),
    pkg: codeServerPackage(),
    lockFile: CODE_SERVER_LOCK,
    holds: { codeServer: CODE_SERVER_VERSION, node: `v${NODE_FOR_CODE_SERVER}` },
    check: () => existsSync(codeServerBin()),
    firstOnPath: nodeBinDir(),
    takes: 'about two minutes',
    verify: () => {
      if (!existsSync(codeServerBin())) throw new Error(`code-server did not install into ${codeServerDir()}`);
    },
  });
}

try {
  log(`cache folder ${cacheDir()}`);
  debianPackages();
  nodeForCodeServer();
  codeServer();
  harborSetup(log);
  log('done');
} catch (e) {
  process.stderr.write(`setup: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
