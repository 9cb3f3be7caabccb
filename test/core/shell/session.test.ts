import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from '../../support/fc';
import { capOutput, looksBinary, omissionMarker, stripTerminal, toModelText } from '../../../core/shell/output';
import { TerminalSession } from '../../../core/shell/session';
import { TerminalBusyError, toToolResult } from '../../../core/shell/types';
import { killTree, listProcesses, sessionProcesses, alive, type ProcInfo } from '../../../core/shell/procs';
import { commandObservation } from '../../../core/tools/executor';
import { ToolResult } from '../../../core/schema/trajectory';

// ---------------------------------------------------------------- output.ts

test('escape sequences and carriage-return overwrites are stripped to what a terminal shows', () => {
  assert.equal(stripTerminal('\x1b[31mred\x1b[0m'), 'red');
  assert.equal(stripTerminal('\x1b[1;38;5;196mbold\x1b[m plain'), 'bold plain');
  assert.equal(stripTerminal('\x1b]0;title\x07text\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\'), 'textlink');
  assert.equal(stripTerminal('\x1b(Babc\x1b)0\x1b7\x1b8\x1b=def\x1b'), 'abcdef');
  assert.equal(stripTerminal('\x1b[?2004hprompt\x1b[?2004l'), 'prompt');
  assert.equal(stripTerminal('progress 10%\rprogress 50%\rprogress 100%\r\ndone\r\n'), 'progress 100%\ndone\n');
  assert.equal(stripTerminal('abcdef\rXY'), 'XYcdef');
  assert.equal(stripTerminal('ab\bC'), 'aC');
  assert.equal(stripTerminal('bell\x07 nul\x00'), 'bell nul');
});

test('capping keeps head and tail with a marker naming what was left out', () => {
  const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
  const c = capOutput(text, { maxLines: 20, maxBytes: 10_000 });
  assert.equal(c.truncated, true);
  assert.ok(c.text.startsWith('line 0\nline 1\n'));
  assert.ok(c.text.endsWith('line 998\nline 999'));
  assert.match(c.text, /… 980 lines \/ \d+ bytes omitted …/);
  assert.equal(c.omittedLines, 980);
  assert.deepEqual(capOutput('short', { maxLines: 20 }), {
    text: 'short',
    truncated: false,
    omittedLines: 0,
    omittedBytes: 0,
  });
  // One huge line is cut inside the line.
  const one = capOutput('x'.repeat(100_000), { maxBytes: 1000 });
  assert.ok(one.truncated && Buffer.byteLength(one.text) < 1100);
});

test('binary junk is summarized, not passed on', () => {
  const junk = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
  const m = toModelText(junk, { savedAt: '/tmp/out.log' });
  assert.equal(m.binary, true);
  assert.match(m.text, /^\[binary output: 4096 bytes not shown .*saved at \/tmp\/out\.log\]$/);
  assert.equal(looksBinary(Buffer.from('plain text\n'.repeat(100))).binary, false);
  assert.equal(looksBinary(Buffer.from('héllo wörld ✓ \x1b[32mok\x1b[0m\r\n'.repeat(50))).binary, false);
});

const printable = fc.string({ unit: fc.constantFrom(...'abc xyz 012\t\n✓é漢'.split('')), maxLength: 300 });
const anything = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\x1b', '[', ']', '\r', '\n', '\b', '\x07', '\x9b', '(', 'm', ';', '1', '\\'),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  ),
  maxLength: 200,
});

test('properties: stripping never throws, is idempotent, and leaves plain text unchanged', () => {
  fc.assert(
    fc.property(anything, (s) => {
      const once = stripTerminal(s);
      assert.equal(stripTerminal(once), once);
      assert.ok(!once.includes('\x1b') && !once.includes('\r'));
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(printable, (s) => assert.equal(stripTerminal(s), s)),
    { numRuns: 300 },
  );
});

test('properties: capped output is never longer than the cap plus the marker, and never throws', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        printable,
        anything,
        fc.array(printable, { maxLength: 60 }).map((a) => a.join('\n')),
      ),
      fc.integer({ min: 0, max: 400 }),
      fc.integer({ min: 0, max: 40 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (text, maxBytes, maxLines, headFraction) => {
        const c = capOutput(text, { maxBytes, maxLines, headFraction });
        if (!c.truncated) return assert.equal(c.text, text);
        const marker = omissionMarker(c.omittedLines, c.omittedBytes);
        assert.ok(
          Buffer.byteLength(c.text) <= maxBytes + Buffer.byteLength(marker),
          `${Buffer.byteLength(c.text)} > ${maxBytes}`,
        );
        assert.ok(c.text.split('\n').length <= maxLines + marker.split('\n').length);
        assert.ok(c.text.includes(marker));
      },
    ),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 500 }), (b) => void toModelText(b, { maxBytes: 100 })),
    { numRuns: 300 },
  );
});

