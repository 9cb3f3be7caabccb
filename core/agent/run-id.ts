/**
 * The names of the trajectory files the agent writes into `.lar/runs/`. The
 * chat asks for a past run by such a name and nothing else, so a message
 * cannot make the extension open an arbitrary path. No imports: the chat
 * webview's bundle uses it too.
 */
export const RUN_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.lar\.jsonl$/;

/** `run-2026-11-30T11-22-33-456Z`: sortable, and a valid file name everywhere. */
export function newRunId(now = new Date()): string {
  return `run-${now.toISOString().replace(/[:.]/g, '-')}`;
}
