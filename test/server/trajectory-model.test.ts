import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../support/fc';
import { TrajectoryModel } from '../../server/trajectory-model';
import { events } from '../support/arbitrary';
import { generateTrajectory } from '../../bench/generate';
import { textOf } from '../../testkit/text';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../devtools/paths';

const header = JSON.stringify({
  lar: 1,
  type: 'header',
  task: 't',
  workflow: 'builtin:default-coding',
  started: '2026-11-30T00:00:00Z',
});

function snapshot(m: TrajectoryModel) {
  return { lines: m.lines.map((l) => ({ text: l.text, kind: l.parsed.kind, result: l.result })), summary: m.summary() };
}

test('incremental updates give exactly what a fresh verification gives', () => {
  const edit = fc.oneof(
    fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), line: fc.string({ maxLength: 4 }) }),
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), event: events.map((e) => e[0]) }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('append' as const), event: events.map((e) => e[0]) }),
    // An editor's text growing at its end (a live run's file reloaded), with or without a final newline.
    fc.record({
      kind: fc.constant('extend' as const),
      more: events,
      newline: fc.boolean(),
      tail: fc.constantFrom('', '\r', '\n', '\r\n', '\n\n', '\n\r'),
    }),
  );
  fc.assert(
    fc.property(events, fc.array(edit, { maxLength: 6 }), (list, edits) => {
      const lines = [header, ...list.map((e) => JSON.stringify(e))];
      const model = new TrajectoryModel();
      model.setText(lines.join('\n'));
      for (const e of edits) {
        const i = 'at' in e ? 1 + (e.at % Math.max(1, lines.length)) : lines.length;
        if (e.kind === 'replace') lines[Math.min(i, lines.length - 1)] = e.line;
        if (e.kind === 'insert' && e.event) lines.splice(i, 0, JSON.stringify(e.event));
        if (e.kind === 'delete' && lines.length > 1) lines.splice(Math.min(i, lines.length - 1), 1);
        if (e.kind === 'append' && e.event) {
          // Appending writes after the text's last line, as a run appends to a
          // file: a final newline ends the last line, it does not start a new one,
          // and an empty text has no lines at all.
          if (lines.join('\n') === '') lines.length = 0;
          else if (lines.length > 1 && lines.at(-1) === '') lines.pop();
          lines.push(JSON.stringify(e.event));
          model.append(lines.at(-1)!);
          continue;
        }
        if (e.kind === 'extend') {
          if (lines.length > 1 && lines.at(-1) === '') lines.pop();
          model.setText(lines.join('\n') + '\n');
          // Whatever ends the added text (stray \r, blank lines), the lines are those of the whole text.
          const odd = lines.join('\n') + '\n' + e.more.map((x) => JSON.stringify(x)).join('\n') + e.tail;
          model.setText(odd);
          const fromScratch = new TrajectoryModel();
          fromScratch.setText(odd);
          assert.deepEqual(snapshot(model), snapshot(fromScratch));
          model.setText(lines.join('\n') + '\n');
          lines.push(...e.more.map((x) => JSON.stringify(x)));
          // The final newline is kept as an empty last entry, so that `lines` is
          // always the model's text split at '\n' (text "\n" is one empty line, "" none).
          if (e.newline) lines.push('');
          model.setText(lines.join('\n'));
          continue;
        }
        model.setText(lines.join('\n'));
      }
      const fresh = new TrajectoryModel();
      fresh.setText(lines.join('\n'));
      assert.deepEqual(snapshot(model), snapshot(fresh));
    }),
    { numRuns: 300 },
  );
});

test('an edit at line N of a long run re-verifies from the checkpoint before N, an append only the new line', () => {
  const lines = generateTrajectory(10_000).trimEnd().split('\n');
  const model = new TrajectoryModel();
  model.setText(lines.join('\n'));
  assert.equal(model.lastUpdate.verified, lines.length);
  const changed = [...lines];
  changed[7000] = changed[7000]!.replace('"ok"', '"error"');
  model.setText(changed.join('\n'));
  assert.equal(model.lastUpdate.from, 7000);
  assert.equal(model.lastUpdate.verified, lines.length - 7000);
  model.append(JSON.stringify({ type: 'message', role: 'assistant', content: 'done' }));
  assert.deepEqual(model.lastUpdate, { from: lines.length, verified: 1 });
  model.setText([...changed, JSON.stringify({ type: 'message', role: 'assistant', content: 'done' })].join('\n'));
  assert.equal(model.lastUpdate.verified, 0, 'the same text again verifies nothing');
});

