import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultWorkflow, loadWorkflow, loadWorkflowText } from '../core/workflow/load';
import { Workflow } from '../core/schema/workflow';

const root = resolve(__dirname, '../..');
const base = () => JSON.parse(readFileSync(resolve(root, 'core/workflow/default-coding.larflow.json'), 'utf8'));
const codes = (value: unknown) => loadWorkflow(value).problems.map((p) => p.code);

test('the default coding workflow is well-formed and has the documented shape', () => {
  const wf = defaultWorkflow();
  assert.deepEqual(wf.stages.map((s) => s.id), ['explore', 'edit', 'verify']);
  assert.equal(wf.start, 'explore');
  assert.deepEqual(wf.terminal, ['verify']);
  assert.deepEqual(wf.transitions, { explore: ['edit'], edit: ['verify'], verify: ['edit'] });
  assert.deepEqual(loadWorkflow(base()).problems, []);
});

test('each well-formedness problem is found and named', () => {
  const unknownTool = base();
  unknownTool.stages[0].tools.push('teleport');
  assert.deepEqual(codes(unknownTool), ['workflow.unknown_tool']);

  const badTarget = base();
  badTarget.transitions.verify = ['edit', 'deploy'];
  assert.deepEqual(codes(badTarget), ['workflow.unknown_stage']);

  const unreachable = base();
  unreachable.stages.push({ id: 'orphan', tools: ['read_file'], budget: 1 });
  assert.deepEqual(codes(unreachable), ['workflow.unreachable_stage']);

  const noTerminal = base();
  noTerminal.transitions = { explore: ['edit'], edit: ['explore'], verify: ['edit'] };
  assert.ok(codes(noTerminal).includes('workflow.no_reachable_terminal'));

  const deadEnd = base();
  deadEnd.stages.push({ id: 'limbo', tools: ['read_file'], budget: 3 });
  deadEnd.transitions.edit = ['verify', 'limbo'];
  const load = loadWorkflow(deadEnd);
  assert.equal(load.ok, true, 'a dead end is a warning, not an error');
  assert.deepEqual(load.problems.map((p) => p.code), ['workflow.dead_end']);

  const noSubmit = base();
  noSubmit.stages[2].tools = noSubmit.stages[2].tools.filter((t: string) => t !== 'submit');
  assert.deepEqual(codes(noSubmit), ['workflow.terminal_without_submit']);

  const noEnter = base();
  noEnter.stages[0].tools = ['read_file'];
  assert.deepEqual(codes(noEnter), ['workflow.no_enter_stage']);

  const regex = base();
  regex.policy.commands.deny.push('^rm .*$');
  assert.deepEqual(codes(regex), ['workflow.pattern_looks_like_regex']);

  const dup = base();
  dup.stages.push({ ...dup.stages[0] });
  assert.deepEqual(codes(dup), ['workflow.duplicate_stage']);

  const badStart = base();
  badStart.start = 'begin';
  assert.deepEqual(codes(badStart), ['workflow.unknown_stage']);
});

test('schema errors and JSON errors in workflow text are located', () => {
  const text = '{\n  "lar": 1,\n  "id": "x",\n  "stages": [{"id": "s", "tools": [], "budget": 0}]\n}';
  const load = loadWorkflowText(text);
  assert.equal(load.ok, false);
  const budget = load.problems.find((p) => p.path.join('.') === 'stages.0.budget')!;
  assert.ok(budget, JSON.stringify(load.problems));
  assert.equal(text.slice(budget.start, budget.end), '0');

  const broken = loadWorkflowText('{\n  "lar": 1,\n  "id" "x"\n}');
  assert.equal(broken.ok, false);
  assert.equal(broken.problems[0]!.code, 'workflow.json');
  assert.match(broken.problems[0]!.message, /expected ':'/);
  assert.equal(broken.problems[0]!.start, '{\n  "lar": 1,\n  "id" '.length);
});

test('the sandbox section: protected paths must be normal workspace paths, and no grant may undo the sandbox', () => {
  const withSandbox = (sandbox: Record<string, unknown>) => ({ ...base(), sandbox });
  assert.deepEqual(codes(withSandbox({ protected: ['test', 'package.json', 'src/fixtures'] })), []);
  for (const p of ['../outside', '/etc', './test', 'test/', '.']) assert.deepEqual(codes(withSandbox({ protected: [p] })), ['workflow.bad_protected_path'], p);
  assert.deepEqual(codes(withSandbox({ writable: ['~'] })), ['workflow.sandbox_undone']);
  assert.deepEqual(codes(withSandbox({ writable: ['/'] })), ['workflow.sandbox_undone']);
  assert.deepEqual(codes(withSandbox({ readable: ['~/'] })), ['workflow.sandbox_undone']);
  assert.deepEqual(codes(withSandbox({ writable: ['~/.cache/npm'], readable: ['~/.gitconfig'] })), []);
  // Host paths are absolute or under home; anything else is a schema error, but for writable, where a
  // workspace path grants what runs later (a hooks folder), written in its normal form.
  assert.ok(!Workflow.safeParse(withSandbox({ readable: ['relative/path'] })).success);
  assert.deepEqual(codes(withSandbox({ writable: ['.husky', 'scripts/hook.sh'] })), []);
  for (const p of ['./.husky', '.husky/', '../x', '.']) assert.deepEqual(codes(withSandbox({ writable: [p] })), ['workflow.bad_protected_path'], p);
  assert.ok(!Workflow.safeParse(withSandbox({ network: 'internet' })).success);
});
