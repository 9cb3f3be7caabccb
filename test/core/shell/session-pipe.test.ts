// The terminal without node-pty (the fallback a platform without its native
// binary gets): the same marker protocol over pipes, so commands still run,
// end, time out and report their exit codes.
import { after, test } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerminalSession } from '../../../core/shell/session';
import { alive, sessionProcesses } from '../../../core/shell/procs';

const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'lar-pipe-ws-')));
const outDir = mkdtempSync(join(tmpdir(), 'lar-pipe-out-'));
const sessions: TerminalSession[] = [];
const open = (shell = '/bin/bash'): TerminalSession => {
  const t = new TerminalSession({
    cwd: workspace,
    env: { ...process.env, SHELL: shell },
    outputDir: outDir,
    graceMs: 800,
    mode: 'pipe',
  });
  sessions.push(t);
  return t;
};

after(() => {
  for (const s of sessions) s.dispose();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(outDir, { recursive: true, force: true });
});

for (const shell of ['/bin/bash', '/bin/sh']) {
  test(`pipe mode (${shell}): output, exit codes and state between commands`, async () => {
    const t = open(shell);
    const a = await t.run('echo hello; export LAR_X=42');
    assert.equal(t.mode, 'pipe');
    assert.deepEqual([a.output, a.exitCode, a.completion], ['hello\n', 0, 'marker']);
    const b = await t.run('echo "x=$LAR_X"; exit_code() { return 3; }; exit_code');
    assert.deepEqual([b.output, b.exitCode], ['x=42\n', 3]);
    // Errors arrive in order with the output, before the end marker.
    const c = await t.run('echo out; echo err >&2; echo out2; false');
    assert.deepEqual([c.output, c.exitCode], ['out\nerr\nout2\n', 1]);
    assert.equal(readFileSync(c.outputPath, 'utf8'), 'out\r\nerr\r\nout2\r\n');
  });
}

test('pipe mode: a command reading stdin gets end-of-file instead of the command stream', async () => {
  const t = open();
  const r = await t.run('cat; read line; echo "read: [$line] $?"');
  assert.equal(r.completion, 'marker');
  assert.equal(r.output, 'read: [] 1\n');
  const next = await t.run('echo still here');
  assert.equal(next.output, 'still here\n', 'the markers after it were not eaten');
});

test('pipe mode: a timeout interrupts the command and the shell goes on', async () => {
  const t = open();
  const r = await t.run('echo started; sleep 30', { timeoutMs: 500 });
  assert.equal(r.completion, 'timeout');
  assert.equal(r.exitCode, null);
  assert.match(r.output, /started/);
  const next = await t.run('echo next');
  assert.deepEqual([next.output, next.exitCode, next.completion], ['next\n', 0, 'marker']);
  assert.deepEqual(sessionProcesses(t.pid!), [], 'the sleep is gone');
});

test('pipe mode: a timeout stops the rest of the command too, even on a busy machine', async () => {
  // The shell goes on with the next line the moment its command dies, so the
  // shell must be stopped before the command is killed; busy CPUs (as on a
  // loaded CI machine) widen the window in which it could slip through.
  const busy = Array.from({ length: 4 }, () => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  try {
    const runs = Array.from({ length: 10 }, async (_, i) => {
      const t = open();
      await t.run('true');
      const r = await t.run(`sleep 1; touch after-timeout-${i}; sleep 5`, { timeoutMs: 300 + 10 * i });
      assert.equal(r.completion, 'timeout');
      assert.equal(r.shellRestarted, true);
    });
    await Promise.all(runs);
  } finally {
    for (const b of busy) b.kill('SIGKILL');
  }
  await new Promise((res) => setTimeout(res, 1500));
  const ran = Array.from({ length: 10 }, (_, i) => `after-timeout-${i}`).filter((f) => existsSync(join(workspace, f)));
  assert.deepEqual(ran, [], 'the line after the interrupted one did not run');
});

test('pipe mode: dispose leaves no process behind', async () => {
  const t = open();
  const r = await t.run('sleep 60 & echo $!');
  const bg = Number(r.output.trim());
  const shell = t.pid!;
  t.dispose();
  await new Promise((res) => setTimeout(res, 300));
  for (const pid of [bg, shell]) assert.equal(alive(pid), false, `process ${pid} is gone (or a zombie)`);
});

test('auto mode uses node-pty when it loads', async () => {
  const t = new TerminalSession({ cwd: workspace, env: { ...process.env, SHELL: '/bin/bash' }, outputDir: outDir });
  sessions.push(t);
  await t.run('true');
  assert.equal(t.mode, 'pty');
});
