/**
 * Every value that becomes shell text is inert (issue: `run_command`'s `cwd`
 * ran any command). Through real shells: the quoting helper, the terminal's
 * command file and input line, `run_command`'s cwd and timeout through the
 * tool executor, the output folder, the outcome check's workspace, and the
 * editor terminal's banner.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from '../../support/fc';
import { ShellTextError, assertTypable, shellQuote } from '../../../core/shell/quote';
import { TerminalSession } from '../../../core/shell/session';
import { commandScript } from '../../../core/shell/kinds';
import { createToolExecutor } from '../../../core/tools/executor';
import { NodeWorkspaceFs } from '../../../core/workspace/node-fs';
import { runOutcomeCheck } from '../../../core/outcome/check';
import { commandBanner } from '../../../extension/agent/marker-filter';

/**
 * Values that would run something, or change the word, if they reached a shell
 * unquoted or in double quotes. Each one, if expanded, creates the file PWNED
 * in the current folder (or fails loudly).
 */
const HOSTILE = [
  '$(touch PWNED)',
  '`touch PWNED`',
  '${IFS}$(touch${IFS}PWNED)',
  '"$(touch PWNED)"',
  "'$(touch PWNED)'",
  "x'; touch PWNED; echo '",
  'x"; touch PWNED; echo "',
  'a; touch PWNED',
  'a && touch PWNED',
  'a | touch PWNED',
  'a\ntouch PWNED',
  'a\r\ntouch PWNED',
  '\\',
  'a\\',
  "a\\'; touch PWNED; #",
  '\\$(touch PWNED)',
  '*',
  '~',
  '-rf',
  '--',
  '!!',
  '#not a comment',
  ' leading and trailing ',
  'ends in a newline\n',
  '$HOME',
  '%s%n',
  'ünïcødé ✓',
];

const SHELLS: { path: string; dialect: 'posix' | 'fish' }[] = [
  { path: '/bin/sh', dialect: 'posix' },
  { path: '/bin/bash', dialect: 'posix' },
  { path: '/usr/bin/zsh', dialect: 'posix' },
  { path: '/usr/bin/fish', dialect: 'fish' },
];
const present = SHELLS.filter((s) => existsSync(s.path));

function scratch(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), 'lar-quote-')));
}

/** Every file named PWNED under `dir`. */
function pwned(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.name === 'PWNED') out.push(p);
      if (e.isDirectory() && !e.isSymbolicLink()) walk(p);
    }
  };
  walk(dir);
  return out;
}

/** What `printf %s WORD` prints in `shell`, run in `cwd` with a clean environment. */
function echoBack(shell: string, word: string, cwd: string): string {
  const args = shell.endsWith('fish') ? ['--no-config', '-c', `printf %s ${word}`] : ['-c', `printf %s ${word}`];
  const r = spawnSync(shell, args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, LANG: 'C.UTF-8' },
  });
  assert.equal(r.status, 0, `${shell} failed on ${JSON.stringify(word)}: ${r.stderr}`);
  return r.stdout;
}

/**
 * `fn` with a terminal running `sh` in `ws` (HOME there too, outputs under
 * `outRoot`) and the tool executor over it; the shell is ended afterwards.
 */
async function inShell(
  sh: { path: string },
  ws: string,
  outRoot: string,
  fn: (terminal: TerminalSession, execute: ReturnType<typeof createToolExecutor>) => Promise<void>,
  extra: { mode?: 'pty' | 'pipe'; graceMs?: number; env?: Record<string, string> } = {},
): Promise<void> {
  const { env, ...rest } = extra;
  const terminal = new TerminalSession({
    cwd: ws,
    env: { PATH: process.env.PATH, HOME: ws, SHELL: sh.path, ...env },
    outputDir: join(outRoot, 'out', basename(sh.path)),
    ...rest,
  });
  try {
    await fn(terminal, createToolExecutor({ fs: new NodeWorkspaceFs(ws), terminal, commandTimeoutMs: 20_000 }));
  } finally {
    terminal.dispose();
  }
}

test('every shell kind the terminal speaks is installed here, so each is tested (npm run setup installs zsh and fish)', () => {
  assert.deepEqual(
    SHELLS.filter((s) => !existsSync(s.path)).map((s) => s.path),
    [],
  );
});

