/** Where scripts/setup.mjs put code-server and Chromium is found; the demo and the end-to-end tests read it here. */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import pins from '../scripts/code-server.json';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const CODE_SERVER_VERSION: string = pins.version;
export const NODE_FOR_CODE_SERVER: string = pins.node;

/** The same folder as scripts/paths.mjs `cacheDir` (setup runs before the TypeScript is built, so it cannot import this). */
export function cacheDir(): string {
  const own = process.env.LAR_CACHE_DIR;
  if (own && !isAbsolute(own)) throw new Error(`LAR_CACHE_DIR must be an absolute path, got ${JSON.stringify(own)}`);
  const xdg = process.env.XDG_CACHE_HOME;
  return resolve(own || join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'lean4-agentic'));
}

export function codeServerDir(): string {
  return join(cacheDir(), `code-server-${CODE_SERVER_VERSION}`);
}

/** The folder setup installs code-server's Node into (scripts/paths.mjs `nodeDir`). */
export function nodeDir(): string {
  return join(cacheDir(), `node-${NODE_FOR_CODE_SERVER}`);
}

/** Where that Node's executable is (scripts/paths.mjs `nodeBinDir`). */
export function nodeBinDir(): string {
  return join(nodeDir(), 'node_modules', '.bin');
}

/** The launcher script and the Node 24 that must run it; undefined until setup finished installing both (their marker files). */
export function codeServerCommand(): { node: string; script: string } | undefined {
  const dir = codeServerDir();
  const node = join(nodeBinDir(), 'node');
  const script = join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const finished = [dir, nodeDir()].every((d) => existsSync(join(d, 'installed.json')));
  return finished && existsSync(node) && existsSync(script) ? { node, script } : undefined;
}

export function chromiumPath(): string | undefined {
  const candidates = [process.env.LAR_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (p): p is string => !!p,
  );
  return candidates.find((p) => existsSync(p));
}

/** What setup found for the Harbor integration (scripts/paths.mjs `harborStatusFile`): its venv, or why there is none. */
export function harborStatus(): { venv: string } | { skip: string } {
  const file = join(cacheDir(), 'harbor-status.json');
  if (!existsSync(file)) return { skip: `npm run setup has not run with this cache folder (${cacheDir()})` };
  const status = JSON.parse(readFileSync(file, 'utf8')) as { ok?: boolean; venv?: string; reason?: string };
  if (status.ok && status.venv && existsSync(join(status.venv, 'bin', 'harbor'))) return { venv: status.venv };
  return { skip: `setup skipped Harbor: ${status.reason ?? 'its venv is missing'}` };
}
