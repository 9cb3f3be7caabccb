/**
 * Hints in the source files the agent edited: a gutter mark on each line a step
 * changed, a faint label naming the step and its reward, and a hover linking to
 * the step's line in the trajectory. Lines the user edits lose their hint.
 * Which lines a step changed and how hints move are hints.ts (pure).
 */
import * as vscode from 'vscode';
import { COMMANDS } from '../../core/protocol/commands';
import type { RewardsParams } from '../../core/protocol/lsp';
import { ToolCallEvent } from '../../core/schema/trajectory';
import type { Reward } from '../trajectory/decorations';
import {
  applyStep,
  changedLineRanges,
  hintHover,
  hintLabel,
  hintsForFile,
  labelLines,
  shiftHints,
  type EditHint,
  type StepRef,
} from './hints';
import { fileNameOf } from '../trajectory/runs';

const KINDS = [
  { reward: 1, icon: 'edit-pass', color: 'lean4Agentic.reward.positive' },
  { reward: 0, icon: 'edit-zero', color: 'lean4Agentic.reward.zero' },
  { reward: -1, icon: 'edit-fail', color: 'lean4Agentic.reward.negative' },
] as const;

interface FileState {
  /** Steps that changed the file, in the order they became known; one per (trajectory, step). */
  steps: StepRef[];
  hints: EditHint[];
}

