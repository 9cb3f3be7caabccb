/** The extension's commands (contributed in package.json, category "Lean4 Agentic"). */
import * as vscode from 'vscode';
import { TRAJECTORY_LANGUAGE, type LarClient } from './client';
import { formatNumber } from '../core/protocol/display';
import { BACKEND_CHOICES, readConfig, writeBackend, type BackendChoice } from './config';
import type { EditedFiles } from './edits/edited-files';
import type { RunRegistry } from './trajectory/runs';
import { COMMANDS } from '../core/protocol/commands';

export interface CommandDeps {
  client: LarClient;
  runs: RunRegistry;
  editedFiles: EditedFiles;
  output: vscode.LogOutputChannel;
}

const BACKEND_ITEMS: Record<BackendChoice, string> = {
  auto: 'Lean when a toolchain is found, else builtin',
  lean: 'the Lean 4 checker (lar-verify); builtin with the reason shown when no toolchain is found',
  builtin: 'the TypeScript verifier, same definitions, pinned to Lean by the conformance corpus',
};

async function revealLine(uri: vscode.Uri, line: number): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const at = Math.max(0, Math.min(line, doc.lineCount - 1));
  const range = doc.lineAt(at).range;
  await vscode.window.showTextDocument(doc, { selection: range, preview: false });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { client, runs, editedFiles } = deps;
  return [
    vscode.commands.registerCommand(COMMANDS.verifyTrajectory, (target?: vscode.Uri) =>
      verifyTrajectory(client, runs, target),
    ),
    vscode.commands.registerCommand(COMMANDS.openCurrentRun, () => openCurrentRun(runs)),
    vscode.commands.registerCommand(COMMANDS.chooseBackend, () => chooseBackend()),
    vscode.commands.registerCommand(COMMANDS.restartServer, () => client.restart()),
    vscode.commands.registerCommand(COMMANDS.clearEditHints, () => editedFiles.clear()),
    // The gutter's context menu: VS Code gives an extension's gutter icons no hover of their own.
    vscode.commands.registerCommand(COMMANDS.explainLine, (at?: unknown) => explainLine(at)),
    vscode.commands.registerCommand(COMMANDS.revealTrajectoryLine, async (uri: unknown, line: unknown) => {
      if (typeof uri !== 'string' || typeof line !== 'number') return;
      await revealLine(vscode.Uri.parse(uri), line);
    }),
  ];
}

/**
 * Shows the hover of a trajectory line (its reward and why, what the gutter icon stands for): the line the
 * gutter's context menu was opened on (`{ lineNumber, uri }`, 1-based), else the cursor's.
 */
async function explainLine(at: unknown): Promise<void> {
  const given = at && typeof at === 'object' ? (at as { lineNumber?: unknown; uri?: unknown }) : {};
  const uri = given.uri instanceof vscode.Uri ? given.uri : vscode.window.activeTextEditor?.document.uri;
  if (!uri) return;
  const editor = await vscode.window.showTextDocument(uri, { preserveFocus: false, preview: false });
  const line =
    typeof given.lineNumber === 'number'
      ? Math.max(0, Math.min(given.lineNumber - 1, editor.document.lineCount - 1))
      : editor.selection.active.line;
  // On the line's first character that is not a space: the hover of the whole line is there.
  const pos = new vscode.Position(line, editor.document.lineAt(line).firstNonWhitespaceCharacterIndex);
  editor.selection = new vscode.Selection(pos, pos);
  editor.revealRange(new vscode.Range(pos, pos));
  await vscode.commands.executeCommand('editor.action.showHover');
}

/** Verifies the given trajectory, else the active editor's, else the current run's, and says how it scored. */
async function verifyTrajectory(client: LarClient, runs: RunRegistry, target?: vscode.Uri): Promise<void> {
  const active = vscode.window.activeTextEditor?.document;
  const current = runs.current();
  const uri =
    target ??
    (active?.languageId === TRAJECTORY_LANGUAGE ? active.uri : undefined) ??
    (current ? vscode.Uri.parse(current.uri) : undefined);
  if (!uri) {
    void vscode.window.showInformationMessage('Lean4 Agentic: open a trajectory (*.lar.jsonl) to verify it.');
    return;
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== TRAJECTORY_LANGUAGE) {
    void vscode.window.showInformationMessage(
      `Lean4 Agentic: ${vscode.workspace.asRelativePath(uri)} is not a trajectory (*.lar.jsonl).`,
    );
    return;
  }
  try {
    const result = await client.reverify(doc);
    const name = vscode.workspace.asRelativePath(uri);
    if (result.fatal) {
      void vscode.window.showWarningMessage(`Lean4 Agentic: ${name} could not be verified: ${result.fatal}`);
    } else if (result.summary) {
      const by = ` (${result.backend.backend})`;
      vscode.window.setStatusBarMessage(
        `$(check) ${name}: ${result.summary.steps} steps, outcome ${result.summary.outcome}, return ${formatNumber(result.summary.return)}${by}`,
        5000,
      );
    }
  } catch (err) {
    void vscode.window.showErrorMessage(
      `Lean4 Agentic: could not verify ${vscode.workspace.asRelativePath(uri)}: ${message(err)}`,
    );
  }
}

async function openCurrentRun(runs: RunRegistry): Promise<void> {
  const run = runs.current();
  if (!run) {
    void vscode.window.showInformationMessage(
      'Lean4 Agentic: no run yet. Open a trajectory (*.lar.jsonl) or start the agent.',
    );
    return;
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(run.uri));
  // The last line with a reward: where a live run is now.
  const last = run.lines.reduce((max, l) => Math.max(max, l.line), 0);
  await vscode.window.showTextDocument(doc, {
    preview: false,
    selection: doc.lineAt(Math.min(last, doc.lineCount - 1)).range,
  });
}

async function chooseBackend(): Promise<void> {
  const current = readConfig().backend;
  const picked = await vscode.window.showQuickPick(
    BACKEND_CHOICES.map((choice) => ({
      label: choice,
      description: choice === current ? '(current)' : undefined,
      detail: BACKEND_ITEMS[choice],
      choice,
    })),
    { title: 'Lean4 Agentic: verifier backend', placeHolder: `Which backend decides rewards (now: ${current})` },
  );
  if (!picked || picked.choice === current) return;
  // The configuration listener restarts the server with the new setting.
  await writeBackend(picked.choice);
  if (!vscode.workspace.isTrusted && picked.choice !== 'builtin') {
    void vscode.window.showWarningMessage(
      'Lean4 Agentic: this workspace is in Restricted Mode, so the builtin backend stays in use until you trust it.',
    );
  }
}
