/**
 * The CLI's npm tarball as Harbor's agent uses it: installed with `npm i -g` offline, from an empty npm cache, it
 * gives a `lar` that verifies and runs the agent with a real pseudo-terminal, and it carries nothing that installs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import { writeCliPackage } from '../../devtools/cli-package';

const ROOT = resolve(__dirname, '..', '..', '..');
const PTY = 'package/node_modules/node-pty/';

/** Every file the tarball may hold: the bundle, the licences, and node-pty's runtime (its binary when built here). */
const INTENDED = [
  'package/package.json',
  'package/LICENSE',
  'package/dist/lar.js',
  `${PTY}package.json`,
  `${PTY}LICENSE`,
  ...['index.js', 'terminal.js', 'unixTerminal.js', 'utils.js', 'eventEmitter2.js'].map((m) => `${PTY}lib/${m}`),
];
const BINARY = `${PTY}build/Release/pty.node`;
const hasBinary = process.platform === 'linux' && process.arch === 'x64';

interface Manifest {
  name: string;
  version: string;
  scripts?: unknown;
  dependencies?: Record<string, string>;
  bin?: Record<string, string>;
  bundleDependencies?: string[];
}

interface InstallEnvModule {
  installEnv(this: void, outer: NodeJS.ProcessEnv, firstOnPath?: string): Record<string, string>;
}

/** The environment of a user's shell: none of the outer `npm run`'s variables, this Node first on PATH. */
async function userEnv(extra: Record<string, string>): Promise<Record<string, string>> {
  const href = pathToFileURL(join(ROOT, 'scripts', 'install-env.mjs')).href;
  const { installEnv } = (await import(href)) as InstallEnvModule;
  return { ...installEnv(process.env, dirname(process.execPath)), NO_COLOR: '1', ...extra };
}

function run(
  cmd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => res({ code, out, err }));
  });
}

const tarList = (tgz: string): string[] =>
  execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).split('\n').filter(Boolean).sort();
const tarJson = (tgz: string, member: string): Manifest =>
  JSON.parse(execFileSync('tar', ['-xzOf', tgz, member], { encoding: 'utf8' })) as Manifest;

test('the CLI tarball holds only the bundle and node-pty runtime, with no install script anywhere', async () => {
  const pack = await writeCliPackage(mkdtempSync(join(tmpdir(), 'lar-cli-pack-')));
  const rootVersion = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest).version;
  assert.match(pack.file, new RegExp(`lean4-agentic-lar-${rootVersion.replace(/\./g, '\\.')}\\.tgz$`));
  assert.deepEqual(tarList(pack.file), [...INTENDED, ...(hasBinary ? [BINARY] : [])].sort());
  const manifest = tarJson(pack.file, 'package/package.json');
  assert.equal(manifest.version, rootVersion);
  assert.deepEqual(manifest.bin, { lar: 'dist/lar.js' });
  assert.deepEqual(manifest.bundleDependencies, ['node-pty']);
  assert.equal(manifest.scripts, undefined, 'no lifecycle script runs on install');
  const pty = tarJson(pack.file, `${PTY}package.json`);
  assert.equal(pty.scripts, undefined, "node-pty's install script (node-gyp) is gone");
  assert.equal(pty.dependencies, undefined, 'nothing for npm to fetch for node-pty');
});

test('npm i -g of the tarball, offline with an empty cache, gives a lar that verifies and runs in a terminal', async () => {
  const pack = await writeCliPackage(mkdtempSync(join(tmpdir(), 'lar-cli-pack-')));
  const prefix = mkdtempSync(join(tmpdir(), 'lar-cli-prefix-'));
  const env = await userEnv({ npm_config_cache: mkdtempSync(join(tmpdir(), 'lar-npm-cache-')) });
  const install = await run('npm', ['install', '--global', '--offline', '--prefix', prefix, pack.file], env);
  assert.equal(install.code, 0, install.err + install.out);
  const lar = join(prefix, 'bin', 'lar');
  const installed = join(prefix, 'lib', 'node_modules', 'lean4-agentic-lar');
  assert.equal(existsSync(join(installed, 'node_modules', 'node-pty', 'build', 'Release', 'pty.node')), hasBinary);

  const version = await run(lar, ['--version'], env);
  assert.equal(version.out.trim(), tarJson(pack.file, 'package/package.json').version, version.err);

  const verify = await run(
    lar,
    ['verify', join(ROOT, 'test-fixtures', 'trajectories', 'fix-failing-test.lar.jsonl')],
    env,
  );
  assert.equal(verify.code, 0, verify.err + verify.out);
  assert.match(verify.out, /return\s+1\.694/);

  const ws = mkdtempSync(join(tmpdir(), 'lar-cli-run-'));
  writeFileSync(join(ws, 'notes.txt'), 'hello\n');
  const probe = 'if [ -t 1 ]; then echo "on a terminal"; else echo "no terminal"; fi';
  const server = new ScriptedModelServer({
    script: [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: probe } }] },
    ],
  });
  const endpoint = await server.start();
  try {
    const r = await run(
      lar,
      ['run', '--task', 'check the terminal', '--endpoint', endpoint, '--workspace', ws, '--max-steps', '2'],
      env,
    );
    const runs = readdirSync(join(ws, '.lar', 'runs')).filter((f) => f.endsWith('.lar.jsonl'));
    assert.equal(runs.length, 1, r.err + r.out);
    const steps = readFileSync(join(ws, '.lar', 'runs', runs[0]!), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { tool?: string; status?: string; result?: { output?: string } });
    const command = steps.find((s) => s.tool === 'run_command');
    assert.equal(command?.status, 'ok', JSON.stringify(command) + r.err);
    if (hasBinary) {
      assert.doesNotMatch(r.err, /node-pty cannot be loaded/, 'node-pty loads from the installed package');
      assert.match(command.result?.output ?? '', /on a terminal/);
    } else assert.match(command.result?.output ?? '', /no terminal/);
  } finally {
    await server.stop();
  }
});
