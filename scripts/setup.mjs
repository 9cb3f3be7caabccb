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
    log(`not a Debian-like system: install these yourself if missing: ${DEBIAN_PACKAGES.join(', ')} (Chromium as /usr/bin/chromium or set LAR_CHROMIUM)`);
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
    throw new Error(`these Debian packages are missing and sudo needs a password: ${missing.join(' ')}\n  run: sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}\n  then run this again`);
  }
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => (sudo.length ? run(sudo[0], [...sudo.slice(1), 'apt-get', ...args], { env }) : run('apt-get', args, { env }));
  apt(['update', '-qq']);
  apt(['install', '-y', '-qq', '--no-install-recommends', ...missing]);
}

/** Written last, so an install that was interrupted (Ctrl+C, a full disk) is not taken for a finished one. */
const MARKER = 'installed.json';

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Whether `dir` holds a finished install of exactly `what` (its marker says so and `check` holds). */
function finished(dir, what, check) {
  try {
    const m = JSON.parse(readFileSync(join(dir, MARKER), 'utf8'));
    return Object.entries(what).every(([k, v]) => m[k] === v) && check();
  } catch {
    return false;
  }
}

/** An empty `dir` with `pkg` as its package.json: whatever an interrupted install left there goes. */
function freshFolder(dir, pkg, name) {
  if (existsSync(dir)) {
    log(`${name}: ${dir} holds an unfinished or different install; starting it again`);
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

// Every install gets a clean environment (see install-env.mjs): what an outer
// `npm run setup` exported would make the inner npm install into the clone,
// and code-server's postinstall refuse because npm's user agent names Node 20.

/** Node for code-server, in its own folder, so it is on PATH before code-server's install scripts run. */
function nodeForCodeServer() {
  const dir = nodeDir();
  const node = join(nodeBinDir(), 'node');
  const want = `v${NODE_FOR_CODE_SERVER}`;
  const is = () => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const lock = sha256(NODE_LOCK);
  if (finished(dir, { node: want, lock }, () => is() === want)) {
    log(`Node ${NODE_FOR_CODE_SERVER}: present in ${dir}`);
    return;
  }
  freshFolder(dir, nodePackage(), `Node ${NODE_FOR_CODE_SERVER}`);
  copyFileSync(NODE_LOCK, join(dir, 'package-lock.json'));
  log(`installing Node ${NODE_FOR_CODE_SERVER} for code-server into ${dir}`);
  run(npm, ['ci', '--no-audit', '--no-fund'], { cwd: dir, env: installEnv(process.env) });
  const version = is();
  if (version !== want) throw new Error(`expected Node ${want} in ${nodeBinDir()}, found ${version}`);
  writeFileSync(join(dir, MARKER), `${JSON.stringify({ node: version, lock, at: new Date().toISOString() })}\n`);
}

/** code-server, every package at the version scripts/code-server-lock.json names (`npm ci`), built with that Node. */
function codeServer() {
  const dir = codeServerDir();
  const lock = sha256(CODE_SERVER_LOCK);
  if (finished(dir, { codeServer: CODE_SERVER_VERSION, node: `v${NODE_FOR_CODE_SERVER}`, lock }, () => existsSync(codeServerBin()))) {
    log(`code-server ${CODE_SERVER_VERSION}: present in ${dir}`);
    return;
  }
  freshFolder(dir, codeServerPackage(), `code-server ${CODE_SERVER_VERSION}`);
  copyFileSync(CODE_SERVER_LOCK, join(dir, 'package-lock.json'));
  log(`installing code-server ${CODE_SERVER_VERSION} with Node ${NODE_FOR_CODE_SERVER} (about two minutes)`);
  run(npm, ['ci', '--no-audit', '--no-fund'], { cwd: dir, env: installEnv(process.env, nodeBinDir()) });
  if (!existsSync(codeServerBin())) throw new Error(`code-server did not install into ${dir}`);
  writeFileSync(join(dir, MARKER), `${JSON.stringify({ codeServer: CODE_SERVER_VERSION, node: `v${NODE_FOR_CODE_SERVER}`, lock, at: new Date().toISOString() })}\n`);
  log(`code-server ${CODE_SERVER_VERSION}: installed`);
}

try {
  log(`cache folder ${cacheDir()}`);
  debianPackages();
  nodeForCodeServer();
  codeServer();
  log('done');
} catch (e) {
  process.stderr.write(`setup: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
