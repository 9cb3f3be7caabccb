/**
 * Reading a file that a document or a command line names: a trajectory's
 * header may name `/dev/zero`, a FIFO or a 10 GB file as its workflow, and
 * the CLI and the language server (Restricted Mode too) open what it names.
 * Only regular files, at most `maxBytes`, and the open never waits (a FIFO
 * with no writer is refused, not waited on).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Workflows are small; a trajectory of a very long run is large, not unbounded. */
export const MAX_WORKFLOW_BYTES = 4 * 1024 * 1024;
export const MAX_TRAJECTORY_BYTES = 512 * 1024 * 1024;

export class FileRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FileRefusedError';
  }
}

const NONBLOCK = (constants as Record<string, number | undefined>).O_NONBLOCK ?? 0;

export interface BoundedReadOptions {
  /** Refuse a symbolic link as the last part of the path (ELOOP), instead of following it. */
  noFollow?: boolean;
  /** Called with the open descriptor before anything is read: it throws to refuse what was opened. */
  check?: (fd: number) => void;
}

const NOFOLLOW = (constants as Record<string, number | undefined>).O_NOFOLLOW ?? 0;

/** The file's text (UTF-8), or a FileRefusedError (not a regular file, too big) or the system's error. */
export function readBoundedText(
  path: string,
  maxBytes: number,
  what = 'the file',
  opts: BoundedReadOptions = {},
): string {
  return readBoundedBytes(path, maxBytes, what, opts).toString('utf8');
}

/** The file's bytes, on the same terms as readBoundedText. */
export function readBoundedBytes(
  path: string,
  maxBytes: number,
  what = 'the file',
  opts: BoundedReadOptions = {},
): Buffer {
  const fd = openSync(path, constants.O_RDONLY | NONBLOCK | (opts.noFollow ? NOFOLLOW : 0));
  try {
    opts.check?.(fd);
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new FileRefusedError(`${what} ${path} is a folder, not a file`);
    if (!st.isFile())
      throw new FileRefusedError(
        `${what} ${path} is not a regular file (a device, a FIFO or a socket): it is not read`,
      );
    if (st.size > maxBytes)
      throw new FileRefusedError(`${what} ${path} is ${st.size} bytes, more than the ${maxBytes} read at most`);
    // It may grow while being read: read one byte past the limit to know.
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let got = 0;
    for (;;) {
      if (got === buf.length)
        throw new FileRefusedError(`${what} ${path} grew past the ${maxBytes} bytes read at most while it was read`);
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}
