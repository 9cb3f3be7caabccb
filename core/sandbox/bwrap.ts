/**
 * bubblewrap (bwrap), the Linux sandbox every command runs in: whether it is
 * here and starts, and the argument list that confines a shell.
 *
 * What the arguments build (see docs/reliability.md for what each row stops):
 * the host's file system read-only; a fresh /dev, a /proc of its own PID
 * namespace, private /tmp, /var/tmp and /run; the home folders (/home, /root
 * and $HOME) replaced by empty ones; every tmpfs of a bounded size
 * (limits.ts); the workspace read-write with its
 * protected paths and the run's records (.lar) read-only on top; a new user
 * namespace without capabilities and without further user namespaces (so no
 * mount inside can be undone); no network unless asked (the host's, or only
 * the allowlist's proxy: proxy.ts, forwarder.ts); the kernel keyrings
 * out of reach and no typing into the terminal (seccomp.ts); and the sandbox
 * dies with the process that started it, PID namespace and all.
 *
 * `--new-session` is left out on purpose: it breaks job control in the
 * interactive shell of a pty (landscape-2026.md). The terminal the shell gets
 * is its own pty, shared with every program a command runs: TIOCSTI into it
 * would type the shell's next line, so the seccomp filter refuses it.
 */
import { spawnSync } from 'node:child_process';
import { isDirectory, isExecutableFile } from '../workspace/path-kind';
import { delimiter, join } from 'node:path';
import { seccompFile } from './seccomp';
import { tmpfsSize } from './limit-values';
import type { NetworkMode } from '../schema/workflow';

export interface BwrapFound {
  ok: true;
  path: string;
  version: string;
  /** `--disable-userns` works (bubblewrap ≥ 0.8): no user namespace can be made inside. */
  disableUserns: boolean;
  /** The seccomp filter (seccomp.ts) loads: the kernel keyrings are out of reach inside. */
  seccomp: boolean;
  /**
   * `--size` before `--tmpfs` works (bubblewrap ≥ 0.5): each tmpfs is bounded. Without it a
   * tmpfs holds up to half the RAM, and only the memory limit (limits.ts: the pages are charged
   * to the sandbox's cgroup) bounds what is written there.
   */
  tmpfsSize?: boolean;
}

export interface BwrapMissing {
  ok: false;
  /** What went wrong, in a sentence. */
  reason: string;
  /** What the user can do about it. */
  fix: string;
}

export type BwrapProbe = BwrapFound | BwrapMissing;

/** $LAR_BWRAP when set (a bubblewrap elsewhere; a path that is none means none), else bwrap on PATH, else in the usual places. */
export function findBwrap(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  if (env.LAR_BWRAP) return isExecutableFile(env.LAR_BWRAP) ? env.LAR_BWRAP : undefined;
  const dirs = [
    ...(env.PATH ?? '').split(delimiter).filter((d) => d.startsWith('/')),
    '/usr/bin',
    '/bin',
    '/usr/local/bin',
  ];
  for (const d of dirs) {
    const p = join(d, 'bwrap');
    if (isExecutableFile(p)) return p;
  }
  return undefined;
}

const INSTALL_FIX =
  'install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch); then start the run again';

const USERNS_FIX =
  'bubblewrap needs unprivileged user namespaces: on Ubuntu 24.04 and later allow them for bwrap with an AppArmor profile (see docs/reliability.md, "When the sandbox cannot start"), elsewhere `sudo sysctl -w kernel.unprivileged_userns_clone=1` or `user.max_user_namespaces=15000`; in a container, run it with user namespaces allowed (Docker: `--security-opt seccomp=unconfined --security-opt apparmor=unconfined`)';

/** The namespaces and flags every sandbox uses; the probe starts exactly these. `allowlist` keeps a network namespace of its own, as `none` does (proxy.ts). */
export function isolationArgs(network: NetworkMode, disableUserns: boolean): string[] {
  return [
    '--unshare-all',
    ...(network === 'host' ? ['--share-net'] : []),
    // Explicit: bwrap started by root would otherwise keep the host's user namespace and every capability.
    '--unshare-user',
    ...(disableUserns ? ['--disable-userns'] : []),
    '--cap-drop',
    'ALL',
    '--die-with-parent',
  ];
}

const probed = new Map<string, BwrapProbe>();

/**
 * Whether bubblewrap is here and can start a sandbox, asked once per process
 * (per bwrap path): a short sandbox is started with the flags real ones use.
 */
export function probeBwrap(path: string | undefined = findBwrap()): BwrapProbe {
  if (!path)
    return {
      ok: false,
      reason: process.env.LAR_BWRAP
        ? `LAR_BWRAP (${process.env.LAR_BWRAP}) is not an executable`
        : 'bubblewrap (bwrap) is not installed',
      fix: INSTALL_FIX,
    };
  const cached = probed.get(path);
  if (cached) return cached;
  const result = probeUncached(path);
  probed.set(path, result);
  return result;
}

