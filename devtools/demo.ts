/**
 * `npm run demo`: the extension as a user gets it, in one command. Verifies a
 * recorded run with the CLI, packages the VSIX, installs it into code-server
 * with a demo repository (a failing test and a workflow), and serves it on
 * 127.0.0.1. The model is the scripted demo model (labelled as such in the
 * chat), or the real server named by LAR_ENDPOINT (and LAR_MODEL).
 *
 * In a terminal, or anywhere with --serve, it runs until Ctrl+C (SIGINT or
 * SIGTERM). Without one (CI), or with --check, it checks that the workbench is
 * served with the extension installed, then stops everything it started.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeServer, freePort } from './code-server';
import { DEMO_MODEL, startDemoModel } from './demo-model';
import { REPO_ROOT, cacheDir, codeServerCommand } from './paths';
import { maskEndpoint } from '../core/secrets/endpoint';

function say(msg: string): void {
  process.stdout.write(`demo: ${msg}\n`);
}

/** A fresh copy of the demo repository, as a git repository so source control shows the agent's changes. */
export function prepareDemoWorkspace(dir: string, settings: Record<string, unknown>): void {
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(REPO_ROOT, 'test-fixtures', 'demo-workspace'), dir, { recursive: true });
  mkdirSync(join(dir, '.vscode'), { recursive: true });
  writeFileSync(join(dir, '.vscode', 'settings.json'), JSON.stringify(settings, null, 2));
  writeFileSync(join(dir, '.gitignore'), '.lar/\n.vscode/\n');
  const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, stdio: 'ignore' }).status === 0;
  if (git('init', '-q')) {
    git('-c', 'user.name=demo', '-c', 'user.email=demo@localhost', 'add', '-A');
    git('-c', 'user.name=demo', '-c', 'user.email=demo@localhost', 'commit', '-q', '-m', 'demo repository');
  }
}

function vsixPath(): string {
  const { name, version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  return join(REPO_ROOT, 'out', 'vsix', `${name}-linux-x64-${version}.vsix`);
}

async function main(argv: string[]): Promise<number> {
  // --serve keeps it up without a terminal too (under nohup, a service manager, a container), until SIGINT or SIGTERM.
  const check = argv.includes('--check') || (!process.stdin.isTTY && !argv.includes('--serve'));

  say('1/4 verifying a recorded agent run with the lar CLI');
  execFileSync(
    process.execPath,
    [
      join(REPO_ROOT, 'dist', 'lar.js'),
      'verify',
      join(REPO_ROOT, 'test-fixtures', 'trajectories', 'fix-failing-test.lar.jsonl'),
    ],
    { stdio: 'inherit' },
  );

  if (!codeServerCommand()) {
    say('code-server is not installed: run `npm run setup` first (it installs code-server and the Debian packages).');
    return 1;
  }
  say('2/4 packaging the extension (VSIX for linux-x64)');
  execFileSync(process.execPath, [join(REPO_ROOT, 'out', 'devtools', 'package.js'), '--target', 'linux-x64'], {
    stdio: 'inherit',
  });

  const root = join(cacheDir(), 'demo');
  const workspace = join(root, 'workspace');
  const realEndpoint = process.env.LAR_ENDPOINT;
  const model = realEndpoint ? undefined : await startDemoModel();
  const endpoint = realEndpoint ?? model!.endpoint;
  say(
    realEndpoint
      ? `3/4 model: the server at ${maskEndpoint(endpoint)}${process.env.LAR_MODEL ? ` (${process.env.LAR_MODEL})` : ''}`
      : `3/4 model: the scripted demo model at ${endpoint} (set LAR_ENDPOINT and LAR_MODEL to use a real server)`,
  );
  prepareDemoWorkspace(workspace, {
    'lean4Agentic.endpoint': endpoint,
    'lean4Agentic.model': realEndpoint ? (process.env.LAR_MODEL ?? '') : DEMO_MODEL,
    'lean4Agentic.workflow': 'demo.larflow.json',
  });

  say('4/4 starting code-server with the extension installed');
  const port = Number(process.env.LAR_DEMO_PORT) || (await freePort());
  rmSync(join(root, 'code-server'), { recursive: true, force: true });
  let server: CodeServer | undefined;
  const stopAll = async () => {
    await server?.stop();
    await model?.server.stop();
  };
  // Ctrl+C while code-server starts must stop it too: it runs in its own process group.
  let interrupted = false;
  const stopSignal = new Promise<void>((resolve) => {
    const on = () => {
      interrupted = true;
      resolve();
    };
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
  });
  try {
    const starting = CodeServer.start({ dataDir: join(root, 'code-server'), extensions: [vsixPath()], port });
    server = await Promise.race([starting, stopSignal.then(() => undefined)]);
    if (interrupted || !server) {
      say('stopping: code-server is still starting, it is stopped as soon as it is up');
      server = await starting.catch(() => undefined);
      return 130;
    }
    const url = server.folderUrl(workspace);
    const installed = readdirSync(server.extensionsDir).filter((d) => d.startsWith('lean4-agentic.'));
    if (!installed.length) throw new Error('the VSIX did not install into code-server');
    const page = await fetch(url);
    if (!page.ok) throw new Error(`code-server answered ${page.status} for the workbench`);
    say(`installed ${installed.join(', ')}`);
    process.stdout.write(
      `\n  Open ${url}\n  in a browser: the Lean4 Agentic view is in the activity bar. Ask it to make npm test pass.\n\n`,
    );
    if (check) {
      say(
        'checked: the workbench is served with the extension installed. Not a terminal (or --check): stopping. Run `npm run demo` in a terminal, or `npm run demo -- --serve`, to keep it running.',
      );
      return 0;
    }
    say(process.stdin.isTTY ? 'running; Ctrl+C stops it.' : 'running (--serve); SIGINT or SIGTERM stops it.');
    await stopSignal;
    return 0;
  } catch (e) {
    say(`failed: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await stopAll();
    if (existsSync(workspace)) say(`stopped; the demo repository stays in ${workspace}`);
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
