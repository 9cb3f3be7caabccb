/**
 * The chat's state and what its parts need of it, apart from the controller (agent/session.ts) so that a run,
 * the persistence and the branching can share it without importing the controller (no import cycles).
 */
import type * as vscode from 'vscode';
import type { Conversation } from '../../core/agent/conversation';
import type { RecordedRun } from '../../core/agent/resume';
import type { ErrorAction, ToWebview } from '../../core/protocol/chat';
import type { RestoreEvent } from '../../core/schema/trajectory';
import type { UserInput } from '../../core/schema/user-message';
import type { AgentTerminal } from '../agent/terminal';
import type { Checkpoints } from '../checkpoints/checkpoints';
import type { FileChanges } from '../checkpoints/file-changes';
import type { RunReviews } from '../checkpoints/run-review';

/** The run in progress. */
export interface Running {
  ac: AbortController;
  approvals: Map<string, (ok: boolean) => void>;
  /** Ends the trajectory file now, marked interrupted (the host is going away). */
  interrupt?: (detail: string) => void;
  /** The run's shell: killed with everything it started when the host goes away. */
  terminal?: AgentTerminal;
  /**
   * Set once its loop is over and it is ending (the sandbox closing, the Changes snapshot): resolves when the run
   * is gone. The chat already says it ended, so what the user clicks then waits for it instead of being refused.
   */
  ending?: Promise<void>;
}

/** Waits for a run that has ended in the chat's eyes but is still closing (the user cannot tell the two apart). */
export async function afterEnding(chat: { running: Running | undefined }): Promise<void> {
  await chat.running?.ending;
}

/**
 * The chat as a conversation: a follow-up continues the model's context from
 * the run before (each run its own trajectory, linked by `thread` in its
 * header). New Chat ends it.
 */
export interface ChatThread {
  id: string;
  turn: number;
  conversation?: Conversation;
  previous: string;
  restored?: RecordedRun[];
  step?: number;
}

/** The chat: its state, and how it talks to the user. */
export interface Chat {
  readonly context: vscode.ExtensionContext;
  readonly output: vscode.LogOutputChannel;
  /** Before/after of every file the agent wrote, for the Diff buttons. */
  readonly changes: FileChanges;
  /** The workspace's checkpoints (a shadow git repository in the editor's storage). */
  readonly checkpoints: Checkpoints;
  /** What each run changed, with Keep / Undo (kept over a reload). */
  readonly reviews: RunReviews;
  running: Running | undefined;
  lastTrajectory: vscode.Uri | undefined;
  thread: ChatThread | undefined;
  /** Messages typed during a run, not yet given to the model. */
  /** Messages typed during a run, with the webview's id of each (its bubble is told what became of it). */
  queued: (UserInput & { id?: string })[];
  /** A restore or a branch is on its way (a diff, a dialog): no run starts meanwhile. */
  busy: string | undefined;
  /** New was pressed: a restore still reading the trajectories must not bring the chat back. */
  cleared: boolean;
  /** Restores made since the chat's last run: the next run records them first. */
  restores: RestoreEvent[];
  post(msg: ToWebview): void;
  fail(message: string, actions?: ErrorAction[]): void;
  reveal(): Promise<void>;
}
