/**
 * `npm run bench`: the builtin verifier on generated trajectories of 1k, 10k and 100k steps, as a
 * trainer runs it and as the live path uses it. Figures go to docs/performance.md between the
 * BENCH:verifier markers.
 *
 * The CLI part runs the real CLI (dist/lar.js) in child processes, its output to /dev/null:
 * `lar verify` (table), `lar verify --json` (JSON Lines) and `lar verify --format json` (the whole
 * report), each against a child that only reads the same file and JSON.parses every line (the
 * baseline), in the same round, so a ratio does not depend on how loaded the machine is. A
 * round's children run back to back; each figure is the median over ROUNDS rounds. Time is the
 * wall time of the child as the parent sees it (Node's start included, for every child); peak
 * memory is the child's own maxRSS, which a preloaded hook prints as it exits. `lar --version`
 * and `node -e 0` in the same round say what loading the CLI's bundle costs on its own.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readSync, rmSync, writeFileSync, closeSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateTrajectory } from './generate';
import { machineLine, writeSection } from './report';
import { loadNote } from './stats';
import { linesOfBytes, parseTrajectory } from '../core/schema/jsonl';
import { verifyLines, type TrajectorySink } from '../core/verifier/stream';
import { VerifierState } from '../core/verifier/state';
import { defaultWorkflow } from '../core/workflow/load';
import type { TrajectoryEvent } from '../core/schema/trajectory';

const SIZES = [1_000, 10_000, 100_000];
const ROUNDS = 5;
const LAR = resolve(__dirname, '../../dist/lar.js');

/** Preloaded into every measured child: its peak RSS (KiB) on stderr as it exits. */
const MAX_RSS_HOOK = `process.on('exit', () => require('fs').writeSync(2, '\\nLAR_BENCH_MAXRSS ' + process.resourceUsage().maxRSS + '\\n'));\n`;
/** The baseline: read the file and JSON.parse every line, nothing else. */
const PARSE_ONLY = `for (const l of require('fs').readFileSync(process.argv[2], 'utf8').split('\\n')) if (l !== '') JSON.parse(l);\n`;

interface Run {
  ms: number;
  rssMb: number;
}

interface ModeFigures extends Run {
  /** Time and peak RSS over the baseline's in the same round (median over rounds). */
  ratio: number;
  rssRatio: number;
  /** The same time ratio with the CLI's own load (`lar --version` less `node -e 0`) taken out. */
  ratioUnloaded: number;
  outBytes: number;
}

interface CliFigures {
  steps: number;
  bytes: number;
  parse: Run;
  table: ModeFigures;
  jsonl: ModeFigures;
  report: ModeFigures;
  startMs: number;
  nodeMs: number;
}

