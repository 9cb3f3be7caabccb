/**
 * Where a run keeps its private scratch files (the shell's execute-only copy,
 * the command files, the proxy's socket), and whether programs may run from
 * a folder: a copy on a noexec mount could not be executed.
 */
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * Where the run's private scratch files go (the shell copy, the command
 * files): a tmpfs when there is one (a file there costs microseconds, on some
 * disks half a millisecond), else the temporary folder. The sandbox sees the
 * run's folder read-only; its own /tmp and /dev/shm are empty.
 */
export function runtimeRoot(env: NodeJS.ProcessEnv = process.env, mounts?: string): string {
  // Where both tmpfs are noexec (Docker's /dev/shm, a hardened /tmp): the user's runtime folder or, last, a
  // folder of ours in the cache; without an executable copy the shell would be dumpable (docs/reliability.md).
  const cache = join(
    env.LAR_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'lean4-agentic'),
    'run',
  );
  for (const d of ['/dev/shm', tmpdir(), env.XDG_RUNTIME_DIR, cache]) {
    if (!d || !isAbsolute(d)) continue;
    try {
      if (d === cache) mkdirSync(d, { recursive: true, mode: 0o700 });
      accessSync(d, constants.W_OK);
    } catch {
      continue; // not here, or not writable
    }
    // The shell's copy is executed from here: a noexec mount cannot hold it.
    if (execAllowed(d, mounts)) return d;
  }
  return tmpdir();
}

/** Whether programs may be executed from `dir`: its mount (the longest mount point above it) is not `noexec`. */
export function execAllowed(dir: string, table?: string): boolean {
  let mounts: string;
  try {
    mounts = table ?? readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return true;
  }
  let best = '';
  let noexec = false;
  for (const line of mounts.split('\n')) {
    const f = line.split(' ');
    if (f.length < 4) continue;
    // Mount points are written with octal escapes for space, tab, newline and backslash.
    const at = f[1]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if ((dir === at || dir.startsWith(at.endsWith('/') ? at : `${at}/`)) && at.length >= best.length) {
      best = at;
      noexec = f[3]!.split(',').includes('noexec');
    }
  }
  return !noexec;
}
