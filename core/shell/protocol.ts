/**
 * How the terminal's shell runs each command and reports its end, so that
 * nothing a command does can change how a later command's status is seen.
 *
 * The shell the session starts stays as it started: after its set-up it runs
 * one loop (`parentScript`) that reads the terminal with the `read` builtin,
 * so what arrives there (the session's lines, a line a program typed with
 * TIOCSTI where the kernel still allows it, a line cut short by another
 * reader) is data it compares with three forms, never code it runs. A
 * command runs in a child of that shell: a subshell `( … )` in bash and sh (a
 * fork: it has what the shell had after its start-up files, none of the
 * commands' own functions, aliases, traps or options), a fresh `zsh -f` in
 * zsh (see parentScript), a `fish` process in fish, which has no subshells.
 * The shell reports the status the kernel gave it for that child, in an end
 * marker that carries a nonce the command never had: the session writes it
 * to a FIFO that only the shell holds open (`channel`: bash, zsh and sh open
 * it once and the session unlinks it; fish opens it by a name in a folder no
 * process of the sandbox can list), and the shell reads it only after the
 * child has ended. The child closes the shell's end first, before the
 * command's code runs.
 *
 * What carries from one command to the next is data the session holds: the
 * folder the command ended in and its exported variables, which the child
 * writes at its end (`runnerScript`) to a FIFO of its own, named by a nonce
 * only it was given; the next command's child sets them up again (`cd`,
 * `export` and `unset` lines the session writes, quoted), never the shell.
 * Functions, aliases, unexported variables, shell options and traps stay in
 * the command's child.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { shellQuote, type QuoteDialect } from './quote';

export type ProtocolKind = 'bash' | 'zsh' | 'fish' | 'posix';

/** 16 hex digits of randomness: the nonces and the FIFO names. */
export const nonce = (): string => randomBytes(8).toString('hex');

const dialect = (kind: ProtocolKind): QuoteDialect => (kind === 'fish' ? 'fish' : 'posix');

/** A JS string (UTF-16) as the bytes a file of it holds, one char per byte: how runner text is built, so a variable's bytes round-trip. */
const bytesOf = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

/** The lines the session types into the shell's loop. */
export const runLine = (seq: number): string => `__LAR_C_${seq}__`;
export const syncLine = (n: string, sane: boolean): string => (sane ? `__LAR_Z_${n}__` : `__LAR_Y_${n}__`);

/** Where the helper programs are: absolute, so neither the shell's PATH nor a command's matters. */
function program(name: string): string {
  for (const dir of ['/usr/bin', '/bin', '/usr/local/bin']) if (existsSync(join(dir, name))) return join(dir, name);
  return name;
}
const ENV = program('env');
const STTY = program('stty');

export interface ParentPaths {
  /** The shell's own file (its execute-only copy in the sandbox): zsh and fish start each command's child from it. */
  shell: string;
  /** The FIFO the session writes each command's begin and end nonces to. */
  channel: string;
  /** Where the shell writes its own environment once (a state FIFO): what a child starts with. */
  baseline: string;
  /** The runner files' folder and the session's tag: `<dir>/run-<tag>-<seq>.sh` (`.fish`). */
  runnerDir: string;
  tag: string;
  /** Printed once the loop runs. */
  readyNonce: string;
  /** Pipes, not a terminal: a command's stdin is /dev/null, end-of-file ends the shell. */
  piped: boolean;
}

export const runnerPath = (p: Pick<ParentPaths, 'runnerDir' | 'tag'>, kind: ProtocolKind, seq: number): string =>
  join(p.runnerDir, `run-${p.tag}-${seq}.${kind === 'fish' ? 'fish' : 'sh'}`);

/**
 * The shell's own script, sourced once at start: its settings, the two
 * functions, the channel opened, the baseline written, the ready marker,
 * then the loop, which never returns.
 *
 * `__lar_get SEQ KIND` reads the channel's records (`SEQ KIND VALUE [FIFO]`)
 * until the one asked for; records of commands that never reached the shell
 * (interrupted, a line another reader took) are passed over. `__lar_run SEQ`
 * prints the begin marker, runs the child, then reads the end nonce and
 * prints the end marker with the child's status. SIGINT is caught (`trap :`)
 * so that it interrupts the child or a `read`, never the loop; the child
 * resets it, and fish's handler keeps it from cancelling the loop.
 */
export function parentScript(kind: ProtocolKind, p: ParentPaths): string {
  return kind === 'fish' ? fishParentScript(p) : posixParentScript(kind, p);
}

