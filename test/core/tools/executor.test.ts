/**
 * The tool executor: a call of exactly the outcome command runs as the check
 * runs it, and the user still sees it (the editor's terminal mirrors it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolExecutor } from '../../../core/tools/executor';
import { NodeWorkspaceFs } from '../../../core/workspace/node-fs';
import { TerminalSession } from '../../../core/shell/session';
import type { OutcomeEvent } from '../../../core/schema/trajectory';

test('the outcome command called as a step runs as the check, and is shown where the user watches commands: its line first, then its output and exit code', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-exec-'));
  const terminal = new TerminalSession({
    cwd: ws,
    outputDir: join(ws, '.out'),
    shell: '/bin/sh',
    env: { PATH: process.env.PATH, HOME: ws },
  });
  try {
    const shown: string[] = [];
    let ran = 0;
    const check = (): Promise<OutcomeEvent> => {
      ran++;
      shown.push('(check ran)');
      return Promise.resolve({
        type: 'outcome',
        command: 'npm test',
        exitCode: 1,
        completion: 'exit',
        output: '# pass 1\n# fail 1\n',
        at: new Date().toISOString(),
      });
    };
    const execute = createToolExecutor({
      fs: new NodeWorkspaceFs(ws),
      terminal,
      check: {
        command: 'npm test',
        run: check,
        mirror: { start: (c) => shown.push(`start ${c}`), end: (out, code) => shown.push(`end ${code} ${out}`) },
      },
    });
    const r = await execute('run_command', { command: '  npm   test ' }, { workspace: ws });
    assert.equal(ran, 1);
    assert.equal((r.result as { ranAsCheck?: boolean }).ranAsCheck, true);
    assert.deepEqual(shown, ['start   npm   test ', '(check ran)', 'end 1 # pass 1\n# fail 1\n']);
    // Any other command goes through the shell, not the mirror.
    const other = await execute('run_command', { command: 'echo other' }, { workspace: ws });
    assert.match(other.observation, /other/);
    assert.equal(shown.length, 3);
  } finally {
    terminal.dispose();
    rmSync(ws, { recursive: true, force: true });
  }
});
