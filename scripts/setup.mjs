#!/usr/bin/env node
// What `npm ci` cannot install: the Debian packages the build, the tests and
// the demo need (a C++ toolchain for node-pty, Chromium for the end-to-end
// tests, Kerberos headers and tmux), and code-server (the real VS Code) with
// the Node 24 it requires, in a cache folder outside the clone so later clones
// on the same machine reuse it. Plain Node, no dependencies: it runs before
// `npm ci`. Idempotent: what is there already is left alone.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEBIAN_PACKAGES } from './debian-packages.mjs';
import { installEnv } from './install-env.mjs';
import { CODE_SERVER_VERSION, NODE_FOR_CODE_SERVER, cacheDir, codeServerBin, codeServerDir } from './paths.mjs';

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

function installedAlready(dir) {
  try {
    const m = JSON.parse(readFileSync(join(dir, MARKER), 'utf8'));
    return m.codeServer === CODE_SERVER_VERSION && existsSync(codeServerBin());
  } catch {
    return false;
  }
}

function codeServer() {
  const dir = codeServerDir();
  if (installedAlready(dir)) {
    log(`code-server ${CODE_SERVER_VERSION}: present in ${dir}`);
    return;
  }
  if (existsSync(dir)) {
    log(`code-server: ${dir} holds an unfinished install; starting it again`);
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  // Its own folder and package.json: code-server's install scripts refuse to
  // run unless npm itself runs on Node 24, which the project does not need.
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: 'lean4-agentic-code-server',
        private: true,
        description: 'code-server for the Lean4 Agentic demo and end-to-end tests (made by scripts/setup.mjs)',
        allowScripts: { node: true, 'code-server': true, argon2: true, kerberos: true, '@parcel/watcher': true },
      },
      null,
      2,
    ),
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // Both installs get a clean environment (see install-env.mjs): what an outer
  // `npm run setup` exported would make the inner npm install into the clone,
  // and code-server's postinstall refuse because npm's user agent names Node 20.
  log(`installing Node ${NODE_FOR_CODE_SERVER} for code-server into ${dir}`);
  run(npm, ['install', '--no-audit', '--no-fund', `node@${NODE_FOR_CODE_SERVER}`], { cwd: dir, env: installEnv(process.env) });
  const bin = join(dir, 'node_modules', '.bin');
  const version = execFileSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith(`v${NODE_FOR_CODE_SERVER}.`)) throw new Error(`expected Node ${NODE_FOR_CODE_SERVER} in ${bin}, found ${version}`);
  log(`installing code-server ${CODE_SERVER_VERSION} with Node ${version} (about two minutes)`);
  run(npm, ['install', '--no-audit', '--no-fund', `code-server@${CODE_SERVER_VERSION}`, '--save-exact'], { cwd: dir, env: installEnv(process.env, bin) });
  if (!existsSync(codeServerBin())) throw new Error(`code-server did not install into ${dir}`);
  writeFileSync(join(dir, MARKER), `${JSON.stringify({ codeServer: CODE_SERVER_VERSION, node: version, at: new Date().toISOString() })}\n`);
  log(`code-server ${CODE_SERVER_VERSION}: installed`);
}

try {
  log(`cache folder ${cacheDir()}`);
  debianPackages();
  codeServer();
  log('done');
} catch (e) {
  process.stderr.write(`setup: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