function fishParentScript(p: ParentPaths): string {
  const q = (v: string): string => shellQuote(v, 'fish');
  const base = q(p.baseline);
  return [
    'function fish_prompt; end',
    'function fish_right_prompt; end',
    'function __lar_int --on-signal INT; end',
    'set -e fish_greeting',
    `set -g __lar_fish ${q(p.shell)}`,
    'function __lar_get --argument-names q k',
    `    while read -L -l __lar_l <${q(p.channel)}`,
    "        set -l f (string split ' ' -- $__lar_l)",
    '        if test "$f[1] $f[2]" = "$q $k"',
    '            set -g __lar_3 $f[3]',
    '            set -g __lar_4 $f[4]',
    '            return 0',
    '        end',
    '    end',
    '    return 1',
    'end',
    'function __lar_run --argument-names q',
    '    __lar_get $q b; or return 1',
    "    printf '__LAR_B_%s__\\n' $__lar_3",
    '    set -lx __lar_k $__lar_4',
    // --no-config: no config.fish, conf.d, universal variables or functions from the (writable) home
    // that could redefine `exit` or `source` for the runner.
    `    command $__lar_fish --no-config ${q(join(p.runnerDir, `run-${p.tag}-`))}$q.fish`,
    '    set -l s $status',
    ...(p.piped ? [] : [`    command ${q(STTY)} $__lar_tty 2>/dev/null`]),
    '    set -e __lar_k',
    '    __lar_get $q e; or return 1',
    "    printf '\\n__LAR_E_%s_%d__\\n' $__lar_3 $s",
    'end',
    `begin; builtin pwd -P; printf '\\0'; command ${q(ENV)} -0; and printf 'LAR_END\\0'; end >${base} 2>/dev/null`,
    ...(p.piped ? [] : [`set -g __lar_tty (command ${q(STTY)} -g 2>/dev/null)`]),
    `printf '__LAR_R_%s__\\n' ${q(p.readyNonce)}`,
    'while true',
    "    if read -P '' -l __lar_l",
    "        set -l m (string match -r '^__LAR_([CYZ])_([0-9a-f]+)__$' -- $__lar_l)",
    '        switch "$m[2]"',
    '            case C',
    "                string match -qr '^[0-9]+$' -- $m[3]; and __lar_run $m[3]",
    '            case Y',
    "                printf '__LAR_S_%s__\\n' $m[3]",
    '            case Z',
    `                command ${q(STTY)} sane -echo 2>/dev/null`,
    "                printf '__LAR_S_%s__\\n' $m[3]",
    '        end',
    '    end',
    'end',
    '',
  ].join('\n');
}