// ---------------------------------------------------------------- shell/session.ts (a real pty)

const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'lar-term-ws-')));
const outDir = mkdtempSync(join(tmpdir(), 'lar-term-out-'));
const sessions: TerminalSession[] = [];
const open = (extra: Partial<ConstructorParameters<typeof TerminalSession>[0]> = {}): TerminalSession => {
  const t = new TerminalSession({
    cwd: workspace,
    env: { ...process.env, SHELL: '/bin/bash' },
    outputDir: outDir,
    inputIdleMs: 400,
    graceMs: 800,
    ...extra,
  });
  sessions.push(t);
  return t;
};
const term = open();

after(() => {
  for (const s of sessions) s.dispose();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(outDir, { recursive: true, force: true });
});

test('echo hi: its output, exit 0, ended by the marker; the shell runs in the workspace', async () => {
  const r = await term.run('echo hi');
  assert.equal(r.output, 'hi\n');
  assert.equal(r.exitCode, 0);
  assert.equal(r.completion, 'marker');
  assert.equal(r.truncated, false);
  assert.equal(readFileSync(r.outputPath, 'utf8'), 'hi\r\n');
  assert.ok(ToolResult.safeParse(toToolResult(r)).success);
  const pwd = await term.run('pwd');
  assert.equal(pwd.output.trim(), workspace);
});

test('false: exit 1; a pipeline and a syntax error report their status too', async () => {
  assert.equal((await term.run('false')).exitCode, 1);
  assert.equal((await term.run('exit_code_42() { return 42; }; exit_code_42')).exitCode, 42);
  const bad = await term.run('echo "unclosed');
  assert.equal(bad.completion, 'marker');
  assert.notEqual(bad.exitCode, 0);
  assert.equal((await term.run('echo still here')).output, 'still here\n');
});

test("a command printing another nonce's end marker does not end early", async () => {
  const r = await term.run(
    "printf '\\n__LAR_E_%s_%d__\\n' deadbeefdeadbeef 0; printf '__LAR_E_0123456789abcdef_0__\\n'; sleep 0.2; echo real end",
  );
  assert.equal(r.completion, 'marker');
  assert.match(r.output, /__LAR_E_deadbeefdeadbeef_0__\n__LAR_E_0123456789abcdef_0__\nreal end\n$/);
});

test('ANSI colours are stripped for the model and kept in the raw file', async () => {
  const r = await term.run("printf '\\033[31mred\\033[0m\\n'");
  assert.equal(r.output, 'red\n');
  assert.ok(readFileSync(r.outputPath, 'utf8').includes('\x1b[31m'));
});

test('a long output is capped with head and tail; the full output is in outputPath', async () => {
  const t = open({ cap: { maxLines: 40, maxBytes: 8000 } });
  const r = await t.run('seq 1 20000');
  assert.equal(r.exitCode, 0);
  assert.equal(r.truncated, true);
  assert.ok(r.output.startsWith('1\n2\n3\n'));
  assert.ok(r.output.trimEnd().endsWith('19999\n20000'));
  assert.match(r.output, /… \d+ lines \/ \d+ bytes omitted …/);
  const full = readFileSync(r.outputPath, 'utf8').split('\r\n');
  assert.equal(full[0], '1');
  assert.equal(full[19999], '20000');
  t.dispose();
});

