/**
 * Bounds on a sandbox: how much memory its processes may use together, how
 * many tasks (processes and threads) it may have, and how much its tmpfs
 * folders hold. Without them a fork bomb fills the machine in a second and
 * lives until the command's timeout, a memory filler pushes the host into
 * swap or its own OOM killer, and each of the six tmpfs mounts (/tmp,
 * /var/tmp, /run, /dev/shm, the empty homes) takes up to half the RAM.
 *
 * tmpfs sizes are bwrap's `--size` (bubblewrap ≥ 0.5) before each `--tmpfs`:
 * /tmp gets `tmp`, the homes and /var/tmp half of it, /run and /dev/shm a
 * quarter, a hidden (empty, read-only) folder 1 MiB. A full tmpfs fails the
 * write with "No space left on device".
 *
 * Memory and tasks, by the first mechanism that works here (asked once per
 * process, the cgroup made per sandbox):
 *
 * 1. `cgroup-v2`: a child of this process's own cgroup, when that cgroup
 *    already hands the memory and pids controllers down (cgroup.subtree_control)
 *    and is writable: a delegated cgroup. (A cgroup that holds processes
 *    cannot hand controllers down, so this is the root of a hierarchy, or a
 *    container that delegated one.)
 * 2. `systemd-scope`: `systemd-run --user --scope -p MemoryMax= -p TasksMax=`
 *    (root: the system manager too) when a manager answers and the scope
 *    really gets both limits (checked once from inside one). The scope is
 *    made by systemd-run before it execs bwrap, and goes with its last process.
 * 3. `cgroup-v1`: children of this process's cgroups in writable v1 `memory`
 *    and `pids` hierarchies (containers and older hosts have them; root
 *    usually may write there).
 * 4. `rlimit`: per process only. RLIMIT_DATA bounds each process's heap and
 *    anonymous memory (RLIMIT_AS would break V8, which reserves far more
 *    address space than it uses); RLIMIT_NPROC counts all of the user's
 *    processes on the machine, and does not apply to root at all, so for
 *    root tasks are not limited. Set with `ulimit` by the launcher.
 *
 * Nested under this process's own cgroup, a sandbox's cgroup is also under
 * whatever limits the editor or the session already has.
 *
 * The whole bwrap tree is in the cgroup before the shell runs anything: the
 * launcher (`/bin/sh -c`) writes its own pid into cgroup.procs, then execs
 * bwrap (systemd-run does the same for its scope), so there is no moment in
 * which a process of the sandbox is outside it. A pid that cannot be written
 * there stops the launcher (exit 125): no sandbox runs unbounded by mistake.
 *
 * Reaching a limit: at the task limit forks fail (EAGAIN), and a fork bomb's
 * processes keep retrying; while a command runs (and when the next starts)
 * the pids controller's `max` event counter is watched, and once it moves
 * every process of the sandbox but the shell and bwrap above it is stopped
 * and killed, so the run goes on. At the memory limit the kernel's OOM killer
 * kills within the cgroup; its `oom_kill` counter tells the command's result
 * that it was the limit ("killed: the sandbox's memory limit (8 GiB) was
 * reached"). The cgroup is removed when the sandbox is disposed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxLimitsRecord } from '../schema/trajectory';
import { procInfo } from '../shell/procs';
import { formatSize, KiB, type LimitValues } from './limit-values';
import {
  cgroupMounts,
  counter,
  folderOf,
  held,
  holdUntilExit,
  ownCgroups,
  read,
  removeDir,
  tryV1,
  tryV2,
  type Cgroup,
} from './cgroups';
import { probeSystemd, scopeProperties, type Systemd } from './systemd-scope';

export type LimitMechanism = 'cgroup-v2' | 'systemd-scope' | 'cgroup-v1' | 'rlimit';
export const LIMIT_MECHANISMS: readonly LimitMechanism[] = ['cgroup-v2', 'systemd-scope', 'cgroup-v1', 'rlimit'];

/** What a sandbox's bounds watch while a command runs; end() says what a limit did to it, if anything. */
export interface CommandWatch {
  end(): string | undefined;
}

/**
 * Shell text that lowers an rlimit to `n` (soft and hard: the sandbox cannot
 * raise it again) unless it is lower already. `alt`: the option's name in
 * dash where it differs (RLIMIT_NPROC is -u in bash, -p in dash).
 */
function lower(option: string, n: number, alt?: string): string {
  const get = `{ ulimit ${option} 2>/dev/null${alt ? ` || ulimit ${alt}` : ''}; }`;
  const set = `{ ulimit ${option} ${n} 2>/dev/null${alt ? ` || ulimit ${alt} ${n} 2>/dev/null` : ''}; }`;
  return `cur=$(${get}); if [ "$cur" = unlimited ] || [ "$cur" -gt ${n} ]; then ${set} || exit 125; fi; `;
}

