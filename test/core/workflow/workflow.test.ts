import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILTIN_WORKFLOWS,
  builtinWorkflow,
  defaultWorkflow,
  loadWorkflow,
  loadWorkflowText,
} from '../../../core/workflow/load';
import { DEFAULT_PROTECTED, Workflow, externalJudge, outcomeCommand } from '../../../core/schema/workflow';
import { checkWorkflow } from '../../../core/workflow/wellformed';
import { defaultWorkflowJson } from '../../support/workflow-json';

const base = defaultWorkflowJson;
const codes = (value: unknown) => loadWorkflow(value).problems.map((p) => p.code);

test('the default coding workflow is well-formed and has the documented shape', () => {
  const wf = defaultWorkflow();
  assert.deepEqual(
    wf.stages.map((s) => s.id),
    ['explore', 'edit', 'verify'],
  );
  assert.equal(wf.start, 'explore');
  assert.deepEqual(wf.terminal, ['verify']);
  assert.deepEqual(wf.transitions, { explore: ['edit'], edit: ['verify'], verify: ['edit'] });
  assert.deepEqual(loadWorkflow(base()).problems, []);
});

test('each well-formedness problem is found and named', () => {
  const unknownTool = base();
  unknownTool.stages[0]!.tools.push('teleport');
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
  assert.deepEqual(
    load.problems.map((p) => p.code),
    ['workflow.dead_end'],
  );

  const noSubmit = base();
  noSubmit.stages[2]!.tools = noSubmit.stages[2]!.tools.filter((t) => t !== 'submit');
  assert.deepEqual(codes(noSubmit), ['workflow.terminal_without_submit']);

  const noEnter = base();
  noEnter.stages[0]!.tools = ['read_file'];
  assert.deepEqual(codes(noEnter), ['workflow.no_enter_stage']);

  const regex = base();
  regex.policy.commands.deny.push('^rm .*$');
  assert.deepEqual(codes(regex), ['workflow.pattern_looks_like_regex']);

  const dup = base();
  dup.stages.push({ ...dup.stages[0]! });
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
  // The sandbox section's own problems (what the outcome check reads is the next test's).
  const codes = (value: unknown) =>
    loadWorkflow(value)
      .problems.map((p) => p.code)
      .filter((c) => c !== 'workflow.outcome_unprotected');
  assert.deepEqual(codes(withSandbox({ protected: ['test', 'package.json', 'src/fixtures'] })), []);
  for (const p of ['../outside', '/etc', './test', 'test/', '.'])
    assert.deepEqual(codes(withSandbox({ protected: [p] })), ['workflow.bad_protected_path'], p);
  assert.deepEqual(codes(withSandbox({ writable: ['~'] })), ['workflow.sandbox_undone']);
  assert.deepEqual(codes(withSandbox({ writable: ['/'] })), ['workflow.sandbox_undone']);
  assert.deepEqual(codes(withSandbox({ readable: ['~/'] })), ['workflow.sandbox_undone']);
  assert.deepEqual(codes(withSandbox({ writable: ['~/.cache/npm'], readable: ['~/.gitconfig'] })), []);
  // Host paths are absolute or under home; anything else is a schema error, but for writable, where a
  // workspace path grants what runs later (a hooks folder), written in its normal form.
  assert.ok(!Workflow.safeParse(withSandbox({ readable: ['relative/path'] })).success);
  assert.deepEqual(codes(withSandbox({ writable: ['.husky', 'scripts/hook.sh'] })), []);
  for (const p of ['./.husky', '.husky/', '../x', '.'])
    assert.deepEqual(codes(withSandbox({ writable: [p] })), ['workflow.bad_protected_path'], p);
  assert.ok(!Workflow.safeParse(withSandbox({ network: 'internet' })).success);
});

