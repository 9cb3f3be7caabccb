import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { LspClient, root } from '../support/lsp-client';
import { generateTrajectory } from '../../bench/generate';
import { fakeToolchain } from '../support/fake-toolchain';
import { defaultWorkflowJson, type WorkflowJson } from '../support/workflow-json';

const fixturePath = resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl');
const fixture = readFileSync(fixturePath, 'utf8');
const uri = (name: string) => pathToFileURL(resolve(root, 'test-fixtures/trajectories', name)).toString();
const at = (d: Diagnostic) =>
  `${d.range.start.line}:${d.range.start.character}-${d.range.end.line}:${d.range.end.character}`;
const msg = (d: Diagnostic) => (typeof d.message === 'string' ? d.message : d.message.value);
const byCode = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);

let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client.stop();
});

test('open: one diagnostic per failed check, ranged to the value at fault, with check id and backend', async () => {
  const { diagnostics } = await client.open(uri('open.lar.jsonl'), fixture);
  const permitted = byCode(diagnostics, 'tool.permitted');
  assert.equal(permitted.length, 1);
  const line5 = fixture.split('\n')[5]!;
  assert.equal(
    at(permitted[0]!),
    `5:${line5.indexOf('"write_file"')}-5:${line5.indexOf('"write_file"') + '"write_file"'.length}`,
  );
  assert.equal(permitted[0]!.severity, 2); // Warning: the run passed, so its steps' errors are history
  assert.equal(permitted[0]!.source, 'lar (builtin)');
  assert.match(msg(permitted[0]!), /write_file is not permitted in stage "explore"/);
  // The blocked call is listed once: "it did not succeed" only restates that it was blocked (the reward is the same).
  assert.equal(byCode(diagnostics, 'tool.succeeded').length, 0);
  // Every visit scored +1: no stage summary in the Problems panel (code lenses show them).
  assert.equal(byCode(diagnostics, 'stage.summary').length, 0);
  // The outcome summary is Information.
  const outcome = byCode(diagnostics, 'outcome.summary');
  assert.equal(outcome.length, 1);
  assert.equal(outcome[0]!.range.start.line, 11);
  assert.equal(outcome[0]!.severity, 3);
  assert.match(msg(outcome[0]!), /^outcome 1 · return 1\.694/);
});

