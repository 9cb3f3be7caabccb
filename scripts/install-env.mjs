// The environment setup gives the npm installs it starts (Node 24, code-server).
//
// Started through `npm run setup`, setup inherits what the outer npm put in its
// environment for its own script: `npm_config_*` for every setting (among them
// `user_agent`, which names the outer npm's Node 20 and makes code-server's
// postinstall refuse, `local_prefix`, which points an inner install at the
// clone instead of its own folder, and `allow_scripts`), `npm_package_*`,
// `npm_lifecycle_*`, `INIT_CWD`, `NODE`, and PATH entries for the clone's
// `node_modules/.bin` and npm's node-gyp shim. An inner npm must see none of
// them: it reads the user's own settings from their npmrc files itself.
//
// Kept: the rest of the user's environment, and the few npm settings a user
// sets in the environment to reach a registry at all (registry, proxies,
// certificates) or to choose where npm caches. They are re-read from the same
// files anyway; keeping their environment form keeps a `NPM_CONFIG_REGISTRY=…
// npm run setup` working.

/** npm settings (lower-case, `_` for `-`) an inner install keeps. */
export const KEPT_NPM_SETTINGS = new Set([
  'registry',
  'proxy',
  'https_proxy',
  'http_proxy',
  'noproxy',
  'no_proxy',
  'cafile',
  'ca',
  'strict_ssl',
  'cache',
  'userconfig',
  'globalconfig',
]);

/** Variables an outer npm (or a test runner) sets for the process it starts, besides `npm_*`. */
const DROPPED = new Set(['INIT_CWD', 'NODE', 'COLOR', 'NODE_TEST_CONTEXT', 'NODE_CHANNEL_FD', 'NODE_UNIQUE_ID', '_']);

/** Whether an environment variable is one the outer npm set for its script, not the user's. */
export function fromOuterNpm(name) {
  if (DROPPED.has(name)) return true;
  const m = /^npm_(.*)$/i.exec(name);
  if (!m) return false;
  const rest = m[1];
  const setting = /^config_(.*)$/i.exec(rest);
  if (!setting) return true; // npm_package_*, npm_lifecycle_*, npm_command, npm_execpath, npm_node_execpath …
  const key = setting[1].toLowerCase().replace(/-/g, '_');
  // Scoped registries: npm_config_@scope:registry.
  if (/^@[^:]+:registry$/.test(key)) return false;
  return !KEPT_NPM_SETTINGS.has(key);
}

/** PATH entries an outer `npm run` prepends: a project's `node_modules/.bin` folders and npm's node-gyp shim. */
export function fromOuterNpmPath(entry) {
  const e = entry.replace(/\\/g, '/').replace(/\/+$/, '');
  return e.endsWith('/node_modules/.bin') || e.endsWith('/node-gyp-bin');
}

/**
 * The environment for an inner npm install: `outer` without what an outer npm
 * set, with `firstOnPath` (the folder of the Node that must run it) first on
 * PATH. Returns a new object; `outer` is not changed.
 */
export function installEnv(outer, firstOnPath) {
  const env = {};
  let pathKey = 'PATH';
  for (const [k, v] of Object.entries(outer)) {
    if (v === undefined || fromOuterNpm(k)) continue;
    if (k.toUpperCase() === 'PATH') {
      pathKey = k;
      continue;
    }
    env[k] = v;
  }
  const sep = process.platform === 'win32' ? ';' : ':';
  const outerPath = Object.entries(outer).find(([k]) => k.toUpperCase() === 'PATH')?.[1] ?? '';
  const kept = outerPath.split(sep).filter((p) => p && !fromOuterNpmPath(p));
  env[pathKey] = [...(firstOnPath ? [firstOnPath] : []), ...kept].join(sep);
  return env;
}
