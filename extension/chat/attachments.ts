/**
 * The editor's side of `@` attachments: what the picker offers (workspace files, the selection, the active
 * file's Problems, the agent terminal's last command) and, at send time, the content of what was picked,
 * read here under the rules of core/agent/attachments.ts. The webview only ever names what to attach.
 */
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import {
  fileAttachment,
  lastCommand,
  problemsAttachment,
  selectionAttachment,
  terminalAttachment,
  type Problem,
} from '../../core/agent/attachments';
import type { AttachmentRef, AttachOptions } from '../../core/protocol/attachments';
import { parseTrajectory } from '../../core/schema/jsonl';
import type { AttachmentPart } from '../../core/schema/message-parts';
import type { TrajectoryEvent } from '../../core/schema/trajectory';
import { combineRedactors, redact, secretRedactor } from '../../core/secrets/redact';
import { readBoundedText } from '../../core/workspace/bounded-read';
import { confinePath, openWorkspace } from '../../core/workspace/fs';
import { readAgentConfig } from '../config';
import { allApiKeys } from '../agent/endpoint-keys';
import { ShellCapture } from './shell-capture';

/** Files listed to filter what is typed after `@` (the picker shows the first matches). */
const LISTED_FILES = 5000;
const OFFERED_FILES = 50;
/** Runs of the chat looked back through for the agent terminal's last command. */
const RUNS_BACK = 8;
const TRAJECTORY_BYTES = 64 * 1024 * 1024;
const EXCLUDE = '{**/node_modules/**,**/.git/**,**/.lar/**}';

const SEVERITY: Record<vscode.DiagnosticSeverity, Problem['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'info',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

/** The workspace-relative path of a document in the first folder, or undefined when it is elsewhere. */
function inWorkspace(uri: vscode.Uri): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (
    !folder ||
    uri.scheme !== 'file' ||
    vscode.workspace.getWorkspaceFolder(uri)?.uri.toString() !== folder.uri.toString()
  )
    return undefined;
  return vscode.workspace.asRelativePath(uri, false);
}

