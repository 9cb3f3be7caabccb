/**
 * Pure: what tells the user that an approval waits outside the chat (the view's badge, the status bar, a
 * notification) and when; approval-alerts.ts shows it. Kept apart from `vscode` so it is tested under node --test.
 */
import { clip } from '../../core/protocol/chat';
import { code } from '../trajectory/decorations';

/** An approval the chat asked for and nobody answered yet (the fields of the chat's `approval` message). */
export interface WaitingApproval {
  id: string;
  tool: string;
  /** The call's arguments as the chat shows them: the command of run_command, the path of a file tool. */
  args: string;
  reason: string;
}

/** The approvals that wait, in the order they were asked; each one settles once. */
export class WaitingApprovals {
  private readonly byId = new Map<string, WaitingApproval>();

  add(a: WaitingApproval): void {
    this.byId.set(a.id, a);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** True when it was still waiting (the first answer), false for an answer that comes too late. */
  settle(id: string): boolean {
    return this.byId.delete(id);
  }

  /** The run ended or stopped: nothing waits any more. */
  clear(): void {
    this.byId.clear();
  }

  get count(): number {
    return this.byId.size;
  }

  /** The one asked first: the one "show me" goes to. */
  first(): WaitingApproval | undefined {
    return this.byId.values().next().value;
  }
}

export interface Badge {
  value: number;
  tooltip: string;
}

/** The chat view's badge while approvals wait; none when nothing waits. */
export function badgeFor(count: number): Badge | undefined {
  if (count <= 0) return undefined;
  return { value: count, tooltip: `${count} approval${count === 1 ? '' : 's'} waiting` };
}

export interface WaitingStatus {
  /** Status bar text, with a `$(codicon)`. */
  text: string;
  /** Markdown. */
  tooltip: string;
}

/** One line of a call for a notification or a tooltip: whitespace folded, clipped. */
export function callLine(a: WaitingApproval, max = 120): string {
  return clip(a.args.replace(/\s+/g, ' ').trim(), max);
}

/** What the status bar says while approvals wait (on a warning background); undefined when nothing waits. */
export function waitingStatus(approvals: WaitingApprovals): WaitingStatus | undefined {
  const a = approvals.first();
  if (!a) return undefined;
  const more = approvals.count > 1 ? ` (and ${approvals.count - 1} more)` : '';
  return {
    text: '$(bell) Lean4 Agentic: waiting for you',
    tooltip: `**Lean4 Agentic** waits for your approval: ${a.tool} ${code(callLine(a, 80))}${more}.\n\nClick to show it in the chat.`,
  };
}

/** Where the user is when an approval is asked. */
export interface Attention {
  /** The chat view is made and on screen. */
  viewVisible: boolean;
  /** The editor's window has the focus. */
  windowFocused: boolean;
}

/** A notification is shown when the chat cannot be seen: its view is hidden or the window is in the background. */
export function shouldNotify(at: Attention): boolean {
  return !at.viewVisible || !at.windowFocused;
}

/** The notification's buttons, in the order shown. */
export const NOTICE_ACTIONS = { approve: 'Approve', reject: 'Reject', show: 'Show in Chat' } as const;

/** Whether the notification's line shows the call whole: only then may it be approved from there. */
export function shownWhole(a: WaitingApproval, max = 120): boolean {
  // One line as it will run: no line breaks (a second command), no invisible or direction-changing characters.
  const call = a.args.trim();
  return (
    call.length <= max && !/[\r\n\u0000-\u0008\u000b-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/.test(call)
  );
}

/** The notification's buttons: Approve and Reject only for a call it shows whole (an approval is for exactly what runs). */
export function noticeActions(a: WaitingApproval): string[] {
  const { approve, reject, show } = NOTICE_ACTIONS;
  return shownWhole(a) ? [approve, reject, show] : [show];
}

/** The notification's text: which call, and why it needs the user. */
export function noticeText(a: WaitingApproval): string {
  const whole = shownWhole(a) ? '' : ' (too long to show here: read it whole in the chat before you answer)';
  return `Lean4 Agentic waits for your approval: ${a.tool} "${callLine(a)}"${whole} — ${clip(a.reason, 300)}`;
}

/** Said when a notification's button is pressed after the approval was answered in the chat or the run ended. */
export const ALREADY_ANSWERED =
  'Lean4 Agentic: that approval no longer waits (it was answered in the chat, or its run ended).';
