// Bundles every entry point with esbuild. The editor-free CLI is a plain Node
// program; the extension and language server (later) mark `vscode` and the
// native `node-pty` external because they cannot be bundled.
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** @type {import('esbuild').BuildOptions[]} */
const targets = [
  {
    entryPoints: ['core/cli/main.ts'],
    outfile: 'dist/lar.js',
    banner: { js: '#!/usr/bin/env node' },
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
};

const contexts = await Promise.all(targets.map((t) => esbuild.context({ ...common, ...t })));
if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
}
