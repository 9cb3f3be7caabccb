/**
 * Where a run's files go in the workspace's `.lar` folder: one place names
 * them, for the CLI, the editor, the sandbox and the history.
 */
import { lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The folder's name in the workspace. */
export const LAR_DIR = '.lar';

/** The trajectories: `.lar/runs` (workspace-relative). */
export const RUNS_DIR = join(LAR_DIR, 'runs');

/** Where run `runId` writes its trajectory. */
export const trajectoryFile = (workspace: string, runId: string): string =>
  join(workspace, RUNS_DIR, `${runId}.lar.jsonl`);

/** Where a group of rollouts keeps its trajectories and advantages. */
export const groupDir = (workspace: string, groupId: string): string => join(workspace, RUNS_DIR, groupId);

/** Where run `runId` keeps its command files and full outputs. */
export const outputDir = (workspace: string, runId: string): string => join(workspace, LAR_DIR, 'output', runId);

/** Where a run's end moves what it must not leave in place (repositories it made, files it added where writes are denied). */
export const quarantineDir = (workspace: string, at: Date = new Date()): string =>
  join(workspace, LAR_DIR, 'quarantine', at.toISOString().replace(/[:.]/g, '-'));

/**
 * The workspace's `.lar` folder (runs, command outputs, quarantine), made
 * with a `.gitignore` of its own that ignores all of it: the run records are
 * the agent's bookkeeping, not the user's work, and must not show up as
 * untracked files in their repository. An existing `.gitignore` there (the
 * user chose to track runs) is left alone.
 */
export function ensureLarDir(workspace: string): string {
  const dir = join(workspace, LAR_DIR);
  mkdirSync(dir, { recursive: true });
  const ignore = join(dir, '.gitignore');
  try {
    lstatSync(ignore);
  } catch {
    try {
      writeFileSync(ignore, '# Lean4 Agentic: run records and command outputs (remove this file to track them)\n*\n', {
        flag: 'wx',
      });
    } catch {
      // Made meanwhile, or the folder is not writable: nothing to do.
    }
  }
  return dir;
}
