// The Harbor integration's Python side (integrations/harbor): a virtual
// environment in the cache folder with Harbor and every package it needs at the
// versions integrations/harbor/requirements.lock pins (hashes checked), and
// lar-harbor itself installed from this clone (editable, so the tests run this
// clone's code). Harbor needs Python 3.12 or newer; without one this says so
// once and leaves only the Harbor parts out (their tests say why they skip).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { HARBOR_DIR, HARBOR_LOCK, harborStatusFile, harborVenvDir } from './paths.mjs';

const MIN = [3, 12];

/** `[major, minor]` of a Python, or undefined when it does not run. */
function versionOf(python) {
  const r = spawnSync(python, ['-c', 'import sys; print(sys.version_info[0], sys.version_info[1])'], {
    encoding: 'utf8',
  });
  if (r.status !== 0 || r.error) return undefined;
  const [major, minor] = r.stdout.trim().split(' ').map(Number);
  return Number.isInteger(major) && Number.isInteger(minor) ? [major, minor] : undefined;
}

const newEnough = (v) => v !== undefined && (v[0] > MIN[0] || (v[0] === MIN[0] && v[1] >= MIN[1]));

function pyenvPythons() {
  const root = process.env.PYENV_ROOT || join(homedir(), '.pyenv');
  const versions = join(root, 'versions');
  if (!existsSync(versions)) return [];
  return readdirSync(versions)
    .filter((name) => /^3\.\d+\.\d+$/.test(name))
    .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }))
    .map((name) => join(versions, name, 'bin', 'python3'));
}

/** The Python to use, or why there is none. `LAR_PYTHON` is taken as given or refused, never passed over. */
export function findPython(env = process.env) {
  if (env.LAR_PYTHON) {
    const v = versionOf(env.LAR_PYTHON);
    if (!v) return { reason: `LAR_PYTHON=${env.LAR_PYTHON} does not run` };
    if (!newEnough(v)) return { reason: `LAR_PYTHON=${env.LAR_PYTHON} is Python ${v.join('.')}; Harbor needs 3.12+` };
    return { python: env.LAR_PYTHON, version: v };
  }
  for (const candidate of ['python3.13', 'python3.12', ...pyenvPythons(), 'python3']) {
    const v = versionOf(candidate);
    if (newEnough(v)) return { python: candidate, version: v };
  }
  return { reason: 'no Python 3.12 or newer was found (python3.13, python3.12, pyenv, python3); set LAR_PYTHON' };
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-25).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${tail}`);
  }
  return r.stdout;
}

function writeStatus(status) {
  mkdirSync(join(harborStatusFile(), '..'), { recursive: true });
  writeFileSync(harborStatusFile(), `${JSON.stringify({ ...status, at: new Date().toISOString() }, null, 2)}\n`);
}

/** Installs (or finds installed) the Harbor venv; never throws for a missing Python, only for a failed install. */
export function harborSetup(log) {
  const found = findPython();
  if (!found.python) {
    log(`Harbor integration skipped: ${found.reason}`);
    writeStatus({ ok: false, reason: found.reason });
    return;
  }
  const dir = harborVenvDir();
  const python = join(dir, 'bin', 'python');
  const want = { lock: sha256(readFileSync(HARBOR_LOCK)), python: found.version.join('.'), clone: HARBOR_DIR };
  try {
    const m = JSON.parse(readFileSync(join(dir, 'installed.json'), 'utf8'));
    if (Object.entries(want).every(([k, v]) => m[k] === v) && versionOf(python)) {
      log(`Harbor: present in ${dir}`);
      writeStatus({ ok: true, venv: dir });
      return;
    }
  } catch {
    // no marker: not finished
  }
  rmSync(dir, { recursive: true, force: true });
  log(
    `installing Harbor and rLLM's model gateway into ${dir} with ${found.python} (Python ${found.version.join('.')}; about a minute)`,
  );
  run(found.python, ['-m', 'venv', dir]);
  const pip = [python, '-m', 'pip', '--disable-pip-version-check', '--no-input', 'install', '--quiet'];
  run(pip[0], [...pip.slice(1), '--require-hashes', '--no-deps', '-r', HARBOR_LOCK]);
  run(pip[0], [...pip.slice(1), '--no-deps', '--no-build-isolation', '--no-index', '-e', HARBOR_DIR]);
  const version = run(python, ['-c', 'import harbor, lar_harbor, importlib.metadata as m; print(m.version("harbor"))']);
  writeFileSync(join(dir, 'installed.json'), `${JSON.stringify({ ...want, at: new Date().toISOString() })}\n`);
  writeStatus({ ok: true, venv: dir });
  log(`Harbor ${version.trim()}: installed`);
}