export interface OpenLimitsOptions {
  /** The mechanisms to try, in order (default: all, as in the header comment). */
  mechanisms?: readonly LimitMechanism[];
}

/**
 * One sandbox's bounds: made before the sandbox starts (its cgroup, if any),
 * wrapped around its launcher, watched per command, removed at its end.
 */
export class SandboxLimits {
  private disposed = false;
  /** The `max` counter of pids.events at the last look: a move means a fork was refused. */
  private taskHits = 0;
  /** Processes killed at the task limit since the last report. */
  private killedAtTaskLimit = 0;
  /** The scope's cgroup, found from the shell once it runs (each start of the shell makes a new scope). */
  private scope: { shell: number; cgroup: Cgroup } | undefined;

  private constructor(
    readonly values: LimitValues,
    readonly mechanism: LimitMechanism,
    private readonly cgroup: Cgroup | undefined,
    private readonly systemd: Systemd | undefined,
  ) {
    if (cgroup) holdUntilExit(this.folders);
  }

  static open(values: LimitValues, options: OpenLimitsOptions = {}): SandboxLimits {
    const order = options.mechanisms ?? LIMIT_MECHANISMS;
    const linux = process.platform === 'linux';
    const mounts = linux ? cgroupMounts() : { v1: new Map<string, { at: string; root: string }>() };
    const own = linux ? ownCgroups() : new Map<string, string>();
    for (const m of order) {
      if (!linux) break;
      if (m === 'cgroup-v2') {
        const cg = tryV2(values, mounts, own);
        if (cg) return new SandboxLimits(values, m, cg, undefined);
      } else if (m === 'systemd-scope') {
        const sd = probeSystemd();
        if (sd) return new SandboxLimits(values, m, undefined, sd);
      } else if (m === 'cgroup-v1') {
        const cg = tryV1(values, mounts, own);
        if (cg) return new SandboxLimits(values, m, cg, undefined);
      } else if (m === 'rlimit') break;
    }
    return new SandboxLimits(values, 'rlimit', undefined, undefined);
  }

  /** The cgroup folders made for this sandbox (none for a scope or rlimits); removed by dispose(). */
  get folders(): string[] {
    return [...new Set([this.cgroup?.memory, this.cgroup?.pids])].filter((d): d is string => !!d);
  }

  /** What the trajectory header records: the mechanism and the limits it enforces. */
  get record(): SandboxLimitsRecord {
    const root = process.getuid?.() === 0;
    return {
      mechanism: this.mechanism,
      memory: this.values.memory,
      // RLIMIT_NPROC does not apply to root: no task limit there.
      ...(this.mechanism === 'rlimit' && root ? {} : { tasks: this.values.tasks }),
      tmp: this.values.tmp,
    };
  }

  /**
   * The launcher that starts the sandbox within these bounds: `file args...`
   * of bwrap's launcher, started so that the cgroup (or the rlimits) holds
   * before bwrap runs.
   */
  wrap(launcher: { file: string; args: string[] }): { file: string; args: string[] } {
    if (this.systemd) {
      const sd = this.systemd;
      // systemd-run needs the session's bus; what it starts must not have it.
      const bus = Object.entries(sd.env).map(([k, v]) => `${k}=${v}`);
      const unset = Object.keys(sd.env).flatMap((k) => ['-u', k]);
      return {
        file: '/usr/bin/env',
        args: [
          ...bus,
          sd.run,
          ...(sd.user ? ['--user'] : []),
          '--scope',
          '--quiet',
          '--collect',
          ...scopeProperties(this.values.memory, this.values.tasks, sd.extra),
          '--',
          '/usr/bin/env',
          ...unset,
          launcher.file,
          ...launcher.args,
        ],
      };
    }
    const procs = this.folders.map((d) => join(d, 'cgroup.procs'));
    const rlimits =
      this.mechanism === 'rlimit'
        ? // One option per ulimit (dash takes one); RLIMIT_NPROC is -u in bash, -p in dash.
          lower('-d', Math.ceil(this.values.memory / KiB)) +
          (process.getuid?.() === 0 ? '' : lower('-u', this.values.tasks, '-p'))
        : '';
    const enter =
      'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ 2>/dev/null > "$1" || { echo "lar: the sandbox cannot enter its cgroup ($1)" >&2; exit 125; }; shift; n=$((n - 1)); done; ';
    return {
      file: '/bin/sh',
      args: [
        '-c',
        `${enter}${rlimits}exec "$@"`,
        'lar-limits',
        String(procs.length),
        ...procs,
        launcher.file,
        ...launcher.args,
      ],
    };
  }

  /** The cgroup in force: the one made here, or the scope systemd made (found from the shell). */
  private groups(shellPid: number | undefined): Cgroup | undefined {
    if (this.cgroup) return this.cgroup;
    if (this.mechanism !== 'systemd-scope' || shellPid === undefined) return undefined;
    if (this.scope?.shell !== shellPid) {
      const path = ownCgroups(read(`/proc/${shellPid}/cgroup`)).get('0');
      const v2 = cgroupMounts().v2;
      if (path === undefined || !v2) return undefined;
      this.scope = { shell: shellPid, cgroup: { memory: folderOf(v2, path), pids: folderOf(v2, path) } };
      this.taskHits = 0;
    }
    return this.scope.cgroup;
  }