test('an output far larger than the in-memory head and tail: every byte in outputPath, the excerpt capped the same way', async () => {
  // 1.4 MB is past the 64 KiB head + 64 KiB tail the session keeps, so the excerpt comes from the separately kept ends.
  const t = open({ cap: { maxLines: 40, maxBytes: 8000 } });
  const r = await t.run('seq 1 200000');
  assert.equal(r.exitCode, 0);
  const saved = readFileSync(r.outputPath, 'latin1');
  assert.equal(saved.length, r.outputBytes);
  const lines = saved.split('\r\n');
  assert.deepEqual([lines.length, lines[0], lines[199999], lines[200000]], [200001, '1', '200000', '']);
  assert.equal(r.truncated, true);
  assert.ok(r.output.startsWith('1\n2\n3\n'));
  assert.ok(r.output.endsWith('199999\n200000\n'));
  // Counted as capOutput counts lines for a whole output: 200 000 lines and the empty one after the last newline, 40 kept.
  assert.match(r.output, /\n… 199961 lines \/ \d+ bytes omitted …\n/);
  const marker = /\n… .* omitted …\n/.exec(r.output)![0];
  assert.ok(Buffer.byteLength(r.output) <= 8000 + Buffer.byteLength(marker));
  assert.ok(r.output.split('\n').length <= 40 + marker.split('\n').length);
  t.dispose();
});

test('sleep 30 with timeoutMs 500: timeout, exit code null, and the next command works', async () => {
  const t0 = Date.now();
  const r = await term.run('sleep 30', { timeoutMs: 500 });
  assert.equal(r.completion, 'timeout');
  assert.equal(r.exitCode, null);
  // Not a speed check: far below the 30 s the sleep would take had it not been interrupted.
  assert.ok(Date.now() - t0 < 15_000);
  const next = await term.run('echo next');
  assert.deepEqual([next.output, next.exitCode, next.completion], ['next\n', 0, 'marker']);
});

test('a command ignoring Ctrl-C is killed after the grace period, and the rest of its line never runs', async () => {
  // A shell goes on with a command line whose job died of anything but SIGINT,
  // so killing the job alone would run `touch` here: the shell is interrupted too.
  const r = await term.run(`bash -c "trap '' INT; sleep 3"; touch ignored-ctrl-c`, { timeoutMs: 300 });
  assert.equal(r.completion, 'timeout');
  assert.equal(r.exitCode, null);
  assert.notEqual(r.shellRestarted, true);
  const next = await term.run('echo alive');
  assert.equal(next.output, 'alive\n');
  await new Promise((res) => setTimeout(res, 3500));
  assert.equal(
    (await term.run('ls ignored-ctrl-c 2>/dev/null; true')).output,
    '',
    'the line after the killed command did not run',
  );
});

test('read x is reported as waiting for input and interrupted; sleep without output is not', async () => {
  const r = await term.run('echo asking; read x; echo got $x', { timeoutMs: 8000 });
  assert.equal(r.waitingForInput, true);
  assert.equal(r.completion, 'unobserved');
  assert.equal(r.exitCode, null);
  assert.equal(r.output, 'asking\n');
  const quiet = await term.run('sleep 1; echo slept', { timeoutMs: 5000 });
  assert.deepEqual([quiet.completion, quiet.exitCode, quiet.waitingForInput], ['marker', 0, undefined]);
  const cat = await term.run('cat', { timeoutMs: 8000 });
  assert.equal(cat.waitingForInput, true);
  assert.equal((await term.run('echo fine')).output, 'fine\n');
});

// ---------------------------------------------------------------- interrupting keeps the shell

const SHELLS = ['/bin/bash', '/usr/bin/zsh', '/usr/bin/fish', '/bin/sh'].filter((s) => existsSync(s));

/** A session of `shell` in which an earlier command moved to `kept/` and exported LAR_KEPT (what carries from one command to the next). */
async function shellWithState(shell: string): Promise<{ t: TerminalSession; pid: number; check: () => Promise<void> }> {
  const t = open({ shell, env: { PATH: process.env.PATH, HOME: workspace, LANG: 'C.UTF-8' } });
  const set = await t.run('mkdir -p kept && cd kept && export LAR_KEPT=yes');
  assert.equal(set.exitCode, 0, set.output);
  const pid = t.pid!;
  const check = async (): Promise<void> => {
    const r = await t.run('echo "$LAR_KEPT $PWD"');
    assert.equal(
      r.output,
      `yes ${join(workspace, 'kept')}\n`,
      `${shell}: the folder and the variable set before are still there`,
    );
    assert.equal(t.pid, pid, `${shell}: the same shell`);
  };
  return { t, pid, check };
}