function posixParentScript(kind: Exclude<ProtocolKind, 'fish'>, p: ParentPaths): string {
  const q = (v: string): string => shellQuote(v, 'posix');
  const base = q(p.baseline);
  const pwd = kind === 'posix' ? 'command pwd -P' : 'builtin pwd -P';
  const stdin = p.piped ? ' </dev/null' : '';
  const runner = `${q(join(p.runnerDir, `run-${p.tag}-`))}"$1".sh`;
  // The child: the channel closed, the terminal its output, SIGINT its own again. bash and sh fork a
  // subshell (bash turns job control on and off in it: its jobs then count as its own, so
  // `kill %1` ends the job, not the subshell); zsh starts itself afresh (`zsh -f`), as a subshell
  // of an interactive zsh numbers its jobs after the shell's and takes `%1` for itself.
  const child =
    kind === 'zsh'
      ? `__lar_k=$__lar_4 ${q(p.shell)} -f ${runner} >&5 5>&- 4<&-${stdin}`
      : `( exec 4<&- >&5 5>&-; trap - INT; ${kind === 'bash' && !p.piped ? 'set -m 2>/dev/null; set +m; ' : ''}__lar_k=$__lar_4; unset __lar_1 __lar_2 __lar_3 __lar_4 __lar_l __lar_m __lar_r __lar_tty; . ${runner} )${stdin}`;
  // A read that fails: end-of-file on pipes ends the shell (the session is gone); on a terminal
  // (a Ctrl-D a job left unread, a terminal a program left returning end-of-file) it is put right.
  const failed = p.piped ? 'exit 0' : `${q(STTY)} sane -echo 4<&- 5>&- 2>/dev/null`;
  return [
    ...(kind === 'bash'
      ? [
          'trap - DEBUG ERR RETURN',
          'shopt -u extdebug 2>/dev/null',
          'set +o functrace +o errtrace +o history',
          'unset -f command_not_found_handle',
          'unset PROMPT_COMMAND',
        ]
      : []),
    ...(kind === 'zsh'
      ? [
          'trap - DEBUG ZERR 2>/dev/null',
          'unfunction TRAPDEBUG TRAPZERR TRAPEXIT command_not_found_handler 2>/dev/null',
          'precmd_functions=() preexec_functions=()',
          'unsetopt err_exit err_return 2>/dev/null',
        ]
      : []),
    'set +e +u',
    // A read a signal cut short (a Ctrl-C meant for the child, one a leftover process sends) is read again.
    '__lar_get() { while :; do IFS=\' \' read -r __lar_1 __lar_2 __lar_3 __lar_4 <&4; __lar_r=$?; if [ $__lar_r -eq 0 ]; then [ "$__lar_1 $__lar_2" = "$1 $2" ] && return 0; elif [ $__lar_r -le 128 ]; then return 1; fi; done; }',
    '__lar_run() {',
    '  __lar_get "$1" b || return 1',
    '  printf \'__LAR_B_%s__\\n\' "$__lar_3" >&5',
    `  ${child}`,
    '  set -- "$1" "$?"',
    // The terminal as it was before the command: one it left raw or without `onlcr` ends no later command's markers.
    ...(p.piped ? [] : [`  ${q(STTY)} "$__lar_tty" 4<&- 5>&- 2>/dev/null`]),
    '  __lar_get "$1" e || return 1',
    '  printf \'\\n__LAR_E_%s_%d__\\n\' "$__lar_3" "$2" >&5',
    '}',
    // The shell's own output goes nowhere (bash prints a newline when a job dies of SIGINT): only
    // its markers, on 5, reach the terminal, and the child gets the terminal back as its output.
    `exec 4<${q(p.channel)} 5>&1 >/dev/null || exit 1`,
    'trap : INT',
    ...(p.piped ? [] : [`__lar_tty=$(${q(STTY)} -g 4<&- 5>&- 2>/dev/null)`]),
    `{ ${pwd}; printf '\\0'; ${q(ENV)} -0 && printf 'LAR_END\\0'; } >${base} 4<&- 5>&- 2>/dev/null`,
    `printf '__LAR_R_%s__\\n' ${q(p.readyNonce)} >&5`,
    'while :; do',
    '  if IFS= read -r __lar_l; then',
    '    case $__lar_l in',
    '      __LAR_[CYZ]_*__) __lar_m=${__lar_l#__LAR_?_}; __lar_m=${__lar_m%__}',
    "        case $__lar_m in ''|*[!0-9a-f]*) continue;; esac",
    '        case $__lar_l in',
    '          __LAR_C_*) case $__lar_m in *[!0-9]*) ;; *) __lar_run "$__lar_m";; esac;;',
    '          __LAR_Y_*) printf \'__LAR_S_%s__\\n\' "$__lar_m" >&5;;',
    `          __LAR_Z_*) ${q(STTY)} sane -echo 4<&- 5>&- 2>/dev/null; printf '__LAR_S_%s__\\n' "$__lar_m" >&5;;`,
    '        esac;;',
    '    esac',
    `  else ${failed}`,
    '  fi',
    'done',
    '',
  ].join('\n');
}

