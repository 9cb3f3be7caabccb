/**
 * What `npm run setup` needs to work on a new machine however it is started:
 * the inner npm installs get a clean environment (an outer `npm run` on Node
 * 20 made code-server's postinstall refuse), and every program the project
 * runs comes from a Debian package setup installs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { nodeBinDir } from '../../devtools/paths';

const ROOT = resolve(__dirname, '..', '..', '..');
const INSTALL_ENV = join(ROOT, 'scripts', 'install-env.mjs');

interface InstallEnvModule {
  installEnv(
    this: void,
    outer: Record<string, string | undefined>,
    firstOnPath?: string,
    platform?: string,
  ): Record<string, string>;
  OUTER_NPM_SETTINGS: Set<string>;
}
const load = (): Promise<InstallEnvModule> => import(pathToFileURL(INSTALL_ENV).href) as Promise<InstallEnvModule>;

test('installEnv drops what an outer npm set for its script and keeps the user’s own configuration', async () => {
  const { installEnv } = await load();
  const outer = {
    PATH: '/clone/node_modules/.bin:/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/home/u/tools/node_modules/.bin:/usr/local/bin:/usr/bin',
    Path: 'another variable on POSIX',
    HOME: '/home/u',
    LANG: 'C.UTF-8',
    http_proxy: 'http://proxy:3128',
    NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca.pem',
    LAR_CACHE_DIR: '/cache',
    NPM_TOKEN: 'secret-token',
    npm_config_user_agent: 'npm/11.19.1 node/v20.20.2 linux x64 workspaces/false',
    NPM_CONFIG_USER_AGENT: 'npm/11 node/v20',
    npm_config_local_prefix: '/clone',
    npm_config_prefix: '/usr',
    npm_config_global_prefix: '/usr',
    npm_config_allow_scripts: '',
    npm_config_node_gyp: '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
    npm_config_npm_version: '11.19.1',
    npm_config_workspace: 'pkg-a',
    npm_package_name: 'lean4-agentic',
    npm_package_json: '/clone/package.json',
    npm_lifecycle_event: 'setup',
    npm_lifecycle_script: 'node scripts/setup.mjs',
    npm_command: 'run-script',
    npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js',
    npm_node_execpath: '/usr/bin/node',
    INIT_CWD: '/clone',
    NODE: '/usr/bin/node',
    NODE_TEST_CONTEXT: 'child-v8',
    npm_config_registry: 'https://registry.example/',
    'npm_config_@corp:registry': 'https://corp.example/',
    'npm_config_//registry.example/:_authToken': 'secret-token',
    npm_config_cache: '/fresh/npm-cache',
    npm_config_https_proxy: 'http://proxy:3128',
    npm_config_cafile: '/etc/ssl/certs/ca.pem',
    npm_config_nodedir: '/usr',
    npm_config_loglevel: 'silent',
    EMPTY: undefined,
  };
  const frozen = structuredClone(outer);
  const env = installEnv(outer, '/cache/node24/bin', 'linux');
  assert.deepEqual(outer, frozen, 'the outer environment is not changed');
  assert.deepEqual(Object.keys(env).sort(), [
    'HOME',
    'LANG',
    'LAR_CACHE_DIR',
    'NODE_EXTRA_CA_CERTS',
    'NPM_TOKEN',
    'PATH',
    'Path',
    'http_proxy',
    'npm_config_//registry.example/:_authToken',
    'npm_config_@corp:registry',
    'npm_config_cache',
    'npm_config_cafile',
    'npm_config_https_proxy',
    'npm_config_loglevel',
    'npm_config_nodedir',
    'npm_config_registry',
  ]);
  // The project's and its parents' .bin and npm's shim go; a user's own .bin elsewhere stays.
  assert.equal(env.PATH, '/cache/node24/bin:/home/u/tools/node_modules/.bin:/usr/local/bin:/usr/bin');
  assert.equal(env.Path, 'another variable on POSIX');
  assert.equal(env.npm_config_cache, '/fresh/npm-cache');
  assert.equal(
    installEnv({ PATH: 'C:\\p\\node_modules\\.bin;C:\\bin', npm_config_local_prefix: 'C:\\p' }, undefined, 'win32')
      .PATH,
    'C:\\bin',
  );
  // `npm --prefix /clone run setup` started from ~/tools: npm added /clone's bins, not ~/tools'.
  const fromElsewhere = {
    PATH: '/clone/node_modules/.bin:/node_modules/.bin:/home/u/tools/node_modules/.bin:/bin',
    INIT_CWD: '/home/u/tools',
    npm_config_local_prefix: '/clone',
  };
  assert.equal(installEnv(fromElsewhere, undefined, 'linux').PATH, '/home/u/tools/node_modules/.bin:/bin');
});

test('under a real `npm run`, the environment setup hands an inner install has none of the outer npm’s settings', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'lar-setup-env-')));
  try {
    const probe = join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      `import { installEnv } from ${JSON.stringify(pathToFileURL(INSTALL_ENV).href)};\n` +
        `console.log(JSON.stringify({ outer: process.env, inner: installEnv(process.env, '/first/bin') }));\n`,
    );
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'probe', version: '1.0.0', private: true, scripts: { probe: 'node probe.mjs' } }),
    );
    const env: Record<string, string | undefined> = { ...process.env };
    // As a user's shell would have it: no npm run around it (its own cache setting kept, so CI's stays in use).
    for (const k of Object.keys(env))
      if ((/^npm_/i.test(k) && k !== 'npm_config_cache') || k === 'NODE_TEST_CONTEXT') delete env[k];
    const r = spawnSync('npm', ['run', '--silent', 'probe'], { cwd: dir, encoding: 'utf8', env });
    assert.equal(r.status, 0, r.stderr);
    const { outer, inner } = JSON.parse(r.stdout) as { outer: Record<string, string>; inner: Record<string, string> };
    // The outer npm did set what broke the install; otherwise this test proves nothing.
    assert.match(outer.npm_config_user_agent ?? '', /node\/v\d+/);
    assert.ok(outer.npm_config_local_prefix && outer.npm_lifecycle_event && outer.INIT_CWD);
    const { OUTER_NPM_SETTINGS } = await load();
    const npmKeys = Object.keys(inner).filter((k) => /^npm_/i.test(k));
    // What stays is the user's configuration (from ~/.npmrc and the environment), unchanged.
    const unexpected = npmKeys.filter(
      (k) =>
        !/^npm_config_/i.test(k) ||
        OUTER_NPM_SETTINGS.has(k.slice('npm_config_'.length).toLowerCase()) ||
        inner[k] !== outer[k],
    );
    assert.deepEqual(unexpected, [], 'npm variables of the outer run left for the inner install');
    for (const k of [
      'INIT_CWD',
      'NODE',
      'npm_config_user_agent',
      'npm_config_local_prefix',
      'npm_config_allow_scripts',
      'npm_config_node_gyp',
      'npm_lifecycle_event',
      'npm_package_json',
      'npm_execpath',
    ]) {
      assert.equal(inner[k], undefined, k);
    }
    const path = inner.PATH!.split(':');
    assert.equal(path[0], '/first/bin');
    assert.deepEqual(
      path.filter((p) => p === join(dir, 'node_modules', '.bin') || p.endsWith('node-gyp-bin')),
      [],
    );
    t.diagnostic(
      `dropped ${Object.keys(outer).length - Object.keys(inner).length + 1} variables; kept npm settings: ${npmKeys.join(', ') || 'none'}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an inner npm started with that environment from inside `npm run` reports the Node 24 that runs it (code-server’s check)', (t) => {
  const bin = nodeBinDir();
  if (!existsSync(join(bin, 'node'))) {
    t.skip(`no Node 24 in ${bin}: run npm run setup first`);
    return;
  }
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'lar-setup-ua-')));
  try {
    // The inner package's script prints the user agent its npm gives it, as code-server's postinstall reads it.
    mkdirSync(join(dir, 'inner'));
    writeFileSync(
      join(dir, 'inner', 'package.json'),
      JSON.stringify({
        name: 'inner',
        version: '1.0.0',
        private: true,
        scripts: { ua: 'node -e "process.stdout.write(String(process.env.npm_config_user_agent))"' },
      }),
    );
    writeFileSync(
      join(dir, 'inner.mjs'),
      `import { spawnSync } from 'node:child_process';\n` +
        `import { installEnv } from ${JSON.stringify(pathToFileURL(INSTALL_ENV).href)};\n` +
        `const inner = (env) => spawnSync('npm', ['run', '--silent', 'ua'], { cwd: 'inner', encoding: 'utf8', env }).stdout.trim();\n` +
        `console.log(JSON.stringify({ clean: inner(installEnv(process.env, ${JSON.stringify(bin)})), naive: inner({ ...process.env, PATH: ${JSON.stringify(bin)} + ':' + process.env.PATH }) }));\n`,
    );
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'ua', version: '1.0.0', private: true, scripts: { inner: 'node inner.mjs' } }),
    );
    const env: Record<string, string | undefined> = { ...process.env };
    // As a user's shell would have it: no npm run around it (its own cache setting kept, so CI's stays in use).
    for (const k of Object.keys(env))
      if ((/^npm_/i.test(k) && k !== 'npm_config_cache') || k === 'NODE_TEST_CONTEXT') delete env[k];
    const r = spawnSync('npm', ['run', '--silent', 'inner'], { cwd: dir, encoding: 'utf8', env });
    assert.equal(r.status, 0, r.stderr);
    const { clean, naive } = JSON.parse(r.stdout) as { clean: string; naive: string };
    assert.match(clean, /node\/v24\./, `the inner npm's user agent: ${clean}`);
    // What setup did before: the outer npm's user agent (its Node 20) leaks in.
    assert.match(naive, new RegExp(`node/${process.version.replace(/\./g, '\\.')}`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * The programs the project runs (the terminal, the tests, the demo, the
 * benchmarks), each with the package setup installs for it. Add a program here
 * when code starts running it.
 */
