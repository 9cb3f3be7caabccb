// Where setup puts code-server; devtools/paths.ts says the same for the demo and the tests.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const pins = JSON.parse(readFileSync(new URL('./code-server.json', import.meta.url), 'utf8'));
export const CODE_SERVER_VERSION = pins.version;
export const NODE_FOR_CODE_SERVER = pins.node;

/** $LAR_CACHE_DIR, else ~/.cache/lean4-agentic: outside the clone, so a fresh clone reuses it. */
export function cacheDir() {
  return process.env.LAR_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'lean4-agentic');
}
export function codeServerDir() {
  return join(cacheDir(), `code-server-${CODE_SERVER_VERSION}`);
}
export function codeServerBin() {
  return join(codeServerDir(), 'node_modules', '.bin', 'code-server');
}
