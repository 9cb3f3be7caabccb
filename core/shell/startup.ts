/**
 * What a shell is started with, apart from the session that starts it: its
 * environment, its private channel and start script, and the execute-only
 * copy of it a sandboxed shell runs as.
 */
import { chmodSync, closeSync, copyFileSync, mkdirSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { FifoFolder, StateFifo } from './fifos';
import type { ShellKind } from './kinds';
import { spawnShell, type ShellProcess } from './process';
import { nonce, parentScript } from './protocol';
import type { TerminalOptions } from './types';

/** The shell started as the options say: through the launcher when there is one, running `shellFile`. */
export function launchShell(o: TerminalOptions, kind: ShellKind, shellPath: string, shellFile: string): ShellProcess {
  const launcher = o.launcher;
  const shellArgs = o.shellArgs ?? [];
  return spawnShell(
    {
      shell: launcher ? launcher.file : shellPath,
      args: launcher ? [...launcher.args, shellFile, ...shellArgs] : shellArgs,
      cwd: o.cwd,
      env: shellEnv(o.env, kind),
      cols: o.cols ?? 120,
      rows: o.rows ?? 30,
      fish: kind === 'fish',
    },
    o.mode ?? 'auto',
  );
}

/** The shell's environment: the caller's, with TERM, PAGER and GIT_PAGER defaults. */
function shellEnv(given: Record<string, string | undefined>, kind: ShellKind): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(given)) if (v !== undefined) env[k] = v;
  env.TERM ??= 'xterm-256color';
  env.PAGER ??= 'cat';
  env.GIT_PAGER ??= 'cat';
  // The agent's commands stay out of the user's shell history (bash and zsh: HISTFILE is unset at start).
  if (kind === 'fish') env.fish_history = '';
  return env;
}

/** A starting shell's files: its channel, the FIFO its baseline goes to, its script, and the nonce it prints when ready. */
export interface StartFiles {
  channel: { path: string; fd: number };
  baseline: StateFifo;
  script: string;
  readyNonce: string;
}

/**
 * Before a shell starts: its channel, the FIFO its baseline goes to, a few
 * state FIFOs ahead, and its script (parentScript), in the private folder.
 */
export function startFiles(
  fifos: FifoFolder,
  o: { kind: ShellKind; tag: string; shellFile: string; piped: boolean },
): StartFiles {
  const made = fifos.makeNow(1 + 3, true);
  const channel = made.channel!;
  const baseline = fifos.open(made.names[0]!);
  fifos.add(made.names.slice(1));
  const readyNonce = nonce();
  const script = join(fifos.dir, `start-${o.tag}.${o.kind === 'fish' ? 'fish' : 'sh'}`);
  writeFileSync(
    script,
    parentScript(o.kind, {
      shell: o.shellFile,
      channel: channel.path,
      baseline: baseline.path,
      runnerDir: fifos.dir,
      tag: o.tag,
      readyNonce,
      piped: o.piped,
    }),
    { mode: 0o600 },
  );
  return { channel, baseline, script, readyNonce };
}

/**
 * The shell is ready: its script is removed, bash, zsh and sh hold the channel
 * open so its name goes too (fish opens it by name each time: it stays, in a
 * folder no process can list), and the baseline is read.
 */
export function startDone(files: StartFiles, kind: ShellKind): Map<string, string> | undefined {
  for (const f of [files.script, ...(kind === 'fish' ? [] : [files.channel.path])]) {
    try {
      unlinkSync(f);
    } catch {
      /* gone */
    }
  }
  return files.baseline.close()?.env;
}

/** The channel closed and removed (its shell is gone). */
export function closeChannel(c: { path: string; fd: number; baseline: StateFifo }): void {
  c.baseline.close();
  try {
    closeSync(c.fd);
  } catch {
    /* closed */
  }
  try {
    unlinkSync(c.path);
  } catch {
    /* unlinked at start, or gone */
  }
}

/**
 * An execute-only copy of the shell in `dir`; undefined when it cannot be made.
 * Named after the shell: zsh takes a name starting with `s` for sh and emulates it.
 */
export function executeOnlyCopy(shellPath: string, dir: string, tag: string): string | undefined {
  const copy = join(dir, `${basename(shellPath)}-${tag}`);
  try {
    mkdirSync(dir, { recursive: true });
    copyFileSync(realpathSync(shellPath), copy);
    chmodSync(copy, 0o111);
    return copy;
  } catch {
    return undefined;
  }
}