test('a run judged outside: the outcome summary says it is pending and who judges, with the running return', async () => {
  const text = readFileSync(resolve(root, 'test-fixtures/conformance/089-outcome-judged-outside.lar.jsonl'), 'utf8');
  const { diagnostics } = await client.open(uri('judged.lar.jsonl'), text);
  const outcome = byCode(diagnostics, 'outcome.summary');
  assert.equal(outcome.length, 1);
  assert.match(
    msg(outcome[0]!),
    /^outcome pending \(judged by Harbor's verifier\) · return 0\.700 = 0\.5·1\.000 \+ 0\.25·0\.800$/,
  );
});

test("a Harbor trial's trajectory shows Harbor's verifier reward as its outcome, only under the job's workflow", async () => {
  const cmd = (id: string, command: string) =>
    JSON.stringify({
      type: 'tool_call',
      id,
      tool: 'run_command',
      args: { command },
      status: 'ok',
      result: { exitCode: 0, completion: 'marker', output: '' },
    });
  const stage = (id: string, to: string) =>
    JSON.stringify({ type: 'tool_call', id, tool: 'enter_stage', args: { stage: to }, status: 'ok' });
  const header = (workflow: unknown) =>
    JSON.stringify({ lar: 1, type: 'header', task: 't', workflow, started: '2026-12-03T00:00:00Z' });
  const steps = [cmd('a', 'ls'), stage('b', 'work'), cmd('c', 'make'), stage('d', 'verify'), cmd('e', 'make test')];
  const tail = [
    JSON.stringify({ type: 'tool_call', id: 'f', tool: 'submit', args: {}, status: 'ok' }),
    '{"type":"end","reason":"submitted"}',
  ];
  const text = [header('builtin:terminal-task'), ...steps, ...tail].join('\n') + '\n';
  const trialWith = (result: object): string => {
    const trial = mkdtempSync(join(tmpdir(), 'lar-trial-'));
    mkdirSync(join(trial, 'agent'));
    writeFileSync(join(trial, 'result.json'), JSON.stringify(result));
    writeFileSync(join(trial, 'config.json'), JSON.stringify({ agent: { name: 'lar_harbor:LarAgent', kwargs: {} } }));
    return join(trial, 'agent', 'lar.lar.jsonl');
  };
  const result = {
    task_name: 'lean4-agentic/t',
    trial_name: 't__abc',
    reward_valid: true,
    verifier_result: { rewards: { reward: 1 } },
  };
  const outcomeOf = async (file: string, body: string): Promise<string> =>
    msg(byCode((await client.open(pathToFileURL(file).toString(), body)).diagnostics, 'outcome.summary')[0]!);
  // All 6 calls +1, the three visits +1: R = 1 + 0.5 + 0.25.
  assert.match(await outcomeOf(trialWith(result), text), /^outcome 1 \(judged by Harbor's verifier\) · return 1\.750/);
  // A reward Harbor does not count leaves the outcome pending.
  assert.match(await outcomeOf(trialWith({ ...result, reward_valid: false }), text), /^outcome pending/);
  // A header that names another workflow than the job gave (the run wrote its header) gets no reward joined.
  const lax = readFileSync(resolve(root, 'test-fixtures/conformance/089-outcome-judged-outside.lar.jsonl'), 'utf8');
  assert.match(await outcomeOf(trialWith(result), lax), /^outcome pending/);
});

test('an edit in the middle re-verifies from there on: later verdicts change, earlier ones stay', async () => {
  const u = uri('edit.lar.jsonl');
  const first = await client.open(u, fixture);
  const lines = fixture.trimEnd().split('\n');
  // Line 7 (0-based 6) becomes an illegal jump straight to verify.
  lines[6] = lines[6]!.replace('"stage":"edit"', '"stage":"verify"');
  const text = lines.join('\n') + '\n';
  const second = await client.next(u, () =>
    client.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri: u, version: 2 },
      contentChanges: [{ text }],
    }),
  );
  const before6 = (ds: Diagnostic[]) => ds.filter((d) => d.range.start.line < 6);
  assert.deepEqual(before6(second.diagnostics), before6(first.diagnostics));
  // The jump is a violation, and, executed, it moved the run: the later calls are judged in "verify".
  const transition = byCode(second.diagnostics, 'tool.transition');
  assert.equal(transition[0]!.range.start.line, 6);
  assert.ok(
    byCode(second.diagnostics, 'tool.permitted').some((d) => d.range.start.line === 7),
    'edit_file is not permitted in verify',
  );
  // The visit it left scored -1: its summary is Information, next to the failed stage check (a Warning only
  // because the run still passed its outcome; trajectory-model.test.ts has the same steps in a failed run).
  const summary = byCode(second.diagnostics, 'stage.summary').find((d) => d.range.start.line === 6)!;
  assert.match(msg(summary), /stage "explore" \(visit 1\): reward -1, 5\/30 steps/);
  assert.equal(summary.severity, 3);
  assert.equal(byCode(second.diagnostics, 'stage.transition').find((d) => d.range.start.line === 6)!.severity, 2);
  assert.match(msg(transition[0]!), /"explore" → "verify" is not a legal transition/);
  assert.equal(text.slice(0, 0), '');
  assert.equal(second.version, 2);
});

test('malformed lines get a diagnostic at their position and the rest is still verified', async () => {
  const lines = fixture.trimEnd().split('\n');
  lines[3] = '{"type":"tool_call","tool":"read_file" "args":{}}';
  const { diagnostics } = await client.open(uri('malformed.lar.jsonl'), lines.join('\n'));
  const bad = byCode(diagnostics, 'trajectory.malformed');
  assert.equal(bad.length, 1);
  assert.equal(bad[0]!.range.start.line, 3);
  assert.equal(bad[0]!.range.start.character, 39);
  assert.match(msg(bad[0]!), /expected ',' or '}'/);
  assert.equal(byCode(diagnostics, 'tool.permitted')[0]!.range.start.line, 5);
});

