import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LineReward, RewardsParams } from '../../../core/protocol/lsp';
import { DECORATION_KINDS, decorationsFor, type DecorationKind } from '../../../extension/trajectory/decorations';
import { formatNumber, formatReward } from '../../../core/protocol/display';

const root = resolve(__dirname, '../../../..');

/** The recorded demo run (test-fixtures/trajectories/fix-failing-test.lar.jsonl) as the server reports it, 0-based lines. */
function demo(overrides: Partial<RewardsParams> = {}): RewardsParams {
  const step = (
    line: number,
    step: number,
    tool: string,
    stage: string,
    extra: Partial<LineReward> = {},
  ): LineReward => ({
    line,
    kind: 'step',
    step,
    tool,
    stage,
    toolReward: 1,
    failed: [],
    status: 'ok',
    ...extra,
  });
  return {
    uri: 'file:///ws/runs/fix-failing-test.lar.jsonl',
    version: 3,
    backend: { backend: 'builtin', reason: 'the builtin backend was chosen in the settings' },
    full: true,
    lineCount: 13,
    lines: [
      { line: 0, kind: 'header', failed: [] },
      step(2, 1, 'list_files', 'explore'),
      step(3, 2, 'read_file', 'explore'),
      step(4, 3, 'read_file', 'explore'),
      step(5, 4, 'write_file', 'explore', {
        toolReward: -1,
        failed: ['tool.permitted', 'tool.succeeded'],
        status: 'blocked',
      }),
      step(6, 5, 'enter_stage', 'explore', { stageEnd: { stage: 'explore', reward: 1 } }),
      step(7, 6, 'edit_file', 'edit', { filesChanged: ['src/sum.js'] }),
      step(8, 7, 'enter_stage', 'edit', { stageEnd: { stage: 'edit', reward: 1 } }),
      step(9, 8, 'run_command', 'verify'),
      step(10, 9, 'submit', 'verify', { stageEnd: { stage: 'verify', reward: 1 } }),
      { line: 11, kind: 'outcome', failed: [] },
    ],
    stages: [
      { stage: 'explore', visit: 0, startLine: 0, endLine: 6, steps: 5, budget: 30, reward: 1 },
      { stage: 'edit', visit: 1, startLine: 6, endLine: 8, steps: 2, budget: 40, reward: 1 },
      { stage: 'verify', visit: 2, startLine: 8, endLine: 10, steps: 2, budget: 20, reward: 1 },
    ],
    summary: { return: 1.6944444, outcome: 1, steps: 9, ended: true, finalStage: 'verify' },
    ...overrides,
  };
}

const linesOf = (m: Map<DecorationKind, { line: number }[]>) =>
  Object.fromEntries([...m].filter(([, v]) => v.length > 0).map(([k, v]) => [k, v.map((d) => d.line)]));
const hoverAt = (m: Map<DecorationKind, { line: number; hover: string }[]>, line: number) =>
  [...m.values()].flat().find((d) => d.line === line)?.hover ?? assert.fail(`no decoration on line ${line}`);

test('the demo run: +1 steps, the blocked write as −1, three stage boundaries and the outcome; no mark on the header or the user message', () => {
  const m = decorationsFor(demo());
  assert.deepEqual(linesOf(m), {
    stepPass: [2, 3, 4, 7, 9],
    stepFail: [5],
    stagePass: [6, 8, 10],
    outcomePass: [11],
  });
});

test('every kind is in the map, empty ones too, so marks that went away are cleared', () => {
  const m = decorationsFor(demo({ lines: [], stages: [], summary: undefined }));
  assert.deepEqual([...m.keys()], [...DECORATION_KINDS]);
  for (const list of m.values()) assert.deepEqual(list, []);
});

test('a −1 step: its hover names the step, tool, stage, reward, what the gate did and the failed checks', () => {
  const hover = hoverAt(decorationsFor(demo()), 5);
  assert.equal(
    hover,
    '**Step 4** · `write_file` · stage `explore` · tool reward **−1** — blocked by the verifier gate (did not run) · failed `tool.permitted`, `tool.succeeded`',
  );
});

test('a +1 step hover has no failed checks and no status line; changed files are named', () => {
  const hover = hoverAt(decorationsFor(demo()), 7);
  assert.equal(hover, '**Step 6** · `edit_file` · stage `edit` · tool reward **+1**  \nchanged `src/sum.js`');
});

test('0 rewards: an unproductive step and a visit that closed with unmet exit conditions', () => {
  const p = demo();
  p.lines[2] = { ...p.lines[2]!, toolReward: 0, failed: ['tool.not_repeated'] };
  p.lines[5] = { ...p.lines[5]!, stageEnd: { stage: 'explore', reward: 0 }, failed: ['stage.exit.tool_succeeded'] };
  p.stages[0] = { ...p.stages[0]!, reward: 0 };
  const m = decorationsFor(p);
  assert.deepEqual(
    m.get('stepZero')!.map((d) => d.line),
    [3],
  );
  assert.deepEqual(
    m.get('stageZero')!.map((d) => d.line),
    [6],
  );
  assert.deepEqual(
    m.get('stagePass')!.map((d) => d.line),
    [8, 10],
  );
  assert.match(hoverAt(m, 3), /tool reward \*\*0\*\* · failed `tool\.not_repeated`$/);
  assert.match(hoverAt(m, 6), /^\*\*Stage `explore` closed\*\* · stage reward \*\*0\*\* · 5\/30 steps/);
});

