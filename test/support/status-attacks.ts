/**
 * Commands that tried to change how a LATER command's status is seen, shared
 * by test/suites/command-status.test.ts (unconfined) and test/suites/sandbox-escape.test.ts: each
 * made every later failing command be recorded as exit 0 when the shell that
 * ran the commands also printed their end markers.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TerminalSession } from '../../core/shell/session';

/** After the attack: `false` is exit 1 and `true` exit 0, both seen by their end markers. */
export async function laterCommandsTellTheTruth(t: TerminalSession, what: string): Promise<void> {
  const no = await t.run('false');
  assert.deepEqual(
    [no.completion, no.exitCode],
    ['marker', 1],
    `${what}: a later \`false\` is recorded as failing: ${no.output}`,
  );
  const yes = await t.run('true');
  assert.deepEqual([yes.completion, yes.exitCode], ['marker', 0], `${what}: a later \`true\`: ${yes.output}`);
  const out = await t.run('echo still-here');
  assert.equal(out.output, 'still-here\n', what);
}

// The end line the shell itself ran before: `printf '\n__LAR_E_%s_%d__\n' NONCE "$?"`. A
// function, alias or program standing in for printf prints it with status 0.
const FORMAT = String.raw`'\n__LAR_E_%s_%d__\n'`;
const forge = (call: string): string => `if [ "$1" = ${FORMAT} ]; then ${call} "$1" "$2" 0; else ${call} "$@"; fi`;
/** A program named printf, for a PATH that puts it first. */
export const PRINTF_PROGRAM = `#!/bin/sh\nif [ "$1" = ${FORMAT} ]; then exec /usr/bin/printf "$1" "$2" 0; fi\nexec /usr/bin/printf "$@"\n`;
const evilBin =
  'mkdir -p "$PWD/evil-bin" && cp ./printf-program "$PWD/evil-bin/printf" && chmod +x "$PWD/evil-bin/printf"\nexport PATH="$PWD/evil-bin:$PATH"\n';

export interface Attack {
  /** What env.sh does. */
  title: string;
  shells: string[];
  /** env.sh (sourced by the first command). */
  script: string;
}

/** A terminal a program left raw, or without `\n` → `\r\n`: the end markers came without the line ending the session looks for, and every later command was unobserved. */
const TERMINAL_LEFT_BROKEN: Attack[] = [
  {
    title: 'the terminal left raw by a program',
    shells: ['bash', 'zsh', 'sh', 'fish'],
    script: "python3 -c 'import sys, tty; tty.setraw(sys.stdin.fileno())' 2>/dev/null\n",
  },
  {
    title: 'the terminal left without onlcr',
    shells: ['bash', 'zsh', 'sh', 'fish'],
    script: 'stty -onlcr 2>/dev/null\n',
  },
];

export const ATTACKS: Attack[] = [
  {
    title: 'printf redefined as a function',
    shells: ['bash', 'zsh'],
    script: `printf() { ${forge('builtin printf')}; }\n`,
  },
  { title: 'printf redefined as a function', shells: ['sh'], script: `printf() { ${forge('command printf')}; }\n` },
  {
    title: 'builtin redefined (and printf routed through it by an alias)',
    shells: ['bash', 'zsh'],
    script: `builtin() { if [ "$1" = printf ] && [ "$2" = ${FORMAT} ]; then command printf "$2" "$3" 0; else command "$@"; fi; }\nalias printf='builtin printf'\n`,
  },
  {
    title: 'command redefined (and printf routed through it by an alias)',
    shells: ['bash', 'zsh'],
    script: `command() { if [ "$1" = printf ] && [ "$2" = ${FORMAT} ]; then builtin printf "$2" "$3" 0; else builtin command "$@"; fi; }\nalias printf='command printf'\n`,
  },
  {
    title: 'enable -n printf, and a printf program first in PATH',
    shells: ['bash'],
    script: `${evilBin}enable -n printf\n`,
  },
  {
    title: 'disable printf, and a printf program first in PATH',
    shells: ['zsh'],
    script: `${evilBin}disable printf\n`,
  },
  {
    title: 'disable -r on the reserved words, and printf redefined',
    shells: ['zsh'],
    script: `printf() { ${forge('builtin printf')}; }\ndisable -r if then else elif fi case esac for while until do done select function time '{' '}' '[[' ']]' '!'\n`,
  },
  {
    title: 'an alias for printf',
    shells: ['bash', 'zsh', 'sh'],
    script: `__forge() { ${forge('command printf')}; }\nalias printf=__forge\n`,
  },
  {
    title: 'a DEBUG trap with extdebug, which sees the next line (nonce and all) and skips it',
    shells: ['bash'],
    script: `shopt -s extdebug\ntrap 'case $BASH_COMMAND in *__LAR_E_*) eval "set -- $BASH_COMMAND"; builtin printf "\\n__LAR_E_%s_0__\\n" "$3"; false;; esac' DEBUG\n`,
  },
  {
    title: 'PROMPT_COMMAND redefining printf before every line',
    shells: ['bash'],
    script: `__evil='printf() { if [ "$1" = '"'"${FORMAT}"'"' ]; then builtin printf "$1" "$2" 0; else builtin printf "$@"; fi; }'\nPROMPT_COMMAND='eval "$__evil"'\n`,
  },
  {
    title: 'a preexec hook redefining printf',
    shells: ['zsh'],
    script: `preexec() { printf() { ${forge('builtin printf')}; }; }\n`,
  },
  {
    title: 'TRAPDEBUG, which sees the next line (nonce and all)',
    shells: ['zsh'],
    script: `TRAPDEBUG() { if [[ $ZSH_DEBUG_CMD == *__LAR_E_* ]]; then local -a w; w=(\${(z)ZSH_DEBUG_CMD}); builtin printf '\\n__LAR_E_%s_0__\\n' $w[3]; fi; }\n`,
  },
  // The runner's own functions stop at one level of nesting: every later command failed.
  { title: 'FUNCNEST=1 exported', shells: ['bash'], script: 'export FUNCNEST=1\n' },
  ...TERMINAL_LEFT_BROKEN,
];

