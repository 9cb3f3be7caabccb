/** How the trajectory commands read a file: a chunk at a time, verified with the chosen backend, its digest checked. */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { checkDigest, type DigestCheck } from '../core/agent/run-digests';
import { linesOfBytes } from '../core/schema/jsonl';
import { BuiltinBackend, type VerifierBackend } from '../core/verifier/backend';
import { LineVerifier, verifyLinesWith, type TrajectorySink } from '../core/verifier/stream';
import { verifyLinesToReport, type TrajectoryReport, type VerifyOptions } from '../core/verifier/verify';
import { fileResolver, loadWorkflowRef } from '../core/workflow/resolve';
import { MAX_TRAJECTORY_BYTES, readBoundedBytes } from '../core/workspace/bounded-read';
import type { Flags, Io } from './args';
import { UsageError } from './read-input';

const NONBLOCK = (constants as Record<string, number | undefined>).O_NONBLOCK ?? 0;

/**
 * Opens a trajectory to read it a chunk at a time, refused as readText refuses it (the same
 * messages): a folder, a device, a FIFO or a socket, more than MAX_TRAJECTORY_BYTES; the open never
 * waits. Returns the descriptor and the source of its bytes, which refuses a file that grows past
 * the bound while it is read.
 */
function openTrajectory(file: string): { fd: number; read: (buf: Buffer, at: number) => number } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NONBLOCK);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(err.code === 'ENOENT' ? `${file}: no such file` : `${file}: ${err.message}`);
  }
  const refuse = (message: string): never => {
    closeSync(fd);
    throw new UsageError(message);
  };
  const st = fstatSync(fd);
  if (st.isDirectory()) refuse(`the file ${file} is a folder, not a file`);
  if (!st.isFile()) refuse(`the file ${file} is not a regular file (a device, a FIFO or a socket): it is not read`);
  if (st.size > MAX_TRAJECTORY_BYTES)
    refuse(`the file ${file} is ${st.size} bytes, more than the ${MAX_TRAJECTORY_BYTES} read at most`);
  let total = 0;
  const read = (buf: Buffer, at: number): number => {
    const n = readSync(fd, buf, at, buf.length - at, null);
    total += n;
    if (total > MAX_TRAJECTORY_BYTES)
      throw new UsageError(
        `the file ${file} grew past the ${MAX_TRAJECTORY_BYTES} bytes read at most while it was read`,
      );
    return n;
  };
  return { fd, read };
}

/** The options a trajectory command verifies with: the file's folder resolves a header's workflow path, --workflow overrides it. */
function verifyOptions(file: string, flags: Flags): VerifyOptions {
  const opts: VerifyOptions = { resolve: fileResolver(file) };
  const w = flags.values.get('--workflow');
  if (w !== undefined) {
    const r = loadWorkflowRef(w, process.cwd());
    if ('error' in r) throw new UsageError(r.error);
    opts.workflow = r.workflow;
    opts.workflowSource = r.source;
  }
  return opts;
}

/** The whole report of a file (advantages, export): every step and verdict kept. */
export async function verifyFile(file: string, flags: Flags, backend: VerifierBackend): Promise<TrajectoryReport> {
  const { fd, read } = openTrajectory(file);
  try {
    return await verifyLinesToReport(backend, linesOfBytes(read), verifyOptions(file, flags));
  } finally {
    closeSync(fd);
  }
}

/**
 * Streams a file's verdicts into `sink` as its lines are read. With the builtin backend each step
 * is a view the next one reuses (nothing per step is allocated or kept); `keepVisits` keeps the
 * closed stage visits for a summary that lists them all. `pace` says when the output is backed up
 * (a pipe read slower than it is written): reading waits until it has drained, so what is written
 * is never held in memory whole.
 */
export async function verifyFileInto(
  file: string,
  flags: Flags,
  backend: VerifierBackend,
  sink: TrajectorySink,
  opts: { keepVisits: boolean; pace?: () => Promise<void> | undefined },
): Promise<void> {
  const { fd, read } = openTrajectory(file);
  try {
    const vopts = verifyOptions(file, flags);
    if (backend.name !== 'builtin') return await verifyLinesWith(backend, linesOfBytes(read), vopts, sink);
    const v = new LineVerifier({ ...vopts, reuse: true, keepVisits: opts.keepVisits }, sink);
    for (const text of linesOfBytes(read)) {
      v.line(text);
      const wait = opts.pace?.();
      if (wait) await wait;
    }
    v.end();
  } finally {
    closeSync(fd);
  }
}

export async function withBackend<T>(flags: Flags, io: Io, run: (b: VerifierBackend) => Promise<T>): Promise<T> {
  const name = flags.values.get('--backend') ?? 'builtin';
  if (name !== 'builtin' && name !== 'lean') throw new UsageError(`--backend must be builtin or lean, not "${name}"`);
  // The Lean backend (its process and toolchain detection) is loaded only when asked for.
  const backend =
    name === 'builtin'
      ? new BuiltinBackend()
      : await (await import('./backends.js')).openBackend(name, (msg) => io.err(msg));
  try {
    return await run(backend);
  } finally {
    backend.dispose();
  }
}

/** The bytes up to and including the first newline (all of them without one): what names a run's record. */
function headerBytes(file: string): Buffer | undefined {
  const fd = openSync(file, constants.O_RDONLY | NONBLOCK);
  try {
    // Only a regular file is read at all (a device never ends), as readBoundedBytes would.
    if (!fstatSync(fd).isFile()) return undefined;
    const parts: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const nl = chunk.subarray(0, n).indexOf(0x0a);
      parts.push(chunk.subarray(0, nl < 0 ? n : nl + 1));
      total += n;
      if (nl >= 0 || total > MAX_TRAJECTORY_BYTES) break;
    }
    return Buffer.concat(parts);
  } finally {
    closeSync(fd);
  }
}

/**
 * The file's bytes against the digest its run recorded; unrecorded when it cannot be read or no run
 * of this machine wrote it. Only the header line names the record, so the whole file is read (and
 * hashed) only when there is one: a file no run of this machine recorded costs one line.
 */
export function integrityOf(file: string): DigestCheck {
  try {
    const head = headerBytes(file);
    if (head === undefined || checkDigest(file, head).state === 'unrecorded') return { state: 'unrecorded' };
    return checkDigest(file, readBoundedBytes(file, MAX_TRAJECTORY_BYTES));
  } catch {
    return { state: 'unrecorded' };
  }
}
