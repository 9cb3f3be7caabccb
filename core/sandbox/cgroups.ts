/**
 * The cgroups a sandbox's memory and tasks are bounded in (cgroup-v2 and cgroup-v1, limits.ts
 * says when each is used): found from this process's own, made per sandbox, removed at exit.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { alive } from '../shell/procs';
import type { LimitValues } from './limit-values';

/** A mechanism's cgroup files (one folder for v2 and a scope, two for v1). */
export interface Cgroup {
  memory?: string;
  pids?: string;
}

/** The cgroup mounts of this machine, from /proc/self/mountinfo: v2's, and v1's by controller. */
export function cgroupMounts(mountinfo?: string): {
  v2?: { at: string; root: string };
  v1: Map<string, { at: string; root: string }>;
} {
  const v1 = new Map<string, { at: string; root: string }>();
  let v2: { at: string; root: string } | undefined;
  let text: string;
  try {
    text = mountinfo ?? readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return { v1 };
  }
  const unescape = (s: string): string =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const f = left.split(' ');
    const [fstype, , superOpts] = right.split(' ');
    const root = unescape(f[3] ?? '/');
    const at = unescape(f[4] ?? '');
    if (fstype === 'cgroup2') v2 ??= { at, root };
    else if (fstype === 'cgroup')
      for (const o of (superOpts ?? '').split(','))
        if (o === 'memory' || o === 'pids') if (!v1.has(o)) v1.set(o, { at, root });
  }
  return { ...(v2 ? { v2 } : {}), v1 };
}

/** This process's cgroup path in each hierarchy (`0` for v2, else by controller), from /proc/self/cgroup. */
export function ownCgroups(text?: string): Map<string, string> {
  const out = new Map<string, string>();
  let t: string;
  try {
    t = text ?? readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return out;
  }
  for (const line of t.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') out.set('0', m[3]!);
    else for (const c of m[2]!.split(',')) out.set(c, m[3]!);
  }
  return out;
}

/** The folder of cgroup `path` under a mount whose root is `root`. */
export function folderOf(mount: { at: string; root: string }, path: string): string {
  const rel =
    mount.root !== '/' && (path === mount.root || path.startsWith(`${mount.root}/`))
      ? path.slice(mount.root.length)
      : path;
  return join(mount.at, rel);
}

export function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** A counter in a flat-keyed cgroup file ("oom_kill 3", "max 12"); 0 when absent. */
export function counter(file: string | undefined, key: string): number {
  if (!file) return 0;
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(read(file) ?? '');
  return m ? Number(m[1]) : 0;
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

let serial = 0;
const childName = (): string => `lar-${process.pid}-${++serial}-${randomBytes(3).toString('hex')}`;

/**
 * Cgroups that processes which died without removing theirs left (an editor
 * killed mid-run): removed when empty, and only after ten minutes (a cgroup
 * just made is empty until its launcher enters it).
 */
function sweep(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const n of names) {
    const m = /^lar-(\d+)-/.exec(n);
    if (!m || alive(Number(m[1]))) continue;
    const dir = join(parent, n);
    try {
      if (Date.now() - statSync(dir).mtimeMs > 10 * 60_000) rmdirSync(dir);
    } catch {
      // not empty, or gone
    }
  }
}

/** A child cgroup made in `parent`; undefined when it cannot be. */
function makeChild(parent: string): string | undefined {
  if (!writable(parent)) return undefined;
  sweep(parent);
  const dir = join(parent, childName());
  try {
    mkdirSync(dir);
    return dir;
  } catch {
    return undefined;
  }
}

export function removeDir(dir: string | undefined): void {
  if (!dir) return;
  try {
    rmdirSync(dir);
  } catch {
    // processes still leaving: tried again below, or left for the system (an empty cgroup costs nothing)
  }
}

export function tryV2(
  values: LimitValues,
  mounts: ReturnType<typeof cgroupMounts>,
  own: Map<string, string>,
): Cgroup | undefined {
  const path = own.get('0');
  if (!mounts.v2 || path === undefined) return undefined;
  const parent = folderOf(mounts.v2, path);
  const delegated = (read(join(parent, 'cgroup.subtree_control')) ?? '').split(/\s+/);
  if (!delegated.includes('memory') || !delegated.includes('pids')) return undefined;
  const dir = makeChild(parent);
  if (!dir) return undefined;
  try {
    writeFileSync(join(dir, 'memory.max'), String(values.memory));
    if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
    writeFileSync(join(dir, 'pids.max'), String(values.tasks));
    return { memory: dir, pids: dir };
  } catch {
    removeDir(dir);
    return undefined;
  }
}

export function tryV1(
  values: LimitValues,
  mounts: ReturnType<typeof cgroupMounts>,
  own: Map<string, string>,
): Cgroup | undefined {
  const mem = mounts.v1.get('memory');
  const pids = mounts.v1.get('pids');
  const memPath = own.get('memory');
  const pidsPath = own.get('pids');
  if (!mem || !pids || memPath === undefined || pidsPath === undefined) return undefined;
  const memDir = makeChild(folderOf(mem, memPath));
  const pidsDir = memDir && makeChild(folderOf(pids, pidsPath));
  if (!memDir || !pidsDir) {
    removeDir(memDir);
    return undefined;
  }
  try {
    writeFileSync(join(memDir, 'memory.limit_in_bytes'), String(values.memory));
    // Swap counted too (memory + swap ≤ the limit), where the kernel accounts it.
    if (existsSync(join(memDir, 'memory.memsw.limit_in_bytes')))
      writeFileSync(join(memDir, 'memory.memsw.limit_in_bytes'), String(values.memory));
    writeFileSync(join(pidsDir, 'pids.max'), String(values.tasks));
    return { memory: memDir, pids: pidsDir };
  } catch {
    removeDir(memDir);
    removeDir(pidsDir);
    return undefined;
  }
}

/** Cgroups made and not yet removed: a process that exits without disposing its sandboxes removes them on the way out. */
export const held = new Set<string>();
let exitHook = false;

export function holdUntilExit(dirs: string[]): void {
  if (!exitHook) process.once('exit', removeHeld);
  exitHook = true;
  for (const d of dirs) held.add(d);
}

/** At exit (synchronous): what is left in each cgroup is killed (bwrap would die with this process anyway), then it is removed. */
function removeHeld(): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; attempt < 50 && held.size; attempt++) {
    for (const d of held) {
      for (const p of (read(join(d, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number)) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          // gone
        }
      }
      try {
        rmdirSync(d);
        held.delete(d);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') held.delete(d);
      }
    }
    if (held.size) Atomics.wait(pause, 0, 0, 5);
  }
}
