import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LineReward, RewardsParams } from '../../../core/protocol/lsp';
import {
  briefReason,
  fileNameOf,
  mergeRewards,
  RunRegistry,
  statusView,
  withSandbox,
} from '../../../extension/trajectory/runs';

const builtin = { backend: 'builtin' as const, reason: 'no Lean toolchain found: lake is not on PATH' };
const lean = { backend: 'lean' as const, reason: 'Lean 4.21.0 at /home/u/.elan/bin/lake' };
const step = (line: number, toolReward: -1 | 0 | 1 = 1): LineReward => ({
  line,
  kind: 'step',
  step: line,
  tool: 'read_file',
  toolReward,
  failed: [],
});

function params(uri: string, over: Partial<RewardsParams> = {}): RewardsParams {
  return {
    uri,
    backend: builtin,
    full: true,
    lineCount: 4,
    lines: [{ line: 0, kind: 'header', failed: [] }, step(1), step(2), step(3)],
    stages: [],
    summary: { return: 0.75, outcome: 0, steps: 3, ended: false, finalStage: 'explore' },
    ...over,
  };
}

test('a full notification replaces what was known', () => {
  const prev = params('u', { lines: [step(1, -1), step(2, -1), step(5)], lineCount: 6 });
  const next = params('u', { lines: [step(1)], lineCount: 2 });
  assert.deepEqual(mergeRewards(prev, next).lines, [step(1)]);
});

test('a partial notification (live append) keeps the lines before the first it lists', () => {
  const prev = params('u');
  const next = params('u', { full: false, lineCount: 5, lines: [step(4, 0)] });
  const merged = mergeRewards(prev, next);
  assert.deepEqual(merged.lines, [...prev.lines, step(4, 0)]);
  assert.equal(merged.lineCount, 5);
  assert.equal(merged.summary, next.summary);
});

test('a partial notification re-scoring lines from the middle replaces them, and lines past the end go', () => {
  const prev = params('u', { lineCount: 6, lines: [step(1), step(2), step(3), step(4), step(5)] });
  const next = params('u', { full: false, lineCount: 4, lines: [step(2, -1), step(3, -1)] });
  assert.deepEqual(mergeRewards(prev, next).lines, [step(1), step(2, -1), step(3, -1)]);
  // Lines removed at the end: nothing listed, the tail goes.
  const shorter = params('u', { full: false, lineCount: 3, lines: [] });
  assert.deepEqual(mergeRewards(prev, shorter).lines, [step(1), step(2)]);
});

test('`from`: a line that lost its reward (a step turned into a message) loses its mark', () => {
  const prev = params('u');
  const next = params('u', { full: false, from: 2, lineCount: 4, lines: [step(3)] });
  assert.deepEqual(mergeRewards(prev, next).lines, [prev.lines[0], step(1), step(3)]);
  // Without `from` only the lines from the first one listed could be replaced: line 2 would keep its old mark.
  const { from: _from, ...without } = next;
  assert.deepEqual(mergeRewards(prev, without).lines, [prev.lines[0], step(1), step(2), step(3)]);
});

const visit = (v: number, stage: string, endLine?: number, reward: -1 | 0 | 1 = 1) => ({
  stage,
  visit: v,
  startLine: v * 3,
  ...(endLine !== undefined ? { endLine } : {}),
  steps: 2,
  budget: 30,
  reward,
});

test('partial stage visits replace the known ones by index; visits past the last listed go', () => {
  const prev = params('u', { stages: [visit(0, 'explore', 3), visit(1, 'edit', 6), visit(2, 'verify')] });
  // An append closed `verify` and opened `edit` again.
  const append = params('u', {
    full: false,
    lineCount: 9,
    lines: [step(8)],
    stages: [visit(2, 'verify', 8, 0), visit(3, 'edit')],
  });
  assert.deepEqual(mergeRewards(prev, append).stages, [
    visit(0, 'explore', 3),
    visit(1, 'edit', 6),
    visit(2, 'verify', 8, 0),
    visit(3, 'edit'),
  ]);
  // An edit at line 4 left only two visits: the second is open now, the third is gone.
  const edit = params('u', { full: false, lineCount: 5, lines: [step(4)], stages: [visit(1, 'edit')] });
  assert.deepEqual(mergeRewards(prev, edit).stages, [visit(0, 'explore', 3), visit(1, 'edit')]);
  // A server that lists every visit merges to exactly its list.
  const all = [visit(0, 'explore', 3, 0), visit(1, 'edit')];
  assert.deepEqual(mergeRewards(prev, params('u', { full: false, lines: [step(3)], stages: all })).stages, all);
  // Nothing listed (lines appended after the run ended): the visits stay.
  assert.deepEqual(mergeRewards(prev, params('u', { full: false, lines: [], stages: [] })).stages, prev.stages);
});

