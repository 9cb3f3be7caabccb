/**
 * The shell process a TerminalSession drives: a pseudo-terminal from node-pty
 * when it loads, else plain pipes. node-pty is a native addon: on a platform
 * without a binary for it (our linux-arm64 package, an unusual Node) the
 * agent must still run commands, so the fallback speaks the same marker
 * protocol over a child process in its own session. What it cannot do: no
 * terminal for programs that want one (no colours, no prompts; stdin is
 * /dev/null, so a command waiting for input reads end-of-file instead of
 * hanging), and Ctrl-C becomes SIGINT to the shell's children.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { dirname, join } from 'node:path';
import { killAll, sessionProcesses } from './procs';

export type ShellMode = 'pty' | 'pipe';

export interface ShellProcess {
  readonly mode: ShellMode;
  readonly pid: number;
  write(data: string): void;
  /** Ctrl-C to what runs in the shell. */
  interrupt(): void;
  resize(cols: number, rows: number): void;
  kill(signal: NodeJS.Signals): void;
  onData(listener: (chunk: Buffer) => void): void;
  onExit(listener: (code: number) => void): void;
}

export interface SpawnOptions {
  shell: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** The shell is fish (when `shell` is a launcher, its name does not say). */
  fish?: boolean;
}

type NodePty = typeof import('node-pty');
let loaded: { pty: NodePty } | { error: string } | undefined;

/** node-pty, or why it cannot be loaded here (asked once per process). */
export function loadNodePty(): { pty: NodePty } | { error: string } {
  if (!loaded) {
    try {
      ensureSpawnHelperExecutable();
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, and allowed to fail: a static import of the native module would stop the extension and the CLI from loading at all
      loaded = { pty: require('node-pty') as NodePty };
    } catch (e) {
      loaded = { error: e instanceof Error ? e.message.split('\n')[0]! : String(e) };
    }
  }
  return loaded;
}

/** Whether a shell started in this mode runs over pipes (`auto`: when node-pty cannot load). */
export const usesPipes = (mode: ShellMode | 'auto' | undefined): boolean =>
  mode === 'pipe' || (mode !== 'pty' && 'error' in loadNodePty());

/**
 * On macOS node-pty starts shells through its `spawn-helper` executable; a
 * VSIX (a zip) can lose its execute bit, and every spawn then fails with
 * "posix_spawnp failed". Put the bit back.
 */
function ensureSpawnHelperExecutable(): void {
  if (process.platform !== 'darwin') return;
  try {
    const dir = dirname(require.resolve('node-pty/package.json'));
    for (const helper of [
      join(dir, 'prebuilds', `darwin-${process.arch}`, 'spawn-helper'),
      join(dir, 'build', 'Release', 'spawn-helper'),
    ]) {
      if (existsSync(helper) && (statSync(helper).mode & 0o111) === 0) chmodSync(helper, 0o755);
    }
  } catch {
    // node-pty is missing or read-only: loading it says why.
  }
}

export function spawnShell(opts: SpawnOptions, mode: ShellMode | 'auto' = 'auto'): ShellProcess {
  if (mode !== 'pipe') {
    const np = loadNodePty();
    if ('pty' in np) return spawnPty(np.pty, opts);
    if (mode === 'pty') throw new Error(`node-pty cannot be loaded: ${np.error}`);
  }
  return spawnPiped(opts);
}

function spawnPty(pty: NodePty, opts: SpawnOptions): ShellProcess {
  const p = pty.spawn(opts.shell, opts.args, {
    name: opts.env.TERM ?? 'xterm-256color',
    cols: opts.cols,
    rows: opts.rows,
    cwd: opts.cwd,
    env: opts.env,
    encoding: null,
  });
  return {
    mode: 'pty',
    pid: p.pid,
    write: (d) => p.write(d),
    interrupt: () => p.write('\x03'),
    resize: (c, r) => p.resize(c, r),
    kill: (s) => p.kill(s),
    onData: (l) => void p.onData((d: string | Buffer) => l(typeof d === 'string' ? Buffer.from(d, 'utf8') : d)),
    // A shell killed by a signal reports exit code 0 from node-pty: make it the shell's 128 + signal, never a success.
    onExit: (l) => void p.onExit(({ exitCode, signal }) => l(signal ? 128 + signal : exitCode)),
  };
}

/** Pipes, with a terminal's output line endings (LF → CRLF) so the marker parser sees what a pty sends. */
function spawnPiped(opts: SpawnOptions): ShellProcess {
  const child = spawn(opts.shell, opts.args, {
    cwd: opts.cwd,
    env: { ...opts.env, TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own session: the shell and everything it starts can be found and killed together.
    detached: true,
  });
  // A missing shell or folder is reported by the throw below; the event must not crash the process too.
  child.on('error', () => {});
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${opts.shell} in ${opts.cwd}`);
  const crlf = (b: Buffer): Buffer => {
    const s = b.toString('latin1');
    return s.includes('\n') ? Buffer.from(s.replace(/\r?\n/g, '\r\n'), 'latin1') : b;
  };
  // A write after the shell died must not throw out of a timer.
  child.stdin.on('error', () => {});
  // One stream, in order: a command's errors must land before its end marker, not after.
  if (!(opts.fish ?? /fish/.test(opts.shell))) child.stdin.write('exec 2>&1\n');
  return {
    mode: 'pipe',
    pid,
    write: (d) => {
      if (!child.stdin.destroyed) child.stdin.write(d.replace(/\r/g, '\n'));
    },
    interrupt: () => killAll(sessionProcesses(pid), 'SIGINT'),
    resize: () => {},
    kill: (s) => {
      try {
        child.kill(s);
      } catch {
        // already gone
      }
    },
    onData: (l) => {
      child.stdout.on('data', (b: Buffer) => l(crlf(b)));
      child.stderr.on('data', (b: Buffer) => l(crlf(b)));
    },
    onExit: (l) =>
      void child.once('exit', (code, signal) => l(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 1))),
  };
}
