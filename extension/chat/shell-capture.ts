/**
 * The last command of each of the user's terminals and what it printed, read through VS Code's shell
 * integration, the only way an extension sees another terminal's output: what "Terminal output" attaches
 * from the active terminal. A terminal without shell integration has nothing to offer, and the picker
 * then names the agent's terminal instead.
 */
import * as vscode from 'vscode';
import type { RecordedCommand } from '../../core/agent/attachments';
import { stripTerminal } from '../../core/shell/output';

/** What is kept of a command's output while it streams (its end). */
const KEEP_CHARS = 64 * 1024;

interface Captured extends RecordedCommand {
  raw: string;
}

export class ShellCapture implements vscode.Disposable {
  private readonly last = new Map<vscode.Terminal, Captured>();
  private readonly byExecution = new WeakMap<vscode.TerminalShellExecution, Captured>();
  private readonly subs: vscode.Disposable[];

  constructor() {
    this.subs = [
      vscode.window.onDidStartTerminalShellExecution((e) => void this.read(e)),
      vscode.window.onDidEndTerminalShellExecution((e) => {
        const c = this.byExecution.get(e.execution);
        if (c) c.exitCode = e.exitCode ?? null;
      }),
      vscode.window.onDidCloseTerminal((t) => this.last.delete(t)),
    ];
  }

  private async read(e: vscode.TerminalShellExecutionStartEvent): Promise<void> {
    const c: Captured = { command: e.execution.commandLine.value, output: '', raw: '', exitCode: undefined };
    this.last.set(e.terminal, c);
    this.byExecution.set(e.execution, c);
    try {
      for await (const data of e.execution.read()) c.raw = (c.raw + data).slice(-KEEP_CHARS);
    } catch {
      // The terminal went away mid-command: what came so far is kept.
    }
  }

  /** The active terminal's last command, as its terminal showed it (escapes removed), with the terminal's name. */
  active(): { name: string; command: RecordedCommand } | undefined {
    const t = vscode.window.activeTerminal;
    const c = t && this.last.get(t);
    if (!t || !c) return undefined;
    return { name: t.name, command: { command: c.command, output: stripTerminal(c.raw), exitCode: c.exitCode } };
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}