test('the current run: the most recently updated live run, else the most recently updated one', () => {
  const runs = new RunRegistry();
  assert.equal(runs.current(), undefined);
  runs.update(params('file:///a.lar.jsonl'));
  runs.update(params('file:///b.lar.jsonl', { summary: { return: 1, outcome: 1, steps: 3, ended: true } }));
  assert.equal(runs.current()?.uri, 'file:///a.lar.jsonl', 'a is live, b ended');
  runs.update(params('file:///a.lar.jsonl', { summary: { return: 1, outcome: 1, steps: 4, ended: true } }));
  assert.equal(runs.current()?.uri, 'file:///a.lar.jsonl', 'both ended: the latest update');
  runs.update(params('file:///b.lar.jsonl', { summary: { return: 1, outcome: 1, steps: 3, ended: true } }));
  assert.equal(runs.current()?.uri, 'file:///b.lar.jsonl');
  runs.forget('file:///b.lar.jsonl');
  assert.equal(runs.current()?.uri, 'file:///a.lar.jsonl');
});

test('the registry merges partial notifications per trajectory', () => {
  const runs = new RunRegistry();
  runs.update(params('u'));
  const whole = runs.update(params('u', { full: false, lineCount: 5, lines: [step(4)] }));
  assert.deepEqual(
    whole.lines.map((l) => l.line),
    [0, 1, 2, 3, 4],
  );
  assert.deepEqual(
    runs.get('u')?.lines.map((l) => l.line),
    [0, 1, 2, 3, 4],
  );
});

test('status bar: backend and return of the current run, the reason in the tooltip', () => {
  const live = statusView(params('file:///ws/runs/my%20run.lar.jsonl'));
  assert.equal(live.text, '$(checklist) lar builtin · R 0.75 (live)');
  assert.match(live.tooltip, /Backend: \*\*builtin\*\* — no Lean toolchain found: lake is not on PATH/);
  assert.match(
    live.tooltip,
    /Latest run `my run\.lar\.jsonl`: live, 3 steps, stage `explore` · outcome \*\*0\*\* · return \*\*0\.75\*\*/,
  );
  assert.match(live.tooltip, /Click to open the trajectory/);
  assert.equal(live.warning, false);

  const ended = statusView(
    params('u', { backend: lean, summary: { return: 1.6944, outcome: 1, steps: 9, ended: true } }),
  );
  assert.equal(ended.text, '$(verified) lar lean · R 1.694');
  assert.match(ended.tooltip, /outcome \*\*1\*\* · return \*\*1\.694\*\*/);

  const submittedFailed = statusView(
    params('u', { summary: { return: 0.6, outcome: 0, steps: 7, ended: true, endReason: 'submitted' } }),
  );
  assert.equal(
    submittedFailed.text,
    '$(checklist) lar builtin · R 0.6 (outcome failed)',
    'a submit whose check failed does not read like a pass',
  );

  // A run that stopped without submitting is not live: the status says how it stopped.
  const failed = statusView(
    params('u', { summary: { return: 0, outcome: 0, steps: 0, ended: false, endReason: 'error' } }),
  );
  assert.equal(failed.text, '$(checklist) lar builtin · R 0 (error)');
  assert.match(failed.tooltip, /Latest run `u`: error, 0 steps/);
});

