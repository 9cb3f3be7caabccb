import { MAX_TRAJECTORY_BYTES, readBoundedText } from '../core/workspace/bounded-read';

export class UsageError extends Error {}

export function readText(file: string): string {
  try {
    return readBoundedText(file, MAX_TRAJECTORY_BYTES);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(
      err.code === 'ENOENT'
        ? `${file}: no such file`
        : err.name === 'FileRefusedError'
          ? err.message
          : `${file}: ${err.message}`,
    );
  }
}