test('a live run: lar/appendStep adds lines, lar/checkToolCall gates the next call, lar/rewards reports per line', async () => {
  const u = uri('live-run.lar.jsonl');
  const lines = fixture.trimEnd().split('\n');
  for (let i = 0; i < 5; i++) {
    await client.next(u, () =>
      client.connection.sendNotification('lar/appendStep', { uri: u, text: lines[i]!, line: i + 1 }),
    );
  }
  const blocked = await client.connection.sendRequest<{
    decision: string;
    reason: string;
    stage: string;
    backend: { backend: string };
  }>('lar/checkToolCall', { uri: u, call: { tool: 'write_file', args: { path: 'src/sum.js', content: '' } } });
  assert.equal(blocked.decision, 'block');
  assert.match(blocked.reason, /not permitted in stage "explore"/);
  assert.equal(blocked.stage, 'explore');
  assert.equal(blocked.backend.backend, 'builtin');
  const ask = await client.connection.sendRequest<{ decision: string }>('lar/checkToolCall', {
    uri: u,
    call: { tool: 'run_command', args: { command: 'git push origin main' } },
  });
  assert.equal(ask.decision, 'ask');

  const published = await client.next(u, () =>
    client.connection.sendNotification('lar/appendStep', { uri: u, text: lines[5]!, line: 6 }),
  );
  assert.equal(byCode(published.diagnostics, 'tool.permitted')[0]!.range.start.line, 5);
  const rewards = client.notifications
    .filter((n) => n.method === 'lar/rewards' && (n.params as { uri: string }).uri === u)
    .at(-1)!.params as {
    full: boolean;
    lineCount: number;
    lines: { line: number; toolReward: number; failed: string[] }[];
  };
  assert.equal(rewards.full, false);
  assert.equal(rewards.lineCount, 6);
  assert.deepEqual(rewards.lines, [
    {
      line: 5,
      kind: 'step',
      step: 4,
      tool: 'write_file',
      stage: 'explore',
      toolReward: -1,
      failed: ['tool.permitted', 'tool.succeeded'],
      status: 'blocked',
    },
  ]);

  // A line out of step is not appended blindly.
  const ds = await client.next(u, () =>
    client.connection
      .sendNotification('lar/appendStep', { uri: u, text: lines[7]!, line: 9 })
      .then(() => client.connection.sendNotification('lar/appendStep', { uri: u, text: lines[6]!, line: 7 })),
  );
  assert.equal(ds.diagnostics.filter((d) => d.range.start.line >= 7).length, 0, 'the out-of-step line 9 was not taken');
});

test('a workflow document: every well-formedness problem is a diagnostic at its place', async () => {
  const wf = defaultWorkflowJson();
  wf.stages[0]!.tools.push('teleport');
  wf.transitions.verify!.push('deploy');
  wf.policy.commands.deny.push('^rm .*$');
  const text = JSON.stringify(wf, null, 2);
  const { diagnostics } = await client.open(pathToFileURL('/tmp/x.larflow.json').toString(), text, 'lar-workflow');
  const codes = diagnostics.map((d) => d.code).sort();
  assert.deepEqual(codes, ['workflow.pattern_looks_like_regex', 'workflow.unknown_stage', 'workflow.unknown_tool']);
  const tool = diagnostics.find((d) => d.code === 'workflow.unknown_tool')!;
  const lineText = text.split('\n')[tool.range.start.line]!;
  assert.equal(lineText.slice(tool.range.start.character, tool.range.end.character), '"teleport"');

  const unreachable = JSON.parse(JSON.stringify(wf)) as WorkflowJson;
  unreachable.stages[0]!.tools.pop();
  unreachable.transitions.verify!.pop();
  unreachable.policy.commands.deny.pop();
  unreachable.stages.push({ id: 'orphan', tools: ['read_file'], budget: 1 });
  const second = await client.open(
    pathToFileURL('/tmp/y.larflow.json').toString(),
    JSON.stringify(unreachable, null, 2),
    'lar-workflow',
  );
  assert.deepEqual(
    second.diagnostics.map((d) => d.code),
    ['workflow.unreachable_stage'],
  );

  const noTerminal = JSON.parse(JSON.stringify(unreachable)) as WorkflowJson;
  noTerminal.stages.pop();
  noTerminal.transitions = { explore: ['edit'], edit: ['explore'], verify: ['edit'] };
  const third = await client.open(
    pathToFileURL('/tmp/z.larflow.json').toString(),
    JSON.stringify(noTerminal, null, 2),
    'lar-workflow',
  );
  assert.ok(
    third.diagnostics.some((d) => d.code === 'workflow.no_reachable_terminal'),
    JSON.stringify(third.diagnostics.map((d) => d.code)),
  );
  assert.ok(third.diagnostics.every((d) => d.source === 'lar (builtin)'));
});

