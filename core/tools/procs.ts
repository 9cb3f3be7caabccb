/**
 * Process facts for the terminal, read from /proc on Linux (with `ps` as a
 * fallback elsewhere): the session's processes, the foreground process group
 * of a terminal, and whether a process is blocked reading the terminal.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  /** Foreground process group of the process's controlling terminal (-1: none). */
  tpgid: number;
  state: string;
}

const hasProc = existsSync('/proc/self/stat');

function parseStat(pid: number): ProcInfo | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { pid, state: rest[0]!, ppid: Number(rest[1]), pgrp: Number(rest[2]), session: Number(rest[3]), tpgid: Number(rest[5]) };
  } catch {
    return undefined;
  }
}

/** All processes visible to us. */
export function listProcesses(): ProcInfo[] {
  if (hasProc) {
    const out: ProcInfo[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const p = parseStat(Number(name));
      if (p) out.push(p);
    }
    return out;
  }
  try {
    const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,sess=,tpgid=,stat='], { encoding: 'utf8' });
    return text
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f.length >= 6)
      .map((f) => ({ pid: Number(f[0]), ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]), tpgid: Number(f[4]), state: f[5]! }));
  } catch {
    return [];
  }
}

export function procInfo(pid: number): ProcInfo | undefined {
  if (hasProc) return parseStat(pid);
  return listProcesses().find((p) => p.pid === pid);
}

/**
 * Every process that belongs to the shell: its descendants and everything in
 * its session (which catches reparented background jobs), the shell excluded.
 * Parents come before their children (see killTree), whatever their pids.
 * `all` is the process list to look in (default: the system's).
 */
export function sessionProcesses(shellPid: number, all: ProcInfo[] = listProcesses()): number[] {
  const children = new Map<number, number[]>();
  for (const p of all) {
    if (p.pid === shellPid) continue;
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const found = new Set<number>();
  const visit = (from: number): void => {
    const queue = [from];
    for (let i = 0; i < queue.length; i++) {
      for (const c of children.get(queue[i]!) ?? []) {
        if (found.has(c)) continue;
        found.add(c);
        queue.push(c);
      }
    }
  };
  visit(shellPid);
  // Members of the session no longer below the shell (reparented): each from the topmost one
  // of its line, so a child with a lower pid than its parent still comes after it.
  const loose = all.filter((p) => p.session === shellPid && p.pid !== shellPid && !found.has(p.pid));
  const looseIds = new Set(loose.map((p) => p.pid));
  for (const p of [...loose.filter((q) => !looseIds.has(q.ppid)), ...loose]) {
    if (found.has(p.pid)) continue;
    found.add(p.pid);
    visit(p.pid);
  }
  return [...found];
}

/** Sends a signal to a pid (a negative one: a process group); may throw. */
export type SignalSender = (pid: number, signal: NodeJS.Signals) => void;

const sendSignal: SignalSender = (pid, signal) => void process.kill(pid, signal);

export function killAll(pids: Iterable<number>, signal: NodeJS.Signals, send: SignalSender = sendSignal): void {
  for (const pid of pids) {
    try {
      send(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** What killTree reads and does: by default the system's processes and process.kill; a test gives a made-up table. */
export interface KillOptions {
  list?: () => ProcInfo[];
  signal?: SignalSender;
}

/**
 * Kill a shell and everything it started, frozen first. Killing the children
 * before the shell lets it run the script's next line in between; killing the
 * shell first reparents its children, and the parent link they are found by is
 * gone. So: stop the shell's group and the shell, then every process under it,
 * parents before children (a shell that sees its job stopped takes it for
 * Ctrl-Z and goes on), until no new one appears; then kill them all, whatever
 * happened on the way (a process left stopped would hold the workspace forever).
 */
export function killTree(root: number, options: KillOptions = {}): void {
  const list = options.list ?? listProcesses;
  const send = (pids: Iterable<number>, signal: NodeJS.Signals): void => killAll(pids, signal, options.signal);
  const stopped = new Set<number>([root]);
  try {
    send([-root, root], 'SIGSTOP');
    for (let round = 0; round < 16; round++) {
      const found = sessionProcesses(root, list()).filter((pid) => !stopped.has(pid));
      if (found.length === 0) break;
      for (const pid of found) {
        send([pid], 'SIGSTOP');
        stopped.add(pid);
      }
    }
  } catch {
    /* the process list unreadable midway: what was stopped is killed below */
  }
  send([-root, ...stopped], 'SIGKILL');
  try {
    send(sessionProcesses(root, list()), 'SIGKILL');
  } catch {
    /* the process list unreadable: what was stopped is killed */
  }
}

/** Whether a process runs (a zombie waiting to be reaped does not). */
export function alive(pid: number): boolean {
  if (hasProc) {
    const p = parseStat(pid);
    return p !== undefined && p.state !== 'Z' && p.state !== 'X';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const READ_SYSCALL: Partial<Record<string, number>> = { x64: 0, arm64: 63, ia32: 3, arm: 3, riscv64: 63, loong64: 63 };

/** Where a link (a /proc entry: a process's exe, an fd) points; undefined when it cannot be read. */
export function linkOf(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Whether a process of the terminal's foreground process group (the shell
 * itself for builtins like `read`) is blocked in read(2) on the terminal.
 * `undefined` when it cannot be told on this system.
 */
export function waitingOnTerminal(shellPid: number): boolean | undefined {
  const readNr = READ_SYSCALL[process.arch];
  if (!hasProc || readNr === undefined) return undefined;
  const shell = parseStat(shellPid);
  const tty = linkOf(`/proc/${shellPid}/fd/0`);
  if (!shell || !tty) return undefined;
  const fg = shell.tpgid > 0 ? shell.tpgid : shellPid;
  const candidates = fg === shellPid ? [shellPid] : [shellPid, ...sessionProcesses(shellPid)].filter((pid) => parseStat(pid)?.pgrp === fg);
  let known = false;
  for (const pid of candidates) {
    let sys: string;
    try {
      sys = readFileSync(`/proc/${pid}/syscall`, 'utf8');
    } catch {
      continue;
    }
    known = true;
    const f = sys.trim().split(' ');
    if (Number(f[0]) !== readNr || f[1] === undefined) continue;
    const fd = Number(f[1]);
    if (linkOf(`/proc/${pid}/fd/${fd}`) === tty) return true;
  }
  return known ? false : undefined;
}
