/**
 * The layout's rules, each checked on the tree and on a planted violation so
 * a rule that can no longer fail shows up here (docs/architecture.md,
 * "Layers" and "Habits").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { CHECK_IDS } from '../core/verifier/checks';
import { ALWAYS_READ_ONLY, DEFAULT_PROTECTED } from '../core/schema/workflow';
import { defaultWorkflow } from '../core/workflow/load';
import {
  casingViolations,
  commandProblems,
  importCycles,
  importGraph,
  impureImports,
  layerViolations,
  settingProblems,
  walkthroughLinkProblems,
  sizes,
  sourceFiles,
  type Edge,
} from './support/architecture';
import { COMMANDS } from '../core/protocol/commands';

const root = resolve(__dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The shipped code: what the layers order. */
const SHIPPED = ['core', 'cli', 'server', 'extension', 'webview', 'testkit'];
const files = sourceFiles(root, SHIPPED);
const graph = importGraph(root, files);
const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, typeOnly });

test('imports follow the layers: the core never imports an application or the editor, the webview only the chat protocol', () => {
  assert.deepEqual(layerViolations(graph), []);
  // Planted: each kind of violation is seen.
  assert.deepEqual(
    layerViolations([edge('core/schema/a.ts', 'core/agent/b.ts')]).length,
    1,
    'a lower layer importing a higher one',
  );
  assert.deepEqual(
    layerViolations([edge('core/tools/a.ts', 'core/agent/b.ts', true)]).length,
    1,
    'type-only imports count',
  );
  assert.deepEqual(
    layerViolations([edge('core/model/a.ts', 'core/export/b.ts')]).length,
    1,
    'two folders of one layer',
  );
  assert.deepEqual(layerViolations([edge('core/shell/a.ts', 'vscode')]).length, 1, 'the core importing vscode');
  assert.deepEqual(
    layerViolations([edge('core/agent/a.ts', 'cli/run.ts')]).length,
    1,
    'the core importing an application',
  );
  assert.deepEqual(
    layerViolations([edge('webview/a.ts', 'extension/b.ts')]).length,
    1,
    'the webview importing the extension',
  );
  assert.deepEqual(
    layerViolations([edge('webview/a.ts', 'core/schema/b.ts')]).length,
    1,
    'the webview importing below the protocol',
  );
  assert.deepEqual(layerViolations([edge('lib/a.ts', 'core/json/b.ts')]).length, 1, 'a folder in no layer');
  assert.deepEqual(
    layerViolations([{ from: 'core/json/a.ts', to: 'core/agent/data.json', typeOnly: false, local: true }]).length,
    1,
    'a JSON file of a higher layer',
  );
  assert.deepEqual(
    layerViolations([{ from: 'core/json/a.ts', to: './gone', typeOnly: false, local: true }]).length,
    1,
    'a relative import that resolves to nothing',
  );
  assert.deepEqual(
    layerViolations([
      edge('cli/main.ts', 'server/server.ts'),
      edge('core/agent/a.ts', 'core/json/b.ts'),
      edge('webview/a.ts', 'core/protocol/chat.ts'),
    ]),
    [],
    'allowed imports',
  );
});

test('no import cycles between files, type-only imports included', () => {
  assert.deepEqual(importCycles(graph), []);
  const planted = importCycles([
    edge('core/verifier/a.ts', 'core/verifier/b.ts'),
    edge('core/verifier/b.ts', 'core/verifier/c.ts', true),
    edge('core/verifier/c.ts', 'core/verifier/a.ts', true),
  ]);
  assert.deepEqual(planted, [['core/verifier/a.ts', 'core/verifier/b.ts', 'core/verifier/c.ts']]);
});

test('an extension module free of vscode imports no module that uses it, so it stays testable under node --test', () => {
  assert.deepEqual(impureImports(graph), []);
  const pure = files.filter((f) => f.startsWith('extension/') && !graph.some((e) => e.from === f && e.to === 'vscode'));
  assert.ok(pure.length >= 10, `the pure extension modules: ${pure.join(', ')}`);
  assert.deepEqual(impureImports([edge('extension/a.ts', 'extension/b.ts'), edge('extension/b.ts', 'vscode')]), [
    'extension/a.ts imports extension/b.ts, which imports vscode',
  ]);
});

test('file and folder names are kebab-case', () => {
  assert.deepEqual(casingViolations(sourceFiles(root, [...SHIPPED, 'test', 'bench', 'devtools', 'e2e'])), []);
  assert.deepEqual(
    casingViolations([
      'extension/runBadges.ts',
      'extension/chatView/a.ts',
      'core/model/client.ts',
      'test/core/a.property.test.ts',
    ]),
    ['extension/runBadges.ts', 'extension/chatView/a.ts'],
  );
});

/**
 * Files over 400 lines and functions over 80, with the most lines each may have: entries only ever go down,
 * and go when under the limit. Empty since the splits of 2026-12: what grows past a limit is split, not listed.
 */
