import { readFileSync } from 'node:fs';

export class UsageError extends Error {}

export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(err.code === 'ENOENT' ? `${file}: no such file` : `${file}: ${err.message}`);
  }
}
