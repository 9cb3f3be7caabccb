/**
 * `npm run bench`: a group of rollouts (`lar run --rollouts 8`) against the scripted vLLM server, each
 * turn taking 150 ms to answer as a busy GPU would: rollouts per minute at concurrency 1, 2, 4 and 8,
 * the peak memory of the whole process tree (lar and every sandbox), and what `--record-tokens`
 * costs per turn and per MB of trajectory, measured in the same run. Figures go to docs/performance.md
 * between the BENCH:rollouts markers.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ScriptedToolCall, ScriptedTurn } from '../testkit/scripted-turns';
import { machineLine, writeSection } from './report';
import { loadNote } from './stats';

const ROLLOUTS = 8;
const WIDTHS = [1, 2, 4, 8];
const cmd = (command: string): ScriptedToolCall => ({ name: 'run_command', arguments: { command } });
const SCRIPT: ScriptedTurn[] = [
  { content: 'Looking around.', toolCalls: [cmd('ls -la')] },
  { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'work' } }] },
  { toolCalls: [cmd('seq 1 2000 > numbers.txt && wc -l numbers.txt')] },
  { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
  { toolCalls: [cmd('tail -3 numbers.txt')] },
  { content: 'Done.', toolCalls: [{ name: 'submit', arguments: {} }] },
];

/** The RSS of a process and everything below it, in KiB. */
function treeRss(root: number): number {
  const children = new Map<number, number[]>();
  let total = 0;
  const rss = new Map<number, number>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const status = readFileSync(`/proc/${e}/status`, 'utf8');
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
      rss.set(Number(e), Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0));
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      // gone
    }
  }
  const stack = [root];
  while (stack.length) {
    const p = stack.pop()!;
    total += rss.get(p) ?? 0;
    stack.push(...(children.get(p) ?? []));
  }
  return total;
}

async function group(endpoint: string, concurrency: number, tokens: boolean) {
  const ws = mkdtempSync(join(tmpdir(), 'lar-rollouts-bench-'));
  writeFileSync(join(ws, 'README'), 'a task\n');
  const out = join(ws, 'group');
  const args = [
    ...['run', '--task', 'count to 2000', '--endpoint', endpoint, '--workspace', ws, '--out', out],
    ...['--workflow', 'builtin:terminal-task', '--rollouts', String(ROLLOUTS), '--concurrency', String(concurrency)],
    ...(tokens ? ['--record-tokens'] : []),
  ];
  const t0 = performance.now();
  const child = spawn(process.execPath, [resolve(__dirname, '../../dist/lar.js'), ...args], {
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, treeRss(child.pid!))), 100);
  const code = await new Promise<number | null>((res) => child.on('close', res));
  clearInterval(timer);
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`lar run exited ${code}:\n${err.slice(-2000)}`);
  const files = readdirSync(out).filter((f) => f.endsWith('.lar.jsonl'));
  const bytes = files.reduce((n, f) => n + statSync(join(out, f)).size, 0);
  const tokenBytes = files.reduce(
    (n, f) =>
      n +
      readFileSync(join(out, f), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{"type":"tokens"'))
        .reduce((m, l) => m + l.length + 1, 0),
    0,
  );
  rmSync(ws, { recursive: true, force: true });
  return { wall, peakMiB: peak / 1024, bytes, tokenBytes };
}

async function main(): Promise<void> {
  const load = loadNote();
  const server = new ScriptedModelServer({
    flavor: 'vllm',
    script: [],
    answerDelayMs: 150,
    respond: (body) =>
      SCRIPT[Math.min((body.messages ?? []).filter((m) => m.role === 'assistant').length, SCRIPT.length - 1)]!,
  });
  const endpoint = await server.start();
  const rows: string[] = [];
  let cost = '';
  try {
    await group(endpoint, 2, false); // warm the file cache and the server
    const first = await group(endpoint, 1, false);
    for (const c of WIDTHS) {
      const r = c === 1 ? first : await group(endpoint, c, false);
      rows.push(
        `| ${c} | ${r.wall.toFixed(1)} | ${((ROLLOUTS / r.wall) * 60).toFixed(1)} | ${(first.wall / r.wall).toFixed(2)}× | ${r.peakMiB.toFixed(0)} | ${(r.peakMiB / c).toFixed(0)} |`,
      );
    }
    const plain = await group(endpoint, 1, false);
    const recorded = await group(endpoint, 1, true);
    const turns = ROLLOUTS * SCRIPT.length;
    cost = [
      `| rollouts of 6 turns, one at a time | without ids | with --record-tokens | difference |`,
      '|---|---:|---:|---:|',
      `| wall time, s | ${plain.wall.toFixed(2)} | ${recorded.wall.toFixed(2)} | ${(((recorded.wall - plain.wall) / turns) * 1000).toFixed(1)} ms per turn (${((recorded.wall / plain.wall - 1) * 100).toFixed(1)} %), ${(((recorded.wall - plain.wall) * 1000) / (recorded.tokenBytes / 2 ** 20)).toFixed(0)} ms per MB of tokens lines |`,
      `| trajectory bytes (the group) | ${plain.bytes} | ${recorded.bytes} | ${(recorded.tokenBytes / turns / 1024).toFixed(1)} KiB of tokens lines per turn; ${((recorded.tokenBytes / recorded.bytes) * 100).toFixed(0)} % of the file |`,
      `| peak memory of the process tree, MiB | ${plain.peakMiB.toFixed(0)} | ${recorded.peakMiB.toFixed(0)} | ${(recorded.peakMiB - plain.peakMiB).toFixed(0)} MiB |`,
    ].join('\n');
  } finally {
    await server.stop();
  }
  const section = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${load}. ${ROLLOUTS} rollouts of 6 turns each (3 commands in the bubblewrap sandbox), every answer 150 ms late; the scripted vLLM server in this process.`,
    '',
    '| concurrency | wall s | rollouts per minute | speed-up over 1 | peak memory of lar and its sandboxes, MiB | per concurrent rollout, MiB |',
    '|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    cost,
  ].join('\n');
  console.log(section);
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'rollouts', section);
  console.log('figures written to docs/performance.md');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
