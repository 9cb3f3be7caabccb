/**
 * A command's status is what the kernel reported for the process that ran
 * it; nothing a command does changes how a LATER command's status is seen.
 * Each attack below made every later failing command be recorded as exit 0
 * when the shell that ran the commands also printed their end markers: a
 * script the command sources (`. ./env.sh`, as a virtualenv's `activate`
 * is) redefines printf, builtin or command, disables printf, sets a DEBUG
 * trap, a zsh preexec hook or TRAPDEBUG, a fish event handler, an alias,
 * PROMPT_COMMAND; a process it leaves behind reads the terminal's input
 * line (where the nonce was) or types a line into it. Here each is followed
 * by `false` and `true` in later commands, which must be recorded as exit 1
 * and 0, in real shells (bash, zsh, fish, sh) on a real pty and over pipes,
 * unconfined (the sandboxed runs: test/suites/sandbox-escape.test.ts). Then what must still
 * work: the folder and exported variables carry over, and nothing else does.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerminalSession } from '../../core/shell/session';
import type { TerminalOptions } from '../../core/shell/types';
import { parseState } from '../../core/shell/fifos';
import { alive } from '../../core/shell/procs';
import {
  ATTACKS,
  FISH_ATTACKS,
  LURKER,
  PRINTF_PROGRAM,
  TYPIST,
  isTypedLineTail,
  lurkerStoppedTheShell,
  laterCommandsTellTheTruth,
} from '../support/status-attacks';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'lar-status-')));
const sessions: TerminalSession[] = [];
after(() => {
  for (const s of sessions) s.dispose();
  rmSync(root, { recursive: true, force: true });
});

const SHELLS = ['/bin/bash', '/usr/bin/zsh', '/usr/bin/fish', '/bin/sh'].filter((s) => existsSync(s));
const name = (shell: string): string => shell.split('/').pop()!;

/** A fresh workspace with `files`, and a terminal of `shell` in it. */
function session(
  shell: string,
  files: Record<string, string> = {},
  extra: Partial<TerminalOptions> = {},
): { t: TerminalSession; ws: string } {
  const ws = mkdtempSync(join(root, 'ws-'));
  for (const [f, text] of Object.entries(files)) writeFileSync(join(ws, f), text, { mode: 0o755 });
  const t = new TerminalSession({
    cwd: ws,
    env: { PATH: process.env.PATH, HOME: ws, LANG: 'C.UTF-8', SHELL: shell },
    shell,
    outputDir: join(ws, '.out'),
    inputIdleMs: 800,
    graceMs: 800,
    timeoutMs: 20_000,
    ...extra,
  });
  sessions.push(t);
  return { t, ws };
}

for (const a of [...ATTACKS, ...FISH_ATTACKS]) {
  for (const shell of SHELLS.filter((s) => a.shells.includes(name(s)))) {
    test(`${name(shell)}: a script the command sources, ${a.title}: later commands are recorded as they ended`, async () => {
      const { t, ws } = session(shell, { 'env.sh': a.script, 'printf-program': PRINTF_PROGRAM });
      const r = await t.run(`${name(shell) === 'fish' ? 'source' : '.'} ./env.sh`);
      assert.equal(r.completion, 'marker', r.output);
      await laterCommandsTellTheTruth(t, `${name(shell)}, ${a.title}`);
      // In the same command too: its own definitions are its own, the status is still the child's.
      const same = await t.run(`${name(shell) === 'fish' ? 'source' : '.'} ./env.sh; false`);
      assert.deepEqual([same.completion, same.exitCode], ['marker', 1], same.output);
      assert.ok(existsSync(ws));
    });
  }
}

for (const shell of ['/bin/bash', '/bin/sh']) {
  for (const a of ATTACKS.filter(
    (x) => x.shells.includes(name(shell)) && !/alias|PROMPT_COMMAND|preexec/.test(x.title),
  )) {
    test(`pipe mode, ${name(shell)}: a script the command sources, ${a.title}: later commands are recorded as they ended`, async () => {
      const { t } = session(shell, { 'env.sh': a.script, 'printf-program': PRINTF_PROGRAM }, { mode: 'pipe' });
      const r = await t.run('. ./env.sh');
      assert.equal(r.completion, 'marker', r.output);
      assert.equal(t.mode, 'pipe');
      await laterCommandsTellTheTruth(t, `pipe mode, ${name(shell)}, ${a.title}`);
    });
  }
}

