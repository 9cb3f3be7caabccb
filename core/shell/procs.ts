/**
 * Process facts for the terminal, read from /proc on Linux (with `ps` as a
 * fallback elsewhere): the session's processes, the foreground process group
 * of a terminal, and whether a process is blocked reading the terminal.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { constants as osConstants } from 'node:os';

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
    return {
      pid,
      state: rest[0]!,
      ppid: Number(rest[1]),
      pgrp: Number(rest[2]),
      session: Number(rest[3]),
      tpgid: Number(rest[5]),
    };
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
      .map((f) => ({
        pid: Number(f[0]),
        ppid: Number(f[1]),
        pgrp: Number(f[2]),
        session: Number(f[3]),
        tpgid: Number(f[4]),
        state: f[5]!,
      }));
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

/** What killTree and killJob read and do: by default the system's processes and process.kill; a test gives a made-up table. */
export interface KillOptions {
  list?: () => ProcInfo[];
  signal?: SignalSender;
}

/**
 * Stop `first`, then what `find` lists (negative: a process group), again
 * until it lists nothing new, in the order it lists them (parents first);
 * then kill all that was stopped, whatever happened on the way (a process
 * left stopped would hold the workspace forever), and what `find` lists then.
 */
function stopThenKill(
  first: number[],
  find: () => number[],
  send: (pids: Iterable<number>, signal: NodeJS.Signals) => void,
): void {
  const stopped = new Set<number>();
  const stop = (pids: number[]): void => {
    for (const pid of pids) {
      if (stopped.has(pid)) continue;
      send([pid], 'SIGSTOP');
      stopped.add(pid);
    }
  };
  try {
    stop(first);
    for (let round = 0; round < 16; round++) {
      const found = find().filter((pid) => !stopped.has(pid));
      if (found.length === 0) break;
      stop(found);
    }
  } catch {
    /* the process list unreadable midway: what was stopped is killed below */
  }
  send(stopped, 'SIGKILL');
  try {
    send(find(), 'SIGKILL');
  } catch {
    /* the process list unreadable: what was stopped is killed */
  }
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
  stopThenKill(
    [-root, root],
    () => sessionProcesses(root, list()),
    (pids, signal) => killAll(pids, signal, options.signal),
  );
}

/**
 * The job that holds the shell's terminal, the shell left out: the processes
 * of the terminal's foreground process group that belong to the shell (in the
 * shell's own group when the shell holds the terminal: fish runs some jobs
 * there, bash its command substitutions) and everything under them, parents
 * first; `group`, the group to signal whole when it is not the shell's.
 */
export function foregroundJob(shellPid: number, all: ProcInfo[] = listProcesses()): { pids: number[]; group?: number } {
  const shell = all.find((p) => p.pid === shellPid);
  if (!shell) return { pids: [] };
  const fg = shell.tpgid > 0 ? shell.tpgid : shell.pgrp;
  const byPid = new Map(all.map((p) => [p.pid, p]));
  const job = new Set<number>();
  for (const pid of sessionProcesses(shellPid, all)) {
    const p = byPid.get(pid)!;
    if (p.pgrp === fg || job.has(p.ppid)) job.add(pid);
  }
  return { pids: [...job], ...(fg !== shell.pgrp && job.size > 0 ? { group: fg } : {}) };
}

/**
 * Kill the job that holds the shell's terminal (see foregroundJob) as
 * killTree kills a shell: its group and its processes stopped, parents
 * first, then all killed. The shell itself is not touched.
 */
