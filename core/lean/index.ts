/**
 * The Lean backend (docs/lean.md): finding a Lean toolchain, building the
 * `lar-verify` checker of lean/ once into a cache, and keeping it warm behind
 * the `VerifierBackend` interface. Free of `vscode`.
 */
export { LeanBackend, LeanUnavailableError, type LeanBackendOptions, type LeanBackendStats } from './backend';
export { detectLean, LEAN_PATH_ENV, LEAN_PATH_SETTING, type DetectOptions, type LeanDetection } from './detect';
export { buildLarVerify, defaultCacheDir, findLeanSources, hashSources, type BuildOptions, type BuildResult } from './build';
export { LarVerifyError, LarVerifyProcess, type ExitInfo } from './process';
