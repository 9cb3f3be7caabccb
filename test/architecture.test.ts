import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { CHECK_IDS } from '../core/verifier/checks';
import { ALWAYS_READ_ONLY, DEFAULT_PROTECTED } from '../core/schema/workflow';
import { defaultWorkflow } from '../core/workflow/load';

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

test('the Lean checker names the same checks and the same always read-only paths as the TypeScript verifier', () => {
  const checks = readFileSync(join(root, 'lean', 'Lar', 'Checks.lean'), 'utf8');
  const names = checks.slice(checks.indexOf('def CheckId.name'), checks.indexOf('def CheckId.level'));
  const lean = [...names.matchAll(/\| \.\w+ => "([a-z_.]+)"/g)].map((m) => m[1]);
  assert.deepEqual([...lean].sort(), [...CHECK_IDS].sort());
  const schema = readFileSync(join(root, 'lean', 'Lar', 'Schema.lean'), 'utf8');
  const ro = /def alwaysReadOnly : List String := \[(.*)\]/.exec(schema)?.[1];
  assert.deepEqual(JSON.parse(`[${ro}]`), [...ALWAYS_READ_ONLY]);
  // The protected set a workflow without a sandbox section gets, in both readers and in the default workflow.
  const dp = /def defaultProtected : List String :=\s*\[([^\]]*)\]/.exec(schema)?.[1];
  assert.deepEqual(JSON.parse(`[${dp}]`), [...DEFAULT_PROTECTED]);
  assert.deepEqual(defaultWorkflow().sandbox.protected, [...DEFAULT_PROTECTED]);
});
