/** The status bar item: backend and the current run's return; a click opens the run's trajectory. */
import * as vscode from 'vscode';
import { COMMANDS } from '../../core/protocol/commands';
import type { BackendLabel } from '../../core/protocol/lsp';
import { statusView, withSandbox, type RunRegistry } from './runs';
import type { SandboxSummary } from '../../core/sandbox/plan';
import type { WaitingStatus } from '../agent/approval-notice';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('lean4Agentic.status', vscode.StatusBarAlignment.Left, 50);
  private problem: string | undefined;
  private backend: BackendLabel | undefined;
  private sandbox: SandboxSummary | undefined;
  private waiting: WaitingStatus | undefined;

  constructor(private readonly runs: RunRegistry) {
    this.item.name = 'Lean4 Agentic';
    this.refresh();
    this.item.show();
  }

  /** The server's state: `problem` when it is not running. */
  setServer(problem: string | undefined): void {
    this.problem = problem;
    this.refresh();
  }

  /** The backend the server announced (before any run, or after it changed). */
  setBackend(label: BackendLabel): void {
    this.backend = label;
    this.refresh();
  }

  /** The sandbox of the agent's latest run. */
  setSandbox(s: SandboxSummary | undefined): void {
    this.sandbox = s;
    this.refresh();
  }

  /** An approval waits: the item says so, on a warning background, and a click shows it; undefined: back to the run. */
  setWaiting(w: WaitingStatus | undefined): void {
    this.waiting = w;
    this.refresh();
  }

  refresh(): void {
    const view = this.waiting
      ? { ...this.waiting, warning: true }
      : withSandbox(statusView(this.runs.current(), this.backend, this.problem), this.sandbox);
    this.item.command = this.waiting ? COMMANDS.showApproval : COMMANDS.openCurrentRun;
    this.item.text = view.text;
    const tooltip = new vscode.MarkdownString(view.tooltip);
    tooltip.supportThemeIcons = true;
    this.item.tooltip = tooltip;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
