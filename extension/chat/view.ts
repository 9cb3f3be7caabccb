/**
 * The chat view: a webview view in its own activity-bar container (Copilot's
 * Chat view refuses third-party participants without a sign-in). Strict CSP
 * with a nonce, no remote content, the script and style from the extension.
 * Messages in both directions are validated with the schemas of
 * core/protocol/chat.ts; what the view shows of a run is replayed when it reloads.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { z } from 'zod';
import { FromWebview, ToWebview } from '../../core/protocol/chat';

export const CHAT_VIEW_ID = 'lean4Agentic.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private transcript: ToWebview[] = [];
  private connection: ToWebview | undefined;
  /** The model picker's current model (its listing is asked for again whenever it opens). */
  private modelChoice: ToWebview | undefined;
  private running = false;
  /** Kept for a view not made yet: it gets the badge when it is. */
  private badge: vscode.ViewBadge | undefined;
  private readonly subs: vscode.Disposable[] = [];
  /** Told when the view is shown or hidden (the connection is checked while it shows). */
  onVisible: (visible: boolean) => void = () => {};

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly output: vscode.LogOutputChannel,
    private readonly onMessage: (msg: FromWebview) => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.badge = this.badge;
    const media = vscode.Uri.joinPath(this.extensionUri, 'extension', 'media');
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [media, dist] };
    view.webview.html = this.html(view.webview);
    this.subs.push(
      view.webview.onDidReceiveMessage((raw: unknown) => {
        const parsed = FromWebview.safeParse(raw);
        if (!parsed.success) {
          this.output.warn(`chat view: ignored a malformed message: ${z.prettifyError(parsed.error)}`);
          return;
        }
        if (parsed.data.type === 'ready') this.replay();
        if (parsed.data.type === 'discardFailed') this.forgetFailed(parsed.data.id);
        this.onMessage(parsed.data);
      }),
      view.onDidChangeVisibility(() => this.onVisible(view.visible)),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
        this.onVisible(false);
      }),
    );
    this.onVisible(view.visible);
  }

  /** Sends a message (validated) and keeps it for a reload of the view. */
  post(msg: ToWebview): void {
    const parsed = ToWebview.safeParse(msg);
    if (!parsed.success) {
      this.output.error(`chat view: not sending a malformed ${msg.type} message: ${z.prettifyError(parsed.error)}`);
      return;
    }
    if (parsed.data.type === 'clear') this.transcript = [];
    else if (parsed.data.type === 'state') {
      this.running = parsed.data.running;
      // A run that is over has no live cards left to show after a reload.
      if (!this.running)
        this.transcript = this.transcript.filter((x) => x.type !== 'toolStarted' && x.type !== 'toolOutput');
    } else if (parsed.data.type === 'waiting' || parsed.data.type === 'sendReceived') {
      // Only of use while it lasts.
    } else if (parsed.data.type === 'connection') this.connection = parsed.data;
    else if (parsed.data.type === 'modelChoice') this.modelChoice = parsed.data;
    else if (parsed.data.type === 'history' || parsed.data.type === 'models') {
      // A listing, not part of the conversation: asked for again after a reload.
    } else if (parsed.data.type === 'context') {
      // Only the latest figure matters on a reload.
      this.transcript = this.transcript.filter((m) => m.type !== 'context');
      this.transcript.push(parsed.data);
    } else if (parsed.data.type === 'unsent') {
      // Back in the input once; a reload must not put it there again. Its earlier failure is answered too.
      if (parsed.data.id) this.forgetFailed(parsed.data.id);
    } else if (parsed.data.type !== 'focusInput' && parsed.data.type !== 'showApproval') this.keep(parsed.data);
    if (this.transcript.length > 5000) this.transcript.splice(0, this.transcript.length - 5000);
    void this.view?.webview.postMessage(parsed.data);
  }

  /**
   * Keeps a message for a reload: streamed deltas (one per token) are joined
   * to the one before of their kind, so a long answer or a long reasoning is
   * one entry, not thousands that push the run's start out of the replay.
   */
  private keep(m: ToWebview): void {
    // A message's later answer (its Retry started, queued or failed again) stands for its earlier failure.
    if ((m.type === 'sendFailed' || m.type === 'runStarted' || m.type === 'queued') && m.id) this.forgetFailed(m.id);
    const last = this.transcript[this.transcript.length - 1];
    if (m.type === 'toolOutput') {
      // A tail, not a delta: only the newest matters.
      const i = this.transcript.findIndex((x) => x.type === 'toolOutput' && x.id === m.id);
      if (i >= 0) {
        this.transcript[i] = m;
        return;
      }
    }
    if (m.type === 'runChanges') {
      // The card as it stands now replaces the one sent before (a reload shows it once, with its marks).
      const i = this.transcript.findIndex((x) => x.type === 'runChanges' && x.review.run === m.review.run);
      if (i >= 0) {
        this.transcript[i] = m;
        return;
      }
    }
    if (m.type === 'mcp') {
      // A run's MCP list as it stands now, where it was first shown.
      const i = this.transcript.findIndex((x) => x.type === 'mcp' && x.run === m.run);
      if (i >= 0) {
        this.transcript[i] = m;
        return;
      }
    }
    if (m.type === 'step' && m.card.id !== undefined) {
      // The finished card stands for the live one.
      const id = m.card.id;
      this.transcript = this.transcript.filter(
        (x) => !((x.type === 'toolStarted' || x.type === 'toolOutput') && x.id === id),
      );
    }
    if (
      (m.type === 'text' || m.type === 'reasoning') &&
      last?.type === m.type &&
      last.delta.length + m.delta.length <= 100_000
    ) {
      this.transcript[this.transcript.length - 1] = { type: m.type, delta: last.delta + m.delta };
      return;
    }
    this.transcript.push(m);
  }

  /** A failed message the user took back (Edit), or sent again: a reload shows it no more as failed. */
  private forgetFailed(id: string): void {
    this.transcript = this.transcript.filter((x) => !(x.type === 'sendFailed' && x.id === id));
  }

  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  /** Whether the chat is made and on screen. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** The badge on the view (and its activity-bar item); undefined takes it away. */
  setBadge(badge: vscode.ViewBadge | undefined): void {
    this.badge = badge;
    if (this.view) this.view.badge = badge;
  }

  /** Shows the chat with the cursor in its input (a view not made yet gets it when it is ready). */
  focusInput(): Promise<void> {
    return this.showAt('focusInput');
  }

  /** Shows the chat at the approval that waits, its Approve button focused. */
  showApproval(): Promise<void> {
    return this.showAt('showApproval');
  }

  private async showAt(where: 'focusInput' | 'showApproval'): Promise<void> {
    this.wantsFocus = where;
    await this.reveal();
    if (this.view && this.ready) this.deliverFocus();
  }

  private wantsFocus: 'focusInput' | 'showApproval' | undefined;
  private ready = false;

  private deliverFocus(): void {
    if (!this.wantsFocus) return;
    const type = this.wantsFocus;
    this.wantsFocus = undefined;
    void this.view?.webview.postMessage({ type } satisfies ToWebview);
  }

  private replay(): void {
    const w = this.view?.webview;
    if (!w) return;
    void w.postMessage({ type: 'clear' } satisfies ToWebview);
    if (this.connection) void w.postMessage(this.connection);
    if (this.modelChoice) void w.postMessage(this.modelChoice);
    for (const m of this.transcript) void w.postMessage(m);
    void w.postMessage({ type: 'state', running: this.running } satisfies ToWebview);
    this.ready = true;
    this.deliverFocus();
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'chat.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'extension', 'media', 'chat.css'));
    const pickerStyle = webview.asWebviewUri(
      vscode.Uri.joinPath(this.extensionUri, 'extension', 'media', 'model-picker.css'),
    );
    const csp = `default-src 'none'; img-src ${webview.cspSource}; script-src 'nonce-${nonce}'; style-src ${webview.cspSource} 'nonce-${nonce}'; font-src ${webview.cspSource}`;
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" nonce="${nonce}" href="${style.toString()}">
<link rel="stylesheet" nonce="${nonce}" href="${pickerStyle.toString()}">
<title>Lean4 Agentic</title>
</head>
<body>
<div class="wrap">
  <header>
    <div class="header-info">
      <span id="status" aria-live="polite"></span>
      <span id="context" class="context" hidden title="Prompt tokens of the last request / the model's context window"></span>
    </div>
    <div class="header-actions">
      <button id="open-trajectory" class="secondary" hidden title="Open this run's trajectory">Trajectory</button>
      <button id="show-history" class="secondary" aria-expanded="false" aria-controls="history" title="Past conversations in this workspace">History</button>
      <button id="new-chat" class="secondary" title="Clear the chat">New</button>
    </div>
  </header>
  <div id="connection" role="status" hidden></div>
  <nav id="timeline" aria-label="Stage timeline" hidden></nav>
  <section id="history" aria-label="Past conversations" hidden></section>
  <div class="log-wrap">
    <main id="log" role="log" aria-live="polite"><div id="log-inner"></div></main>
    <button id="jump" class="secondary small" hidden title="Follow the run again">↓ Latest</button>
  </div>
  <div id="activity" hidden><span id="activity-text" role="status" aria-live="polite" hidden></span><span id="counters" hidden></span></div>
  <footer>
    <textarea id="task" aria-label="Task for the agent" placeholder="Describe a task (Enter to run, Shift+Enter for a new line)"></textarea>
    <div class="row">
      <button id="model-picker" class="secondary" aria-haspopup="listbox" aria-expanded="false" aria-controls="model-menu" title="The model this chat runs with"><span id="model-label">Model</span><span class="model-chevron" aria-hidden="true">▾</span></button>
      <div id="model-menu" role="listbox" aria-label="Models of the configured endpoints" hidden></div>
      <button id="run">Run</button>
      <button id="stop" class="secondary" hidden>Stop</button>
    </div>
  </footer>
</div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}
