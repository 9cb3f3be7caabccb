/**
 * Draws rewards on trajectory documents: one gutter icon per line (light and
 * dark variants) and overview-ruler marks in the same colours. What goes where
 * is decorations.ts (pure); this file only applies it, debounced so typing
 * does not flicker.
 */
import * as vscode from 'vscode';
import type { RewardsParams } from '../../core/protocol/lsp';
import { DECORATION_KINDS, decorationsFor, type DecorationKind, type LineDecoration } from './decorations';

interface KindStyle {
  icon: string;
  color: string;
  lane: vscode.OverviewRulerLane;
}

const STYLES: Record<DecorationKind, KindStyle> = {
  stepPass: { icon: 'step-pass', color: 'lean4Agentic.reward.positive', lane: vscode.OverviewRulerLane.Left },
  stepZero: { icon: 'step-zero', color: 'lean4Agentic.reward.zero', lane: vscode.OverviewRulerLane.Left },
  stepFail: { icon: 'step-fail', color: 'lean4Agentic.reward.negative', lane: vscode.OverviewRulerLane.Left },
  stagePass: { icon: 'stage-pass', color: 'lean4Agentic.reward.positive', lane: vscode.OverviewRulerLane.Center },
  stageZero: { icon: 'stage-zero', color: 'lean4Agentic.reward.zero', lane: vscode.OverviewRulerLane.Center },
  stageFail: { icon: 'stage-fail', color: 'lean4Agentic.reward.negative', lane: vscode.OverviewRulerLane.Center },
  outcomePass: { icon: 'outcome-pass', color: 'lean4Agentic.reward.positive', lane: vscode.OverviewRulerLane.Full },
  outcomeFail: { icon: 'outcome-fail', color: 'lean4Agentic.reward.negative', lane: vscode.OverviewRulerLane.Full },
  malformed: { icon: 'malformed', color: 'lean4Agentic.malformed', lane: vscode.OverviewRulerLane.Full },
};

export interface GutterOptions {
  enabled(): boolean;
  debounceMs(): number;
}

export class TrajectoryGutter implements vscode.Disposable {
  private readonly types: Map<DecorationKind, vscode.TextEditorDecorationType>;
  /** The latest rewards per document URI; mapped to decorations when first drawn. */
  private readonly latest = new Map<string, { params: RewardsParams; marks?: Map<DecorationKind, LineDecoration[]> }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    context: vscode.ExtensionContext,
    private readonly options: GutterOptions,
  ) {
    const media = (name: string) => vscode.Uri.joinPath(context.extensionUri, 'extension', 'media', `${name}.svg`);
    this.types = new Map(
      DECORATION_KINDS.map((kind) => {
        const s = STYLES[kind];
        const type = vscode.window.createTextEditorDecorationType({
          gutterIconSize: 'contain',
          light: { gutterIconPath: media(`${s.icon}-light`) },
          dark: { gutterIconPath: media(`${s.icon}-dark`) },
          overviewRulerColor: new vscode.ThemeColor(s.color),
          overviewRulerLane: s.lane,
        });
        return [kind, type] as const;
      }),
    );
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        for (const e of editors) this.draw(e);
      }),
    );
  }

  /** New rewards for a document: drawn after the debounce, the latest winning. */
  update(params: RewardsParams): void {
    this.latest.set(params.uri, { params });
    const pending = this.timers.get(params.uri);
    if (pending) clearTimeout(pending);
    this.timers.set(
      params.uri,
      setTimeout(() => {
        this.timers.delete(params.uri);
        for (const e of vscode.window.visibleTextEditors) if (e.document.uri.toString() === params.uri) this.draw(e);
      }, this.options.debounceMs()),
    );
  }

  /** Redraws every visible editor (after the settings changed). */
  redrawAll(): void {
    for (const e of vscode.window.visibleTextEditors) this.draw(e);
  }

  /** Forgets a document's rewards (it was closed). */
  forget(uri: string): void {
    this.latest.delete(uri);
    const pending = this.timers.get(uri);
    if (pending) clearTimeout(pending);
    this.timers.delete(uri);
  }

  private draw(editor: vscode.TextEditor): void {
    const doc = editor.document;
    const entry = this.latest.get(doc.uri.toString());
    if (!entry) return;
    if (!this.options.enabled()) {
      for (const type of this.types.values()) editor.setDecorations(type, []);
      return;
    }
    // Rewards for an older version describe lines that may have moved: keep what is drawn (VS Code moves it
    // with the text) until the rewards for this version arrive.
    if (entry.params.version !== undefined && entry.params.version < doc.version) return;
    entry.marks ??= decorationsFor(entry.params);
    for (const [kind, marks] of entry.marks) {
      const options: vscode.DecorationOptions[] = [];
      for (const m of marks) {
        if (m.line >= doc.lineCount) continue;
        const hover = new vscode.MarkdownString(m.hover);
        options.push({ range: doc.lineAt(m.line).range, hoverMessage: hover });
      }
      editor.setDecorations(this.types.get(kind)!, options);
    }
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const t of this.types.values()) t.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