test('a stage boundary shows the stage reward (icon and hover) and still tells the step reward of that line', () => {
  const p = demo();
  // An illegal transition: the call itself was allowed (+1), the visit it closed scores −1.
  p.lines[7] = { ...p.lines[7]!, stageEnd: { stage: 'edit', reward: -1 } };
  p.stages[1] = { ...p.stages[1]!, reward: -1 };
  const m = decorationsFor(p);
  assert.deepEqual(
    m.get('stageFail')!.map((d) => d.line),
    [8],
  );
  assert.ok(!m.get('stepPass')!.some((d) => d.line === 8), 'one mark per line: the boundary');
  assert.equal(
    hoverAt(m, 8),
    '**Stage `edit` closed** · stage reward **−1** · 2/40 steps  \n**Step 7** · `enter_stage` · stage `edit` · tool reward **+1**',
  );
  assert.match(hoverAt(m, 6), /^\*\*Stage `explore` closed\*\* · stage reward \*\*\+1\*\* · 5\/30 steps/);
});

test('a visit that ended on a line without a reward of its own (the end line) still gets its boundary', () => {
  const p = demo({
    lines: demo().lines.filter((l) => l.line < 9),
    lineCount: 10,
    stages: [
      ...demo().stages.slice(0, 2),
      { stage: 'verify', visit: 2, startLine: 8, endLine: 9, steps: 0, budget: 20, reward: 0 },
    ],
    summary: { return: 0.3, outcome: 0, steps: 7, ended: true, finalStage: 'verify' },
  });
  const m = decorationsFor(p);
  assert.deepEqual(
    m.get('stageZero')!.map((d) => d.line),
    [9],
  );
  assert.equal(hoverAt(m, 9), '**Stage `verify` closed** · stage reward **0** · 0/20 steps');
});

test('the outcome line: pass with the return, or fail when the run did not succeed', () => {
  const pass = hoverAt(decorationsFor(demo()), 11);
  assert.equal(
    pass,
    '**Outcome 1** — the run submitted from a terminal stage and the outcome check passed · return **1.694** over 9 steps',
  );

  const failed = demo({ summary: { return: 0.694, outcome: 0, steps: 9, ended: true } });
  failed.lines[10] = { line: 11, kind: 'outcome', failed: ['outcome.check_passed'] };
  const m = decorationsFor(failed);
  assert.deepEqual(
    m.get('outcomeFail')!.map((d) => d.line),
    [11],
  );
  assert.deepEqual(m.get('outcomePass'), []);
  assert.equal(
    hoverAt(m, 11),
    '**Outcome 0** — no success · return **0.694** over 9 steps · failed `outcome.check_passed`',
  );
});

test('malformed lines get their own mark, and the rest of the file keeps its marks', () => {
  const p = demo();
  p.lines.splice(2, 1, { line: 3, kind: 'malformed', failed: ['trajectory.malformed'] });
  const m = decorationsFor(p);
  assert.deepEqual(
    m.get('malformed')!.map((d) => d.line),
    [3],
  );
  assert.deepEqual(
    m.get('stepPass')!.map((d) => d.line),
    [2, 4, 7, 9],
  );
  assert.equal(
    hoverAt(m, 3),
    '**Malformed line** — not verified; the rest of the file still is (the Problems view says where and what was expected)',
  );
});

test('a step line without a reward (not judged yet) gets no mark; a line listed twice keeps its last entry', () => {
  const p = demo();
  p.lines.push({ line: 12, kind: 'step', step: 10, tool: 'read_file', failed: [] });
  p.lines.push({ ...p.lines[1]!, toolReward: -1, failed: ['tool.path_policy'] });
  const m = decorationsFor(p);
  assert.ok(![...m.values()].flat().some((d) => d.line === 12));
  assert.deepEqual(
    m.get('stepFail')!.map((d) => d.line),
    [2, 5],
  );
  assert.ok(!m.get('stepPass')!.some((d) => d.line === 2));
});

test('names from the file cannot break the hover Markdown', () => {
  const p = demo();
  p.lines[1] = { ...p.lines[1]!, tool: 'rm`-rf', stage: '`x`' };
  const hover = hoverAt(decorationsFor(p), 2);
  assert.match(hover, /``rm`-rf``/);
  assert.match(hover, /stage `` `x` ``/);
});

test('rewards and returns print the way the docs write them', () => {
  assert.deepEqual([formatReward(1), formatReward(0), formatReward(-1)], ['+1', '0', '−1']);
  assert.equal(formatNumber(1.6944444), '1.694');
  assert.equal(formatNumber(-0.25), '−0.25');
  assert.equal(formatNumber(2), '2');
});

test("the extension's pure modules import nothing from vscode (they run under node --test)", () => {
  for (const name of ['trajectory/decorations.ts', 'edits/hints.ts', 'trajectory/runs.ts']) {
    const src = readFileSync(join(root, 'extension', name), 'utf8');
    assert.doesNotMatch(src, /from ['"]vscode['"]|require\(['"]vscode['"]\)/, name);
    const imports = [...src.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
    for (const i of imports)
      assert.ok(
        i.startsWith('./') || i.startsWith('../trajectory/') || i.startsWith('../../core/'),
        `${name} imports ${i}`,
      );
  }
  assert.ok(readdirSync(join(root, 'extension')).includes('main.ts'));
});