/** Names a command's exported environment never carries: the shells' own (set by each shell or read-only in one). */
const NOT_CARRIED = new Set([
  '_',
  'PWD',
  'OLDPWD',
  'SHLVL',
  'SHELLOPTS',
  'BASHOPTS',
  'BASH_VERSINFO',
  'FUNCNEST',
  'BASH_COMPAT',
  'EUID',
  'UID',
  'PPID',
  'BASHPID',
  'ZSH_SUBSHELL',
  'FISH_VERSION',
  'fish_pid',
  'status',
  'history',
  'version',
  'hostname',
]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether an exported variable of that name is carried to the next command. */
export const carriedName = (name: string): boolean =>
  NAME.test(name) && !NOT_CARRIED.has(name) && !name.startsWith('__lar_');

export interface CarriedState {
  /** The folder the last command ended in (bytes as latin1). */
  cwd?: string;
  /** Its exported variables (bytes as latin1), carried names only. */
  env?: Map<string, string>;
}

/** What carries after a command that wrote its state: its variables, and its folder (the last one known if it had none). */
export function carryOver(carried: CarriedState, record: { cwd?: string; env: Map<string, string> }): CarriedState {
  return {
    ...(record.cwd !== undefined ? { cwd: record.cwd } : carried.cwd !== undefined ? { cwd: carried.cwd } : {}),
    env: record.env,
  };
}

export interface RunnerOptions {
  kind: ProtocolKind;
  /** The command file (commandScript's text). */
  commandFile: string;
  /** The folder of the state FIFOs. */
  fifoDir: string;
  /** The shell's own folder: where a child starts when no folder is carried. */
  home: string;
  /** What earlier commands left (undefined: nothing yet). */
  state: CarriedState;
  /** What a child of the shell starts with (undefined: not known). */
  baseline: Map<string, string> | undefined;
  /** Write this command's state at its end (not for a run in a folder of its own, as before). */
  save: boolean;
  /** A folder of its own was given: the carried folder is not entered. */
  ownFolder: boolean;
}

/** The variable lines that turn the baseline environment into the carried one. */
function envLines(kind: ProtocolKind, state: CarriedState, baseline: Map<string, string> | undefined): string[] {
  if (!state.env) return [];
  const q = (v: string): string => shellQuote(v, dialect(kind));
  const lines: string[] = [];
  for (const name of baseline?.keys() ?? [])
    if (carriedName(name) && !state.env.has(name)) lines.push(kind === 'fish' ? `set -e ${name}` : `unset -v ${name}`);
  for (const [name, value] of state.env) {
    if (!carriedName(name) || baseline?.get(name) === value) continue;
    lines.push(kind === 'fish' ? `set -gx ${name} ${q(value)}` : `export ${name}=${q(value)}`);
  }
  return lines;
}

/**
 * The child's script (bytes as latin1: write it with `Buffer.from(text, 'latin1')`):
 * the carried folder and variables, the command file, then its folder and
 * exported variables written to the FIFO the shell named (`__lar_k`), also
 * when the command ends the child early (`exit`, `set -e`: the EXIT trap;
 * fish's `exit` in a sourced file only stops the file). A command's own EXIT
 * trap replaces the session's; its folder and variables are still written
 * when the command file comes to its end.
 */
export function runnerScript(o: RunnerOptions): string {
  const { kind } = o;
  const q = (v: string): string => shellQuote(v, dialect(kind));
  const cwd = !o.ownFolder && o.state.cwd !== undefined && o.state.cwd !== bytesOf(o.home) ? o.state.cwd : undefined;
  const gone = (dir: string): string =>
    q(
      `lar: the folder ${dir} that the last command ended in cannot be entered; this command runs in ${bytesOf(o.home)}`,
    );
  const fifo = `${bytesOf(o.fifoDir)}/st-`;
  if (kind === 'fish') {
    return [
      "set -g __lar_f ''",
      ...(o.save
        ? ['string match -qr \'^[0-9a-f]{16}$\' -- "$__lar_k"; and set -g __lar_f ' + q(fifo) + '$__lar_k']
        : []),
      'set -e __lar_k',
      'function __lar_save',
      '    test -n "$__lar_f"; or return 0',
      `    begin; builtin pwd -P; printf '\\0'; command ${q(ENV)} -0; and printf 'LAR_END\\0'; end >$__lar_f 2>/dev/null`,
      "    set -g __lar_f ''",
      'end',
      ...(cwd !== undefined ? [`builtin cd ${q(cwd)} 2>/dev/null; or printf '%s\\n' ${gone(cwd)} >&2`] : []),
      ...envLines(kind, o.state, o.baseline),
      `builtin source ${q(bytesOf(o.commandFile))}`,
      'set -l __lar_s $status',
      '__lar_save',
      'builtin exit $__lar_s',
      '',
    ].join('\n');
  }
  const cd = kind === 'zsh' ? 'builtin cd -q -P --' : kind === 'bash' ? 'builtin cd -P --' : 'command cd -P --';
  const pwd = kind === 'posix' ? 'command pwd -P' : 'builtin pwd -P';
  return [
    'set --',
    '__lar_f=',
    ...(o.save
      ? [
          `case \${__lar_k-} in ????????????????) case $__lar_k in *[!0-9a-f]*) ;; *) __lar_f=${q(fifo)}$__lar_k;; esac;; esac`,
        ]
      : []),
    'unset __lar_k',
    `__lar_save() { { set +x; } 2>/dev/null; [ -n "$__lar_f" ] || return 0; { ${pwd}; printf '\\0'; ${q(ENV)} -0 && printf 'LAR_END\\0'; } >"$__lar_f" 2>/dev/null; __lar_f=; }`,
    'trap __lar_save EXIT',
    ...(cwd !== undefined ? [`${cd} ${q(cwd)} 2>/dev/null || printf '%s\\n' ${gone(cwd)} >&2`] : []),
    ...envLines(kind, o.state, o.baseline),
    `. ${q(bytesOf(o.commandFile))}`,
    '__lar_s=$?',
    '__lar_save',
    'exit "$__lar_s"',
    '',
  ].join('\n');
}
