import { BuiltinBackend, type VerifierBackend } from '../core/verifier/backend';
import { LeanBackend, LeanUnavailableError } from '../core/lean';

/**
 * Opens the Lean backend. Without a toolchain the user is told why, and the
 * builtin backend (the same definitions in TypeScript) decides instead; the
 * report names the backend that decided.
 */
export async function openBackend(name: 'lean', notice: (message: string) => void): Promise<VerifierBackend> {
  const lean = new LeanBackend({ log: (m) => notice(`lean: ${m}`) });
  try {
    await lean.prepare();
    return lean;
  } catch (e) {
    lean.dispose();
    if (!(e instanceof LeanUnavailableError)) throw e;
    notice(
      `lar: the ${name} backend is unavailable: ${e.message}\nlar: using the builtin backend (the same definitions, in TypeScript).`,
    );
    return new BuiltinBackend();
  }
}
