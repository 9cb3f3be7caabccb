/**
 * The agent's terminal in the editor: a read-only `vscode.Pseudoterminal`
 * named "Lean4 Agentic" that mirrors the core TerminalSession (node-pty) the
 * agent's commands run in. Marker lines are hidden, each command is shown as
 * `$ command` before it runs, typing prints a note (the shell is the agent's).
 */
import { realpathSync } from 'node:fs';
import { relative } from 'node:path';
import * as vscode from 'vscode';
import { TerminalSession } from '../../core/shell/session';
import type { RunOptions, RunResult, TerminalOptions } from '../../core/shell/types';
import { MarkerLineFilter, commandBanner } from './marker-filter';
import type { CheckMirror } from '../../core/tools/executor';
import { TerminalDock, type Dockable } from './terminal-dock';

export const TERMINAL_NAME = 'Lean4 Agentic';

/** "Lean4 Agentic (sandboxed, network off)", "Lean4 Agentic (unconfined)". */
export function terminalName(sandbox: string): string {
  if (!sandbox) return TERMINAL_NAME;
  if (sandbox.startsWith('unconfined')) return `${TERMINAL_NAME} (unconfined)`;
  const m = /\(.*?; (.*)\)$/.exec(sandbox);
  return `${TERMINAL_NAME} (sandboxed${m ? `, ${m[1]}` : ''})`;
}

function realPathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A TerminalSession that says which command it is about to run. */
export class AnnouncingTerminalSession extends TerminalSession {
  constructor(
    options: TerminalOptions,
    private readonly announce: (command: string, cwd?: string) => void,
  ) {
    super(options);
  }

  override run(command: string, options?: RunOptions): Promise<RunResult> {
    this.announce(command, options?.cwd);
    return super.run(command, options);
  }
}

/** The run a terminal shows now: its shell follows the terminal's size. */
interface PtyOwner {
  resize(cols: number, rows: number): void;
}

class MirrorPty implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  readonly onDidWrite = this.writeEmitter.event;
  private opened = false;
  private backlog: string[] = [];
  private noted = false;
  private dims: vscode.TerminalDimensions | undefined;
  closed = false;

  constructor(
    private readonly sandbox: string,
    private owner: PtyOwner,
  ) {}

  /** A later run writes on here: its shell takes the terminal's size. */
  adopt(owner: PtyOwner): void {
    this.owner = owner;
    if (this.dims) owner.resize(this.dims.columns, this.dims.rows);
  }

  open(dims: vscode.TerminalDimensions | undefined): void {
    this.opened = true;
    this.writeEmitter.fire('\x1b[2mThe Lean4 Agentic agent runs its commands here (read-only).\x1b[0m\r\n');
    if (this.sandbox)
      this.writeEmitter.fire(
        this.sandbox.startsWith('unconfined')
          ? `\x1b[33mCommands are ${this.sandbox}: they run as in your own terminal.\x1b[0m\r\n`
          : `\x1b[2mCommands are ${this.sandbox}.\x1b[0m\r\n`,
      );
    for (const s of this.backlog) this.writeEmitter.fire(s);
    this.backlog = [];
    if (dims) this.setDimensions(dims);
  }

  close(): void {
    this.opened = false;
    this.closed = true;
  }

  handleInput(): void {
    if (this.noted) return;
    this.noted = true;
    this.writeEmitter.fire(
      "\r\n\x1b[33m[this terminal is the agent's and is read-only; stop the run from the chat view]\x1b[0m\r\n",
    );
    setTimeout(() => (this.noted = false), 2000);
  }

  setDimensions(dims: vscode.TerminalDimensions): void {
    this.dims = dims;
    this.owner.resize(dims.columns, dims.rows);
  }

  write(s: string): void {
    if (!s) return;
    if (this.opened) this.writeEmitter.fire(s);
    else if (this.backlog.push(s) > 2000) this.backlog.shift();
  }

  dispose(): void {
    this.writeEmitter.dispose();
  }
}

interface DockedTerminal extends Dockable {
  readonly pty: MirrorPty;
  readonly terminal: vscode.Terminal;
}

/** The agent's editor terminal, shared by the runs one after another. */
const dock = new TerminalDock<DockedTerminal>();