export class EditedFiles implements vscode.Disposable {
  private readonly files = new Map<string, FileState>();
  /** Per trajectory: step → a fingerprint of what is known of it, so each step is read once. */
  private readonly seen = new Map<string, Map<number, string>>();
  private readonly types: Map<Reward, vscode.TextEditorDecorationType>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    context: vscode.ExtensionContext,
    private readonly enabled: () => boolean,
    private readonly output: vscode.LogOutputChannel,
  ) {
    const media = (name: string) => vscode.Uri.joinPath(context.extensionUri, 'extension', 'media', `${name}.svg`);
    this.types = new Map(
      KINDS.map((k) => [
        k.reward,
        vscode.window.createTextEditorDecorationType({
          gutterIconSize: 'contain',
          light: { gutterIconPath: media(`${k.icon}-light`) },
          dark: { gutterIconPath: media(`${k.icon}-dark`) },
          overviewRulerColor: new vscode.ThemeColor(k.color),
          overviewRulerLane: vscode.OverviewRulerLane.Left,
          after: {
            color: new vscode.ThemeColor('lean4Agentic.editHint.foreground'),
            margin: '0 0 0 2em',
            fontStyle: 'italic',
          },
        }),
      ]),
    );
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => this.onDocumentChanged(e)),
      vscode.workspace.onDidOpenTextDocument((doc) => this.recompute(doc)),
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        for (const e of editors) this.draw(e);
      }),
    );
  }

  /** New rewards: read the steps that changed files and not seen before, and mark their lines. */
  async update(params: RewardsParams): Promise<void> {
    const seen = this.seen.get(params.uri) ?? new Map<number, string>();
    this.seen.set(params.uri, seen);
    const fresh = params.lines.filter((l) => {
      if (l.kind !== 'step' || l.step === undefined || !l.filesChanged?.length) return false;
      const print = `${l.tool}|${l.toolReward}|${l.filesChanged.join('\n')}`;
      if (seen.get(l.step) === print) return false;
      seen.set(l.step, print);
      return true;
    });
    if (fresh.length === 0) return;
    const trajectory = vscode.Uri.parse(params.uri);
    const lines = await this.readLines(trajectory);
    if (!lines) return;
    const touched = new Set<string>();
    for (const l of fresh) {
      const event = this.parseStep(lines[l.line], params.uri, l.line);
      if (!event) continue;
      const ref: StepRef = {
        trajectory: params.uri,
        trajectoryLine: l.line,
        step: l.step!,
        tool: l.tool ?? event.tool,
        reward: l.toolReward,
        event,
      };
      for (const rel of l.filesChanged!) {
        const file = this.resolve(trajectory, rel);
        const key = file.toString();
        const state = this.files.get(key) ?? { steps: [], hints: [] };
        this.files.set(key, state);
        const known = state.steps.findIndex((s) => s.trajectory === ref.trajectory && s.step === ref.step);
        if (known >= 0) state.steps.splice(known, 1);
        state.steps.push(ref);
        const text = await this.readText(file);
        if (text === undefined) continue;
        const changed = changedLineRanges(event, text);
        this.output.debug(`step ${ref.step} of ${params.uri} changed ${key}: ${JSON.stringify(changed)}`);
        state.hints = applyStep(state.hints, ref, changed);
        touched.add(key);
      }
    }
    for (const key of touched) this.drawFile(key);
  }

  /** Removes every hint (the files stay known; a reload of a file brings its hints back). */
  clear(): void {
    for (const state of this.files.values()) state.hints = [];
    this.redrawAll();
  }

  redrawAll(): void {
    for (const e of vscode.window.visibleTextEditors) this.draw(e);
  }

  private onDocumentChanged(e: vscode.TextDocumentChangeEvent): void {
    const key = e.document.uri.toString();
    const state = this.files.get(key);
    if (!state || e.contentChanges.length === 0) return;
    if (!e.document.isDirty && e.reason === undefined) {
      // Reloaded from disk (the agent wrote it): what the steps changed is found again in the new text.
      state.hints = hintsForFile(state.steps, e.document.getText());
    } else {
      const lengthAfter = (line: number) => (line < e.document.lineCount ? e.document.lineAt(line).text.length : -1);
      // Changes come last-first, each relative to the document before it: applied in order they compose.
      for (const c of e.contentChanges)
        state.hints = shiftHints(state.hints, c, e.contentChanges.length === 1 ? lengthAfter : undefined);
    }
    this.drawFile(key);
  }

  private recompute(doc: vscode.TextDocument): void {
    const key = doc.uri.toString();
    const state = this.files.get(key);
    if (!state) return;
    state.hints = hintsForFile(state.steps, doc.getText());
    this.drawFile(key);
  }

  private drawFile(key: string): void {
    for (const e of vscode.window.visibleTextEditors) if (e.document.uri.toString() === key) this.draw(e);
  }

  private draw(editor: vscode.TextEditor): void {
    const state = this.files.get(editor.document.uri.toString());
    if (!state) return;
    const doc = editor.document;
    const byReward = new Map<Reward, vscode.DecorationOptions[]>(KINDS.map((k) => [k.reward, []]));
    if (this.enabled()) {
      const labelled = labelLines(state.hints);
      for (const h of state.hints) {
        if (h.line >= doc.lineCount) continue;
        const link = `command:${COMMANDS.revealTrajectoryLine}?${encodeURIComponent(JSON.stringify([h.ref.trajectory, h.ref.trajectoryLine]))}`;
        const hover = new vscode.MarkdownString(hintHover(h, fileNameOf(h.ref.trajectory), link));
        hover.isTrusted = { enabledCommands: [COMMANDS.revealTrajectoryLine] };
        const range = doc.lineAt(h.line).range;
        const options: vscode.DecorationOptions = { range, hoverMessage: hover };
        if (labelled.has(h.line)) options.renderOptions = { after: { contentText: hintLabel(h) } };
        byReward.get(h.ref.reward ?? 0)!.push(options);
      }
    }
    for (const [reward, options] of byReward) editor.setDecorations(this.types.get(reward)!, options);
  }

  private parseStep(text: string | undefined, uri: string, line: number): ToolCallEvent | undefined {
    if (text === undefined) return undefined;
    try {
      const parsed = ToolCallEvent.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
    } catch {
      // reported below
    }
    this.output.warn(
      `${uri}:${line + 1}: the server reported changed files on a line that is not a tool call; no hint drawn`,
    );
    return undefined;
  }

  /** A workspace-relative path of a trajectory's run, as a URI: in the trajectory's workspace folder, else the first. */
  private resolve(trajectory: vscode.Uri, rel: string): vscode.Uri {
    if (/^([a-zA-Z]:)?[\\/]/.test(rel)) return vscode.Uri.file(rel);
    const folder = vscode.workspace.getWorkspaceFolder(trajectory) ?? vscode.workspace.workspaceFolders?.[0];
    return folder ? vscode.Uri.joinPath(folder.uri, rel) : vscode.Uri.joinPath(trajectory, '..', rel);
  }

  private async readLines(uri: vscode.Uri): Promise<string[] | undefined> {
    const text = await this.readText(uri);
    return text?.split(/\r?\n/);
  }

  /** The text as the editor has it when open, else from disk; undefined when there is none. */
  private async readText(uri: vscode.Uri): Promise<string | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) return open.getText();
    try {
      return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    } catch (err) {
      this.output.info(`no text for ${uri.toString()}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  dispose(): void {
    for (const t of this.types.values()) t.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