const LIMITS = { fileLines: 400, functionLines: 80 };
const OVER: Record<string, number> = {};

test('no file over 400 lines and no function over 80, but those listed, which only shrink', () => {
  const measured = sizes(root, files, LIMITS);
  const grown = [...measured]
    .filter(([k, n]) => n > (OVER[k] ?? 0))
    .map(([k, n]) => `${k}: ${n} lines${OVER[k] ? ` (at most ${OVER[k]})` : ''}`);
  assert.deepEqual(grown, [], 'split what grew past the limit');
  const under = Object.keys(OVER).filter((k) => !measured.has(k));
  assert.deepEqual(under, [], 'under the limit now: take these out of OVER');
  // Planted: a file and a function past small limits.
  const dir = mkdtempSync(join(tmpdir(), 'lar-arch-'));
  try {
    writeFileSync(
      join(dir, 'a.ts'),
      `export function long(): number {\n${'  let x = 1;\n'.repeat(5)}  return 1;\n}\nexport class K {\n  m(): void {\n    const f = () => {\n      return;\n    };\n  }\n}\n`,
    );
    const planted = sizes(dir, ['a.ts'], { fileLines: 10, functionLines: 4 });
    assert.deepEqual([...planted.keys()].sort(), ['a.ts', 'a.ts#K.m', 'a.ts#long']);
    assert.equal(planted.get('a.ts#long'), 8);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    configuration: { properties: Record<string, { scope?: string }> };
    walkthroughs: { steps: { description: string }[] }[];
  };
};

test("the walkthrough's buttons run contributed commands and open each setting where it is listed", () => {
  const contributed = manifest.contributes.commands.map((c) => c.command);
  const scopes = Object.fromEntries(
    Object.entries(manifest.contributes.configuration.properties).map(([k, v]) => [k, v.scope]),
  );
  const texts = manifest.contributes.walkthroughs.flatMap((w) => w.steps.map((s) => s.description));
  assert.ok(texts.some((t) => t.includes('(command:lean4Agentic.openEndpointSetting)')));
  assert.deepEqual(walkthroughLinkProblems(texts, contributed, scopes), []);
  // Planted: the link this replaced, and a command that is not contributed.
  assert.deepEqual(
    walkthroughLinkProblems(
      [
        '[Open](command:workbench.action.openSettings?%5B%22lean4Agentic.endpoint%22%5D) [X](command:lean4Agentic.nope)',
      ],
      contributed,
      scopes,
    ),
    [
      'lean4Agentic.endpoint is opened on the User tab, where a remote window lacks it',
      'lean4Agentic.nope is linked but not contributed',
    ],
  );
});

test('every contributed command is in the one command table and has a handler registered from it', () => {
  const extensionSources = files
    .filter((f) => f.startsWith('extension/'))
    .map((f) => readFileSync(join(root, f), 'utf8'));
  const contributed = manifest.contributes.commands.map((c) => c.command);
  assert.deepEqual(commandProblems(contributed, COMMANDS, extensionSources), []);
  // Planted: a command contributed without an entry, an entry without a handler, one registered by a string.
  assert.deepEqual(
    commandProblems(['x.a', 'x.b'], { a: 'x.a', c: 'x.c' }, [
      'registerCommand(COMMANDS.a, () => 1)',
      "registerCommand('x.b', f)",
    ]),
    [
      'x.b is contributed but not in the command table',
      'x.c is in the command table but not contributed',
      'x.c has no handler (registerCommand(COMMANDS.c, …))',
      'x.b is registered by a string, not from the command table',
    ],
  );
});

test('every setting is read in extension/config.ts and documented', () => {
  const keys = Object.keys(manifest.contributes.configuration.properties);
  const docs =
    readFileSync(join(root, 'README.md'), 'utf8') + readFileSync(join(root, 'extension', 'README.md'), 'utf8');
  // trace.server is read by the language client library itself, by the client's id.
  assert.deepEqual(
    settingProblems(keys, readFileSync(join(root, 'extension', 'config.ts'), 'utf8'), docs, [
      'lean4Agentic.trace.server',
    ]),
    [],
  );
  assert.deepEqual(settingProblems(['lean4Agentic.a.b', 'lean4Agentic.c'], "c.get('a.b')", 'see `lean4Agentic.c`'), [
    'lean4Agentic.a.b is not documented',
    'lean4Agentic.c is never read in extension/config.ts',
  ]);
});

test('every property suite takes fast-check from test/support/fc.ts, so one seed variable replays any of them', () => {
  const direct = [...sources(join(root, 'test')), ...sources(join(root, 'e2e'))]
    .filter((f) => !f.endsWith(join('support', 'fc.ts')))
    .filter((f) => /from ['"]fast-check['"]|require\(['"]fast-check['"]\)/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(
    direct.map((f) => relative(root, f)),
    [],
  );
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