export function killJob(shellPid: number, options: KillOptions = {}): void {
  const list = options.list ?? listProcesses;
  const find = (): number[] => {
    const job = foregroundJob(shellPid, list());
    return job.group === undefined ? job.pids : [-job.group, ...job.pids];
  };
  stopThenKill([], find, (pids, signal) => killAll(pids, signal, options.signal));
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

/** Syscalls that wait on descriptors they do not name in a register: select, poll and their p- forms. */
const POLL_SYSCALLS: Partial<Record<string, number[]>> = {
  x64: [7, 23, 270, 271],
  arm64: [72, 73],
  riscv64: [72, 73],
  loong64: [72, 73],
};

/**
 * Whether `pid` is blocked reading `tty` or, with `polling`, waits in select
 * or poll with `tty` as its stdin; undefined when its syscall cannot be read.
 */
function onTerminal(pid: number, tty: string, polling: boolean): boolean | undefined {
  let sys: string;
  try {
    sys = readFileSync(`/proc/${pid}/syscall`, 'utf8');
  } catch {
    return undefined;
  }
  const f = sys.trim().split(' ');
  const nr = Number(f[0]);
  if (nr === READ_SYSCALL[process.arch] && f[1] !== undefined) return linkOf(`/proc/${pid}/fd/${Number(f[1])}`) === tty;
  return polling && (POLL_SYSCALLS[process.arch] ?? []).includes(nr) && linkOf(`/proc/${pid}/fd/0`) === tty;
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
  const candidates =
    fg === shellPid
      ? [shellPid]
      : [shellPid, ...sessionProcesses(shellPid)].filter((pid) => parseStat(pid)?.pgrp === fg);
  let known = false;
  for (const pid of candidates) {
    const on = onTerminal(pid, tty, false);
    if (on === undefined) continue;
    known = true;
    if (on) return true;
  }
  return known ? false : undefined;
}

/**
 * Whether the job that holds the shell's terminal (foregroundJob: never the
 * shell itself) waits for input from it: blocked reading it, or in select or
 * poll with it as stdin (a REPL's line editor: python3 waits in pselect6).
 * End-of-file (Ctrl-D) ends such a program; at the shell's own prompt it would
 * end the shell. False when it cannot be told.
 */
export function jobWaitingOnTerminal(shellPid: number): boolean {
  if (!hasProc || READ_SYSCALL[process.arch] === undefined) return false;
  const tty = linkOf(`/proc/${shellPid}/fd/0`);
  return tty !== undefined && foregroundJob(shellPid).pids.some((pid) => onTerminal(pid, tty, true) === true);
}

/**
 * Whether the shell's own process group holds its terminal, so that the shell
 * reads what is typed (not a job it runs); undefined when it cannot be told.
 */
export function holdsTerminal(shellPid: number): boolean | undefined {
  const p = hasProc ? parseStat(shellPid) : undefined;
  return p && p.tpgid > 0 ? p.tpgid === p.pgrp : undefined;
}

/** Whether a process ignores a signal (SIG_IGN, from /proc); false when it cannot be told. */
export function ignoresSignal(pid: number, signal: NodeJS.Signals): boolean {
  const n = osConstants.signals[signal];
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return mask !== undefined && n < 32 && (parseInt(mask.slice(-8), 16) & (1 << (n - 1))) !== 0;
  } catch {
    return false;
  }
}

/**
 * The shell below a launcher: the first process down from `root` that is not
 * the launcher itself (bwrap forks its namespace's init, which starts the
 * shell). Undefined when it cannot be told (no /proc).
 */
export function findShell(root: number, launcherFile: string): number | undefined {
  const launcherExe = exeOf(root) ?? launcherFile;
  const all = listProcesses();
  // The shell stays in the launcher's session; a helper started beside it in a session of its own is not it (sandbox/forwarder.ts).
  const session = all.find((p) => p.pid === root)?.session;
  let level = [root];
  for (let depth = 0; depth < 4 && level.length; depth++) {
    const next = all.filter((p) => level.includes(p.ppid));
    for (const p of next)
      if (exeOf(p.pid) !== launcherExe && (session === undefined || p.session === session)) return p.pid;
    level = next.map((p) => p.pid);
  }
  return undefined;
}

function exeOf(pid: number): string | undefined {
  return linkOf(`/proc/${pid}/exe`);
}

/** SIGKILL for `pids` until all are gone, at most `timeoutMs`; false when some are still there. */
export async function killUntilGone(pids: readonly number[], timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (pids.some(alive) && Date.now() < until) {
    killAll(pids.filter(alive), 'SIGKILL');
    await new Promise((r) => setTimeout(r, 20));
  }
  return !pids.some(alive);
}