interface InProcess {
  steps: number;
  throughput: number;
  bestThroughput: number;
  appendP50: number;
  appendP99: number;
  gateP50: number;
  gateP99: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function child(hook: string, args: string[]): Run {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['-r', hook, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const m = /LAR_BENCH_MAXRSS (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return { ms, rssMb: Number(m[1]) / 1024 };
}

/** Bytes the CLI writes for `args` (a run of its own, not timed). */
function outputBytes(args: string[]): number {
  return execFileSync(process.execPath, [LAR, ...args], { maxBuffer: 1 << 30 }).length;
}

function cliFigures(dir: string, steps: number, file: string): CliFigures {
  const hook = join(dir, 'max-rss.cjs');
  const parseOnly = join(dir, 'parse-only.cjs');
  const modes = { table: [] as string[], jsonl: ['--json'], report: ['--format', 'json'] };
  const runs: Record<'parse' | keyof typeof modes, Run[]> = { parse: [], table: [], jsonl: [], report: [] };
  const ratios: Record<keyof typeof modes, { time: number[]; rss: number[]; unloaded: number[] }> = {
    table: { time: [], rss: [], unloaded: [] },
    jsonl: { time: [], rss: [], unloaded: [] },
    report: { time: [], rss: [], unloaded: [] },
  };
  const start: number[] = [];
  const node: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // What loading the CLI costs beyond Node's own start, measured in the same round.
    const load = (start[r] = child(hook, [LAR, '--version']).ms) - (node[r] = child(hook, ['-e', '0']).ms);
    const parse = child(hook, [parseOnly, file]);
    runs.parse.push(parse);
    for (const [mode, extra] of Object.entries(modes) as [keyof typeof modes, string[]][]) {
      const run = child(hook, [LAR, 'verify', file, ...extra]);
      runs[mode].push(run);
      ratios[mode].time.push(run.ms / parse.ms);
      ratios[mode].rss.push(run.rssMb / parse.rssMb);
      ratios[mode].unloaded.push((run.ms - load) / parse.ms);
    }
  }
  const med = (list: Run[]): Run => ({ ms: median(list.map((x) => x.ms)), rssMb: median(list.map((x) => x.rssMb)) });
  const mode = (m: keyof typeof modes): ModeFigures => ({
    ...med(runs[m]),
    ratio: median(ratios[m].time),
    rssRatio: median(ratios[m].rss),
    ratioUnloaded: median(ratios[m].unloaded),
    outBytes: outputBytes(['verify', file, ...modes[m]]),
  });
  return {
    steps,
    bytes: statSync(file).size,
    parse: med(runs.parse),
    table: mode('table'),
    jsonl: mode('jsonl'),
    report: mode('report'),
    startMs: median(start),
    nodeMs: median(node),
  };
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const NO_OUTPUT: TrajectorySink = { start() {}, step() {}, lineError() {}, userContext() {}, end() {} };

/** The streaming verifier from the file's bytes with no output: what judging costs in process. */
function streamOnce(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const t0 = process.hrtime.bigint();
    const read = (buf: Buffer, at: number) => readSync(fd, buf, at, buf.length - at, null);
    verifyLines(linesOfBytes(read), { reuse: true, keepVisits: false }, NO_OUTPUT);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } finally {
    closeSync(fd);
  }
}

/** In a fresh process: throughput of the streaming verifier, and one append and one gate timed alone. */
function inProcess(steps: number, file: string): InProcess {
  const text = generateTrajectory(steps);
  const times: number[] = [];
  for (let r = 0; r < (steps >= 100_000 ? 7 : 15); r++) times.push(streamOnce(file));
  const events = parseTrajectory(text).lines.flatMap<TrajectoryEvent>((l) => (l.kind === 'event' ? [l.event] : []));
  // Warm the append and gate paths up on a throwaway state first, so the percentiles describe
  // steady state and not the JIT's first calls.
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
    throughput: steps / (median(times) / 1000),
    bestThroughput: steps / (Math.min(...times) / 1000),
    appendP50: percentile(append, 50),
    appendP99: percentile(append, 99),
    gateP50: percentile(gates, 50),
    gateP99: percentile(gates, 99),
  };
}

const n = (x: number) => x.toLocaleString('en-US');
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

function cliTable(figures: CliFigures[]): string {
  const rows = figures.flatMap((x) => {
    const row = (what: string, m: ModeFigures) =>
      `| | | ${what} | ${m.ms.toFixed(0)} ms | **${m.ratio.toFixed(2)}×** (${m.ratioUnloaded.toFixed(2)}×) | ${m.rssMb.toFixed(0)} MB | **${m.rssRatio.toFixed(2)}×** | ${mb(m.outBytes)} |`;
    return [
      `| ${n(x.steps)} | ${mb(x.bytes)} | JSON.parse of every line (the baseline) | ${x.parse.ms.toFixed(0)} ms | 1 | ${x.parse.rssMb.toFixed(0)} MB | 1 | |`,
      row('`lar verify` (table)', x.table),
      row('`lar verify --json` (JSON Lines)', x.jsonl),
      row('`lar verify --format json` (whole report)', x.report),
      `| | | \`lar --version\` (loading the CLI) / \`node -e 0\` | ${x.startMs.toFixed(0)} / ${x.nodeMs.toFixed(0)} ms | | | | |`,
    ];
  });
  return [
    "| steps | file | child process | wall time | × parse (without the CLI's load) | peak RSS | × parse | output |",
    '|---:|---:|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

function inProcessTable(figures: InProcess[]): string {
  const f = (x: number) => (x * 1000).toFixed(1);
  const rows = figures.map(
    (x) =>
      `| ${n(x.steps)} | ${n(Math.round(x.throughput))} (best ${n(Math.round(x.bestThroughput))}) | ${((1e6 / x.throughput) * 1).toFixed(2)} | ${f(x.appendP50)} / ${f(x.appendP99)} | ${f(x.gateP50)} / ${f(x.gateP99)} |`,
  );
  return [
    '| steps | steps/s, median (best) — read + parse + validate + verify, no output | µs per step | append p50 / p99, µs | gate p50 / p99, µs |',
    '|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

function main(): void {
  const one = process.argv.indexOf('--size');
  if (one >= 0) {
    process.stdout.write(JSON.stringify(inProcess(Number(process.argv[one + 1]), process.argv[one + 2]!)));
    return;
  }
  const load = loadNote();
  const dir = mkdtempSync(join(tmpdir(), 'lar-verifier-bench-'));
  try {
    writeFileSync(join(dir, 'max-rss.cjs'), MAX_RSS_HOOK);
    writeFileSync(join(dir, 'parse-only.cjs'), PARSE_ONLY);
    const cli: CliFigures[] = [];
    const inproc: InProcess[] = [];
    for (const size of SIZES) {
      const file = join(dir, `run-${size}.lar.jsonl`);
      writeFileSync(file, generateTrajectory(size));
      const c = cliFigures(dir, size, file);
      cli.push(c);
      console.log(
        `${n(size)} steps: parse ${c.parse.ms.toFixed(0)} ms; table ${c.table.ratio.toFixed(2)}× (${c.table.ratioUnloaded.toFixed(2)}× without the CLI's load), JSON Lines ${c.jsonl.ratio.toFixed(2)}× (${c.jsonl.ratioUnloaded.toFixed(2)}×); peak RSS ${c.table.rssRatio.toFixed(2)}× / ${c.jsonl.rssRatio.toFixed(2)}× of parsing`,
      );
      const out = execFileSync(process.execPath, [__filename, '--size', String(size), file], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      inproc.push(JSON.parse(out) as InProcess);
    }
    const section = [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${load}. Median of ${ROUNDS} paired rounds.`,
      '',
      cliTable(cli),
      '',
      inProcessTable(inproc),
      '',
      'Targets (100k steps): table and JSON Lines ≤ 3× the time of JSON.parse of every line of the same file, peak RSS ≤ 2× of parsing alone; append p99 ≤ 100 µs.',
    ].join('\n');
    writeSection(resolve(__dirname, '../../docs/performance.md'), 'verifier', section);
    console.log('figures written to docs/performance.md');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
