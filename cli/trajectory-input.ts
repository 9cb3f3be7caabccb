/** How the trajectory commands read a file: verified with the chosen backend, its digest checked. */
import { checkDigest, type DigestCheck } from '../core/agent/run-digests';
import { BuiltinBackend, type VerifierBackend } from '../core/verifier/backend';
import { verifyTrajectoryTextWith, type TrajectoryReport, type VerifyOptions } from '../core/verifier/verify';
import { fileResolver, loadWorkflowRef } from '../core/workflow/resolve';
import { MAX_TRAJECTORY_BYTES, readBoundedBytes } from '../core/workspace/bounded-read';
import type { Flags, Io } from './args';
import { openBackend } from './backends';
import { UsageError, readText } from './read-input';

export async function verifyFile(file: string, flags: Flags, backend: VerifierBackend): Promise<TrajectoryReport> {
  const text = readText(file);
  const opts: VerifyOptions = { resolve: fileResolver(file) };
  const w = flags.values.get('--workflow');
  if (w !== undefined) {
    const r = loadWorkflowRef(w, process.cwd());
    if ('error' in r) throw new UsageError(r.error);
    opts.workflow = r.workflow;
    opts.workflowSource = r.source;
  }
  return verifyTrajectoryTextWith(backend, text, opts);
}

export async function withBackend<T>(flags: Flags, io: Io, run: (b: VerifierBackend) => Promise<T>): Promise<T> {
  const name = flags.values.get('--backend') ?? 'builtin';
  if (name !== 'builtin' && name !== 'lean') throw new UsageError(`--backend must be builtin or lean, not "${name}"`);
  const backend = name === 'builtin' ? new BuiltinBackend() : await openBackend(name, (msg) => io.err(msg));
  try {
    return await run(backend);
  } finally {
    backend.dispose();
  }
}

/** The file's bytes against the digest its run recorded; unrecorded when it cannot be read or no run of this machine wrote it. */
export function integrityOf(file: string): DigestCheck {
  try {
    return checkDigest(file, readBoundedBytes(file, MAX_TRAJECTORY_BYTES));
  } catch {
    return { state: 'unrecorded' };
  }
}
