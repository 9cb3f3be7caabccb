// The environment setup gives the npm installs it starts (Node 24, code-server).
//
// Started through `npm run setup`, setup inherits what the outer npm exported
// for its own script. Most of it is the user's configuration in environment
// form (registry, proxies, certificates, auth tokens, nodedir …), which an
// inner npm would read from the same files anyway, and must keep working (a
// `~/.npmrc` line `_authToken=${NPM_TOKEN}` needs NPM_TOKEN). A few variables
// describe the outer npm and the project it runs a script for, and an inner
// npm must not see them:
// - `npm_config_user_agent` names the outer npm's Node (20), and code-server's
//   postinstall refuses to run under anything but Node 24;
// - `npm_config_local_prefix` (and `prefix`, workspace settings) point an inner
//   install at the clone instead of its own folder;
// - `npm_config_allow_scripts` (empty) would override the inner package's own
//   `allowScripts`;
// - `npm_config_node_gyp`, `npm_config_npm_version`, `npm_config_argv`,
//   `npm_package_*`, `npm_lifecycle_*`, `npm_command`, `npm_execpath`,
//   `npm_node_execpath`, `INIT_CWD`, `NODE` describe the outer run;
// - PATH gets `<project and each folder above it>/node_modules/.bin` and npm's
//   node-gyp shim prepended.

/** `npm_config_*` settings (lower-case, `_` for `-`) that describe the outer npm run, not the user's configuration. */
export const OUTER_NPM_SETTINGS = new Set([
  'user_agent',
  'local_prefix',
  'prefix',
  'global_prefix',
  'allow_scripts',
  'node_gyp',
  'npm_version',
  'argv',
  'init_module',
  'workspace',
  'workspaces',
  'include_workspace_root',
  'global',
  // Flags given to `npm run setup` itself, which would change what the inner installs do.
  'ignore_scripts',
  'dry_run',
  'omit',
  'include',
  'only',
  'production',
  'dev',
]);

/** Variables an outer npm (or a test runner) sets for the process it starts, besides `npm_config_*`. */
const OUTER_VARIABLES = new Set([
  'INIT_CWD',
  'NODE',
  'COLOR',
  'NODE_TEST_CONTEXT',
  'NODE_CHANNEL_FD',
  'NODE_UNIQUE_ID',
  '_',
]);

/** Whether an environment variable is one the outer npm set for its script, not the user's. */
export function fromOuterNpm(name) {
  if (OUTER_VARIABLES.has(name)) return true;
  const setting = /^npm_config_(.*)$/i.exec(name);
  if (setting) return OUTER_NPM_SETTINGS.has(setting[1].toLowerCase().replace(/-/g, '_'));
  // npm's own script variables (lower-case, as npm writes them); NPM_TOKEN and the like are the user's.
  return /^npm_(package_|lifecycle_|command$|execpath$|node_execpath$)/.test(name);
}

const sepOf = (platform) => (platform === 'win32' ? ';' : ':');
const norm = (p) => p.replace(/\\/g, '/').replace(/\/+$/, '');

/**
 * PATH entries an outer `npm run` prepended: `node_modules/.bin` of the
 * project's folder and of every folder above it, and npm's node-gyp shim. A
 * user's own `node_modules/.bin` elsewhere on PATH stays.
 */
export function outerNpmPathEntries(outer) {
  // npm adds them for the project it runs the script of (its local prefix), not for
  // the folder it was started from (INIT_CWD: `npm --prefix /clone run setup` from ~/tools).
  const roots = new Set();
  if (outer.npm_config_local_prefix) {
    let dir = norm(outer.npm_config_local_prefix);
    for (;;) {
      roots.add(`${dir}/node_modules/.bin`);
      const up = dir.slice(0, Math.max(0, dir.lastIndexOf('/')));
      if (up === dir || dir === '') break;
      dir = up;
    }
  }
  return (entry) => {
    const e = norm(entry);
    return roots.has(e) || e.endsWith('/node-gyp-bin');
  };
}

/**
 * The environment for an inner npm install: `outer` without what an outer npm
 * set for its script, with `firstOnPath` (the folder of the Node that must run
 * it) first on PATH. Returns a new object; `outer` is not changed.
 */
export function installEnv(outer, firstOnPath, platform = process.platform) {
  // Only Windows spells PATH in any case; elsewhere `Path` is another variable.
  const isPath = (k) => (platform === 'win32' ? k.toUpperCase() === 'PATH' : k === 'PATH');
  const fromOuterPath = outerNpmPathEntries(outer);
  const env = {};
  let pathKey = 'PATH';
  let outerPath = '';
  for (const [k, v] of Object.entries(outer)) {
    if (v === undefined) continue;
    if (isPath(k)) {
      pathKey = k;
      outerPath = v;
      continue;
    }
    if (!fromOuterNpm(k)) env[k] = v;
  }
  const sep = sepOf(platform);
  const kept = outerPath.split(sep).filter((p) => p && !fromOuterPath(p));
  env[pathKey] = [...(firstOnPath ? [firstOnPath] : []), ...kept].join(sep);
  return env;
}