// fish's end line was `printf '\n__LAR_E_%s_%d__\n' NONCE $__lar_status`.
const FISH_PRINTF = `function printf; if test "$argv[1]" = ${FORMAT}; builtin printf $argv[1] $argv[2] 0; else; builtin printf $argv; end; end`;
export const FISH_ATTACKS: Attack[] = [
  { title: 'printf redefined as a function', shells: ['fish'], script: `${FISH_PRINTF}\n` },
  {
    title: 'a fish_preexec handler redefining printf',
    shells: ['fish'],
    script: `function __evil --on-event fish_preexec\n${FISH_PRINTF}\nend\n`,
  },
  {
    title: 'a fish_postexec handler redefining printf',
    shells: ['fish'],
    script: `function __evil --on-event fish_postexec\n${FISH_PRINTF}\nend\n`,
  },
  {
    title: 'an alias for printf',
    shells: ['fish'],
    script: `function __forge; if test "$argv[1]" = ${FORMAT}; builtin printf $argv[1] $argv[2] 0; else; builtin printf $argv; end; end\nalias printf=__forge\n`,
  },
  // Each command's child is a fish process: what the (writable) home gives every fish must not reach it.
  {
    title: 'exit and false redefined in the config, the functions folder and the universal variables of the home',
    shells: ['fish'],
    script: [
      'mkdir -p ~/.config/fish/conf.d ~/.config/fish/functions ~/evil-functions',
      "echo 'function exit; builtin exit 0; end' > ~/.config/fish/conf.d/zz.fish",
      "printf 'function false\\n    return 0\\nend\\n' > ~/.config/fish/functions/false.fish",
      "printf 'function true\\n    return 1\\nend\\n' > ~/evil-functions/true.fish",
      'set -U fish_function_path ~/evil-functions $fish_function_path',
      '',
    ].join('\n'),
  },
];

/**
 * A daemon the command leaves behind (its own session, the terminal still
 * open): once the command is over it stops the shells of the terminal's
 * session (the one the session reads lines with), so that it alone reads
 * the next line typed into the terminal, prints a forged begin and end
 * marker (status 0) for every 16-hex-digit word in that line, and lets the
 * shell go.
 */
export const LURKER = String.raw`import os, re, signal, sys, time
session = os.getsid(0)
if os.fork():
    os._exit(0)
os.setsid()
time.sleep(0.6)
def shell_of_session(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            comm, rest = f.read().rsplit(')', 1)
        return int(rest.split()[3]) == session and re.match(r'^(bash|zsh|fish|sh|dash)(-[0-9a-f]+)?$', comm.split('(', 1)[1])
    except (OSError, ValueError, IndexError):
        return False
shells = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid() and shell_of_session(int(p))]
stopped = []
for p in shells:
    try:
        os.kill(p, signal.SIGSTOP); stopped.append(p)
    except OSError:
        pass
open('lurker-ready', 'w').close()
line = b''
deadline = time.time() + 15
os.set_blocking(0, False)
while time.time() < deadline and not line.endswith((b'\n', b'\r')):
    try:
        line += os.read(0, 4096)
    except BlockingIOError:
        time.sleep(0.02)
with open('lurker-saw.txt', 'wb') as f:
    f.write(line)
for n in sorted(set(re.findall(rb'[0-9a-f]{16}', line))):
    os.write(1, b'__LAR_B_' + n + b'__\n\n__LAR_E_' + n + b'_0__\n')
for p in stopped:
    os.kill(p, signal.SIGCONT)
`;

/** A line pushed into the terminal (TIOCSTI: in the sandbox seccomp refuses it; unconfined, the kernel may allow it). */
export const TYPIST = String.raw`import fcntl, termios, sys
line = b'printf() { if [ "$1" = ' + b"'\\n__LAR_E_%s_%d__\\n'" + b' ]; then builtin printf "$1" "$2" 0; else builtin printf "$@"; fi; }; touch typed-line-ran\n'
try:
    for c in line:
        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
    print('typed')
except OSError as e:
    print('TIOCSTI', e.strerror)
`;

/**
 * Whether `line` is (the tail of) a line the session types into the terminal: which command to run
 * (`__LAR_C_<seq>__`) or a sync line (`__LAR_Y_<n>__`, `__LAR_Z_<n>__`). A shell that reads a byte
 * at a time (dash) may have taken its first bytes before it was stopped.
 */
export function isTypedLineTail(line: string): boolean {
  const forms: [string, RegExp][] = [
    ['__LAR_C_', /^\d+__$/],
    ['__LAR_Y_', /^[0-9a-f]+__$/],
    ['__LAR_Z_', /^[0-9a-f]+__$/],
  ];
  return forms.some(([head, body]) => {
    for (let i = 0; i <= head.length; i++)
      if (line.startsWith(head.slice(i)) && body.test(line.slice(head.length - i))) return true;
    return body.test(line) || /^_{1,2}$/.test(line);
  });
}

/** Waits until the LURKER in `ws` has stopped the shell (it says so with a file), so the next line is typed for it. */
export async function lurkerStoppedTheShell(ws: string): Promise<void> {
  for (let i = 0; i < 300 && !existsSync(join(ws, 'lurker-ready')); i++)
    await new Promise((res) => setTimeout(res, 50));
  assert.ok(existsSync(join(ws, 'lurker-ready')), 'the lurker stopped the shell');
}
