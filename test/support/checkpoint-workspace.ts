// A scratch workspace with its checkpoint store (a 1 KiB size cap), for the checkpoint tests.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '../../core/checkpoints/store';

export async function setup(files: Record<string, string> = {}) {
  const root = mkdtempSync(join(tmpdir(), 'lar-ckpt-'));
  const ws = join(root, 'ws');
  mkdirSync(ws);
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(join(ws, p, '..'), { recursive: true });
    writeFileSync(join(ws, p), c);
  }
  const store = await CheckpointStore.open({ storage: join(root, 'storage'), workspace: ws, maxFileBytes: 1024 });
  assert.ok(store instanceof CheckpointStore, JSON.stringify(store));
  return { root, ws, store: store };
}

/** A workspace file's text, or undefined when it is not there. */
export const read = (ws: string, p: string) =>
  existsSync(join(ws, p)) ? readFileSync(join(ws, p), 'utf8') : undefined;