test('shellQuote: every hostile value comes back from each real shell exactly as it was, and runs nothing', () => {
  const dir = scratch();
  try {
    for (const sh of present) {
      for (const v of HOSTILE)
        assert.equal(echoBack(sh.path, shellQuote(v, sh.dialect), dir), v, `${sh.path}: ${JSON.stringify(v)}`);
    }
    assert.deepEqual(pwned(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('shellQuote: any string without NUL round-trips through each real shell (property)', () => {
  const dir = scratch();
  try {
    // Characters shells treat specially, mixed with anything else.
    const special = fc.constantFrom(...`'"\\$\`;&|<>(){}[]*?!#~=%^\n\r\t -`.split(''), '$(', '${', "\\'", "'\\''");
    const value = fc
      .array(fc.oneof(special, fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 12 })
      .map((xs) => xs.join('').replace(/\0/g, ''));
    for (const sh of present) {
      fc.assert(
        fc.property(value, (v) => echoBack(sh.path, shellQuote(v, sh.dialect), dir) === v),
        { numRuns: sh.path === '/bin/sh' ? 150 : 60 },
      );
    }
    assert.deepEqual(pwned(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('shellQuote refuses a NUL instead of cutting the value; assertTypable refuses terminal control characters', () => {
  assert.throws(
    () => shellQuote('a\0b'),
    (e: unknown) => e instanceof ShellTextError && /NUL/.test(e.message),
  );
  assert.throws(() => assertTypable('/w/a\tb', 'the folder', 'fish'), ShellTextError);
  assertTypable('/w/a\tb', 'the folder', 'posix');
  for (const c of ['\x03', '\x04', '\x15', '\x16', '\x1a', '\x1b', '\x7f', '\x9b', '\n', '\r', '\0']) {
    assert.throws(
      () => assertTypable(`/w/a${c}b`, 'the folder'),
      (e: unknown) => e instanceof ShellTextError && /the folder has a control character/.test(e.message),
    );
  }
  assertTypable('/w/a b$(x)\'"`\\;ü✓', 'a folder');
});

test('the command file: a trailing comment or a here-document in the command cannot swallow the folder wrapper', () => {
  const dir = scratch();
  try {
    // A backslash before a quote and at the end: fish's single quotes know `\\` and `\'`.
    const sub = join(dir, "it's $(here) a\\'b \\");
    mkdirSync(sub);
    for (const sh of present) {
      const kind = sh.path.endsWith('fish')
        ? 'fish'
        : sh.path.endsWith('zsh')
          ? 'zsh'
          : sh.path.endsWith('bash')
            ? 'bash'
            : 'posix';
      const script = join(dir, 'cmd.sh');
      const command = kind === 'fish' ? 'pwd # a comment' : 'pwd # a comment\ncat <<EOF\nheredoc )\nEOF';
      writeFileSync(script, commandScript(command, kind, sub));
      // Sourced, then the shell goes on (fish: as in the terminal session, by a fish process of its own).
      const line =
        kind === 'fish'
          ? `${sh.path} --no-config ${shellQuote(script, 'fish')}; pwd`
          : `. ${shellQuote(script, 'posix')}; pwd`;
      const args = kind === 'fish' ? ['--no-config', '-c', line] : ['-c', line];
      const r = spawnSync(sh.path, args, { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir } });
      assert.equal(r.status, 0, `${sh.path}: ${r.stderr}`);
      const lines = r.stdout.trimEnd().split('\n');
      assert.equal(lines[0], sub, `${sh.path} ran in ${lines[0]}`);
      if (kind !== 'fish') assert.equal(lines[1], 'heredoc )');
      assert.equal(lines.at(-1), dir, `${sh.path}: the folder change outlived the command`);
    }
    assert.deepEqual(pwned(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run_command: a hostile cwd (existing folder or not) runs nothing but the command, in that folder, through every shell', async () => {
  const dir = scratch();
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  try {
    for (const sh of present) {
      await inShell(
        sh,
        ws,
        dir,
        async (_terminal, execute) => {
          for (const name of HOSTILE) {
            // Folder names the workspace paths take as names (a backslash is a separator to them; `~` is refused).
            if (name.includes('\\') || name === '~') continue;
            const folder = join(ws, name);
            mkdirSync(folder, { recursive: true });
            // The folder is written to a file: the terminal's text drops carriage returns.
            const where = join(dir, 'where.txt');
            const o = await execute(
              'run_command',
              { command: `pwd > ${shellQuote(where)}`, cwd: name },
              { workspace: ws },
            );
            assert.equal(o.status, 'ok', `${sh.path} cwd ${JSON.stringify(name)}: ${o.observation}`);
            assert.equal(
              (o.result as { exitCode: number }).exitCode,
              0,
              `${sh.path} cwd ${JSON.stringify(name)}: ${o.observation}`,
            );
            assert.equal(readFileSync(where, 'utf8'), `${folder}\n`, `${sh.path} cwd ${JSON.stringify(name)}`);
            // The shell's own folder did not move.
            const back = await execute('run_command', { command: 'pwd' }, { workspace: ws });
            assert.ok(
              back.observation.includes(`\n${ws}\n`),
              `${sh.path}: after cwd ${JSON.stringify(name)} the shell is in: ${back.observation}`,
            );
          }
          // Folders that do not exist are refused before anything runs.
          for (const name of HOSTILE.filter((n) => !existsSync(join(ws, n)))) {
            const o = await execute('run_command', { command: 'touch RAN', cwd: name }, { workspace: ws });
            assert.equal(o.status, 'error', `cwd ${JSON.stringify(name)}: ${o.observation}`);
          }
          // A file is not a folder.
          writeFileSync(join(ws, 'file.txt'), 'x');
          const f = await execute('run_command', { command: 'touch RAN', cwd: 'file.txt' }, { workspace: ws });
          assert.match(f.observation, /Not run: "file.txt" is not a folder/);
        },
        { graceMs: 500 },
      );
      assert.deepEqual(pwned(dir), [], `${sh.path} expanded a value`);
      assert.equal(existsSync(join(ws, 'RAN')), false);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run_command: arguments of the wrong type (a malformed call run under enforcement warn) are not run', async () => {
  const dir = scratch();
  try {
    const terminal = new TerminalSession({
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/sh' },
      outputDir: join(dir, '.out'),
    });
    const execute = createToolExecutor({ fs: new NodeWorkspaceFs(dir), terminal });
    try {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ command: ['touch', 'PWNED'] }, /non-empty string "command"/],
        [{ command: '' }, /non-empty string "command"/],
        [{ command: 'touch PWNED', cwd: ['$(touch PWNED)'] }, /"cwd" must be/],
        [{ command: 'touch PWNED', cwd: { toString: '$(touch PWNED)' } }, /"cwd" must be/],
        [{ command: 'touch PWNED', timeoutMs: '$(touch PWNED)' }, /"timeoutMs" must be/],
        [{ command: 'touch PWNED', timeoutMs: '1; touch PWNED' }, /"timeoutMs" must be/],
        [{ command: 'touch PWNED', timeoutMs: -5 }, /"timeoutMs" must be/],
        [{ command: 'touch PWNED', timeoutMs: 1.5 }, /"timeoutMs" must be/],
        [{ command: 'touch PWNED', cwd: 'a\0b' }, /Not run/],
      ];
      for (const [args, why] of cases) {
        const o = await execute('run_command', args, { workspace: dir });
        assert.equal(o.status, 'error', JSON.stringify(args));
        assert.match(o.observation, why);
      }
    } finally {
      terminal.dispose();
    }
    assert.deepEqual(pwned(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the output folder: a hostile name is only a name; a control character in it is refused with a clear error', async () => {
  const dir = scratch();
  try {
    for (const sh of present) {
      const out = join(dir, `out $(touch PWNED) \`touch PWNED\` it's "q" \\ ${sh.path.split('/').pop()}`);
      const t = new TerminalSession({
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: dir, SHELL: sh.path },
        outputDir: out,
      });
      try {
        const r = await t.run('echo ran');
        assert.equal(r.exitCode, 0, `${sh.path}: ${r.output}`);
        assert.equal(r.output.trim(), 'ran');
      } finally {
        t.dispose();
      }
    }
    assert.deepEqual(pwned(dir), []);
    assert.throws(
      () =>
        new TerminalSession({ cwd: dir, env: { PATH: process.env.PATH }, outputDir: join(dir, 'out\x15touch PWNED') }),
      (e: unknown) => e instanceof ShellTextError && /output folder .* control character \(0x15\)/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the outcome check: a workspace with a hostile name is only its folder', async () => {
  const dir = scratch();
  try {
    const ws = join(dir, 'ws $(touch PWNED) `touch PWNED` it\'s "q" ; touch PWNED');
    mkdirSync(ws);
    const o = await runOutcomeCheck({ command: 'pwd', expectExitCode: 0, timeoutMs: 10_000 }, ws);
    assert.equal(o.exitCode, 0, o.output);
    assert.equal(o.output?.trim(), ws);
    assert.deepEqual(pwned(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the editor terminal banner shows control characters of a command instead of sending them to the terminal', () => {
  const b = commandBanner('echo \x1b]52;c;cHduZWQ=\x07 \x1b[2J done', 'sub\x1b[31m');
  const inner = b.replace(/^\x1b\[1m/, '').replace(/\x1b\[0m\r\n$/, '');
  // Only the banner's own styling is an escape sequence.
  assert.deepEqual(
    inner.match(/\x1b\[[0-9;]*m/g)?.filter((s) => !['\x1b[2m', '\x1b[0m', '\x1b[1m'].includes(s)) ?? [],
    [],
  );
  assert.ok(
    !inner.includes('\x07') && !inner.includes('\x1b]') && !inner.includes('\x1b[2J') && !inner.includes('\x1b[31m'),
  );
  assert.match(b, /\^\[\]52;c;cHduZWQ=\^G \^\[\[2J done/);
  assert.match(b, /\(in sub\^\[\[31m\)/);
  // C1 controls are CSI, OSC and DCS to xterm.js without any ESC; a newline in the folder stays on the banner's line.
  const c1 = commandBanner('rm -rf ~ \u009b2K\u009b1Gecho safe \u009d8;;https://evil\u009cclick', 'a\nb');
  assert.doesNotMatch(c1, /[\u0080-\u009f]/);
  assert.match(c1, /\\x9b2K\\x9b1Gecho safe \\x9d8;;https:\/\/evil\\x9cclick/);
  assert.match(c1, /\(in a\^Jb\)/);
  assert.equal(commandBanner('a\nb'), '\x1b[1m$ a\r\n  b\x1b[0m\r\n');
});

test("the folder wrapper uses the shell's builtin cd: a user's cd function or zsh chpwd hook does not run", async () => {
  const dir = scratch();
  try {
    mkdirSync(join(dir, 'sub'));
    // From the shell's start-up files (the home is `dir`): a command's own functions do not outlive it, these do.
    mkdirSync(join(dir, '.config', 'fish'), { recursive: true });
    writeFileSync(join(dir, '.shrc'), 'cd() { echo HOOK; }\n');
    writeFileSync(join(dir, '.bashrc'), 'cd() { echo HOOK; builtin cd "$@"; }\n');
    writeFileSync(join(dir, '.zshrc'), 'chpwd() { echo HOOK; }; cd() { echo HOOK; builtin cd "$@"; }\n');
    writeFileSync(join(dir, '.config', 'fish', 'config.fish'), 'function cd; echo HOOK; builtin cd $argv; end\n');
    for (const sh of present) {
      await inShell(
        sh,
        dir,
        dir,
        async (t, execute) => {
          // The hook is live for commands: a plain cd runs it (zsh and fish: each command runs in `zsh -f` or
          // `fish --no-config`, without them, so a config the run writes into the home cannot reach later commands).
          if (!sh.path.endsWith('zsh') && !sh.path.endsWith('fish'))
            assert.match((await t.run('cd sub; cd ..')).output, /HOOK/, sh.path);
          const o = await execute('run_command', { command: 'echo in-sub', cwd: 'sub' }, { workspace: dir });
          assert.equal((o.result as { exitCode: number }).exitCode, 0, `${sh.path}: ${o.observation}`);
          assert.doesNotMatch(o.observation, /HOOK/, `${sh.path} ran the user's cd: ${o.observation}`);
        },
        { env: { ENV: join(dir, '.shrc') } },
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a command that returns or exits early in its folder keeps its status, and the shell stays where it was', async () => {
  const dir = scratch();
  try {
    mkdirSync(join(dir, 'sub'));
    for (const sh of present) {
      await inShell(sh, dir, dir, async (_t, execute) => {
        // fish: `exit` in a sourced file ends only the file, `return` only the wrapper's function.
        const early =
          sh.dialect === 'fish' ? ['return 3', 'cd /; return 4', 'exit 5', 'cd /; exit 6'] : ['exit 3', 'cd /; exit 4'];
        for (const [i, command] of early.entries()) {
          const o = await execute('run_command', { command, cwd: 'sub' }, { workspace: dir });
          assert.equal(
            (o.result as { exitCode: number }).exitCode,
            Number(/\d+$/.exec(command)![0]),
            `${sh.path} ${command}: ${o.observation}`,
          );
          const where = join(dir, 'where.txt');
          await execute('run_command', { command: `pwd > ${shellQuote(where)}` }, { workspace: dir });
          assert.equal(
            readFileSync(where, 'utf8'),
            `${dir}\n`,
            `${sh.path}: after ${JSON.stringify(command)} the shell moved`,
          );
          void i;
        }
        // An interrupted command (a timeout here) ends no wrapper either.
        const slow = await execute(
          'run_command',
          { command: 'cd /; sleep 30', cwd: 'sub', timeoutMs: 800 },
          { workspace: dir },
        );
        assert.equal(slow.status, 'timeout', `${sh.path}: ${slow.observation}`);
        const where = join(dir, 'where.txt');
        await execute('run_command', { command: `pwd > ${shellQuote(where)}` }, { workspace: dir });
        assert.equal(readFileSync(where, 'utf8'), `${dir}\n`, `${sh.path}: after a timeout in sub the shell moved`);
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a folder swapped for a symbolic link between the check and the cd is refused: the command does not run', () => {
  const dir = scratch();
  try {
    for (const sh of present) {
      const kind = sh.path.endsWith('fish')
        ? 'fish'
        : sh.path.endsWith('zsh')
          ? 'zsh'
          : sh.path.endsWith('bash')
            ? 'bash'
            : 'posix';
      const checked = join(dir, `checked-${kind}`);
      const elsewhere = join(dir, `elsewhere-${kind}`);
      mkdirSync(checked);
      mkdirSync(elsewhere);
      const script = join(dir, `cmd-${kind}.sh`);
      writeFileSync(script, commandScript('touch RAN', kind, checked));
      // The swap a background process could make after the executor resolved the folder.
      rmSync(checked, { recursive: true });
      symlinkSync(elsewhere, checked);
      const line = `${kind === 'fish' ? 'source' : '.'} ${shellQuote(script, sh.dialect)}; echo "status $${kind === 'fish' ? 'status' : '?'}"`;
      const r = spawnSync(sh.path, kind === 'fish' ? ['--no-config', '-c', line] : ['-c', line], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: dir },
      });
      assert.match(r.stderr, /is not the folder that was checked/, `${sh.path}: ${r.stdout} ${r.stderr}`);
      assert.match(r.stdout, /status [1-9]/, sh.path);
      assert.equal(existsSync(join(elsewhere, 'RAN')), false, `${sh.path} ran the command in the swapped-in folder`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a NUL in the command is refused (a shell would drop it: su\\0do would run sudo past the policy), and a timeout too long for a timer is capped, not fired at once', async () => {
  const dir = scratch();
  try {
    const terminal = new TerminalSession({
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, SHELL: '/bin/bash' },
      outputDir: join(dir, '.out'),
    });
    const execute = createToolExecutor({ fs: new NodeWorkspaceFs(dir), terminal });
    try {
      const nul = await execute('run_command', { command: 'tou\0ch PWNED' }, { workspace: dir });
      assert.equal(nul.status, 'error');
      assert.match(nul.observation, /NUL character/);
      const long = await execute(
        'run_command',
        { command: 'echo still-here', timeoutMs: 2 ** 31 + 5 },
        { workspace: dir },
      );
      assert.equal(long.status, 'ok', long.observation);
      assert.equal((long.result as { exitCode: number }).exitCode, 0, long.observation);
    } finally {
      terminal.dispose();
    }
    assert.deepEqual(pwned(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a shell whose syntax the terminal does not speak (tcsh, pwsh, nu …) is not used; fish without a terminal gives way to a POSIX shell', async () => {
  const dir = scratch();
  try {
    for (const name of ['tcsh', 'csh', 'pwsh', 'nu', 'xonsh']) {
      const fake = join(dir, name);
      symlinkSync('/bin/sh', fake);
      const t = new TerminalSession({
        cwd: dir,
        env: { PATH: process.env.PATH, SHELL: fake },
        outputDir: join(dir, 'out'),
      });
      assert.equal(t.shell, '/bin/bash', name);
      t.dispose();
    }
    for (const name of ['dash', 'ksh', 'mksh', 'bash5.2', 'zsh-5.9']) {
      const fake = join(dir, name);
      symlinkSync('/bin/sh', fake);
      const t = new TerminalSession({
        cwd: dir,
        env: { PATH: process.env.PATH, SHELL: fake },
        outputDir: join(dir, 'out'),
      });
      assert.equal(t.shell, fake, name);
      t.dispose();
    }
    if (existsSync('/usr/bin/fish')) {
      const t = new TerminalSession({
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: dir, SHELL: '/usr/bin/fish' },
        outputDir: join(dir, 'out'),
        mode: 'pipe',
      });
      try {
        assert.notEqual(t.shell, '/usr/bin/fish');
        const r = await t.run('echo piped');
        assert.equal(r.exitCode, 0, r.output);
        assert.equal(r.output.trim(), 'piped');
      } finally {
        t.dispose();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without a terminal (pipe mode) a hostile cwd is as inert as with one', async () => {
  const dir = scratch();
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  try {
    for (const sh of present.filter((s) => s.dialect === 'posix')) {
      await inShell(
        sh,
        ws,
        dir,
        async (_terminal, execute) => {
          for (const name of HOSTILE.filter((n) => !n.includes('\\') && n !== '~')) {
            mkdirSync(join(ws, name), { recursive: true });
            const where = join(dir, 'where.txt');
            const o = await execute(
              'run_command',
              { command: `pwd > ${shellQuote(where)}`, cwd: name },
              { workspace: ws },
            );
            assert.equal(
              (o.result as { exitCode: number }).exitCode,
              0,
              `${sh.path} cwd ${JSON.stringify(name)}: ${o.observation}`,
            );
            assert.equal(readFileSync(where, 'utf8'), `${join(ws, name)}\n`);
          }
        },
        { mode: 'pipe' },
      );
      assert.deepEqual(pwned(dir), [], `${sh.path} expanded a value`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cwd "." is the workspace, wherever earlier commands left the shell', async () => {
  const dir = scratch();
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  try {
    for (const sh of present) {
      await inShell(sh, ws, dir, async (t, execute) => {
        assert.equal((await t.run(`cd ${shellQuote(dir, sh.dialect)}`)).exitCode, 0);
        const where = join(dir, 'where.txt');
        for (const cwd of ['.', './', 'sub/..']) {
          if (cwd === 'sub/..') mkdirSync(join(ws, 'sub'), { recursive: true });
          const o = await execute('run_command', { command: `pwd > ${shellQuote(where)}`, cwd }, { workspace: ws });
          assert.equal((o.result as { exitCode: number }).exitCode, 0, `${sh.path} ${cwd}: ${o.observation}`);
          assert.equal(readFileSync(where, 'utf8'), `${ws}\n`, `${sh.path}: cwd ${cwd}`);
        }
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Tab in the output folder is only text for sh, bash and zsh; fish, whose line editor completes on it, refuses it', async () => {
  const dir = scratch();
  try {
    const out = join(dir, 'out\twith tab');
    for (const sh of present.filter((x) => x.dialect === 'posix')) {
      const t = new TerminalSession({
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: dir, SHELL: sh.path },
        outputDir: out,
      });
      try {
        const r = await t.run('echo ran');
        assert.equal(r.output.trim(), 'ran', sh.path);
      } finally {
        t.dispose();
      }
    }
    if (existsSync('/usr/bin/fish')) {
      assert.throws(
        () =>
          new TerminalSession({
            cwd: dir,
            env: { PATH: process.env.PATH, HOME: dir, SHELL: '/usr/bin/fish' },
            outputDir: out,
            mode: 'pty',
          }),
        (e: unknown) => e instanceof ShellTextError && /control character \(0x09\)/.test(e.message),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