test('hover, code lenses and document symbols describe steps and stage visits', async () => {
  const u = uri('hover.lar.jsonl');
  await client.open(u, fixture);
  const hover = await client.connection.sendRequest<{ contents: { value: string } }>('textDocument/hover', {
    textDocument: { uri: u },
    position: { line: 5, character: 3 },
  });
  assert.match(hover.contents.value, /\*\*Step 4\*\* · `write_file` · tool reward \*\*-1\*\*/);
  assert.match(hover.contents.value, /\| ✗ \| `tool.permitted` \|/);
  assert.match(hover.contents.value, /\| ✓ \| `tool.known` \|/);
  assert.match(hover.contents.value, /stage `explore` \(visit 1\) · stage reward \+1/);
  assert.match(hover.contents.value, /running return/);
  assert.match(hover.contents.value, /_lar \(builtin\)/);
  const lenses = await client.connection.sendRequest<
    { range: { start: { line: number } }; command: { title: string } }[]
  >('textDocument/codeLens', { textDocument: { uri: u } });
  assert.deepEqual(
    lenses.map((l) => [l.range.start.line, l.command.title]),
    [
      [0, 'explore · reward +1 · 5/30 steps'],
      [6, 'edit · reward +1 · 2/40 steps'],
      [8, 'verify · reward +1 · 2/20 steps'],
    ],
  );
  const symbols = await client.connection.sendRequest<{ name: string; children: { name: string }[] }[]>(
    'textDocument/documentSymbol',
    { textDocument: { uri: u } },
  );
  assert.deepEqual(
    symbols.map((s) => s.name),
    ['explore', 'edit', 'verify'],
  );
  assert.deepEqual(
    symbols[0]!.children.map((c) => c.name),
    ['1. list_files', '2. read_file', '3. read_file', '4. write_file', '5. enter_stage'],
  );
});

test('a 10k-step trajectory is verified whole, and an append judges only the new line', async () => {
  const text = generateTrajectory(10_000);
  const lines = text.trimEnd().split('\n');
  const u = uri('big.lar.jsonl');
  const { diagnostics } = await client.open(u, lines.slice(0, -1).join('\n') + '\n');
  assert.ok(diagnostics.length > 1000, `${diagnostics.length} diagnostics`);
  const next = await client.next(u, () =>
    client.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri: u, version: 2 },
      contentChanges: [
        {
          range: { start: { line: lines.length - 1, character: 0 }, end: { line: lines.length - 1, character: 0 } },
          text: lines.at(-1)! + '\n',
        },
      ],
    }),
  );
  assert.equal(byCode(next.diagnostics, 'outcome.summary').length, 1);
  const rewards = client.notifications
    .filter((n) => n.method === 'lar/rewards' && (n.params as { uri: string }).uri === u)
    .at(-1)!.params as { full: boolean; lines: unknown[] };
  assert.equal(rewards.full, false);
  assert.equal(rewards.lines.length, 1);
});

test('lar lsp --stdio is the same server for other editors', async () => {
  const other = await LspClient.start([resolve(root, 'dist/lar.js'), 'lsp', '--stdio']);
  try {
    const { diagnostics } = await other.open(uri('stdio.lar.jsonl'), fixture);
    assert.equal(byCode(diagnostics, 'tool.permitted').length, 1);
  } finally {
    await other.stop();
  }
});

test(
  'with a Lean toolchain the Lean checker decides, and every diagnostic says so',
  { skip: process.platform === 'win32' && 'POSIX shell scripts' },
  async () => {
    // No Lean can be installed here: a stand-in toolchain whose "lar-verify" speaks
    // the real protocol (backed by the builtin verifier) exercises the server's Lean path.
    const { bin } = fakeToolchain();
    const cache = mkdtempSync(join(tmpdir(), 'lar-cache-'));
    const lean = await LspClient.start(
      undefined,
      { backend: 'auto' },
      { ...process.env, LAR_LEAN_PATH: bin, XDG_CACHE_HOME: cache },
    );
    try {
      const u = uri('lean.lar.jsonl');
      await lean.open(u, fixture);
      // The builtin verdicts come at once; the Lean checker's replace them after a short pause.
      let published = await lean.nthDiagnostics(u, 2);
      for (let n = 3; published.diagnostics.some((d) => d.source !== 'lar (lean)') && n < 10; n++)
        published = await lean.nthDiagnostics(u, n);
      assert.ok(published.diagnostics.length > 0);
      assert.ok(
        published.diagnostics.every((d) => d.source === 'lar (lean)'),
        JSON.stringify(published.diagnostics.map((d) => d.source)),
      );
      assert.equal(byCode(published.diagnostics, 'tool.permitted')[0]!.range.start.line, 5);
      const rewards = lean.notifications.at(-1)!.params as { backend: { backend: string; reason: string } };
      assert.equal(rewards.backend.backend, 'lean');
      assert.match(rewards.backend.reason, /^Lean 4\.34\.1 at /);
    } finally {
      await lean.stop();
    }
  },
);

