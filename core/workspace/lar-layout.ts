import { lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The workspace's `.lar` folder (runs, command outputs, quarantine), made
 * with a `.gitignore` of its own that ignores all of it: the run records are
 * the agent's bookkeeping, not the user's work, and must not show up as
 * untracked files in their repository. An existing `.gitignore` there (the
 * user chose to track runs) is left alone.
 */
export function ensureLarDir(workspace: string): string {
  const dir = join(workspace, '.lar');
  mkdirSync(dir, { recursive: true });
  const ignore = join(dir, '.gitignore');
  try {
    lstatSync(ignore);
  } catch {
    try {
      writeFileSync(ignore, '# Lean4 Agentic: run records and command outputs (remove this file to track them)\n*\n', { flag: 'wx' });
    } catch {
      // Made meanwhile, or the folder is not writable: nothing to do.
    }
  }
  return dir;
}