test('the current run: a run that stopped on an error is not live and does not hide a newer one', () => {
  const runs = new RunRegistry();
  runs.update(
    params('file:///failed.lar.jsonl', {
      summary: { return: 0, outcome: 0, steps: 0, ended: false, endReason: 'error' },
    }),
  );
  runs.update(
    params('file:///passed.lar.jsonl', {
      summary: { return: 1.75, outcome: 1, steps: 8, ended: true, endReason: 'submitted' },
    }),
  );
  assert.equal(runs.current()?.uri, 'file:///passed.lar.jsonl', 'the latest, not the failed one held as live');
  runs.update(params('file:///running.lar.jsonl', { summary: { return: 0.5, outcome: 0, steps: 2, ended: false } }));
  runs.update(
    params('file:///passed.lar.jsonl', {
      summary: { return: 1.75, outcome: 1, steps: 8, ended: true, endReason: 'submitted' },
    }),
  );
  assert.equal(runs.current()?.uri, 'file:///running.lar.jsonl', 'a live run wins');
});

test('status bar: before any run, when a run cannot be verified, and when the server is down', () => {
  assert.equal(statusView(undefined).text, '$(checklist) lar');
  assert.match(statusView(undefined).tooltip, /not known until/);
  assert.equal(statusView(undefined, lean).text, '$(verified) lar lean');
  const fatal = statusView(params('u', { fatal: 'workflow ./missing.larflow.json not found', summary: undefined }));
  assert.equal(fatal.text, '$(warning) lar builtin · not verified');
  assert.equal(fatal.warning, true);
  assert.match(fatal.tooltip, /could not be verified: workflow \\\.\/missing\\\.larflow\\\.json not found/);
  const down = statusView(
    params('u'),
    undefined,
    'the language server did not start: Cannot find module dist/server.js',
  );
  assert.equal(down.text, '$(error) lar');
  assert.equal(down.warning, true);
});

test('the tooltip is short: no PATH dump, one line each for the backend, the latest run and the sandbox', () => {
  const path = Array.from({ length: 30 }, (_, i) => `/opt/tool${i}/bin`).join(':');
  const reason =
    `No Lean toolchain found. Searched: the "lean4Agentic.leanPath" setting (not set); $LAR_LEAN_PATH (not set); ` +
    `PATH (${path}); /home/u/.elan/bin (does not exist). Install Lean with elan (https://github.com/leanprover/elan: ` +
    'on Linux and macOS `curl … | sh`), or set the "lean4Agentic.leanPath" setting. Until then the builtin decides.';
  const view = withSandbox(statusView(params('file:///ws/r.lar.jsonl', { backend: { backend: 'builtin', reason } })), {
    confined: true,
    tool: 'bubblewrap 0.8.0',
    network: 'none',
    protected: ['.git/hooks', '.vscode'],
  });
  const lines = view.tooltip.split('\n\n');
  assert.deepEqual(lines, [
    '**Lean4 Agentic**',
    'Backend: **builtin** — No Lean toolchain found: install elan or set "lean4Agentic\\.leanPath" \\(details in the Lean4 Agentic output\\)',
    'Latest run `r.lar.jsonl`: live, 3 steps, stage `explore` · outcome **0** · return **0.75**',
    'Agent commands: sandboxed \\(bubblewrap 0\\.8\\.0; network off, 2 protected paths\\)',
    'Click to open the trajectory.',
  ]);
  assert.doesNotMatch(view.tooltip, /tool7|PATH/);
  assert.ok(view.tooltip.length < 500, `${view.tooltip.length} characters`);
});

test('a reason in one sentence: a short one whole, a long one cut with a pointer to the output', () => {
  assert.equal(briefReason('Lean 4.21.0 at /home/u/.elan/bin/lake'), 'Lean 4.21.0 at /home/u/.elan/bin/lake');
  assert.equal(
    briefReason('the builtin backend was chosen in the settings.'),
    'the builtin backend was chosen in the settings',
  );
  assert.equal(
    briefReason('Found /x/lean, but `lean --version` failed: boom. Install Lean with elan.'),
    'Found /x/lean, but `lean --version` failed: boom (details in the Lean4 Agentic output)',
  );
  assert.ok(briefReason('x'.repeat(5000)).length < 220);
});

test('file names from URIs are decoded', () => {
  assert.equal(fileNameOf('file:///ws/a%20b.lar.jsonl'), 'a b.lar.jsonl');
  assert.equal(fileNameOf('untitled:Untitled-1'), 'untitled:Untitled-1');
});
