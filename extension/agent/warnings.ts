/**
 * What the user is told once about how a run's commands will run: unconfined (and why, and the fix), or
 * without a terminal because node-pty cannot load; the log says it every run.
 */
import * as vscode from 'vscode';
import type { RunSandbox } from '../../core/sandbox/run';
import { loadNodePty } from '../../core/shell/process';
import { openSetting } from './connection';

export class RunWarnings {
  private sandboxWarned = false;
  /** What was said of the MCP servers, once per configuration (extension/mcp/chat-view.ts): not run after run. */
  readonly mcpSaid = new Set<string>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  /** Once per window: commands run unconfined, why, and what would fix it. */
  warnIfUnconfined(sandbox: RunSandbox): void {
    if (sandbox.plan.confined) return;
    this.output.warn(
      `commands are not confined: ${sandbox.summary.reason}${sandbox.plan.fix ? ` (fix: ${sandbox.plan.fix})` : ''}`,
    );
    if (this.sandboxWarned && !sandbox.refusal) return;
    this.sandboxWarned = true;
    const text = sandbox.refusal
      ? `Lean4 Agentic: the sandbox is required and cannot start, so the agent will run no commands: ${sandbox.summary.reason}.`
      : `Lean4 Agentic: the agent's commands run unconfined (as in your own terminal), and every step says so: ${sandbox.summary.reason}.`;
    void vscode.window
      .showWarningMessage(sandbox.plan.fix ? `${text} Fix: ${sandbox.plan.fix}.` : text, 'Sandbox setting')
      .then((pick) => {
        if (pick) void openSetting('lean4Agentic.sandbox');
      });
  }

  /** Without node-pty commands run over pipes: say so once (per version), log it every run. */
  warnIfNoPty(): void {
    const np = loadNodePty();
    if ('pty' in np) return;
    this.output.warn(`node-pty cannot be loaded (${np.error}): commands run without a terminal`);
    const key = `ptyFallbackWarned:${(this.context.extension.packageJSON as { version: string }).version}`;
    if (this.context.globalState.get(key)) return;
    void this.context.globalState.update(key, true);
    void vscode.window.showWarningMessage(
      'Lean4 Agentic: node-pty cannot be loaded on this platform, so the agent runs commands without a terminal: no colours or prompts, and a command that reads input gets end-of-file. Output, exit codes, timeouts and the gate work as usual, and commands still show in the Lean4 Agentic terminal.',
    );
  }
}