for (const shell of SHELLS) {
  test(`${name(shell)}: a process left reading the terminal learns nothing from the next line that could end it, and later commands are recorded as they ended`, async () => {
    const { t, ws } = session(shell, { 'lurker.py': LURKER });
    const r = await t.run('python3 lurker.py </dev/tty >/dev/tty 2>&1 &');
    assert.equal(r.exitCode, 0, r.output);
    // The lurker stops the shell 0.6 s after it started; the next line is typed once it says it has.
    await lurkerStoppedTheShell(ws);
    const stolen = await t.run('false', { timeoutMs: 5000 });
    // Its line was taken: it never ran, so it has no status, and certainly not 0.
    assert.notEqual(
      stolen.exitCode,
      0,
      `the command whose line was taken is not recorded as a success: ${stolen.completion} ${stolen.output}`,
    );
    const saw = readFileSync(join(ws, 'lurker-saw.txt'), 'utf8');
    assert.ok(saw.length > 0, 'the lurker read the line typed for the command');
    // What the session types is only which command to run (`__LAR_C_<seq>__`) or, after an interrupt, a sync
    // line (`__LAR_Y_…`, `__LAR_Z_…`, answered by the shell's loop, never an end): no begin or end nonce.
    for (const line of saw.split(/[\r\n]/).filter(Boolean))
      assert.ok(isTypedLineTail(line), `the line carries no nonce: ${JSON.stringify(saw)}`);
    await laterCommandsTellTheTruth(t, `${name(shell)}, a lurker`);
  });
}

for (const shell of SHELLS.filter((s) => name(s) !== 'fish')) {
  test(`${name(shell)}, unconfined: a line a program types into the terminal is data to the shell, never code`, async (ctx) => {
    const { t, ws } = session(shell, { 'typist.py': TYPIST });
    const r = await t.run('python3 typist.py');
    if (!/^typed$/m.test(r.output)) return ctx.skip(`this kernel refuses TIOCSTI here (${r.output.trim()})`);
    await laterCommandsTellTheTruth(t, `${name(shell)}, a typed line`);
    assert.ok(!existsSync(join(ws, 'typed-line-ran')), 'the typed line never ran');
  });
}

// ---------------------------------------------------------------- what carries over, what does not

for (const shell of SHELLS) {
  const fish = name(shell) === 'fish';
  test(`${name(shell)}: the folder and exported variables carry over to the next command; functions, aliases and unexported variables do not`, async () => {
    const { t, ws } = session(shell);
    const set = fish
      ? await t.run(
          "mkdir -p 'a b/c' && cd 'a b/c'; set -gx LAR_X 'x y'; set -gx LAR_NL (printf 'line1\\nline2' | string collect); set -g LAR_LOCAL local; function lar_fn; echo fn; end; set -e HOME",
        )
      : await t.run(
          "mkdir -p 'a b/c' && cd 'a b/c' && export LAR_X='x y' LAR_NL=\"$(printf 'line1\\nline2')\"; LAR_LOCAL=local; lar_fn() { echo fn; }; alias lar_al='echo al'; unset HOME",
        );
    assert.equal(set.exitCode, 0, set.output);
    const seen = await t.run(
      fish
        ? 'pwd; echo "[$LAR_X] [$LAR_NL] [$LAR_LOCAL] [$HOME]"; functions -q lar_fn; and echo has-fn'
        : 'pwd; echo "[$LAR_X] [$LAR_NL] [${LAR_LOCAL-}] [${HOME-}]"; command -v lar_fn lar_al || echo none',
    );
    assert.equal(
      seen.output,
      `${join(ws, 'a b', 'c')}\n[x y] [line1\nline2] [] []\n${fish ? '' : 'none\n'}`,
      seen.output,
    );
    // A variable unset again is gone; PATH changes carry (a virtualenv's activate).
    const path = await t.run(
      fish ? 'set -gx PATH $PWD/bin $PATH; set -e LAR_X' : 'export PATH="$PWD/bin:$PATH"; unset LAR_X',
    );
    assert.equal(path.exitCode, 0);
    const again = await t.run(fish ? 'echo "[$LAR_X]"; echo $PATH[1]' : 'echo "[${LAR_X-}]"; echo "${PATH%%:*}"');
    assert.equal(again.output, `[]\n${join(ws, 'a b', 'c', 'bin')}\n`);
  });

  test(`${name(shell)}: exit codes of a pipeline, exit 3, a subshell and a syntax error; a background job outlives its command`, async () => {
    const { t } = session(shell);
    assert.equal((await t.run(fish ? 'true | false' : 'true | false')).exitCode, 1);
    const three = await t.run('exit 3');
    assert.deepEqual([three.completion, three.exitCode], ['marker', 3]);
    const pid = t.pid;
    assert.equal((await t.run(fish ? 'fish -c "exit 4"' : '(exit 4)')).exitCode, 4);
    const bad = await t.run(fish ? 'if' : 'if then');
    assert.equal(bad.completion, 'marker');
    assert.notEqual(bad.exitCode, 0);
    const bg = await t.run(fish ? 'sleep 30 & echo started $last_pid' : 'sleep 30 & echo started $!');
    assert.equal(bg.exitCode, 0);
    const sleeper = Number(/started (\d+)/.exec(bg.output)?.[1]);
    assert.ok(sleeper > 0 && alive(sleeper), `the background job runs on after its command: ${bg.output}`);
    assert.equal((await t.run('echo next')).output, 'next\n');
    assert.ok(alive(sleeper));
    assert.equal(t.pid, pid, 'the same shell throughout');
  });
}

