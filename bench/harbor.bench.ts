/**
 * `npm run bench`: Harbor trials on our task set (test-fixtures/harbor) through
 * LocalSandboxEnvironment, with the real `harbor` from setup's venv. Trials per
 * minute at -n 1, 2 and 4 for the oracle and for LarAgent against the scripted
 * model, and where a trial's time goes (Harbor's own timings in each
 * result.json): our environment's set-up, the agent's install, the agent, the
 * verifier, beside the oracle's own time. Figures go to docs/performance.md
 * between the BENCH:harbor markers.
 */
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HARBOR_MODEL, harborModelServer } from '../devtools/harbor-model';
import { harborStatus } from '../devtools/paths';
import { writeCliPackage } from '../devtools/cli-package';
import { REPO_ROOT } from '../devtools/paths';
import { harborRun, trialsOf } from '../test/support/harbor-job';
import { machineLine, writeSection } from './report';
import { loadNote, summarize } from './stats';

const ENV = 'lar_harbor:LocalSandboxEnvironment';
const WIDTHS = [1, 2, 4];

interface Phases {
  environment: number;
  install: number;
  agent: number;
  verifier: number;
  total: number;
}

const seconds = (t?: { started_at?: string; finished_at?: string } | null): number =>
  t?.started_at && t.finished_at ? (Date.parse(t.finished_at) - Date.parse(t.started_at)) / 1000 : 0;

function phasesOf(dir: string): Phases {
  const r = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as Record<
    string,
    { started_at?: string; finished_at?: string } | null
  > & { started_at: string; finished_at: string };
  return {
    environment: seconds(r.environment_setup),
    install: seconds(r.agent_setup),
    agent: seconds(r.agent_execution),
    verifier: seconds(r.verifier),
    total: (Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000,
  };
}

async function job(
  venv: string,
  root: string,
  agent: string[],
  n: number,
): Promise<{ wall: number; phases: Phases[] }> {
  const t0 = performance.now();
  const { job: dir } = await harborRun(venv, join(root, `${agent[1]}-${n}-${Date.now()}`), [
    ...['-p', 'test-fixtures/harbor', ...agent, '-e', ENV, '-n', String(n)],
  ]);
  const wall = (performance.now() - t0) / 1000;
  const trials = trialsOf(dir);
  if (trials.some((t) => t.exception))
    throw new Error(`a trial failed in ${dir}: ${trials.map((t) => t.exception).join(', ')}`);
  return { wall, phases: trials.map((t) => phasesOf(t.dir)) };
}

const p50 = (xs: number[]): number => summarize(xs).p50;

async function main(): Promise<void> {
  const status = harborStatus();
  if ('skip' in status) {
    console.log(`harbor bench skipped: ${status.skip}`);
    return;
  }
  await writeCliPackage(join(REPO_ROOT, 'out', 'cli'));
  const root = mkdtempSync(join(tmpdir(), 'lar-harbor-bench-'));
  const model = harborModelServer();
  const url = await model.start();
  const load = loadNote();
  const agents: [string, string[]][] = [
    ['oracle', ['-a', 'oracle']],
    [
      'LarAgent (scripted model)',
      ['-a', 'lar_harbor:LarAgent', '-m', `hosted_vllm/${HARBOR_MODEL}`, '--ak', `api_base=${url}`],
    ],
  ];
  const rows: string[] = [];
  const phases = new Map<string, Phases[]>();
  try {
    // A first job builds every task's environment once (kept in the tool cache), as a real first run would.
    await job(status.venv, root, agents[0]![1], 4);
    for (const n of WIDTHS) {
      for (const [name, args] of agents) {
        const r = await job(status.venv, root, args, n);
        rows.push(
          `| ${name} | ${n} | ${r.phases.length} | ${r.wall.toFixed(1)} | ${((r.phases.length / r.wall) * 60).toFixed(1)} |`,
        );
        phases.set(name, [...(phases.get(name) ?? []), ...r.phases]);
      }
    }
  } finally {
    await model.stop();
    rmSync(root, { recursive: true, force: true });
  }
  const oracle = phases.get('oracle')!;
  const lar = phases.get('LarAgent (scripted model)')!;
  const ownOracle = p50(oracle.map((p) => p.agent));
  const phaseRow = (label: string, pick: (p: Phases) => number) =>
    `| ${label} | ${p50(oracle.map(pick)).toFixed(2)} | ${p50(lar.map(pick)).toFixed(2)} | ${(p50(oracle.map(pick)) / ownOracle).toFixed(1)}× |`;
  const section = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${load}. Harbor 0.26.0 from setup's venv, our 10 tasks, -k 1; each job after one that built every environment (kept in the tool cache). Wall time includes Harbor's own start (about 5 s of imports).`,
    '',
    '| agent | -n | trials | wall s | trials per minute |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
    `Where a trial's time goes (p50 over every trial above, s; Harbor's own timings). The last column is each phase against the oracle's own work (its solve.sh, p50 ${ownOracle.toFixed(2)} s):`,
    '',
    "| phase | oracle | LarAgent | oracle phase ÷ oracle's own time |",
    '|---|---:|---:|---:|',
    phaseRow('environment set-up (a fresh copy of the built environment)', (p) => p.environment),
    phaseRow('agent install (LarAgent: the CLI tarball, offline)', (p) => p.install),
    phaseRow('agent run', (p) => p.agent),
    phaseRow('verifier (tests uploaded, run, logs downloaded)', (p) => p.verifier),
    phaseRow('whole trial', (p) => p.total),
  ].join('\n');
  console.log(section);
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'harbor', section);
  console.log('figures written to docs/performance.md');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
