/**
 * The way Terminal-Bench's harness runs a command, reimplemented for
 * comparison: a tmux session (160×40, history-limit 50000, the pane piped to
 * a log file), the command sent with `send-keys` followed by
 * `; tmux wait -S done` and Enter, then a blocking `tmux wait done`, then the
 * whole pane history read back with `capture-pane -p -S -` and the part after
 * the previous capture taken as the new output (its get_incremental_output).
 *
 * Run locally: the harness does each tmux call through `docker exec` and wraps
 * the wait in `timeout`; both are left out here, which only makes tmux faster.
 * The server lives on a private socket (`tmux -L`) and is killed by `close()`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { shellQuote } from '../core/shell/quote';

const run = promisify(execFile);
const TMUX = '/usr/bin/tmux';
const SESSION = 'agent';

export class TmuxHarness {
  private previous: string | undefined;
  private closed = false;

  private constructor(readonly socket: string) {}

  /** Starts a tmux server on its own socket running `shell` in `cwd`, with the pane logged to `logPath`. */
  static async start(opts: {
    shell: string;
    cwd: string;
    logPath: string;
    env: NodeJS.ProcessEnv;
  }): Promise<TmuxHarness> {
    const h = new TmuxHarness(`lar-bench-${process.pid}-${randomBytes(4).toString('hex')}`);
    const env: NodeJS.ProcessEnv = { ...opts.env, SHELL: opts.shell };
    // Inside the pane TMUX names this server, so the plain `tmux wait -S done` there reaches it.
    delete env.TMUX;
    await run(
      TMUX,
      [
        '-L',
        h.socket,
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        '-s',
        SESSION,
        '-x',
        '160',
        '-y',
        '40',
        '-c',
        opts.cwd,
        opts.shell,
        ';',
        'set-option',
        '-t',
        SESSION,
        'history-limit',
        '50000',
        ';',
        'pipe-pane',
        '-t',
        SESSION,
        `cat > ${shellQuote(opts.logPath)}`,
      ],
      { env },
    );
    // The shell is ready once it has run one command.
    await h.run('true');
    return h;
  }

  private tmux(...args: string[]): Promise<{ stdout: string }> {
    return run(TMUX, ['-L', this.socket, ...args], { maxBuffer: 64 * 1024 * 1024 });
  }

  /** Sends one command, blocks until it signals `done`, returns the new pane text. */
  async run(command: string): Promise<string> {
    await this.tmux('send-keys', '-t', SESSION, command, '; tmux wait -S done', 'Enter');
    await this.tmux('wait-for', 'done');
    const { stdout } = await this.tmux('capture-pane', '-p', '-S', '-', '-t', SESSION);
    return this.incremental(stdout);
  }

  /** New text since the last capture: what follows the previous buffer's last line, else the whole capture. */
  private incremental(current: string): string {
    const before = this.previous?.trim();
    this.previous = current;
    if (before === undefined || !current.includes(before)) return current;
    const at = current.indexOf(before) + (before.includes('\n') ? before.lastIndexOf('\n') : 0);
    return current.slice(at);
  }

  /** Kills the server and everything in it. Safe to call more than once and from an exit handler. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      execFileSync(TMUX, ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  }
}