for (const shell of SHELLS) {
  const name = shell.split('/').pop();
  test(`${name}: python3 started by mistake (it shrugs off Ctrl-C and keeps reading) is ended, and the shell and the folder and variables carried are kept`, async () => {
    const { t, check } = await shellWithState(shell);
    const r = await t.run('python3', { timeoutMs: 1000 });
    assert.equal(r.completion, 'timeout');
    assert.equal(r.exitCode, null);
    assert.notEqual(r.shellRestarted, true, `${name}: ${r.output}`);
    await check();
    t.dispose();
  });

  test(`${name}: a program whose Ctrl-C clean-up outlasts the grace period is killed, the rest of the command never runs, and the shell and its state are kept`, async () => {
    const { t, check } = await shellWithState(shell);
    mkdirSync(join(workspace, 'kept', 'sub'), { recursive: true });
    // The clean-up (the INT trap) sleeps far past the grace period; then one and two more lines of the command.
    const slow = `sh -c "trap 'sleep 30' INT; sleep 30"; touch after-1\ntouch after-2`;
    for (const options of [{}, { cwd: join(workspace, 'kept', 'sub') }]) {
      const r = await t.run(slow, { timeoutMs: 300, ...options });
      assert.deepEqual([r.completion, r.exitCode], ['timeout', null]);
      assert.notEqual(r.shellRestarted, true, `${name}: ${r.output}`);
      await check();
    }
    const ran = ['after-1', 'after-2']
      .flatMap((f) => [join(workspace, 'kept', f), join(workspace, 'kept', 'sub', f)])
      .filter((f) => existsSync(f));
    assert.deepEqual(ran, [], `${name}: no part of the command ran after it was killed`);
    t.dispose();
  });

  test(`${name}: an end-of-file meant for a program that leaves it unread does not end the shell`, async () => {
    const { t, check } = await shellWithState(shell);
    // It shrugs off Ctrl-C and waits for input without reading it: the Ctrl-D sent to it
    // wakes it, it exits, and the shell is the next to read the terminal.
    const r = await t.run(
      `python3 -c "import select, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); select.select([sys.stdin], [], [])"`,
      { timeoutMs: 300 },
    );
    assert.equal(r.completion, 'timeout');
    assert.notEqual(r.shellRestarted, true, `${name}: ${r.output}`);
    await check();
    t.dispose();
  });

  test(`${name}: read x, cat and sleep interrupted keep the shell and the folder and variables carried`, async () => {
    const { t, check } = await shellWithState(shell);
    for (const command of ['read x', 'cat', 'sleep 30']) {
      const r = await t.run(command, { timeoutMs: 1500 });
      assert.ok(r.completion === 'unobserved' || r.completion === 'timeout', `${name} ${command}: ${r.completion}`);
      assert.notEqual(r.shellRestarted, true, `${name} ${command}`);
      await check();
    }
    t.dispose();
  });
}

test('exit 3 ends the command, not the shell: exit code 3 seen by the marker, and the same shell runs the next command', async () => {
  const t = open();
  const first = await t.run('echo one');
  const pid = t.pid!;
  const r = await t.run('exit 3');
  assert.deepEqual([r.completion, r.exitCode], ['marker', 3]);
  const again = await t.run('echo two');
  assert.deepEqual([again.output, again.exitCode, again.completion], ['two\n', 0, 'marker']);
  assert.equal(t.pid, pid);
  assert.equal(first.output, 'one\n');
  t.dispose();
});

test('concurrent runs are refused with a clear error', async () => {
  const first = term.run('sleep 0.3; echo first');
  await assert.rejects(term.run('echo second'), TerminalBusyError);
  assert.equal((await first).output, 'first\n');
});

test('cancelling through an AbortSignal stops the command', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 200);
  const r = await term.run('sleep 30', { signal: ac.signal, timeoutMs: 10_000 });
  assert.deepEqual([r.completion, r.exitCode, r.cancelled], ['unobserved', null, true]);
});

