/**
 * Reading one of the workspace's MCP configuration files. A repository may plant them, and they are
 * read at every run: only a regular file (never a device such as /dev/zero, nor a FIFO that would
 * hang the read), at most MAX_MCP_CONFIG_BYTES, and only inside the workspace folder (a symlink to
 * elsewhere is refused, the user's own files outside are not the workspace's to name). Pure of the editor.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { MAX_MCP_CONFIG_BYTES } from '../../core/mcp/config';
import { clip } from '../../core/protocol/chat';
import { FileRefusedError, readBoundedText } from '../../core/workspace/bounded-read';

/** The file's text; or a sentence saying why it is not read; or neither when there is no such file. */
export interface SourceRead {
  text?: string;
  problem?: string;
}

export function readWorkspaceSource(ws: string, name: string): SourceRead {
  const path = join(ws, name);
  const startsNothing = 'no MCP server of it is started.';
  try {
    const real = realpathSync(path);
    const root = realpathSync(ws);
    if (!inside(root, real))
      return {
        problem: `${name} leads outside the workspace folder (to ${clip(real, 500)}): it is not read, and ${startsNothing}`,
      };
    // The real path, read without following a link put there meanwhile; and what was opened is checked again
    // (a folder on the way swapped for a link would lead elsewhere).
    const check = (fd: number) => {
      const opened = openedPath(fd);
      if (opened !== undefined && !inside(root, opened))
        throw new FileRefusedError(`the file ${name} was moved outside the workspace folder while it was opened`);
    };
    return { text: readBoundedText(real, MAX_MCP_CONFIG_BYTES, 'the file', { noFollow: true, check }) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // No such file, or a dangling symlink: nothing to start.
    if (code === 'ENOENT' || code === 'ENOTDIR') return {};
    if (e instanceof FileRefusedError) return { problem: `${name}: ${e.message}; ${startsNothing}` };
    return { problem: `${name} cannot be read (${(e as Error).message}); ${startsNothing}` };
  }
}

/** Whether the workspace has the file at all (a symlink counts, whatever it leads to), without reading it. */
export function sourceExists(ws: string, name: string): boolean {
  try {
    return lstatSync(join(ws, name), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** Where an open descriptor's file is (Linux's /proc); undefined where that cannot be known. */
function openedPath(fd: number): string | undefined {
  try {
    return realpathSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
