/** A run's id, which names its trajectory file in `.lar/runs/` (see RUN_FILE in core/schema/trajectory.ts). */

/** `run-2026-11-30T11-22-33-456Z`: sortable, and a valid file name everywhere. */
export function newRunId(now = new Date()): string {
  return `run-${now.toISOString().replace(/[:.]/g, '-')}`;
}