function probeUncached(path: string): BwrapProbe {
  const v = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const version = /(\d+\.\d+(?:\.\d+)?)/.exec(v.stdout ?? '')?.[1] ?? 'unknown';
  const base = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  let last = '';
  for (const disableUserns of [true, false]) {
    const r = spawnSync(path, [...isolationArgs('none', disableUserns), ...base, '--', '/bin/sh', '-c', 'exit 0'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    if (r.status === 0)
      return {
        ok: true,
        path,
        version,
        disableUserns,
        seccomp: seccompWorks(path, disableUserns, base),
        tmpfsSize: atLeast(version, [0, 5]),
      };
    last = (r.error?.message ?? r.stderr ?? '').trim().split('\n')[0] ?? '';
    // An old bwrap that does not know the flag: try once more without it.
    if (!/disable-userns|Unknown option/i.test(last)) break;
  }
  const userns = /user namespace|uid map|setting up uid|Operation not permitted|Permission denied|No space left/i.test(
    last,
  );
  return {
    ok: false,
    reason: `bubblewrap ${version} (${path}) cannot start a sandbox here: ${last || 'it failed without saying why'}`,
    fix: userns ? USERNS_FIX : `check that ${path} works: \`bwrap --ro-bind / / --unshare-all -- /bin/true\``,
  };
}

/** Whether `version` ("0.8.0") is at least `least` ([0, 5]); false when it is not known. */
function atLeast(version: string, least: number[]): boolean {
  const v = version.split('.').map(Number);
  if (v.some((n) => !Number.isInteger(n))) return false;
  for (let i = 0; i < least.length; i++) if ((v[i] ?? 0) !== least[i]) return (v[i] ?? 0) > least[i]!;
  return true;
}

/** Whether bwrap loads our seccomp filter here (a kernel without seccomp, or one that refuses it, runs without). */
function seccompWorks(path: string, disableUserns: boolean, base: string[]): boolean {
  const filter = seccompFile();
  if (!filter) return false;
  const l = seccompLauncher(path, filter);
  const r = spawnSync(
    l.file,
    [...l.args, ...isolationArgs('none', disableUserns), ...base, '--', '/bin/sh', '-c', 'exit 0'],
    { timeout: 10_000, stdio: 'ignore' },
  );
  return r.status === 0;
}

/**
 * bwrap reads a seccomp filter from a file descriptor only, and node-pty
 * passes none but the terminal: /bin/sh opens the filter as fd 9 and
 * becomes bwrap (exec), so the process node-pty started is bwrap itself.
 * The arguments that follow are bwrap's.
 */
export function seccompLauncher(bwrap: string, filter: string): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', 'exec "$@" 9<"$0"', filter, bwrap, '--seccomp', '9'] };
}

/** Where the sandbox puts things, all absolute host paths that exist (the plan checks them). */
export interface Mounts {
  workspace: string;
  home: string;
  network: NetworkMode;
  disableUserns: boolean;
  /** Inside the workspace, mounted on themselves read-write: a mount point cannot be renamed or removed (.git). */
  pinned?: string[];
  /** Inside the workspace, mounted read-only over it (protected paths, .lar, .git/config …). */
  readOnly: string[];
  /** Outside the workspace: read-only (tool folders under home, granted files). */
  readable: string[];
  /** Outside the workspace: read-write. */
  writable: string[];
  /** Hidden: folders become empty, files become /dev/null. */
  hiddenDirs: string[];
  hiddenFiles: string[];
  /** Where the shell starts. */
  chdir: string;
  /** Bytes /tmp holds; every tmpfs gets its size from it (limit-values.ts tmpfsSize). Absent: unbounded (a bwrap without `--size`). */
  tmp?: number;
}

/** The bwrap arguments before `--` and the command. Order matters: later mounts land on earlier ones. */
export function bwrapArgs(m: Mounts): string[] {
  const a: string[] = [
    ...isolationArgs(m.network, m.disableUserns),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
  ];
  const tmpfs = (d: string, kind: 'scratch' | 'home' | 'hidden'): string[] => [
    ...(m.tmp !== undefined ? ['--size', String(tmpfsSize(d, m.tmp, kind))] : []),
    '--tmpfs',
    d,
  ];
  // Private scratch and run-time folders: sockets in /run (a container engine's, the session bus,
  // a keyring or an ssh agent) would reach out of any file system rule.
  for (const d of ['/tmp', '/var/tmp', '/run', '/dev/shm']) a.push(...tmpfs(d, 'scratch'));
  if (m.network === 'host') a.push('--ro-bind-try', '/run/systemd/resolve', '/run/systemd/resolve');
  // Every home folder is empty; the workspace and the granted paths come back on top.
  for (const d of uniq(['/home', '/root', m.home])) if (isDirectory(d)) a.push(...tmpfs(d, 'home'));
  for (const p of m.readable) a.push('--ro-bind', p, p);
  for (const p of m.writable) a.push('--bind', p, p);
  a.push('--bind', m.workspace, m.workspace);
  for (const p of m.pinned ?? []) a.push('--bind', p, p);
  for (const p of m.readOnly) a.push('--ro-bind', p, p);
  for (const d of m.hiddenDirs) a.push(...tmpfs(d, 'hidden'), '--remount-ro', d);
  for (const f of m.hiddenFiles) a.push('--ro-bind', '/dev/null', f);
  a.push('--chdir', m.chdir);
  return a;
}

function uniq(xs: string[]): string[] {
  return [...new Set(xs)];
}
