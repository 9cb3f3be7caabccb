/**
 * One run's set-up and end (core/agent/run-setup.ts), as `lar run` and the
 * editor use it: every process ended before anything is put back, a set-up
 * that fails half-way leaves nothing running, and the end worded once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endNotes, openRun, type RunTerminal } from '../../../core/agent/run-setup';
import { TerminalSession } from '../../../core/shell/session';
import { defaultWorkflow } from '../../../core/workflow/load';
import { alive } from '../../../core/shell/procs';

const workspace = (): string => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-setup-'));
  writeFileSync(join(ws, 'package.json'), '{"scripts":{"test":"node --test"}}\n');
  return ws;
};

test('a run ends its processes before its protected paths are put back, and says what it put back', async () => {
  const ws = workspace();
  try {
    const order: string[] = [];
    const run = await openRun({
      workspace: ws,
      workflow: defaultWorkflow(),
      sandbox: 'off',
      hostEnv: { PATH: process.env.PATH, HOME: ws },
      apiKey: 'sk-secret-key-123456',
      rules: [],
      makeTerminal: (options): RunTerminal => {
        const session = new TerminalSession(options);
        return {
          session,
          end: async () => {
            order.push('end');
            return session.close();
          },
          dispose: () => {
            order.push('dispose');
            session.dispose();
          },
        };
      },
    });
    assert.match(run.trajectoryPath, /\.lar[\\/]runs[\\/]run-.*\.lar\.jsonl$/);
    assert.equal(run.redact('key sk-secret-key-123456 here'), 'key *** here');
    const r = await run.terminal.session.run('sleep 60 & echo $!; echo changed > package.json');
    const pid = Number(r.output.trim().split('\n')[0]);
    assert.ok(alive(pid));
    const end = await run.close();
    assert.deepEqual(order, ['end', 'dispose']);
    assert.ok(!alive(pid), 'the background process is gone');
    assert.deepEqual(end.restored, ['package.json']);
    assert.equal(readFileSync(join(ws, 'package.json'), 'utf8'), '{"scripts":{"test":"node --test"}}\n');
    assert.deepEqual(
      endNotes(end).map((n) => [n.level, n.kind, n.text]),
      [['warn', 'restored', 'put back what the run changed in protected paths: package.json']],
    );
    assert.strictEqual(await run.close(), end, 'a second close is the first');
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('a set-up that fails after the sandbox opened leaves nothing behind and says why', async () => {
  const ws = workspace();
  try {
    let made: TerminalSession | undefined;
    await assert.rejects(
      openRun({
        workspace: ws,
        workflow: defaultWorkflow(),
        sandbox: 'off',
        hostEnv: { PATH: process.env.PATH, HOME: ws },
        rules: [],
        makeTerminal: (options): RunTerminal => {
          made = new TerminalSession(options);
          const session = made;
          return { session, end: () => session.close(), dispose: () => session.dispose() };
        },
        makeFs: () => {
          throw new Error('no file system today');
        },
      }),
      /no file system today/,
    );
    assert.ok(made);
    assert.equal(made.pid, undefined, 'the terminal never started a shell, and is disposed');
    await assert.rejects(made.run('true'), /disposed/);
    assert.ok(existsSync(join(ws, '.lar')));
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
