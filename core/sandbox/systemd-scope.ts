/**
 * The `systemd-scope` bound (limits.ts): whether a systemd manager answers here and really gives
 * a scope both limits, asked once per process, and the properties such a scope is made with.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { MiB } from './limit-values';

/** systemd-run, the manager (`--user`, or the system's for root) that answers, its environment, and the properties it takes. */
export interface Systemd {
  run: string;
  user: boolean;
  env: Record<string, string>;
  /** `OOMPolicy=continue` where systemd takes it for a scope (253 and later): an OOM kill must not stop the whole scope, shell and all. */
  extra: string[];
}

/** The properties of a scope with these limits (swap not allowed: memory is the bound). */
export function scopeProperties(memory: number, tasks: number, extra: readonly string[]): string[] {
  return ['-p', `MemoryMax=${memory}`, '-p', 'MemorySwapMax=0', '-p', `TasksMax=${tasks}`, ...extra];
}

/** Asked once per process. */
let systemdProbe: Systemd | null | undefined;

export function probeSystemd(): Systemd | null {
  if (systemdProbe !== undefined) return systemdProbe;
  systemdProbe = null;
  const run = ['/usr/bin/systemd-run', '/bin/systemd-run'].find((p) => existsSync(p));
  if (!run) return null;
  const env: Record<string, string> = {};
  for (const k of ['XDG_RUNTIME_DIR', 'DBUS_SESSION_BUS_ADDRESS']) if (process.env[k]) env[k] = process.env[k]!;
  // The scope must really get both limits (a user manager without the controllers delegated sets neither).
  const memory = 123 * MiB;
  const check = 'd=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup); cat "$d/memory.max" "$d/pids.max"';
  for (const user of process.getuid?.() === 0 ? [true, false] : [true]) {
    for (const extra of [['-p', 'OOMPolicy=continue'], []]) {
      const r = spawnSync(
        run,
        [
          ...(user ? ['--user'] : []),
          '--scope',
          '--quiet',
          '--collect',
          ...scopeProperties(memory, 77, extra),
          '--',
          '/bin/sh',
          '-c',
          check,
        ],
        {
          encoding: 'utf8',
          timeout: 5000,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
        },
      );
      if (r.status === 0 && r.stdout.split('\n').slice(0, 2).join(' ') === `${memory} 77`)
        return (systemdProbe = { run, user, env, extra });
      // No manager answers: other properties will not help.
      if (r.status !== 0 && /bus|connect|Host is down|not been booted/i.test(r.stderr ?? '')) break;
    }
  }
  return systemdProbe;
}
