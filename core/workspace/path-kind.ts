/**
 * What is at a path, as the checks that decide what to mount, snapshot or run
 * ask it: a value, never a thrown error (a path that is not there is a state).
 */
import { accessSync, constants, lstatSync, realpathSync, statSync } from 'node:fs';

export type EntryKind = 'dir' | 'file' | 'link' | 'other';

/** What the path itself is (a link is a link, not what it leads to); undefined when nothing is there. */
export function entryKind(p: string): EntryKind | undefined {
  try {
    const st = lstatSync(p);
    return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}

/** Where a path really is (links resolved, as the system spells it); undefined when it cannot be resolved. */
export function realPath(p: string): string | undefined {
  try {
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/** A folder, following links. */
export function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** A regular file (following links) that may be executed (on Windows: any file). */
export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    if (process.platform !== 'win32') accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