export class AttachmentSource implements vscode.Disposable {
  /** The text editor the user worked in last: the chat has the focus when they pick from it. */
  private editor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly subs: vscode.Disposable[];
  private readonly shell = new ShellCapture();

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.subs = [
      this.shell,
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.editor = e;
      }),
    ];
  }

  private get active(): vscode.TextEditor | undefined {
    const e = vscode.window.activeTextEditor ?? this.editor;
    return e && !e.document.isClosed ? e : undefined;
  }

  /** The picker's choices for `query` (the text after `@`). */
  async options(query: string, lastRun: vscode.Uri | undefined): Promise<AttachOptions> {
    const q = query.toLowerCase();
    const all = await vscode.workspace.findFiles('**/*', EXCLUDE, LISTED_FILES);
    const files = all
      .map((u) => inWorkspace(u))
      .filter((p): p is string => p !== undefined && p.toLowerCase().includes(q))
      .sort((a, b) => rank(a, q) - rank(b, q) || a.localeCompare(b))
      .slice(0, OFFERED_FILES);
    const ed = this.active;
    const sel = ed && !ed.selection.isEmpty ? `${this.pathOf(ed)}:${linesOf(ed.selection)}` : undefined;
    const problemsOf = ed ? inWorkspace(ed.document.uri) : undefined;
    const cmd = this.lastCommand(lastRun);
    const user = this.shell.active();
    return {
      type: 'attachOptions',
      query: query.slice(0, 200),
      files,
      ...(sel ? { selection: sel.slice(0, 1000) } : {}),
      ...(problemsOf ? { problemsOf: problemsOf.slice(0, 1000) } : {}),
      ...(cmd ? { terminal: `Agent terminal: $ ${oneLine(cmd.command)}`.slice(0, 1000) } : {}),
      ...(user ? { activeTerminal: `Terminal "${user.name}": $ ${oneLine(user.command.command)}`.slice(0, 1000) } : {}),
    };
  }

  /** The content of each reference, read now; the first that cannot be attached says why. */
  async resolve(
    refs: readonly AttachmentRef[],
    lastRun: vscode.Uri | undefined,
  ): Promise<{ ok: true; parts: AttachmentPart[] } | { ok: false; error: string }> {
    const parts: AttachmentPart[] = [];
    for (const ref of refs) {
      const r = await this.resolveOne(ref, lastRun);
      if (typeof r === 'string') return { ok: false, error: r };
      parts.push(r);
    }
    return { ok: true, parts };
  }

  private async resolveOne(ref: AttachmentRef, lastRun: vscode.Uri | undefined): Promise<AttachmentPart | string> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const root = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
    switch (ref.kind) {
      case 'file': {
        if (!root) return 'open a folder first: files are attached from the workspace';
        const r = await fileAttachment(root, ref.path);
        return r.ok ? r.value : `could not attach ${ref.path}: ${r.error}`;
      }
      case 'selection': {
        const ed = this.active;
        if (!ed || ed.selection.isEmpty) return 'there is no selection: select text in an editor, then attach it';
        const lines = spanOf(ed.selection);
        return selectionAttachment({
          path: this.pathOf(ed),
          startLine: lines.start,
          endLine: lines.end,
          text: ed.document.getText(ed.selection),
        });
      }
      case 'problems':
        return this.problems(ref.path, root);
      case 'terminal': {
        const keys = await allApiKeys(this.secrets, readAgentConfig().endpoints);
        const mask = combineRedactors(...keys.map((k) => (t: string) => redact(t, k)), secretRedactor(process.env));
        if (ref.of === 'active') {
          const user = this.shell.active();
          if (!user) return 'the active terminal has no command whose output VS Code let the extension read';
          return terminalAttachment(user.command, mask, `terminal "${user.name}"`);
        }
        const cmd = this.lastCommand(lastRun);
        if (!cmd) return 'the agent terminal has run no command in this chat yet';
        return terminalAttachment(cmd, mask);
      }
    }
  }

  private async problems(path: string | undefined, root: string | undefined): Promise<AttachmentPart | string> {
    let uri: vscode.Uri | undefined;
    if (path !== undefined) {
      if (!root) return 'open a folder first: Problems are attached for workspace files';
      const ws = await openWorkspace(root);
      const c = ws.ok ? await confinePath(ws.value, path) : ws;
      if (!c.ok) return `could not attach the Problems of ${path}: ${c.error}`;
      uri = vscode.Uri.joinPath(vscode.Uri.file(root), ...c.value.relative.split('/'));
    } else uri = this.active?.document.uri;
    const rel = uri && inWorkspace(uri);
    if (!uri || !rel) return 'open a workspace file in the editor to attach its Problems';
    const problems = vscode.languages.getDiagnostics(uri).map((d) => ({
      line: d.range.start.line + 1,
      column: d.range.start.character + 1,
      severity: SEVERITY[d.severity],
      message: d.message,
      ...(d.source ? { source: d.source } : {}),
      ...(d.code !== undefined ? { code: String(typeof d.code === 'object' ? d.code.value : d.code) } : {}),
    }));
    return problemsAttachment(rel, problems);
  }

  private pathOf(ed: vscode.TextEditor): string {
    return inWorkspace(ed.document.uri) ?? ed.document.uri.path.split('/').pop() ?? 'untitled';
  }

  /** The agent terminal's last command in this chat: the latest run's, else the runs before it in the thread. */
  private lastCommand(lastRun: vscode.Uri | undefined): ReturnType<typeof lastCommand> {
    let path = lastRun?.scheme === 'file' ? lastRun.fsPath : undefined;
    for (let i = 0; path && i < RUNS_BACK; i++) {
      let parsed;
      try {
        parsed = parseTrajectory(readBoundedText(path, TRAJECTORY_BYTES, 'the trajectory'));
      } catch {
        return undefined;
      }
      const events = parsed.lines.flatMap((l): TrajectoryEvent[] => (l.kind === 'event' ? [l.event] : []));
      const cmd = lastCommand(events);
      if (cmd) return cmd;
      const previous = parsed.header?.thread?.previous;
      path =
        previous && !previous.includes('/') && !previous.includes('\\') ? join(dirname(path), previous) : undefined;
    }
    return undefined;
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}

/** Lines of a selection, 1-based (a selection ending at a line's start does not take that line). */
function spanOf(s: vscode.Selection): { start: number; end: number } {
  const end = s.end.line + (s.end.character === 0 && s.end.line > s.start.line ? 0 : 1);
  return { start: s.start.line + 1, end };
}

/** `3-9`, or `3` for one line. */
function linesOf(s: vscode.Selection): string {
  const { start, end } = spanOf(s);
  return start === end ? `${start}` : `${start}-${end}`;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ');

/** Files whose name starts with the query first, then those whose name has it, then the rest. */
function rank(path: string, q: string): number {
  const name = (path.split('/').pop() ?? path).toLowerCase();
  return name.startsWith(q) ? 0 : name.includes(q) ? 1 : 2;
}
