/**
 * What a trajectory held when its run ended, kept outside the workspace: the
 * sha-256 of every byte the writer wrote, recorded under the file's real path
 * and under its header line, in the user's state folder
 * (`$LAR_STATE_DIR`, else `$XDG_STATE_HOME/lean4-agentic`, else
 * `~/.local/state/lean4-agentic`). A sandboxed run cannot reach it (the home
 * folder is empty inside); `lar verify` compares the file with it, so an
 * outcome flipped after the run ended — by a helper an unconfined run left
 * behind, or by hand — is said, not believed.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { MAX_TRAJECTORY_BYTES, readBoundedBytes } from '../workspace/bounded-read';

const Recorded = z.object({
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
  ended: z.string(),
  path: z.string(),
});
type Recorded = z.infer<typeof Recorded>;

export type DigestCheck =
  | { state: 'unrecorded' }
  | { state: 'unchanged'; recorded: Recorded }
  | { state: 'changed'; recorded: Recorded; now: string; bytes: number };

/** Where the records are (LAR_STATE_DIR for tests and for users who keep state elsewhere). */
export function stateDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.LAR_STATE_DIR) return resolve(env.LAR_STATE_DIR);
  const xdg =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(xdg, 'lean4-agentic');
}

const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');

/** The header line: the text before the first newline. */
function headerOf(text: Buffer): string {
  const nl = text.indexOf(0x0a);
  return (nl < 0 ? text : text.subarray(0, nl)).toString('utf8');
}

/** What names a run in its header: its id, start and task when the line parses (so reformatting the line does not lose the record), else the line. */
function headerKey(header: string): string {
  try {
    const h = JSON.parse(header) as { id?: unknown; started?: unknown; task?: unknown };
    if (typeof h.started === 'string')
      return JSON.stringify([h.id ?? null, h.started, typeof h.task === 'string' ? h.task : null]);
  } catch {
    // not JSON: the line as it is
  }
  return header;
}

function keysFor(path: string, header: string): string[] {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // gone: its header still finds the record
  }
  return [`path-${sha(real).slice(0, 32)}`, `header-${sha(headerKey(header)).slice(0, 32)}`];
}

/** Records what the finished trajectory at `path` holds (its digest, as the writer computed it). Never throws: a record that cannot be kept is a record less. */
export function recordDigest(
  path: string,
  digest: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  try {
    const text = readBoundedBytes(path, MAX_TRAJECTORY_BYTES);
    const dir = join(stateDir(env), 'digests');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const record: Recorded = { digest, bytes: text.length, ended: new Date().toISOString(), path };
    for (const key of keysFor(path, headerOf(text))) {
      const tmp = join(dir, `.${key}.${process.pid}`);
      writeFileSync(tmp, JSON.stringify(record), { mode: 0o600 });
      renameSync(tmp, join(dir, `${key}.json`));
    }
  } catch {
    // a read-only or full state folder: lar verify will say the run was not recorded
  }
}

/** Whether the trajectory `text` (read from `path`) still holds what its run ended with. */
export function checkDigest(
  path: string,
  text: Buffer,
  env: Readonly<Record<string, string | undefined>> = process.env,
): DigestCheck {
  const dir = join(stateDir(env), 'digests');
  for (const key of keysFor(path, headerOf(text))) {
    let recorded: Recorded;
    try {
      recorded = Recorded.parse(JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')));
    } catch {
      continue;
    }
    const now = sha(text);
    return now === recorded.digest
      ? { state: 'unchanged', recorded }
      : { state: 'changed', recorded, now, bytes: text.length };
  }
  return { state: 'unrecorded' };
}