test('lar workflow check warns when the outcome check reads what the run can change', () => {
  const problems = (outcome: string, sandbox?: Record<string, unknown>, deny: string[] = []) =>
    checkWorkflow(
      Workflow.parse({
        ...base(),
        outcome: { command: outcome },
        ...(sandbox ? { sandbox } : {}),
        policy: { paths: { deny } },
      }),
    ).filter((p) => p.code === 'workflow.outcome_unprotected');
  const says = (outcome: string, sandbox: Record<string, unknown> | undefined, what: RegExp, deny: string[] = []) => {
    const p = problems(outcome, sandbox, deny);
    assert.ok(
      p.length > 0 && p.every((x) => x.severity === 'warning' && x.path.join('.') === 'outcome.command'),
      `${outcome}: ${JSON.stringify(p)}`,
    );
    assert.match(p.map((x) => x.message).join('\n'), what, outcome);
  };
  // The files the command names, and what its runner reads first.
  says('node test.js', {}, /reads test\.js \(the command names it\)/);
  says('./run-tests.sh', { protected: ['test'] }, /run-tests\.sh/);
  says('npm test', { protected: ['test'] }, /reads package\.json \(npm reads it before/);
  says('make test', { protected: ['test'] }, /Makefile/);
  says(
    'python -m pytest tests/unit',
    { protected: ['tests'] },
    /pytest\.ini, pyproject\.toml, setup\.cfg, tox\.ini, conftest\.py/,
  );
  says('npm test', { protected: ['package.json'] }, /no test folder is protected/);
  // Kept read-only, or denied to writes (deny patterns bind commands too): nothing to say.
  assert.deepEqual(problems('npm test', undefined), [], 'the default protected set');
  assert.deepEqual(problems('node test/run.js', { protected: ['test'] }), []);
  assert.deepEqual(problems('bash scripts/check.sh', { protected: ['test'] }, ['scripts/*']), []);
  assert.deepEqual(problems('cargo test', { protected: ['tests', 'Cargo.toml'] }), []);
});

test('a sandbox section without a protected key keeps the default protected set; "protected": [] protects nothing more', () => {
  const wf = (sandbox?: Record<string, unknown>) =>
    Workflow.parse({ ...base(), ...(sandbox === undefined ? { sandbox: undefined } : { sandbox }) });
  const { sandbox: _drop, ...noSection } = base();
  assert.deepEqual(Workflow.parse(noSection).sandbox.protected, [...DEFAULT_PROTECTED]);
  for (const section of [{}, { network: 'host' }, { limits: { tasks: 100 } }, { required: true }])
    assert.deepEqual(wf(section).sandbox.protected, [...DEFAULT_PROTECTED], JSON.stringify(section));
  assert.deepEqual(wf({ protected: [] }).sandbox.protected, []);
  // Each workflow its own array: changing one changes no other.
  const a = Workflow.parse(noSection);
  a.sandbox.protected.push('x');
  assert.deepEqual(Workflow.parse(noSection).sandbox.protected, [...DEFAULT_PROTECTED]);
});

test('the outcome check warning sees through wrappers, cd and launchers, and names the right files', () => {
  const messages = (outcome: string, protectedPaths: string[]) =>
    checkWorkflow(Workflow.parse({ ...base(), outcome: { command: outcome }, sandbox: { protected: protectedPaths } }))
      .filter((p) => p.code === 'workflow.outcome_unprotected')
      .map((p) => p.message)
      .join('\n');
  assert.match(messages('timeout 600 npm test', ['test']), /reads package\.json/);
  assert.match(messages('cd app && npm test', ['app/test']), /reads app\/package\.json/);
  assert.match(messages('npm --prefix app test', ['app/test']), /reads app\/package\.json/);
  assert.match(messages('uv run pytest', ['tests']), /reads pytest\.ini, .* \(pytest reads them before/);
  assert.match(messages('sh -c "npm test"', ['test']), /reads package\.json/);
  assert.match(messages('node --test', []), /no test folder is protected/);
  assert.doesNotMatch(messages('go test ./...', ['tests', 'go.mod']), /\.\.\./);
});

test('an outcome judged outside the run is a workflow outcome; a mixed or empty one is refused', () => {
  const external = base() as unknown as Record<string, unknown>;
  external.outcome = { external: "Harbor's verifier" };
  const exits = external.stages as { exit?: unknown[] }[];
  exits[2]!.exit = [{ kind: 'command_ran', pattern: '*' }];
  const load = loadWorkflow(external);
  assert.equal(load.ok, true, JSON.stringify(load.problems));
  assert.ok(load.ok && outcomeCommand(load.workflow) === undefined);
  assert.ok(load.ok && externalJudge(load.workflow) === "Harbor's verifier");

  for (const outcome of [{ external: '  ' }, { external: 'x', command: 'npm test' }, {}]) {
    const bad = { ...external, outcome };
    assert.deepEqual(codes(bad), ['workflow.schema'], JSON.stringify(outcome));
  }
  // The command form is unchanged: its defaults still apply.
  const command = Workflow.parse(base());
  assert.deepEqual(outcomeCommand(command), { command: 'npm test', expectExitCode: 0, timeoutMs: 600000 });
});

test('an outcome_ran exit in a workflow judged outside the run is an error: nothing can meet it', () => {
  const external = base() as unknown as Record<string, unknown>;
  external.outcome = { external: "Harbor's verifier" };
  const load = loadWorkflow(external);
  assert.equal(load.ok, false);
  assert.deepEqual(
    load.problems.map((p) => [p.code, p.path.join('.')]),
    [['workflow.outcome_ran_external', 'stages.2.exit.0.kind']],
  );
  assert.match(load.problems[0]!.message, /Harbor's verifier/);
});

test('the terminal-task workflow is well-formed, judged by Harbor after the run, and protects no test path', () => {
  const load = loadWorkflow(BUILTIN_WORKFLOWS['terminal-task']);
  assert.ok(load.ok, JSON.stringify(load.problems));
  assert.deepEqual(load.problems, []);
  const wf = builtinWorkflow('terminal-task');
  assert.deepEqual(
    wf.stages.map((s) => s.id),
    ['explore', 'work', 'verify'],
  );
  assert.deepEqual(wf.transitions, { explore: ['work'], work: ['verify'], verify: ['work'] });
  assert.deepEqual(wf.terminal, ['verify']);
  assert.equal(externalJudge(wf), "Harbor's verifier");
  // Harbor copies /tests in only after the agent; the container decides the network.
  assert.deepEqual(wf.sandbox.protected, []);
  assert.equal(wf.sandbox.network, 'host');
  // The same commands are never run as in the default workflow.
  assert.deepEqual(wf.policy.commands.deny, defaultWorkflow().policy.commands.deny);
  const tools = new Set(wf.stages.flatMap((s) => s.tools));
  for (const t of [
    'read_file',
    'list_files',
    'search',
    'run_command',
    'write_file',
    'edit_file',
    'enter_stage',
    'submit',
  ])
    assert.ok(tools.has(t), t);
  assert.throws(() => builtinWorkflow('constructor'), /there is no builtin workflow "constructor"/);
});
