// Where setup puts code-server; devtools/paths.ts says the same for the demo and the tests.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

const pins = JSON.parse(readFileSync(new URL('./code-server.json', import.meta.url), 'utf8'));
export const CODE_SERVER_VERSION = pins.version;
export const NODE_FOR_CODE_SERVER = pins.node;

/** $LAR_CACHE_DIR, else ~/.cache/lean4-agentic: outside the clone, so a fresh clone reuses it. Always absolute. */
export function cacheDir() {
  const xdg = process.env.XDG_CACHE_HOME;
  // A relative XDG_CACHE_HOME is invalid (XDG base directory spec) and ignored.
  return resolve(process.env.LAR_CACHE_DIR || join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'lean4-agentic'));
}
export function codeServerDir() {
  return join(cacheDir(), `code-server-${CODE_SERVER_VERSION}`);
}
export function codeServerBin() {
  return join(codeServerDir(), 'node_modules', '.bin', 'code-server');
}
