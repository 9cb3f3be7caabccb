/**
 * Explorer marks for trajectory files: how each run went (run-badges.ts),
 * read from the file and kept until it changes (a live run's file is read
 * again at most twice a second).
 */
import { stat } from 'node:fs/promises';
import * as vscode from 'vscode';
import { describeRunFile } from '../../core/agent/history';
import { runBadge } from './run-badges';

const COLOR = {
  pass: 'lean4Agentic.reward.positive',
  fail: 'lean4Agentic.reward.negative',
  warn: 'lean4Agentic.reward.zero',
} as const;

export class RunDecorations implements vscode.FileDecorationProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri[]>();
  readonly onDidChangeFileDecorations = this.changed.event;
  private readonly cache = new Map<string, { key: string; decoration: vscode.FileDecoration | undefined }>();
  private readonly pending = new Map<string, vscode.Uri>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly subs: vscode.Disposable[] = [];

  constructor() {
    const watcher = vscode.workspace.createFileSystemWatcher('**/*.lar.jsonl');
    const touch = (uri: vscode.Uri) => {
      this.pending.set(uri.toString(), uri);
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        const uris = [...this.pending.values()];
        this.pending.clear();
        this.changed.fire(uris);
      }, 500);
    };
    this.subs.push(
      watcher,
      watcher.onDidChange(touch),
      watcher.onDidCreate(touch),
      watcher.onDidDelete(touch),
      this.changed,
      vscode.window.registerFileDecorationProvider(this),
    );
  }

  async provideFileDecoration(uri: vscode.Uri): Promise<vscode.FileDecoration | undefined> {
    if (uri.scheme !== 'file' || !uri.path.endsWith('.lar.jsonl')) return undefined;
    let key: string;
    try {
      const s = await stat(uri.fsPath);
      if (!s.isFile()) return undefined;
      key = `${s.mtimeMs}:${s.size}`;
    } catch {
      return undefined;
    }
    const hit = this.cache.get(uri.fsPath);
    if (hit?.key === key) return hit.decoration;
    let decoration: vscode.FileDecoration | undefined;
    try {
      // Large files are marked from their last line alone (no verification): this runs on the extension host.
      const b = runBadge(await describeRunFile(uri.fsPath, 2 * 1024 * 1024));
      decoration = new vscode.FileDecoration(
        b.badge,
        b.tooltip,
        b.tone === 'none' ? undefined : new vscode.ThemeColor(COLOR[b.tone]),
      );
    } catch {
      decoration = undefined;
    }
    if (this.cache.size > 2000) this.cache.clear();
    this.cache.set(uri.fsPath, { key, decoration });
    return decoration;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subs) s.dispose();
  }
}
