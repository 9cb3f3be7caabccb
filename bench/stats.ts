/** Summaries of timing samples for the benchmark reports. */
import { loadavg } from 'node:os';

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    mean: sum / (sorted.length || 1),
    max: sorted.at(-1) ?? NaN,
  };
}

/** The machine is shared with other work; the load when a benchmark starts says how quiet it was. */
export function loadNote(): string {
  return `1-minute load average ${loadavg()[0]!.toFixed(1)} at the start`;
}