test('lar/backend names the backend once chosen; lar/verify verifies again; an empty leanPath is no path', async () => {
  const c = await LspClient.start(
    undefined,
    { backend: 'auto', leanPath: '', workflowSchemaByClient: true },
    { ...process.env, PATH: '/usr/bin:/bin', HOME: mkdtempSync(join(tmpdir(), 'lar-home-')) },
  );
  try {
    const u = uri('verify-again.lar.jsonl');
    await c.open(u, fixture);
    for (let i = 0; i < 100 && !c.notifications.some((n) => n.method === 'lar/backend'); i++)
      await new Promise((r) => setTimeout(r, 50));
    const backend = c.notifications.find((n) => n.method === 'lar/backend')!.params as {
      backend: string;
      reason: string;
    };
    assert.equal(backend.backend, 'builtin');
    assert.match(backend.reason, /No Lean toolchain found/);
    assert.doesNotMatch(backend.reason, /setting \(.*verify-again/, 'the empty leanPath was not taken for a folder');
    const result = await c.connection.sendRequest<{
      summary: { return: number; outcome: number; steps: number };
      fatal: null;
    }>('lar/verify', { uri: u });
    assert.deepEqual(
      { ...result.summary, return: Number(result.summary.return.toFixed(3)) },
      { return: 1.694, outcome: 1, steps: 9 },
    );
    assert.equal(result.fatal, null);
    await assert.rejects(c.connection.sendRequest('lar/verify', { nope: 1 }));
    // Schema errors of workflow files are left to the client's JSON validation when it says so.
    const { diagnostics } = await c.open(
      pathToFileURL('/tmp/schema.larflow.json').toString(),
      '{"lar": 1, "id": "x", "stages": []}',
      'lar-workflow',
    );
    assert.deepEqual(diagnostics, []);
  } finally {
    await c.stop();
  }
});

test('a live run open in the editor: the gate sees an appended step before the editor reloads the file', async () => {
  const u = uri('open-live.lar.jsonl');
  const lines = fixture.trimEnd().split('\n');
  await client.open(u, lines.slice(0, 6).join('\n') + '\n');
  await client.next(u, () =>
    client.connection.sendNotification('lar/appendStep', { uri: u, text: lines[6]!, line: 7 }),
  );
  const gate = await client.connection.sendRequest<{ decision: string; stage: string }>('lar/checkToolCall', {
    uri: u,
    call: { tool: 'edit_file', args: { path: 'src/sum.js', search: 'a - b', replace: 'a + b' } },
  });
  assert.equal(gate.stage, 'edit', 'the enter_stage just appended has moved the run');
  assert.equal(gate.decision, 'allow');
  // The editor reloads the file from disk: same text, nothing changes.
  const reloaded = await client.next(u, () =>
    client.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri: u, version: 2 },
      contentChanges: [{ text: lines.slice(0, 7).join('\n') + '\n' }],
    }),
  );
  assert.equal(reloaded.version, 2);
  assert.equal(byCode(reloaded.diagnostics, 'tool.permitted').length, 1);
});

test('Problems: when a new run begins, an earlier run leaves the panel unless its trajectory is open (or every run is asked for)', async () => {
  const lines = fixture.trimEnd().split('\n');
  const feed = async (c: LspClient, u: string, n: number) => {
    for (let i = 0; i < n; i++)
      await c.next(u, () => c.connection.sendNotification('lar/appendStep', { uri: u, text: lines[i]!, line: i + 1 }));
  };
  const first = uri('problems-first.lar.jsonl');
  const opened = uri('problems-opened.lar.jsonl');
  const second = uri('problems-second.lar.jsonl');
  await feed(client, first, 6);
  const before = client.published(first);
  assert.ok((await client.nthDiagnostics(first, before)).diagnostics.length > 0, 'the live run has its problems');
  await client.open(opened, fixture);
  await feed(client, second, 1);
  assert.deepEqual(
    (await client.nthDiagnostics(first, before + 1)).diagnostics,
    [],
    'the earlier run is cleared when the next begins',
  );
  const kept = await client.nthDiagnostics(opened, client.published(opened));
  assert.ok(kept.diagnostics.length > 0, 'an open trajectory keeps its problems');
  const all = await LspClient.start(undefined, { backend: 'builtin', problems: 'all' });
  try {
    await feed(all, first, 6);
    const n = all.published(first);
    await feed(all, second, 1);
    // Notifications are handled in order: a clearing of the first run would have come before the second's diagnostics.
    assert.equal(all.published(first), n, 'problems: all keeps every run');
    assert.ok((await all.nthDiagnostics(first, n)).diagnostics.length > 0);
  } finally {
    await all.stop();
  }
});
