// Where setup puts code-server and its Node; devtools/paths.ts says the same for the demo and the tests.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pins = JSON.parse(readFileSync(new URL('./code-server.json', import.meta.url), 'utf8'));
export const CODE_SERVER_VERSION = pins.version;
export const NODE_FOR_CODE_SERVER = pins.node;
/** The committed lockfile of code-server's folder: every package of its tree at a fixed version. */
export const CODE_SERVER_LOCK = new URL('./code-server-lock.json', import.meta.url);
/** The same for the Node folder (the `node` package and its installer). */
export const NODE_LOCK = new URL('./node-lock.json', import.meta.url);

/**
 * $LAR_CACHE_DIR, else ~/.cache/lean4-agentic: outside the clone, so a fresh
 * clone reuses it. A relative LAR_CACHE_DIR is refused (each process would
 * resolve it against its own folder); a relative XDG_CACHE_HOME is invalid
 * (XDG base directory spec) and ignored.
 */
export function cacheDir() {
  const own = process.env.LAR_CACHE_DIR;
  if (own && !isAbsolute(own)) throw new Error(`LAR_CACHE_DIR must be an absolute path, got ${JSON.stringify(own)}`);
  const xdg = process.env.XDG_CACHE_HOME;
  return resolve(own || join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'lean4-agentic'));
}
/** Node for code-server, in a folder of its own: it must be on PATH before code-server's install scripts run. */
export function nodeDir() {
  return join(cacheDir(), `node-${NODE_FOR_CODE_SERVER}`);
}
export function nodeBinDir() {
  return join(nodeDir(), 'node_modules', '.bin');
}
export function codeServerDir() {
  return join(cacheDir(), `code-server-${CODE_SERVER_VERSION}`);
}
export function codeServerBin() {
  return join(codeServerDir(), 'node_modules', '.bin', 'code-server');
}

/** The package.json of code-server's folder (the lockfile is made from exactly this). */
export function codeServerPackage() {
  return {
    name: 'lean4-agentic-code-server',
    private: true,
    description: 'code-server for the Lean4 Agentic demo and end-to-end tests (made by scripts/setup.mjs)',
    dependencies: { 'code-server': CODE_SERVER_VERSION },
    allowScripts: { 'code-server': true, argon2: true, kerberos: true, '@parcel/watcher': true },
  };
}

/** The package.json of the Node folder. */
export function nodePackage() {
  return {
    name: 'lean4-agentic-node-for-code-server',
    private: true,
    description: `Node ${NODE_FOR_CODE_SERVER} for code-server (made by scripts/setup.mjs)`,
    dependencies: { node: NODE_FOR_CODE_SERVER },
    allowScripts: { node: true },
  };
}

/** The Harbor integration's Python package in this clone, and the lock of its virtual environment. */
export const HARBOR_DIR = fileURLToPath(new URL('../integrations/harbor', import.meta.url));
export const HARBOR_LOCK = join(HARBOR_DIR, 'requirements.lock');
export const HARBOR_VERSION = '0.26.0';
/** The virtual environment with Harbor and lar-harbor (scripts/harbor-setup.mjs). */
export function harborVenvDir() {
  return join(cacheDir(), `harbor-${HARBOR_VERSION}`);
}
/** What setup found: `{ ok, venv }` or `{ ok: false, reason }`; the Harbor tests read it to run or say why they skip. */
export function harborStatusFile() {
  return join(cacheDir(), 'harbor-status.json');
}
