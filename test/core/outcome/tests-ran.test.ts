// A check that runs no tests is not a pass: the outcome check reads how many
// tests the runner says it ran, and the verifier fails a check that ran none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOutcomeCheck } from '../../../core/outcome/check';
import { outcomeCommand } from '../../../core/schema/workflow';
import { testsRanFrom } from '../../../core/outcome/tests-ran';
import { verifyEvents } from '../../../core/verifier/verify';
import { builtinWorkflow } from '../../../core/workflow/load';

test('test counts from the summaries of common runners; unknown output says nothing', () => {
  const cases: [string, string, number | undefined][] = [
    ['node TAP', 'TAP version 13\n1..0\n# tests 0\n# suites 0\n# pass 0\n', 0],
    ['node spec', '✔ adds (1.2ms)\nℹ tests 2\nℹ suites 0\nℹ pass 2\n', 2],
    ['node spec, coloured', '\x1b[34mℹ tests 5\x1b[39m\r\n', 5],
    ['jest', 'Test Suites: 1 passed, 1 total\nTests:       1 failed, 2 passed, 3 total\nSnapshots:   0 total\n', 3],
    ['jest, none', 'No tests found, exiting with code 0\nRun with `--passWithNoTests` to exit with code 0\n', 0],
    ['vitest', ' Test Files  1 passed (1)\n      Tests  4 passed (4)\n', 4],
    ['vitest, none', 'No test files found, exiting with code 0\n', 0],
    ['mocha', '  sum\n    ✓ adds\n\n  2 passing (5ms)\n  1 failing\n', 3],
    ['mocha, none', '\n  0 passing (1ms)\n\n', 0],
    ['pytest', '============ test session starts ============\ncollected 7 items\n\ntest_x.py .......\n', 7],
    ['pytest, none', 'collected 0 items\n\n============ no tests ran in 0.01s ============\n', 0],
    ['cargo', 'running 3 tests\ntest a ... ok\n\nrunning 0 tests\n\nrunning 1 test\n', 4],
    ['go, none', '?   \texample.com/x\t[no test files]\n', 0],
    ['go, some', '?   \texample.com/x\t[no test files]\nok  \texample.com/y\t0.01s\n', undefined],
    ['make', 'gcc -o x x.c\n', undefined],
    ['node, two runs (npm test --workspaces)', '# tests 12\n# pass 12\n...\n# tests 0\n# pass 0\n', 12],
    ['jest, two runs', 'Tests:       4 passed, 4 total\nTests:       0 total\n', 4],
    ['', '', undefined],
  ];
  for (const [name, output, expected] of cases) assert.equal(testsRanFrom(output), expected, name);
});

test('npm test over an empty suite exits 0 but is not a pass; with tests it is', async () => {
  const wf = builtinWorkflow('default-coding');
  const outcomeOf = async (withTests: boolean) => {
    const ws = mkdtempSync(join(tmpdir(), 'lar-notests-'));
    writeFileSync(join(ws, 'package.json'), JSON.stringify({ scripts: { test: 'node --test' } }));
    if (withTests) {
      mkdirSync(join(ws, 'test'));
      writeFileSync(join(ws, 'test', 'a.test.js'), "require('node:test')('ok', () => {});\n");
    }
    const event = await runOutcomeCheck(outcomeCommand(wf)!, ws);
    const events = [
      {
        line: 2,
        event: {
          type: 'tool_call' as const,
          id: 'a',
          tool: 'read_file',
          args: { path: 'package.json' },
          status: 'ok' as const,
        },
      },
      {
        line: 3,
        event: {
          type: 'tool_call' as const,
          id: 'b',
          tool: 'enter_stage',
          args: { stage: 'edit' },
          status: 'ok' as const,
        },
      },
      {
        line: 4,
        event: {
          type: 'tool_call' as const,
          id: 'c',
          tool: 'write_file',
          args: { path: 'x', content: '' },
          status: 'ok' as const,
          result: { filesChanged: ['x'] },
        },
      },
      {
        line: 5,
        event: {
          type: 'tool_call' as const,
          id: 'd',
          tool: 'enter_stage',
          args: { stage: 'verify' },
          status: 'ok' as const,
        },
      },
      {
        line: 6,
        event: {
          type: 'tool_call' as const,
          id: 'e',
          tool: 'run_command',
          args: { command: 'npm test' },
          status: 'ok' as const,
          result: { exitCode: 0, completion: 'marker' as const },
        },
      },
      { line: 7, event: { type: 'tool_call' as const, id: 'f', tool: 'submit', args: {}, status: 'ok' as const } },
      { line: 8, event },
    ];
    return { event, summary: verifyEvents(wf, events).summary };
  };
  const empty = await outcomeOf(false);
  assert.equal(empty.event.exitCode, 0, 'npm test itself exits 0');
  assert.equal(empty.event.testsRan, 0);
  assert.equal(empty.summary.outcome.reward, 0);
  assert.ok(
    empty.summary.outcome.verdicts.some(
      (v) => v.check === 'outcome.check_passed' && !v.ok && /ran no tests/.test(v.reason),
    ),
  );
  const real = await outcomeOf(true);
  assert.equal(real.event.testsRan, 1);
  assert.equal(real.summary.outcome.reward, 1);
});

test('a check with megabytes of output keeps its final summary (the tail), so its tests still count', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-bigcheck-'));
  writeFileSync(
    join(ws, 'check.sh'),
    "yes 'noise line for the log' | head -c 3000000\necho; echo '# tests 7'\necho '# pass 7'\n",
  );
  const event = await runOutcomeCheck({ command: 'sh check.sh', expectExitCode: 0, timeoutMs: 60_000 }, ws);
  assert.equal(event.exitCode, 0);
  assert.equal(event.testsRan, 7);
  assert.match(event.output ?? '', /# pass 7\s*$/, 'the excerpt ends with the summary');
});
