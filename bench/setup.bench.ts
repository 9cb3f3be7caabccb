/**
 * `npm run bench`: what a run's start costs before the model is asked: the
 * sandbox's plan alone against the whole `RunSandbox.open` (the protections
 * found by reading the repository, the files the deny patterns reach, the
 * hard-link search, the baseline of files that run later, the snapshot), on
 * a workspace of 2 000 source files, a git repository, husky hooks and a
 * pnpm-style node_modules, interleaved so both see the same machine noise.
 * Figures go to docs/performance.md between the BENCH:setup markers.
 */
import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { planSandbox } from '../core/sandbox/plan';
import { scanProtections } from '../core/sandbox/protections';
import { hardLinked } from '../core/sandbox/hard-links';
import { LaterBaseline } from '../core/sandbox/later-changes';
import { RunSandbox } from '../core/sandbox/run';
import { Workflow } from '../core/schema/workflow';
import { defaultWorkflow } from '../core/workflow/load';
import { machineLine, writeSection } from './report';
import { loadNote, summarize } from './stats';

const RUNS = 30;
const FILES = 2000;

function workspace(root: string): string {
  const ws = join(root, 'ws');
  for (let i = 0; i < FILES; i++) {
    const dir = join(ws, 'src', `m${i % 40}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.js`), `module.exports = ${i};\n`);
  }
  mkdirSync(join(ws, 'test'), { recursive: true });
  writeFileSync(join(ws, 'test', 'a.test.js'), 'ok\n');
  writeFileSync(join(ws, 'package.json'), '{"scripts":{"test":"node --test"}}\n');
  writeFileSync(join(ws, 'Makefile'), 'test:\n\tnpm test\n');
  mkdirSync(join(ws, '.husky', '_'), { recursive: true });
  writeFileSync(join(ws, '.husky', 'pre-commit'), 'npx lint-staged\n./scripts/check.sh\n');
  mkdirSync(join(ws, 'scripts'));
  writeFileSync(join(ws, 'scripts', 'check.sh'), '#!/bin/sh\ntrue\n');
  // A pnpm-style store outside, linked into node_modules (which the default workflow protects whole).
  const store = join(root, 'store');
  mkdirSync(store);
  const pkg = join(ws, 'node_modules', '.pnpm', 'a@1', 'node_modules', 'a');
  mkdirSync(pkg, { recursive: true });
  for (let i = 0; i < 200; i++) {
    writeFileSync(join(store, `${i}.js`), `${i}\n`);
    linkSync(join(store, `${i}.js`), join(pkg, `${i}.js`));
  }
  spawnSync('git', ['init', '-q', ws]);
  spawnSync('git', ['-C', ws, 'config', 'core.hooksPath', '.husky/_']);
  spawnSync('git', ['-C', ws, '-c', 'user.name=b', '-c', 'user.email=b@example.com', 'add', '-A']);
  spawnSync('git', ['-C', ws, '-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-qm', 'bench']);
  return ws;
}

async function main(): Promise<void> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'lar-setup-bench-')));
  try {
    const ws = workspace(root);
    // A custom workflow without node_modules protected: the hard-link search then walks it too.
    const custom = Workflow.parse({ ...defaultWorkflow(), sandbox: { protected: ['test', 'package.json'] } });
    const load = loadNote();
    const plans: number[] = [];
    const opens: Record<string, number[]> = { default: [], custom: [] };
    const parts: Record<string, number[]> = { protections: [], hardLinks: [], later: [] };
    for (let i = 0; i < RUNS + 3; i++) {
      let t0 = performance.now();
      const plan = planSandbox({
        workspace: ws,
        section: defaultWorkflow().sandbox,
        setting: 'required',
        hostEnv: process.env,
        shell: '/bin/bash',
      });
      if (!plan.confined)
        throw new Error(`the sandbox cannot start here (npm run setup installs bubblewrap): ${plan.summary.reason}`);
      const tPlan = performance.now() - t0;
      const times: Record<string, number> = {};
      for (const [name, wf] of [
        ['default', defaultWorkflow()],
        ['custom', custom],
      ] as const) {
        t0 = performance.now();
        const box = await RunSandbox.open({
          workspace: ws,
          workflow: wf,
          setting: 'required',
          hostEnv: process.env,
          shell: '/bin/bash',
          outputDir: join(ws, '.lar', 'output', `b${i}`),
        });
        times[name] = performance.now() - t0;
        await box.dispose();
      }
      t0 = performance.now();
      const scan = scanProtections(ws, custom, [], '.husky/_');
      const tScan = performance.now() - t0;
      t0 = performance.now();
      hardLinked(
        ws,
        scan.protections.map((p) => p.path),
      );
      const tLinks = performance.now() - t0;
      t0 = performance.now();
      LaterBaseline.take(
        ws,
        scan.protections.map((p) => p.path),
      );
      const tLater = performance.now() - t0;
      if (i < 3) continue;
      plans.push(tPlan);
      opens.default!.push(times.default!);
      opens.custom!.push(times.custom!);
      parts.protections!.push(tScan);
      parts.hardLinks!.push(tLinks);
      parts.later!.push(tLater);
    }
    const s = (xs: number[]) => summarize(xs);
    const row = (label: string, xs: number[]) =>
      `| ${label} | ${s(xs).p50.toFixed(1)} | ${s(xs).p95.toFixed(1)} | ${(s(xs).p50 / s(plans).p50).toFixed(1)}× |`;
    const section = [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${load}. ${RUNS} rounds, interleaved; a workspace of ${FILES} source files in 40 folders, a git repository with husky hooks, a 200-file pnpm-style node_modules linked to a store outside.`,
      '',
      '| step | p50 ms | p95 ms | × the plan alone |',
      '|---|---|---|---|',
      row('`planSandbox` alone (bwrap probed once, mounts)', plans),
      row('`RunSandbox.open`, default workflow (node_modules protected whole)', opens.default!),
      row(
        '`RunSandbox.open`, a workflow that leaves node_modules to the run (its 200 linked files searched and mounted)',
        opens.custom!,
      ),
      row('of which: what runs later and the deny patterns (`scanProtections`)', parts.protections!),
      row('of which: the hard-link search', parts.hardLinks!),
      row('of which: the baseline of files that run later', parts.later!),
    ].join('\n');
    console.log(section);
    writeSection(resolve(__dirname, '../../docs/performance.md'), 'setup', section);
    console.log('figures written to docs/performance.md');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
