/**
 * An approval the user cannot miss: while one waits, the chat view has a badge and the status bar says so; when the
 * chat cannot be seen, a notification asks too. What to show is decided in approval-notice.ts; this is the glue.
 */
import * as vscode from 'vscode';
import type { ToWebview } from '../../core/protocol/chat';
import {
  ALREADY_ANSWERED,
  NOTICE_ACTIONS,
  WaitingApprovals,
  badgeFor,
  noticeActions,
  noticeText,
  shouldNotify,
  waitingStatus,
  type WaitingApproval,
  type WaitingStatus,
} from './approval-notice';

/** What the alerts need of the chat view, the status bar and the session. */
export interface AlertTargets {
  view: {
    readonly visible: boolean;
    setBadge(badge: vscode.ViewBadge | undefined): void;
    showApproval(): Promise<void>;
  };
  status: { setWaiting(w: WaitingStatus | undefined): void };
  /** Answers as the chat's buttons do (the session resolves an approval once, then tells the chat). */
  answer(id: string, approved: boolean): void;
}

export class ApprovalAlerts {
  private readonly waiting = new WaitingApprovals();

  constructor(private readonly to: AlertTargets) {}

  /** Every message the chat is sent: an approval asked, answered, or the run over. */
  observe(msg: ToWebview): void {
    if (msg.type === 'approval') {
      const a = { id: msg.id, tool: msg.tool, args: msg.args, reason: msg.reason };
      this.waiting.add(a);
      this.draw();
      if (shouldNotify({ viewVisible: this.to.view.visible, windowFocused: vscode.window.state.focused }))
        void this.notify(a);
    } else if (msg.type === 'approvalDone') {
      if (this.waiting.settle(msg.id)) this.draw();
    } else if ((msg.type === 'state' && !msg.running) || msg.type === 'clear') {
      // A run that ends answers what still waits with no (without an approvalDone each).
      if (this.waiting.count > 0) {
        this.waiting.clear();
        this.draw();
      }
    }
  }

  private draw(): void {
    const badge = badgeFor(this.waiting.count);
    this.to.view.setBadge(badge);
    this.to.status.setWaiting(waitingStatus(this.waiting));
    void vscode.commands.executeCommand('setContext', 'lean4Agentic.approvalWaiting', badge !== undefined);
  }

  /** Non-modal: closing it leaves the approval waiting in the chat. A button pressed too late does nothing but say so. */
  private async notify(a: WaitingApproval): Promise<void> {
    const { approve, show } = NOTICE_ACTIONS;
    const pick = await vscode.window.showWarningMessage(noticeText(a), ...noticeActions(a));
    if (pick === undefined) return;
    if (pick === show) return this.to.view.showApproval();
    if (!this.waiting.has(a.id)) {
      void vscode.window.showInformationMessage(ALREADY_ANSWERED);
      return;
    }
    this.to.answer(a.id, pick === approve);
  }
}
