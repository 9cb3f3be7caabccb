import type { VerifierBackend } from '../verifier/backend';
import { UsageError } from './files';

/** Opens a non-builtin backend, or explains why it cannot be had. */
export async function openBackend(name: 'lean', _notice: (message: string) => void): Promise<VerifierBackend> {
  throw new UsageError(`the ${name} backend is not available in this build`);
}
