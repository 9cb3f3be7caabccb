// Bundles every entry point with esbuild. The CLI, the extension and the
// language server are Node programs (`vscode` and the native `node-pty` stay
// external: they cannot be bundled); the chat view's script is a browser bundle.
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** @type {import('esbuild').BuildOptions[]} */
const targets = [
  {
    entryPoints: ['cli/main.ts'],
    outfile: 'dist/lar.js',
    banner: { js: '#!/usr/bin/env node' },
  },
  { entryPoints: ['extension/main.ts'], outfile: 'dist/extension.js' },
  { entryPoints: ['server/main.ts'], outfile: 'dist/server.js' },
  // The chat view's script: a browser bundle loaded by the webview (strict CSP, nonce).
  {
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/chat.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    define: {},
  },
];

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  external: ['vscode', 'node-pty'],
  // jsonc-parser's main entry is a UMD build whose relative requires esbuild cannot follow; its ESM build bundles.
  // The MCP SDK's ajv is for a validator lar never makes: a stub that refuses keeps ~130 KB out.
  alias: {
    'jsonc-parser': './node_modules/jsonc-parser/lib/esm/main.js',
    ajv: './scripts/bundle-stubs/ajv.cjs',
    'ajv-formats': './scripts/bundle-stubs/ajv.cjs',
  },
  // zod probes `navigator` to guess its platform; in VS Code's Node 22 extension
  // host touching that global logs a PendingMigrationError. Node bundles have no navigator.
  define: { navigator: 'undefined', 'globalThis.navigator': 'undefined' },
};

const contexts = await Promise.all(targets.map((t) => esbuild.context({ ...common, ...t })));
// JSON Schemas for editors (.vscode/settings.json points at them), generated
// from the zod schemas by the freshly built CLI.
const writeSchemas = async () => {
  const { execFileSync } = await import('node:child_process');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync('dist/schemas', { recursive: true });
  for (const which of ['workflow', 'header', 'event']) {
    writeFileSync(
      `dist/schemas/${which}.schema.json`,
      execFileSync(process.execPath, ['dist/lar.js', 'schema', which]),
    );
  }
};
if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  await writeSchemas();
}