/** The editor terminal bridged to one run's TerminalSession. */
export class AgentTerminal implements vscode.Disposable {
  readonly session: AnnouncingTerminalSession;
  private docked: DockedTerminal | undefined;
  private readonly filter = new MarkerLineFilter({ hideUntilReady: true });
  private readonly subs: { dispose(): void }[] = [];

  /** @param sandbox how commands are confined, for the terminal's name and first line. */
  constructor(
    options: TerminalOptions,
    private readonly sandbox = '',
  ) {
    // The folder a command runs in is a real path: name it from the workspace's real path too.
    const root = realPathOr(options.cwd);
    this.session = new AnnouncingTerminalSession(options, (command, cwd) => {
      this.ensure().write(commandBanner(command, cwd === undefined ? undefined : relative(root, cwd) || '.'));
      this.docked?.terminal.show(true);
    });
    this.subs.push(
      this.session.onData((d) => {
        // Always through the filter, so it sees a restarted shell's ready marker even while the terminal is closed.
        const shown = this.filter.push(d);
        this.livePty()?.write(shown);
        if (shown) for (const l of this.outputListeners) l(shown);
      }),
      this.session.onExit((code) => {
        this.livePty()?.write(this.filter.flush());
        this.filter.restart();
        // Ended on purpose (the run is over): no "fresh one" follows.
        if (this.ending) return;
        this.livePty()?.write(
          `\r\n\x1b[2m[the shell exited with code ${code}; the next command starts a fresh one]\x1b[0m\r\n`,
        );
      }),
    );
  }

  private readonly outputListeners = new Set<(text: string) => void>();

  /** What the terminal shows (markers filtered out), as it arrives: for the chat's live card. */
  onOutput(listener: (text: string) => void): { dispose(): void } {
    this.outputListeners.add(listener);
    return { dispose: () => this.outputListeners.delete(listener) };
  }

  /** The terminal this run writes in, unless the user closed it (the next command opens it again). */
  private livePty(): MirrorPty | undefined {
    return this.docked && !this.docked.closed ? this.docked.pty : undefined;
  }

  private ensure(): MirrorPty {
    if (this.docked && !this.docked.closed) return this.docked.pty;
    // The user closed it mid-run: it is no run's any more.
    if (this.docked) dock.release(this.docked);
    const owner: PtyOwner = { resize: (cols, rows) => this.session.resize(cols, rows) };
    const name = terminalName(this.sandbox);
    this.docked = dock.take(
      name,
      () => {
        const pty = new MirrorPty(this.sandbox, owner);
        const terminal = vscode.window.createTerminal({ name, pty, isTransient: true });
        return {
          name,
          pty,
          terminal,
          get closed() {
            return pty.closed;
          },
          dispose: () => terminal.dispose(),
        };
      },
      (d) => {
        d.pty.adopt(owner);
        d.pty.write('\r\n\x1b[2m[the next run]\x1b[0m\r\n');
      },
    );
    return this.docked.pty;
  }

  private ending = false;

  /** The outcome command, run as the check runs it (a fresh sandbox, not this shell): shown here all the same. */
  readonly checkMirror: CheckMirror = {
    start: (command) => {
      this.ensure().write(
        commandBanner(command).replace(
          /\r\n$/,
          ' \x1b[2m(run as the outcome check runs it, in a fresh sandbox)\x1b[0m\r\n',
        ),
      );
      this.docked?.terminal.show(true);
    },
    end: (output) => {
      const shown = `${output.replace(/\r?\n/g, '\r\n')}${output && !output.endsWith('\n') ? '\r\n' : ''}`;
      this.ensure().write(shown);
      for (const l of this.outputListeners) l(shown);
    },
  };

  /** Ends the shell and every process of the run, and waits until they are gone (before the outcome check). */
  async end(): Promise<boolean> {
    this.ending = true;
    return this.session.close();
  }

  dispose(): void {
    this.ending = true;
    for (const s of this.subs) s.dispose();
    this.livePty()?.write(this.filter.flush());
    this.livePty()?.write('\r\n\x1b[2m[the run ended]\x1b[0m\r\n');
    if (this.docked) dock.release(this.docked);
    this.session.dispose();
  }
}