test('a header change re-resolves the workflow and verifies everything', () => {
  const model = new TrajectoryModel();
  const call = JSON.stringify({
    type: 'tool_call',
    tool: 'write_file',
    args: { path: 'a', content: '' },
    status: 'ok',
  });
  model.setText([header, call].join('\n'));
  assert.equal(model.lines[1]!.result!.toolReward, -1);
  const inline = JSON.parse(header) as Record<string, unknown>;
  inline.workflow = {
    lar: 1,
    id: 'w',
    stages: [{ id: 's', tools: ['write_file', 'submit'], budget: 5 }],
    transitions: {},
    start: 's',
    terminal: ['s'],
    outcome: { command: 'true' },
  };
  model.setText([JSON.stringify(inline), call].join('\n'));
  assert.equal(model.lastUpdate.from, 0);
  assert.equal(model.lines[1]!.result!.toolReward, 1);
  assert.equal(model.context.workflow?.id, 'w');
});

test('a stopped run says how it stopped: the end reason, and lenses and outline no longer say "in progress"', async () => {
  const { codeLenses, documentSymbols } = await import('../../server/presentation.js');
  const m = new TrajectoryModel();
  const call = JSON.stringify({
    type: 'tool_call',
    id: 'c1',
    tool: 'read_file',
    args: { path: 'a' },
    status: 'ok',
    result: {},
  });
  m.setText([header, call].join('\n'));
  assert.equal(m.endReason, undefined);
  assert.match(codeLenses(m)[0]!.command!.title, /in progress/);
  m.setText([header, call, JSON.stringify({ type: 'end', reason: 'interrupted', detail: 'reload' })].join('\n'));
  assert.equal(m.endReason, 'interrupted');
  assert.match(codeLenses(m)[0]!.command!.title, /^explore · interrupted · reward /);
  assert.match(documentSymbols(m)[0]!.detail ?? '', /\(interrupted\)/);
});

test('the Problems panel lists a blocked call once, and a run that never made a call has no stage to score', async () => {
  const { lineDiagnostics, runDiagnostics } = await import('../../server/diagnostics.js');
  const m = new TrajectoryModel();
  const blocked = JSON.stringify({
    type: 'tool_call',
    id: 'c1',
    tool: 'write_file',
    args: { path: 'a', content: 'x' },
    status: 'blocked',
    result: {},
  });
  m.setText([header, blocked].join('\n'));
  const codes = lineDiagnostics(m.lines[1]!, 1, 'lar (builtin)').map((d) => d.code);
  assert.deepEqual(codes, ['tool.permitted'], 'the blocked call: its reason, not also "it did not run"');
  const empty = new TrajectoryModel();
  empty.setText(
    [
      header,
      JSON.stringify({ type: 'message', role: 'user', content: 't' }),
      JSON.stringify({ type: 'end', reason: 'error', detail: 'cannot reach the inference server' }),
    ].join('\n'),
  );
  const d = runDiagnostics(empty, 'lar (builtin)');
  assert.deepEqual(
    d.map((x) => x.code),
    ['run.no_steps', 'outcome.summary'],
  );
  assert.match(textOf(d[0]!.message), /the run ended before any tool call: cannot reach the inference server/);
});