test('a command that ends in a folder that is then removed: the next one runs in the workspace and says so', async () => {
  const { t, ws } = session('/bin/bash');
  await t.run('mkdir gone && cd gone');
  rmSync(join(ws, 'gone'), { recursive: true });
  const r = await t.run('pwd');
  assert.equal(r.exitCode, 0);
  assert.ok(r.output.endsWith(`cannot be entered; this command runs in ${ws}\n${ws}\n`), r.output);
});

test('the folder and variables are kept over a shell restart (a command stopped with its shell)', async () => {
  const { t, ws } = session('/bin/bash');
  await t.run('mkdir -p kept && cd kept && export LAR_KEPT=yes');
  const pid = t.pid;
  await t.restart();
  assert.notEqual(t.pid, pid);
  assert.equal((await t.run('echo "$LAR_KEPT $PWD"')).output, `yes ${join(ws, 'kept')}\n`);
});

test('a run in a folder of its own leaves the folder and variables as they were', async () => {
  const { t, ws } = session('/bin/bash');
  await t.run('mkdir -p sub && export LAR_A=1');
  const r = await t.run('cd /; export LAR_A=2', { cwd: join(ws, 'sub') });
  assert.equal(r.exitCode, 0);
  assert.equal((await t.run('echo "$LAR_A $PWD"')).output, `1 ${ws}\n`);
});

test('a state record is read whole or not at all: the last complete one, carried names only, any bytes in values', () => {
  const rec = (dir: string, ...env: string[]): Buffer =>
    Buffer.from(`${dir}\n\0${env.map((e) => `${e}\0`).join('')}LAR_END\0`, 'latin1');
  const one = parseState(
    rec(
      '/w/a',
      'A=1',
      'B=x=y\nz',
      'BASH_FUNC_f%%=() { :; }',
      'PWD=/w/a',
      '_=/usr/bin/env',
      '__lar_k=x',
      'bad name=1',
      'C=\xff\x01',
    ),
  );
  assert.deepEqual(
    [one?.cwd, [...(one?.env ?? [])]],
    [
      '/w/a',
      [
        ['A', '1'],
        ['B', 'x=y\nz'],
        ['C', '\xff\x01'],
      ],
    ],
  );
  // Cut short (the child was killed while writing): nothing.
  assert.equal(parseState(rec('/w', 'A=1').subarray(0, 10)), undefined);
  // Two records (the EXIT trap after the explicit save): the last; a folder that is not absolute is left out.
  const two = parseState(Buffer.concat([rec('/w/a', 'A=1'), rec('', 'A=2')]));
  assert.deepEqual([two?.cwd, two?.env.get('A')], [undefined, '2']);
});
