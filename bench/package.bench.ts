/**
 * `npm run bench`: what the linux-x64 VSIX weighs and what in it: each bundle raw, gzipped and as the package
 * stores it (deflated), then the rest by kind, against the 1 MB the package may weigh
 * (test/devtools/package-size.test.ts). Builds the package first, as `npm test` does.
 * Figures go to docs/performance.md between the BENCH:package markers.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { vsixEntries, type VsixEntry } from '../devtools/package';
import { machineLine, writeSection } from './report';

const ROOT = resolve(__dirname, '..', '..');
const LIMIT = 1024 * 1024;
const BUNDLES = ['extension.js', 'server.js', 'vendor.js', 'chat.js'];

/** The rest of the package by kind: the first pattern a file matches names its row. */
const KINDS: readonly [string, RegExp][] = [
  ['documentation (README, CHANGELOG, docs/*.md)', /^extension\/(readme\.md|changelog\.md|docs\/)/],
  ['Lean sources (the Lean backend builds them)', /^extension\/lean\//],
  ['node-pty (its JavaScript and the native binary)', /^extension\/node_modules\/node-pty\//],
  ['JSON Schemas, media, grammars, walkthrough', /^extension\/(dist\/schemas|extension)\//],
  ['package.json, licence, manifest', /./],
];

const bytes = (n: number) => n.toLocaleString('en-US');

function main(): void {
  execFileSync(process.execPath, [join(ROOT, 'out', 'devtools', 'package.js'), '--target', 'linux-x64'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  const file = join(ROOT, 'out', 'vsix', `${manifest.name}-linux-x64-${manifest.version}.vsix`);
  const size = statSync(file).size;
  const entries = vsixEntries(file);
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const bundleRows = BUNDLES.map((name) => {
    const entry = byPath.get(`extension/dist/${name}`);
    if (!entry) throw new Error(`dist/${name} is not in ${file}`);
    const raw = entry.read();
    return `| dist/${name} | ${bytes(raw.length)} | ${bytes(gzipSync(raw, { level: 9 }).length)} | ${bytes(entry.compressed)} |`;
  });
  const rest = new Map<string, VsixEntry[]>(KINDS.map(([label]) => [label, []]));
  for (const e of entries) {
    if (BUNDLES.some((b) => e.path === `extension/dist/${b}`)) continue;
    rest.get(KINDS.find(([, re]) => re.test(e.path))![0])!.push(e);
  }
  const restRows = [...rest].map(
    ([label, es]) =>
      `| ${label} | ${es.length} | ${bytes(es.reduce((s, e) => s + e.bytes, 0))} | ${bytes(es.reduce((s, e) => s + e.compressed, 0))} |`,
  );
  const section = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}. \`npm run package -- --target linux-x64\` (bundles minified, no source maps).`,
    '',
    `**The VSIX: ${bytes(size)} bytes** (${((100 * size) / LIMIT).toFixed(0)}% of the ${bytes(LIMIT)} it may weigh), ${entries.length} files.`,
    '',
    '| bundle | raw bytes | gzip -9 bytes | in the VSIX (deflated) |',
    '|---|---:|---:|---:|',
    ...bundleRows,
    '',
    '| the rest | files | raw bytes | in the VSIX (deflated) |',
    '|---|---:|---:|---:|',
    ...restRows,
  ].join('\n');
  console.log(section);
  writeSection(resolve(ROOT, 'docs/performance.md'), 'package', section);
  console.log('figures written to docs/performance.md');
}

main();
