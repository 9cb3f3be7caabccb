/**
 * The shells the terminal speaks (bash, zsh, fish and the POSIX ones) and the
 * text it gives them: the line typed at start and each command's file.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { shellQuote, type QuoteDialect } from './quote';

export type ShellKind = 'bash' | 'zsh' | 'fish' | 'posix';

/** POSIX shells by name (sh, dash, ash, ksh, mksh …): they take POSIX quoting and `.`. (`busybox` itself is not a shell until started as `sh`.) */
const POSIX_SHELLS = /^(sh|dash|ash|ksh|ksh93|mksh|oksh|pdksh|yash|posh)$/;

/**
 * The kind of a shell, by its file name; undefined for shells whose syntax the
 * terminal does not speak (csh, tcsh, pwsh, nu, xonsh, elvish …): quoting a
 * value for them as for sh would not be safe, so they are not used.
 */
export function shellKind(shell: string): ShellKind | undefined {
  const b = basename(shell)
    .replace(/\.exe$/, '')
    .replace(/[-.\d]+$/, '');
  if (b === 'bash') return 'bash';
  if (b === 'zsh') return 'zsh';
  if (b === 'fish') return 'fish';
  return POSIX_SHELLS.test(b) ? 'posix' : undefined;
}

export const dialectOf = (kind: ShellKind): QuoteDialect => (kind === 'fish' ? 'fish' : 'posix');

/**
 * The command file's text for `command`, run in `dir` when given. The child
 * the shell runs it in (see protocol.ts) sources it.
 *
 * The folder change must not outlive the command: POSIX shells run it in a
 * subshell of the child. fish has none: the command becomes a function (a
 * `return` in it ends the function) called in the folder; the child is a
 * process of its own anyway.
 *
 * The command keeps lines of its own, so a trailing comment or a here-document
 * in it cannot swallow the wrapper. `cd` is the builtin, physical (a user's
 * `cd` function, zsh's chpwd hooks or an autoenv wrapper do not run), and the
 * shell checks it landed in the folder that was checked (compared with `$PWD`,
 * which keeps a trailing newline of a name that `$(pwd)` would cut): a folder
 * swapped for a symlink in between is refused. `dir` must be the folder's
 * canonical real path (the executor resolves it), or the check refuses it.
 */
export function commandScript(command: string, kind: ShellKind, dir?: string): string {
  const body = command.endsWith('\n') ? command : `${command}\n`;
  if (dir === undefined) return body;
  const q = (v: string): string => shellQuote(v, dialectOf(kind));
  const where = q(dir);
  const moved = q(
    `lar: ${dir} is not the folder that was checked (it was replaced, e.g. by a symbolic link, after the check); the command did not run`,
  );
  if (kind === 'fish') {
    return (
      `function __lar_command\n${body}end\n` +
      // cd prints its own error when it fails.
      `if not builtin cd ${where}\nfalse\n` +
      // pwd ends its line with exactly one newline; collect -N keeps it and any the name ends in.
      `else if not test (builtin pwd -P | string collect -N) = ${q(`${dir}\n`)}\nprintf '%s\\n' ${moved} >&2\nfalse\n` +
      `else\n__lar_command\nend\n`
    );
  }
  const cd = kind === 'zsh' ? 'builtin cd -q -P --' : kind === 'bash' ? 'builtin cd -P --' : 'command cd -P --';
  return `( ${cd} ${where} || exit\n[ "$PWD" = ${where} ] || { printf '%s\\n' ${moved} >&2; exit 1; }\n${body})\n`;
}

/**
 * The line typed at start, which then sources the shell's own script
 * (parentScript): no echo, no line editor, no prompts, no history file;
 * end-of-file on the terminal does not end the shell while it starts. Once
 * the loop runs, the shell reads the terminal only with `read`.
 */
export function initLine(kind: ShellKind, script: string): string {
  const source = `${kind === 'fish' ? 'source' : '.'} ${shellQuote(script, dialectOf(kind))}`;
  switch (kind) {
    case 'bash':
      return `stty -echo 2>/dev/null; set +o emacs +o vi +H +o history 2>/dev/null; set -o ignoreeof; unset HISTFILE PROMPT_COMMAND; PS0=''; PS1=''; PS2=''; ${source}`;
    case 'zsh':
      return `stty -echo 2>/dev/null; unsetopt zle prompt_subst 2>/dev/null; setopt ignore_eof; unset HISTFILE; precmd_functions=(); preexec_functions=(); PROMPT=''; RPROMPT=''; PS2=''; ${source}`;
    case 'fish':
      return `stty -echo 2>/dev/null; function fish_prompt; end; function fish_right_prompt; end; set -e fish_greeting; bind \\cd delete-char; bind -M insert \\cd delete-char; ${source}`;
    default:
      return `stty -echo 2>/dev/null; set +o emacs +o vi 2>/dev/null; set -o ignoreeof 2>/dev/null; PS1=''; PS2=''; ${source}`;
  }
}

/** The first of the given shell, $SHELL, bash and sh that exists and is of a kind the terminal speaks. */
export function pickShell(env: Record<string, string | undefined>, given?: string): string {
  for (const s of [given, env.SHELL, '/bin/bash', '/bin/sh']) if (s && shellKind(s) && existsSync(s)) return s;
  return '/bin/sh';
}
