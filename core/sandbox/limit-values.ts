/**
 * The sizes a sandbox's bounds are given in: the workflow's `sandbox.limits`, the defaults for
 * what it leaves out, and each tmpfs folder's share (read by the plan, bwrap's arguments and limits.ts).
 */
import { totalmem } from 'node:os';
import { sizeBytes, type SandboxLimitsSection } from '../schema/workflow';

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/** The defaults: memory min(8 GiB, half the RAM), 4096 tasks, 1 GiB of /tmp. */
const DEFAULT_TASKS = 4096;
const DEFAULT_TMP = GiB;
export function defaultMemory(ram: number = totalmem()): number {
  return Math.min(8 * GiB, Math.floor(ram / 2 / MiB) * MiB);
}

/** "512M" → bytes (K, M, G, T: powers of 1024; no unit: bytes), as the workflow's `Size` writes them. */
export function parseSize(s: string): number {
  const n = sizeBytes(s);
  if (Number.isNaN(n)) throw new Error(`not a size: ${JSON.stringify(s)} (a whole number followed by K, M, G or T)`);
  return n;
}

/** Bytes for people: "512 MiB", "8 GiB", "1.5 GiB". */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['TiB', 1024 * GiB],
    ['GiB', GiB],
    ['MiB', MiB],
    ['KiB', KiB],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

export interface LimitValues {
  /** Bytes the sandbox's processes may use together. */
  memory: number;
  /** Processes and threads. */
  tasks: number;
  /** Bytes /tmp holds (the other tmpfs folders: tmpfsSize). */
  tmp: number;
}

/** The limits a workflow's `sandbox.limits` asks for, with the defaults for what it leaves out. */
export function limitValues(section: SandboxLimitsSection | undefined, ram: number = totalmem()): LimitValues {
  return {
    memory: section?.memory ? parseSize(section.memory) : defaultMemory(ram),
    tasks: section?.tasks ?? DEFAULT_TASKS,
    tmp: section?.tmp ? parseSize(section.tmp) : DEFAULT_TMP,
  };
}

/** How much a tmpfs folder of the sandbox holds, given /tmp's size. */
export function tmpfsSize(dir: string, tmp: number, kind: 'scratch' | 'home' | 'hidden'): number {
  if (kind === 'hidden') return MiB;
  if (dir === '/tmp') return tmp;
  if (dir === '/run' || dir === '/dev/shm') return Math.max(64 * KiB, Math.floor(tmp / 4));
  // /var/tmp and the homes (caches: ~/.npm, ~/.cache).
  return Math.max(64 * KiB, Math.floor(tmp / 2));
}