  private oomKills(g: Cgroup | undefined): number {
    if (!g?.memory) return 0;
    return this.mechanism === 'cgroup-v1'
      ? counter(join(g.memory, 'memory.oom_control'), 'oom_kill')
      : counter(join(g.memory, 'memory.events'), 'oom_kill');
  }

  /**
   * At the task limit: every process of the sandbox but the shell and those
   * above it (bwrap) is stopped, then killed; stopping first keeps a fork
   * bomb from refilling the places that killing frees. Rounds go on until a
   * look finds none left: a process caught inside fork() can still make a
   * child after the last look of a round. How many were killed.
   */
  private killStrays(g: Cgroup, shellPid: number): number {
    const procsFile = join(g.pids ?? g.memory!, 'cgroup.procs');
    const keep = new Set<number>();
    for (let p: number | undefined = shellPid; p !== undefined && p > 1 && !keep.has(p); p = procInfo(p)?.ppid)
      keep.add(p);
    const killed = new Set<number>();
    const deadline = Date.now() + 5000;
    for (;;) {
      const stopped = stopAll(procsFile, (p) => !keep.has(p) && !killed.has(p), deadline);
      for (const p of stopped) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          // gone
        }
        killed.add(p);
      }
      if (!stopped.size || Date.now() > deadline) break;
    }
    return killed.size;
  }

  /** Whether the task limit was reached since the last look: then the strays are killed. */
  private checkTasks(shellPid: () => number | undefined): void {
    const pid = shellPid();
    const g = this.groups(pid);
    if (!g?.pids || pid === undefined) return;
    const hits = counter(join(g.pids, 'pids.events'), 'max');
    if (hits === this.taskHits) return;
    this.killedAtTaskLimit += this.killStrays(g, pid);
    // Read again after the kill: forks refused meanwhile belong to what was just killed.
    this.taskHits = counter(join(g.pids, 'pids.events'), 'max');
  }

  /**
   * Watch one command: the task limit is looked at when it starts and every
   * 200 ms while it runs (a fork bomb left by an earlier command is caught
   * too), the OOM killer's counter at its start and end. `shellPid`: the
   * shell's host pid (kept alive with bwrap above it).
   */
  watch(shellPid: () => number | undefined): CommandWatch {
    if (this.mechanism === 'rlimit' || this.disposed) return { end: () => undefined };
    this.checkTasks(shellPid);
    const oomBefore = this.oomKills(this.groups(shellPid()));
    const timer = setInterval(() => this.checkTasks(shellPid), 200);
    timer.unref();
    return {
      end: () => {
        clearInterval(timer);
        this.checkTasks(shellPid);
        const said: string[] = [];
        if (this.oomKills(this.groups(shellPid())) > oomBefore)
          said.push(`the sandbox's memory limit (${formatSize(this.values.memory)}) was reached`);
        if (this.killedAtTaskLimit) {
          const n = this.killedAtTaskLimit;
          said.push(
            `the sandbox's task limit (${this.values.tasks} processes and threads) was reached: ${n === 1 ? '1 process left running was' : `${n} processes left running were`} killed`,
          );
          this.killedAtTaskLimit = 0;
        }
        return said.length ? said.join('; ') : undefined;
      },
    };
  }

  /** Removes the cgroup (the sandbox's processes are gone by now; any left are killed first). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const dirs = this.folders;
    for (const d of dirs) held.delete(d);
    for (let attempt = 0; attempt < 50 && dirs.some((d) => existsSync(d)); attempt++) {
      for (const d of dirs) {
        for (const p of (read(join(d, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number)) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            // gone
          }
        }
        removeDir(d);
      }
      if (dirs.some((d) => existsSync(d))) await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/**
 * Stops the cgroup's processes that `stray` names, until none of them runs (or the
 * deadline): one that was inside fork() when SIGSTOP came still makes its child,
 * found on the next pass. The ones stopped.
 */
function stopAll(procsFile: string, stray: (pid: number) => boolean, deadline: number): Set<number> {
  const stopped = new Set<number>();
  for (;;) {
    const fresh = (read(procsFile) ?? '')
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((p) => stray(p) && !stopped.has(p));
    for (const p of fresh) {
      try {
        process.kill(p, 'SIGSTOP');
      } catch {
        // gone
      }
      stopped.add(p);
    }
    if (Date.now() > deadline) return stopped;
    if (fresh.length) continue;
    const running = [...stopped].some((p) => {
      const state = procInfo(p)?.state;
      return state !== undefined && !'TtZX'.includes(state);
    });
    if (!running) return stopped;
  }
}