const PROGRAMS: Record<string, string> = {
  ps: 'procps',
  pgrep: 'procps',
  git: 'git',
  tmux: 'tmux',
  chromium: 'chromium',
  python3: 'python3',
  make: 'build-essential',
  'g++': 'build-essential',
  zsh: 'zsh',
  fish: 'fish',
  bwrap: 'bubblewrap',
  bash: 'bash',
  sh: 'dash',
  stty: 'coreutils',
};

function dpkg(args: string[]): string | undefined {
  const r = spawnSync('dpkg-query', args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

test('every program the project runs comes from a Debian package setup installs (or one every Debian system has)', async (t) => {
  if (dpkg(['--version']) === undefined) {
    t.skip('not a Debian-like system');
    return;
  }
  const { DEBIAN_PACKAGES } = (await import(pathToFileURL(join(ROOT, 'scripts', 'debian-packages.mjs')).href)) as {
    DEBIAN_PACKAGES: string[];
  };
  const essential = (pkg: string): boolean => dpkg(['-W', '-f=${Essential}', pkg]) === 'yes';
  const dependsOn = (pkg: string): string[] =>
    (dpkg(['-W', '-f=${Depends},${Pre-Depends}', pkg]) ?? '')
      .split(/[,|]/)
      .map((d) => d.trim().split(/[\s:(]/)[0]!)
      .filter(Boolean);
  const problems: string[] = [];
  for (const [program, pkg] of Object.entries(PROGRAMS)) {
    if (!essential(pkg) && !DEBIAN_PACKAGES.includes(pkg))
      problems.push(`${program}: its package ${pkg} is not in setup's list`);
    const where = spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).stdout.trim();
    if (!where) {
      problems.push(`${program}: not installed (npm run setup installs ${pkg})`);
      continue;
    }
    // The one on PATH may be a user's own (pyenv's python3); the system's is what setup installs.
    // With merged /usr, dpkg knows a file by the path its package shipped (/bin/ps for /usr/bin/ps).
    const candidates = [where, `/usr/bin/${program}`, `/bin/${program}`].filter((p) => existsSync(p));
    const paths = [
      ...new Set(candidates.flatMap((p) => [p, realpathSync(p), realpathSync(p).replace(/^\/usr\/bin\//, '/bin/')])),
    ];
    const owners = paths.flatMap(
      (p) =>
        dpkg(['-S', p])
          ?.split(':')[0]
          ?.split(',')
          .map((o) => o.trim()) ?? [],
    );
    const ok = owners.some((o) => o === pkg || essential(o) || dependsOn(pkg).includes(o));
    if (!ok)
      problems.push(
        `${program} (${paths.join(', ')}) belongs to ${owners.join(', ') || 'no package'}, not to ${pkg} or what it depends on`,
      );
  }
  assert.deepEqual(problems, []);
});

test("code-server's whole dependency tree is pinned: the committed lockfile matches the pinned versions and every package has an integrity hash", async () => {
  const pins = JSON.parse(readFileSync(join(ROOT, 'scripts', 'code-server.json'), 'utf8')) as {
    version: string;
    node: string;
  };
  const { codeServerPackage, nodePackage } = (await import(pathToFileURL(join(ROOT, 'scripts', 'paths.mjs')).href)) as {
    codeServerPackage(this: void): { dependencies: Record<string, string> };
    nodePackage(this: void): { dependencies: Record<string, string> };
  };
  // Exact versions, not ranges: a new machine installs what CI ran.
  assert.match(pins.version, /^\d+\.\d+\.\d+$/);
  assert.match(pins.node, /^\d+\.\d+\.\d+$/);
  assert.deepEqual(nodePackage().dependencies, { node: pins.node });
  const lock = JSON.parse(readFileSync(join(ROOT, 'scripts', 'code-server-lock.json'), 'utf8')) as {
    lockfileVersion: number;
    packages: Record<
      string,
      { version?: string; integrity?: string; dependencies?: Record<string, string>; link?: boolean }
    >;
  };
  assert.ok(lock.lockfileVersion >= 2);
  // npm ci refuses a lockfile that does not match the package.json setup writes.
  assert.deepEqual(lock.packages['']!.dependencies, codeServerPackage().dependencies);
  assert.equal(lock.packages['node_modules/code-server']!.version, pins.version);
  const unpinned = Object.entries(lock.packages).filter(([k, p]) => k !== '' && !p.link && !p.integrity);
  assert.deepEqual(
    unpinned.map(([k]) => k),
    [],
  );
  // The Node folder too: the `node` package and its installer.
  const nodeLock = JSON.parse(readFileSync(join(ROOT, 'scripts', 'node-lock.json'), 'utf8')) as typeof lock;
  assert.deepEqual(nodeLock.packages['']!.dependencies, nodePackage().dependencies);
  assert.equal(nodeLock.packages['node_modules/node']!.version, pins.node);
  assert.deepEqual(
    Object.entries(nodeLock.packages)
      .filter(([k, p]) => k !== '' && !p.integrity)
      .map(([k]) => k),
    [],
  );
});

test('a relative LAR_CACHE_DIR is refused with a clear error (each process would resolve it against its own folder)', () => {
  const probe = `import(${JSON.stringify(pathToFileURL(join(ROOT, 'scripts', 'paths.mjs')).href)}).then((m) => console.log(m.cacheDir()))`;
  const bad = spawnSync(process.execPath, ['-e', probe], {
    encoding: 'utf8',
    env: { ...process.env, LAR_CACHE_DIR: 'relative/cache' },
  });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /LAR_CACHE_DIR must be an absolute path, got "relative\/cache"/);
  const good = spawnSync(process.execPath, ['-e', probe], {
    encoding: 'utf8',
    env: { ...process.env, LAR_CACHE_DIR: '/abs/cache/' },
  });
  assert.equal(good.stdout.trim(), '/abs/cache');
});
