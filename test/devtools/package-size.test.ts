/**
 * The linux-x64 VSIX as users install it: at most 1 MB, no source maps, and nothing it shows or loads missing
 * (an image of the README or the walkthrough, a file a bundle requires). `npm test` builds the package just before
 * the tests; run alone, this test builds it when it is not there (half a minute).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { vsixEntries } from '../../devtools/package';

const ROOT = resolve(__dirname, '..', '..', '..');
const LIMIT = 1024 * 1024;

function vsix(): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  const file = join(ROOT, 'out', 'vsix', `${manifest.name}-linux-x64-${manifest.version}.vsix`);
  if (!existsSync(file))
    execFileSync(process.execPath, [join(ROOT, 'out', 'devtools', 'package.js'), '--target', 'linux-x64'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  return file;
}

const file = vsix();
const entries = vsixEntries(file);
const paths = new Set(entries.map((e) => e.path));
const text = (path: string) =>
  entries
    .find((e) => e.path === path)!
    .read()
    .toString('utf8');

test('the VSIX weighs at most 1 MB', () => {
  const size = statSync(file).size;
  const biggest = [...entries]
    .sort((a, b) => b.compressed - a.compressed)
    .slice(0, 8)
    .map((e) => `${e.path} ${e.compressed}`);
  assert.ok(size <= LIMIT, `${size} bytes, over ${LIMIT}; the biggest, deflated: ${biggest.join(', ')}`);
});

test('the VSIX carries no source map and no bundle of ours points at one', () => {
  assert.deepEqual(
    entries.filter((e) => e.path.endsWith('.map')).map((e) => e.path),
    [],
  );
  // node-pty's own files, as npm ships them, end with a comment naming their map: nothing loads it.
  const pointing = entries.filter((e) => e.path.startsWith('extension/dist/') && e.read().includes('sourceMappingURL'));
  assert.deepEqual(
    pointing.map((e) => e.path),
    [],
  );
});

test('each file a bundle requires by a relative path is in the VSIX', () => {
  const bundles = entries.filter((e) => /^extension\/dist\/[^/]+\.js$/.test(e.path));
  assert.ok(bundles.length >= 4, bundles.map((e) => e.path).join(', '));
  for (const b of bundles)
    for (const [, wanted] of b
      .read()
      .toString('utf8')
      .matchAll(/require\("(\.\.?\/[^"]+)"\)/g))
      assert.ok(paths.has(posix.join(posix.dirname(b.path), wanted!)), `${b.path} requires ${wanted}`);
});

test('every image the README and the walkthrough show is in the VSIX (none shows broken)', () => {
  const pages = entries.filter(
    (e) => e.path === 'extension/readme.md' || /^extension\/extension\/walkthrough\//.test(e.path),
  );
  assert.ok(pages.length >= 2, pages.map((e) => e.path).join(', '));
  for (const page of pages) {
    const md = text(page.path);
    const images = [...md.matchAll(/!\[[^\]]*\]\(([^)\s]+)/g), ...md.matchAll(/<img[^>]+src=["']([^"']+)/g)];
    for (const [, src] of images) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(src!)) continue;
      assert.ok(paths.has(posix.join(posix.dirname(page.path), src!)), `${page.path} shows ${src}, not in the VSIX`);
    }
  }
});