test('binary output is summarized for the model', async () => {
  const r = await term.run('head -c 3000 /dev/urandom; echo');
  assert.equal(r.binary, true);
  assert.match(r.output, /^\[binary output: \d+ bytes not shown/);
});

test('onData mirrors the raw stream', async () => {
  const t = open();
  let seen = '';
  t.onData((d) => (seen += d));
  await t.run("printf '\\033[32mgreen\\033[0m\\n'");
  assert.ok(seen.includes('\x1b[32mgreen'));
  t.dispose();
});

function children(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

test('a background process does not hold run(), and dispose() leaves no process behind', async () => {
  const t = open();
  const t0 = Date.now();
  const r = await t.run('sleep 60 & echo started $!');
  // Not a speed check: run() returned long before the 60 s background sleep could end.
  assert.ok(Date.now() - t0 < 20_000);
  assert.equal(r.exitCode, 0);
  const bg = Number(/started (\d+)/.exec(r.output)?.[1]);
  const shell = t.pid!;
  // Started by the command's child, which has ended: it is in the shell's session, not below it.
  assert.ok(sessionProcesses(shell).includes(bg), "the sleep is one of the shell's session");
  await t.run('(sleep 60 &) ; nohup sleep 61 >/dev/null 2>&1 &');
  const all = [bg, ...sessionProcesses(shell)];
  assert.ok(all.length >= 3);
  t.dispose();
  for (let i = 0; i < 20 && [shell, ...all].some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  for (const pid of [shell, ...all]) assert.equal(alive(pid), false, `pid ${pid} still alive`);
  assert.deepEqual(children(shell), []);
  await assert.rejects(t.run('echo no'), /disposed/);
});

test('the shell killed from outside mid-command: the run ends (not hangs), is not a success, and the next command gets a fresh shell', async () => {
  const t = open();
  await t.run('true');
  const shell = t.pid!;
  const running = t.run('echo before; sleep 30');
  setTimeout(() => process.kill(shell, 'SIGKILL'), 300);
  const r = await running;
  assert.equal(r.completion, 'exit');
  assert.equal(r.exitCode, null, "the shell's own exit status is not the command's");
  assert.match(r.output, /before/);
  const next = await t.run('echo after');
  assert.deepEqual([next.output, next.exitCode], ['after\n', 0]);
  assert.notEqual(t.pid, shell);
  // A command that ends the shell on purpose (bash's `$$` in a subshell is the shell's) gets no
  // exit code either, whatever the shell exits with; the next command gets a fresh shell.
  const ended = await t.run('kill -9 $$');
  assert.deepEqual([ended.completion, ended.exitCode], ['exit', null]);
  assert.equal((await t.run('echo again')).output, 'again\n');
});

test('killTree: a tree is listed parents first, and all of it, reparented jobs too, is gone afterwards', async () => {
  // Nested shells with background jobs, one of them orphaned (its parent exits at once).
  const root = spawn('bash', ['-c', 'sleep 60 & bash -c "sleep 60 & sleep 60 & wait" & (sleep 60 &) ; wait'], {
    detached: true,
    stdio: 'ignore',
  });
  const pid = root.pid!;
  let tree: number[] = [];
  for (let i = 0; i < 100 && tree.length < 5; i++) {
    await new Promise((r) => setTimeout(r, 30));
    tree = sessionProcesses(pid);
  }
  assert.ok(tree.length >= 5, `found ${tree.length} processes`);
  const parent = new Map(listProcesses().map((p) => [p.pid, p.ppid]));
  tree.forEach((p, i) => {
    const pp = parent.get(p);
    if (pp !== undefined && tree.includes(pp)) assert.ok(tree.indexOf(pp) < i, `${p} comes after its parent ${pp}`);
  });
  killTree(pid);
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual([pid, ...tree].filter(alive), [], 'no process of the tree is left, stopped or running');
});

/**
 * A made-up process table for killTree, in pid order as /proc lists it: the shell 500 and its
 * job 40 (a lower pid than the shell) with its child 30; a session member reparented to init,
 * 900, whose child 800 has a lower pid; 700 belongs to another session.
 */
const TABLE: ProcInfo[] = [
  [30, 40, 40],
  [40, 500, 40],
  [500, 1, 500],
  [700, 1, 700, 700],
  [800, 900, 900],
  [900, 1, 900],
].map(([pid, ppid, pgrp, session = 500]) => ({ pid: pid!, ppid: ppid!, pgrp: pgrp!, session, tpgid: 40, state: 'S' }));

/** What killTree sent, in order, on TABLE; `fail` makes a signal call throw. */
function killTreeOnTable(
  fail: (pid: number, signal: string) => boolean = () => false,
  list: () => ProcInfo[] = () => TABLE,
): [number, string][] {
  const sent: [number, string][] = [];
  killTree(500, {
    list,
    signal: (pid, signal) => {
      sent.push([pid, signal]);
      if (fail(pid, signal)) throw new Error(`EPERM: kill ${pid} ${signal}`);
    },
  });
  return sent;
}

test('killTree: every process of the shell is stopped before any is killed, each parent before its children, also a child whose pid is lower than its parent', () => {
  const sent = killTreeOnTable();
  const stops = sent.filter(([pid, s]) => s === 'SIGSTOP' && pid > 0).map(([pid]) => pid);
  const firstKill = sent.findIndex(([, s]) => s === 'SIGKILL');
  assert.ok(
    sent.slice(firstKill).every(([, s]) => s === 'SIGKILL'),
    'nothing is stopped once the killing began',
  );
  assert.deepEqual(
    [...stops].sort((a, b) => a - b),
    [30, 40, 500, 800, 900],
    'the other session is left alone',
  );
  for (const p of TABLE) {
    if (stops.includes(p.pid) && stops.includes(p.ppid))
      assert.ok(
        stops.indexOf(p.ppid) < stops.indexOf(p.pid),
        `${p.pid} is stopped after its parent ${p.ppid}: ${stops.join(' ')}`,
      );
  }
  const killed = new Set(sent.filter(([, s]) => s === 'SIGKILL').map(([pid]) => pid));
  for (const pid of stops) assert.ok(killed.has(pid), `${pid} was stopped and is killed`);
  assert.ok(killed.has(-500), "the shell's process group too");
});

test('killTree: every process it stopped is killed, even when a signal call throws midway or the process list cannot be read again', () => {
  // A signal refused for one process on the way (stopping 40, killing 30).
  const refused = killTreeOnTable((pid, s) => (pid === 40 && s === 'SIGSTOP') || (pid === 30 && s === 'SIGKILL'));
  const killed = (sent: [number, string][]): Set<number> =>
    new Set(sent.filter(([, s]) => s === 'SIGKILL').map(([pid]) => pid));
  for (const pid of [30, 40, 500, 800, 900])
    assert.ok(killed(refused).has(pid), `${pid} is killed (${JSON.stringify(refused)})`);
  // The process list readable once, then no more: what was stopped is killed, and killTree does not throw.
  let reads = 0;
  const sent = killTreeOnTable(undefined, () => {
    if (reads++ > 0) throw new Error('EACCES: /proc');
    return TABLE;
  });
  const stopped = sent.filter(([pid, s]) => s === 'SIGSTOP' && pid > 0).map(([pid]) => pid);
  assert.deepEqual(
    [...stopped].sort((a, b) => a - b),
    [30, 40, 500, 800, 900],
  );
  for (const pid of stopped) assert.ok(killed(sent).has(pid), `${pid} is killed (${JSON.stringify(sent)})`);
});

test('a command stopped with its shell: the model is told what went with it (processes left running) and what is kept', () => {
  const seen = commandObservation('sleep 99', '', { completion: 'timeout', exitCode: null, shellRestarted: true });
  assert.match(
    seen,
    /timed out and was stopped\]\n\[the shell was restarted .*processes that earlier commands left running are gone; the folder and exported variables are kept/,
  );
  // The shell itself ending is not the command's exit code (a command could end it on purpose).
  assert.match(
    commandObservation('kill -9 $$', '', { completion: 'exit', exitCode: null }),
    /\[the shell ended during the command; the command's exit code was not observed\]/,
  );
  assert.match(commandObservation('exit 3', '', { completion: 'exit', exitCode: 3 }), /\[exit code 3\]/);
  assert.doesNotMatch(commandObservation('sleep 99', '', { completion: 'timeout', exitCode: null }), /restarted/);
  assert.equal(
    toToolResult({
      exitCode: null,
      completion: 'timeout',
      output: '',
      truncated: false,
      outputPath: '/x',
      durationMs: 1,
      shellRestarted: true,
    } as never).shellRestarted,
    true,
  );
  assert.equal(ToolResult.parse({ shellRestarted: true }).shellRestarted, true);
});
