/**
 * `npm run bench`: the builtin verifier on generated trajectories of 1k, 10k
 * and 100k steps. Each size runs in a fresh child process so peak memory is its
 * own. Figures go to docs/performance.md between the BENCH markers.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { generateTrajectory } from './generate';
import { machineLine, writeSection } from './report';
import { parseTrajectory } from '../core/schema/jsonl';
import { verifyTrajectoryText } from '../core/verifier/verify';
import { VerifierState } from '../core/verifier/state';
import { defaultWorkflow } from '../core/workflow/load';
import type { TrajectoryEvent } from '../core/schema/trajectory';

const SIZES = [1_000, 10_000, 100_000];

interface Figures {
  steps: number;
  bytes: number;
  throughput: number;
  fullMs: number;
  bestMs: number;
  appendP50: number;
  appendP99: number;
  gateP50: number;
  gateP99: number;
  peakRssMb: number;
  heapMb: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function measure(steps: number): Figures {
  const text = generateTrajectory(steps);
  // Warm up the JIT on a smaller run, then time full verifications (parse + validate + verify).
  verifyTrajectoryText(generateTrajectory(2000));
  const runs = steps >= 100_000 ? 7 : steps >= 10_000 ? 15 : 41;
  const times: number[] = [];
  let heapMb = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    const report = verifyTrajectoryText(text);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (report.steps.length < steps) throw new Error(`verified ${report.steps.length} of ${steps} steps`);
    heapMb = Math.max(heapMb, process.memoryUsage().heapUsed / 2 ** 20);
  }
  times.sort((a, b) => a - b);
  const fullMs = times[Math.floor(times.length / 2)]!;
  const bestMs = times[0]!;

  // One append and one gate, each timed alone, on pre-parsed events (the live path).
  const events = parseTrajectory(text).lines.flatMap<TrajectoryEvent>((l) => (l.kind === 'event' ? [l.event] : []));
  // Warm the append and gate paths up on a throwaway state first, so the
  // percentiles describe steady state and not the JIT's first calls.
  const warm = new VerifierState(defaultWorkflow());
  const warmEvents = parseTrajectory(generateTrajectory(5000)).lines.flatMap<TrajectoryEvent>((l) =>
    l.kind === 'event' ? [l.event] : [],
  );
  warmEvents.forEach((e, i) => {
    if (e.type === 'tool_call') warm.gate({ tool: e.tool, args: e.args });
    warm.append(e, i + 2);
  });
  const state = new VerifierState(defaultWorkflow());
  const append = new Float64Array(events.length);
  const gate = new Float64Array(events.length);
  let g = 0;
  events.forEach((e, i) => {
    if (e.type === 'tool_call') {
      const t0 = process.hrtime.bigint();
      state.gate({ tool: e.tool, args: e.args });
      gate[g++] = Number(process.hrtime.bigint() - t0) / 1e6;
    }
    const t1 = process.hrtime.bigint();
    state.append(e, i + 2);
    append[i] = Number(process.hrtime.bigint() - t1) / 1e6;
  });
  append.sort();
  const gates = gate.slice(0, g).sort();
  return {
    steps,
    bytes: Buffer.byteLength(text),
    throughput: steps / (fullMs / 1000),
    fullMs,
    bestMs,
    appendP50: percentile(append, 50),
    appendP99: percentile(append, 99),
    gateP50: percentile(gates, 50),
    gateP99: percentile(gates, 99),
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    heapMb,
  };
}

function table(figures: Figures[]): string {
  const f = (x: number, d = 3) => x.toFixed(d);
  const rows = figures.map(
    (x) =>
      `| ${x.steps.toLocaleString('en-US')} | ${(x.bytes / 2 ** 20).toFixed(1)} MB | ${Math.round(x.throughput).toLocaleString('en-US')} (best ${Math.round(x.steps / (x.bestMs / 1000)).toLocaleString('en-US')}) | ${f(x.fullMs, 1)} | ${f((x.fullMs * 1000) / x.steps, 2)} | ${f(x.appendP50 * 1000, 1)} / ${f(x.appendP99 * 1000, 1)} | ${f(x.gateP50 * 1000, 1)} / ${f(x.gateP99 * 1000, 1)} | ${x.peakRssMb.toFixed(0)} MB | ${x.heapMb.toFixed(0)} MB |`,
  );
  return [
    '| steps | file | steps/s, median (best) — parse + validate + verify | full verify, ms (median) | µs per step | append p50 / p99, µs | gate p50 / p99, µs | peak RSS | heap after verify |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

function main(): void {
  const one = process.argv.indexOf('--size');
  if (one >= 0) {
    process.stdout.write(JSON.stringify(measure(Number(process.argv[one + 1]))));
    return;
  }
  const figures: Figures[] = [];
  for (const size of SIZES) {
    const out = execFileSync(process.execPath, [__filename, '--size', String(size)], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    const f = JSON.parse(out) as Figures;
    figures.push(f);
    console.log(
      `${size} steps: ${Math.round(f.throughput)} steps/s, append p99 ${(f.appendP99 * 1000).toFixed(1)} µs, gate p99 ${(f.gateP99 * 1000).toFixed(1)} µs, peak RSS ${f.peakRssMb.toFixed(0)} MB`,
    );
  }
  const section = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}.`,
    '',
    table(figures),
    '',
    `Targets: ≥ 200,000 steps/s; append p99 ≤ 100 µs (0.1 ms); time per step flat from 1k to 100k steps (linear growth).`,
  ].join('\n');
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'verifier', section);
  console.log(`figures written to docs/performance.md`);
}

main();
