// Bundles every entry point with esbuild. The CLI, the extension and the
// language server are Node programs (`vscode` and the native `node-pty` stay
// external: they cannot be bundled); the chat view's script is a browser bundle.
// `--production` minifies and leaves source maps out (the VSIX ships no maps);
// `--analyze` prints what each bundle is made of (esbuild's metafile).
import * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const analyze = process.argv.includes('--analyze');

// The extension and the language server both carry zod and the LSP protocol stack (vscode-jsonrpc,
// the protocol and its types): built once into dist/vendor.js, which each requires at run time.
// The lar CLI stays one file (its npm package ships dist/lar.js alone).
const SHARED = [
  'zod',
  'zod/v4',
  'zod/v4-mini',
  'vscode-jsonrpc',
  'vscode-jsonrpc/node',
  'vscode-languageserver-protocol',
  'vscode-languageserver-protocol/node',
  'vscode-languageserver-types',
];
const sharedName = (spec) => spec.replace(/\W/g, '_');
const vendorEntry = [
  ...SHARED.map((spec) => `import * as ${sharedName(spec)} from '${spec}';`),
  `export { ${SHARED.map(sharedName).join(', ')} };`,
].join('\n');

// Entry points of these packages left in each bundle: zod's v3 API, which the MCP SDK imports and never runs.
const UNSHARED = ['zod/v3'];

/** Points the bundle's imports of the shared packages at dist/vendor.js (next to the bundle at run time). */
const shared = {
  name: 'shared',
  setup(build) {
    const packages = /^(zod|vscode-jsonrpc|vscode-languageserver-protocol|vscode-languageserver-types)(\/.*)?$/;
    build.onResolve({ filter: packages }, (args) => {
      if (SHARED.includes(args.path)) return { path: args.path, namespace: 'shared' };
      // Bundled here it would be a second copy of what vendor.js holds, with state of its own.
      if (!UNSHARED.includes(args.path))
        return { errors: [{ text: `${args.path} is neither in SHARED nor in UNSHARED (esbuild.mjs)` }] };
      return undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'shared' }, (args) => ({
      contents: `module.exports = require('./vendor.js').${sharedName(args.path)};`,
      loader: 'js',
    }));
    build.onResolve({ filter: /^\.\/vendor\.js$/, namespace: 'shared' }, () => ({
      path: './vendor.js',
      external: true,
    }));
  },
};

/** zod's namespace re-exports all its locales; the bundles get the stub (scripts/bundle-stubs/zod-locales.mjs). */
const zodLocales = {
  name: 'zod-locales',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: resolve('scripts/bundle-stubs/zod-locales.mjs') }
        : undefined,
    );
  },
};

/**
 * The module `lar:chat-protocol` of the chat's bundle: the protocol's JSON Schemas, made from its zod schemas by
 * running webview/protocol-schemas.ts now, so the browser bundle checks messages without carrying zod.
 */
const chatProtocol = {
  name: 'chat-protocol',
  setup(build) {
    build.onResolve({ filter: /^lar:chat-protocol$/ }, (args) => ({ path: args.path, namespace: 'chat-protocol' }));
    build.onLoad({ filter: /.*/, namespace: 'chat-protocol' }, async () => {
      const made = await esbuild.build({
        entryPoints: ['webview/protocol-schemas.ts'],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        write: false,
        metafile: true,
        logLevel: 'warning',
        plugins: [zodLocales],
      });
      const module = { exports: {} };
      new Function('module', 'exports', 'require', made.outputFiles[0].text)(
        module,
        module.exports,
        createRequire(import.meta.url),
      );
      return {
        contents: JSON.stringify(module.exports.chatProtocolSchemas()),
        loader: 'json',
        watchFiles: Object.keys(made.metafile.inputs).map((p) => resolve(p)),
      };
    });
  },
};

/** @type {import('esbuild').BuildOptions[]} */
const targets = [
  {
    entryPoints: ['cli/main.ts'],
    outfile: 'dist/lar.js',
    banner: { js: '#!/usr/bin/env node' },
  },
  { entryPoints: ['extension/main.ts'], outfile: 'dist/extension.js', plugins: [shared, zodLocales] },
  { entryPoints: ['server/main.ts'], outfile: 'dist/server.js', plugins: [shared, zodLocales] },
  {
    stdin: { contents: vendorEntry, resolveDir: '.', sourcefile: 'vendor.js', loader: 'js' },
    outfile: 'dist/vendor.js',
  },
  // The chat view's script: a browser bundle loaded by the webview (strict CSP, nonce).
  {
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/chat.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    define: {},
    plugins: [chatProtocol, zodLocales],
  },
];

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  metafile: analyze,
  logLevel: 'warning',
  external: ['vscode', 'node-pty'],
  plugins: [zodLocales],
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
  const results = await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
  await writeSchemas();
  if (analyze)
    for (const r of results) process.stdout.write(await esbuild.analyzeMetafile(r.metafile, { verbose: false }));
}
