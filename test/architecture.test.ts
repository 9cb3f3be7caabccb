import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('the core never imports the editor', () => {
  const offenders = sources(join(root, 'core')).filter((f) => /from ['"]vscode['"]|require\(['"]vscode['"]\)/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(offenders.map((f) => relative(root, f)), []);
});

test('every property suite takes fast-check from test/support/fc.ts, so one seed variable replays any of them', () => {
  const direct = [...sources(join(root, 'test')), ...sources(join(root, 'e2e'))]
    .filter((f) => !f.endsWith(join('support', 'fc.ts')))
    .filter((f) => /from ['"]fast-check['"]|require\(['"]fast-check['"]\)/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(direct.map((f) => relative(root, f)), []);
});
