/**
 * What the outcome check reads that the run could change: the files its
 * command names (`node test.js`, `./run-tests.sh`, `pytest tests/`) and the
 * files its runner reads first (`npm test` runs package.json's script, `make`
 * the Makefile, pytest its ini files). A run that may change them decides
 * its own outcome; `lar workflow check` and the editor warn about each one
 * the workflow neither protects nor denies to writes.
 */
import { globMatch } from '../policy/glob';
import { normalizeWorkspacePath } from '../policy/path';
import { ALWAYS_READ_ONLY, outcomeCommand, type Workflow } from '../schema/workflow';

/** The files a runner reads before it runs anything, by the command's first word. */
const RUNNER_FILES: Record<string, readonly string[]> = {
  npm: ['package.json'],
  yarn: ['package.json'],
  pnpm: ['package.json'],
  bun: ['package.json'],
  npx: ['package.json'],
  make: ['Makefile'],
  pytest: ['pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini', 'conftest.py'],
  'py.test': ['pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini', 'conftest.py'],
  tox: ['tox.ini'],
  cargo: ['Cargo.toml'],
  go: ['go.mod'],
  gradle: ['build.gradle', 'build.gradle.kts'],
  './gradlew': ['build.gradle', 'build.gradle.kts'],
  mvn: ['pom.xml'],
  dotnet: [],
  just: ['justfile'],
  rake: ['Rakefile'],
};

/** Test runners whose tests live in a test folder the run could rewrite. */
const TEST_RUNNERS = new Set([
  'npm',
  'yarn',
  'pnpm',
  'bun',
  'npx',
  'pytest',
  'py.test',
  'jest',
  'vitest',
  'mocha',
  'cargo',
  'go',
  'tox',
  'make',
  'node',
  'unittest',
  'mvn',
  'gradle',
  './gradlew',
  'deno',
  'dotnet',
]);
/** Words that run the rest of the command line: the runner is after them. */
const WRAPPERS = new Set(['env', 'exec', 'time', 'nice', 'nohup', 'command', 'timeout', 'xvfb-run', 'dotenv']);
/** `uv run pytest`, `poetry run pytest`, `pipenv run pytest`, `npx jest`. */
const RUN_VIA = new Set(['uv', 'poetry', 'pipenv', 'hatch', 'pdm', 'rye']);
const TEST_FOLDERS = ['test', 'tests', '__tests__', 'spec'];

/** Words of a command line (quotes taken off), split at spaces and the shell's operators. */
function words(command: string): string[] {
  return command
    .split(/[\s;&|()`]+/)
    .map((w) => w.replace(/^['"]|['"]$/g, ''))
    .filter(Boolean);
}

/** A word that names a workspace file: relative, with a folder or a script's extension, not an option or an assignment. */
function pathWord(w: string): string | undefined {
  if (w.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || /[*?$<>{}]/.test(w) || w.includes('://'))
    return undefined;
  if (!w.includes('/') && !/\.(?:js|cjs|mjs|ts|py|sh|bash|rb|pl|php|go|rs|json|toml|ini|cfg|ya?ml)$/.test(w))
    return undefined;
  // `./...` is go's pattern for every package, not a file.
  if (w.endsWith('...')) return undefined;
  const n = normalizeWorkspacePath(w);
  return n.ok && n.normalized !== '.' ? n.normalized : undefined;
}

/** The paths the outcome check reads that the workflow neither keeps read-only nor denies to writes, with why each matters. */
export function unprotectedOutcomeInputs(wf: Workflow): { path: string; why: string }[] {
  const readOnly = [...ALWAYS_READ_ONLY, ...wf.sandbox.protected].map((p) => p.replace(/\/+$/, ''));
  const kept = (p: string): boolean =>
    readOnly.some((q) => p === q || p.startsWith(`${q}/`)) || wf.policy.paths.deny.some((d) => globMatch(d, p));
  const check = outcomeCommand(wf);
  if (!check) return [];
  // `sh -c "npm test"` runs the quoted line: read that instead.
  const inner = /^\s*(?:ba|z|da)?sh\s+-c\s+(['"])(.*)\1\s*$/.exec(check.command)?.[2];
  const ws = words(inner ?? check.command);
  // The runner: past assignments, wrappers (`timeout 600`, `env`), `cd DIR &&` and `uv run`-style launchers.
  let i = 0;
  for (;;) {
    const w = ws[i];
    if (w === undefined) break;
    if (
      /^[A-Za-z_][A-Za-z0-9_]*=/.test(w) ||
      WRAPPERS.has(w) ||
      /^\d+[smhd]?$/.test(w) ||
      (w.startsWith('-') && i > 0 && WRAPPERS.has(ws[i - 1]!))
    )
      i++;
    else if (w === 'cd') i += 2;
    else if (RUN_VIA.has(w) && ws[i + 1] === 'run') i += 2;
    else break;
  }
  const runner = ws[i] === 'python' || ws[i] === 'python3' ? (ws[i + 1] === '-m' ? ws[i + 2] : undefined) : ws[i];
  // `npm --prefix app test`, `cd app && npm test`: the manifest is in that folder.
  const at = ws.indexOf('--prefix');
  const prefix = at >= 0 ? ws[at + 1] : ws[0] === 'cd' ? ws[1] : undefined;
  const inFolder = (f: string): string =>
    prefix && prefix !== '.' ? `${prefix.replace(/^\.\//, '').replace(/\/+$/, '')}/${f}` : f;
  const out = new Map<string, string>();
  const unkept = [...new Set(RUNNER_FILES[runner ?? ''] ?? [])].map(inFolder).filter((f) => !kept(f));
  if (unkept.length)
    out.set(unkept.join(', '), `${runner} reads ${unkept.length === 1 ? 'it' : 'them'} before it runs anything`);
  for (const w of ws) {
    const p = pathWord(w);
    if (p && !kept(p)) out.set(p, 'the command names it');
  }
  if (
    runner &&
    TEST_RUNNERS.has(runner) &&
    !TEST_FOLDERS.some((t) => kept(t)) &&
    ![...out.keys()].some((p) => TEST_FOLDERS.some((t) => p === t || p.startsWith(`${t}/`)))
  ) {
    out.set(TEST_FOLDERS.join(', '), 'no test folder is protected, so the tests the check runs can be rewritten');
  }
  return [...out].map(([path, why]) => ({ path, why }));
}
