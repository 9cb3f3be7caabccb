/**
 * The chat over a reload or a restart: which run it ended with, the restores and the branch point its next
 * run still has to record, brought back from the trajectories; and the runs a killed editor left unfinished.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { markInterruptedRuns } from '../../core/agent/history';
import { readThread, threadOf, type RecordedRun } from '../../core/agent/resume';
import { RestoreEvent as RestoreEventSchema, RUN_FILE, type RestoreEvent } from '../../core/schema/trajectory';
import { fileResolver } from '../../core/workflow/resolve';
import { RUNS_DIR } from '../../core/workspace/lar-layout';
import { readAgentConfig } from '../config';
import type { Chat } from './state';
import { transcriptOf } from './transcript';

/** The file of the chat's latest run (workspace state): what a reload brings back; New forgets it. */
const CHAT_KEY = 'lean4Agentic.chat.latest';
/** The run files this editor wrote (the latest 2000). */
const OWN_RUNS_KEY = 'lean4Agentic.chat.ownRuns';
/** What the chat's next run still has to record (restores) and where it goes on from (a branch): kept over a reload. */
const PENDING_KEY = 'lean4Agentic.chat.pending';
const Pending = z.object({
  restores: z.array(RestoreEventSchema).max(100),
  branch: z.object({ run: z.string().regex(RUN_FILE), step: z.number().int().positive() }).optional(),
});
type Pending = z.infer<typeof Pending>;

/** The chat that run `file` of `runsDir` ends, oldest run first (workflows named by path resolved next to it). */
export function readChat(runsDir: string, file: string): RecordedRun[] {
  return readThread(runsDir, file, fileResolver(join(runsDir, file)));
}

/** The run a reload brings the chat back to (its trajectory's file name). */
export function rememberChat(context: vscode.ExtensionContext, file: string): void {
  void context.workspaceState.update(CHAT_KEY, file);
  const known = context.workspaceState.get<string[]>(OWN_RUNS_KEY) ?? [];
  if (!known.includes(file)) void context.workspaceState.update(OWN_RUNS_KEY, [...known, file].slice(-2000));
}

/**
 * Whether this editor recorded every one of these runs: a conversation that came with the repository (or from
 * another tool) is not the user's to continue without being asked, as its turns become the model's context.
 */
export function recordedHere(context: vscode.ExtensionContext, files: readonly string[]): boolean {
  const known = new Set(context.workspaceState.get<string[]>(OWN_RUNS_KEY) ?? []);
  return files.length > 0 && files.every((f) => known.has(f));
}

/** New Chat: a reload brings nothing back. */
export function forgetChat(context: vscode.ExtensionContext): void {
  void context.workspaceState.update(CHAT_KEY, undefined);
  void context.workspaceState.update(PENDING_KEY, undefined);
}

/** The restores are recorded in a run's file now: a reload has none left to record. */
export function forgetPending(context: vscode.ExtensionContext): void {
  void context.workspaceState.update(PENDING_KEY, undefined);
}

/** Keeps the restores not yet recorded, and the branch point not yet continued, for a reload. */
export function savePending(chat: Chat, branch?: Pending['branch']): void {
  const value: Pending | undefined =
    chat.restores.length || branch ? { restores: chat.restores, ...(branch ? { branch } : {}) } : undefined;
  void chat.context.workspaceState.update(PENDING_KEY, value);
}

/** A restore (or an undo of a run's files) the chat's next run records first, kept for a reload meanwhile. */
export function keepRestore(chat: Chat, event: RestoreEvent): void {
  chat.restores.push(event);
  savePending(
    chat,
    chat.thread?.step !== undefined ? { run: chat.thread.previous, step: chat.thread.step } : undefined,
  );
}

/**
 * Runs of this workspace that a crashed or killed editor left without an end
 * are marked interrupted (only those older than the longest a run may take,
 * so a run live in another window is left alone).
 */
export async function markInterrupted(output: vscode.LogOutputChannel): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file' || !vscode.workspace.isTrusted) return;
  const marked = await markInterruptedRuns(folder.uri.fsPath, (readAgentConfig().maxMinutes + 5) * 60_000);
  if (marked.length) output.info(`marked ${marked.length} unfinished run(s) as interrupted: ${marked.join(', ')}`);
}

/**
 * Brings back the workspace's latest chat from its trajectories (after a
 * reload or a restart): shown as it was, and continued by the next message;
 * a run cut short says so and offers Resume. A chat cleared with New stays
 * cleared.
 */
export async function restoreChat(chat: Chat): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file' || !vscode.workspace.isTrusted || chat.running || chat.thread) return;
  // Only a chat this editor had: not the newest file whatever it is (a run of lar, a file a cloned
  // repository brought, which would put words in the user's mouth).
  const latest = chat.context.workspaceState.get<string>(CHAT_KEY);
  if (!latest || !RUN_FILE.test(latest)) return;
  try {
    const runsDir = join(folder.uri.fsPath, RUNS_DIR);
    const runs = await new Promise<RecordedRun[]>((resolve) => setImmediate(() => resolve(readChat(runsDir, latest))));
    if (!threadOf(runs) || chat.running || chat.thread || chat.cleared) return;
    // Restores not yet recorded and a branch not yet continued come back too (the same chat only).
    const saved = Pending.safeParse(chat.context.workspaceState.get(PENDING_KEY));
    const pending = saved.success ? saved.data : undefined;
    const branch = pending?.branch?.run === latest ? pending.branch : undefined;
    if (pending && !chat.restores.length) chat.restores = pending.restores;
    showChat(chat, runsDir, runs, branch?.step);
    chat.output.info(`restored the chat of ${runs.length} run(s) ending in ${latest}`);
  } catch (e) {
    chat.output.warn(`could not restore the last chat: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Opens the conversation that run `file` of `runsDir` ends in place of the
 * chat's (History): shown as it was, continued by the next message, and the
 * one a reload brings back. The restores of the chat it replaces are not its
 * story. False when the file cannot be read back as a chat.
 */
export function openChat(chat: Chat, runsDir: string, file: string): boolean {
  const runs = readChat(runsDir, file);
  if (!threadOf(runs)) return false;
  chat.changes.clear();
  chat.restores = [];
  chat.cleared = false;
  rememberChat(chat.context, file);
  forgetPending(chat.context);
  showChat(chat, runsDir, runs);
  chat.output.info(`opened the chat of ${runs.length} run(s) ending in ${file}`);
  return true;
}

/** Shows a chat read back from its runs and makes it the one the next message continues (from `step` of its last run: a branch). */
function showChat(chat: Chat, runsDir: string, runs: RecordedRun[], step?: number): void {
  const last = runs[runs.length - 1]!;
  if (step !== undefined) last.cutAtStep = step;
  chat.thread = { ...threadOf(runs)!, restored: runs, ...(step !== undefined ? { step } : {}) };
  chat.lastTrajectory = vscode.Uri.file(join(runsDir, last.file));
  chat.post({ type: 'clear' });
  for (const m of transcriptOf(runs, (file) => chat.reviews.messagesFor(file))) chat.post(m);
}