test('a step taken after a checkpoint has a "Restore to before step N" lens that names the checkpoint, the step and the run', async () => {
  const { codeLenses, RESTORE_COMMAND } = await import('../../server/presentation.js');
  const m = new TrajectoryModel();
  const commit = 'a'.repeat(40);
  const read = JSON.stringify({
    type: 'tool_call',
    id: 'c1',
    tool: 'read_file',
    args: { path: 'a' },
    status: 'ok',
    result: {},
  });
  const run = JSON.stringify({
    type: 'tool_call',
    id: 'c2',
    tool: 'run_command',
    args: { command: 'npm test' },
    status: 'ok',
    result: { exitCode: 0, completion: 'exit' },
    checkpoint: commit,
  });
  m.setText([header, read, run].join('\n'));
  const lenses = codeLenses(m, 'run-1.lar.jsonl').filter((l) => l.command?.command === RESTORE_COMMAND);
  assert.equal(lenses.length, 1, 'only the step with a checkpoint');
  assert.equal(lenses[0]!.range.start.line, 2);
  assert.equal(lenses[0]!.command!.title, '↺ Restore to before step 2');
  assert.deepEqual(lenses[0]!.command!.arguments, [{ commit, step: 2, run: 'run-1.lar.jsonl' }]);
  const { BRANCH_COMMAND } = await import('../../server/presentation.js');
  assert.deepEqual(
    codeLenses(m, 'run-1.lar.jsonl')
      .filter((l) => l.command?.command === BRANCH_COMMAND)
      .map((l) => [l.range.start.line, l.command!.title]),
    [[2, '⑂ Branch from here']],
  );
  assert.equal(
    (
      codeLenses(m, '../etc/x').find((l) => l.command?.command === RESTORE_COMMAND)!.command!.arguments![0] as {
        run?: string;
      }
    ).run,
    undefined,
    'a file name that is not a run file is not passed on',
  );
  // A bad checkpoint id makes the line malformed: no lens from it.
  m.setText([header, read, run.replace(commit, '--output=/tmp/x')].join('\n'));
  assert.equal(codeLenses(m).filter((l) => l.command?.command === RESTORE_COMMAND).length, 0);
});

test('a passed run leaves no error in Problems; the same steps in a failed run do', async () => {
  const { allDiagnostics, lineDiagnostics } = await import('../../server/diagnostics.js');
  const { DiagnosticSeverity } = await import('vscode-languageserver');
  const passed = readFileSync(join(REPO_ROOT, 'test-fixtures', 'trajectories', 'fix-failing-test.lar.jsonl'), 'utf8');
  const failed = passed.replace('"exitCode":0,"completion":"exit"', '"exitCode":1,"completion":"exit"');
  const severities = (text: string) => {
    const m = new TrajectoryModel();
    m.setText(text);
    const lineDiags = m.lines.flatMap((l, i) => lineDiagnostics(l, i, 'lar (builtin)'));
    return allDiagnostics(lineDiags, m, 'lar (builtin)')
      .filter((d) => d.code === 'tool.permitted')
      .map((d) => d.severity);
  };
  assert.deepEqual(severities(failed), [DiagnosticSeverity.Error], 'the blocked write is an error of a failed run');
  assert.deepEqual(severities(passed), [DiagnosticSeverity.Warning], 'and history, not a problem, once the run passed');
  // A line broken in the file is a problem now, passed run or not.
  const broken = passed.replace('{"type":"tool_call","id":"call_1"', '{"type":"tool_call","id":"call_1",,');
  const m = new TrajectoryModel();
  m.setText(broken);
  const all = allDiagnostics(
    m.lines.flatMap((l, i) => lineDiagnostics(l, i, 'lar (builtin)')),
    m,
    'lar (builtin)',
  );
  assert.equal(m.summary()?.outcome.reward, 1);
  assert.deepEqual(
    all.filter((d) => d.code === 'trajectory.malformed').map((d) => d.severity),
    [DiagnosticSeverity.Error],
  );
});

test('a chat turn answered without submitting puts its outcome 0 and unmet stage criteria in hints, not Problems', async () => {
  const { runDiagnostics } = await import('../../server/diagnostics.js');
  const { DiagnosticSeverity } = await import('vscode-languageserver');
  const read = JSON.stringify({ type: 'tool_call', id: 'c1', tool: 'list_files', args: { path: '.' }, status: 'ok' });
  const listed = (reason: string) => {
    const m = new TrajectoryModel();
    m.setText([header, read, JSON.stringify({ type: 'end', reason })].join('\n'));
    return runDiagnostics(m, 'lar (builtin)');
  };
  const answered = listed('answered');
  assert.ok(
    answered.some((d) => d.code === 'outcome.summary'),
    'the outcome is still there, for the hover',
  );
  assert.ok(answered.length >= 2);
  assert.deepEqual(
    answered.filter((d) => d.severity !== DiagnosticSeverity.Hint).map((d) => d.code),
    [],
  );
  // A run stopped by the user is not a chat answer: its findings stay in Problems.
  const stopped = listed('cancelled');
  assert.ok(stopped.some((d) => d.severity !== DiagnosticSeverity.Hint && d.code === 'outcome.summary'));
});
