/**
 * `npm run bench` (second part): the language server as a client sees it, over
 * a real stdio connection to dist/server.js. Figures go to docs/performance.md
 * between the BENCH:lsp markers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LspClient } from '../test/support/lsp-client';
import { generateTrajectory } from './generate';
import { machineLine, writeSection } from './report';

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lar-lsp-bench-'));
  // The documents written here run to megabytes; none may stay in the temp folder, whatever happens.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const text10k = generateTrajectory(10_000);
  const lines10k = text10k.trimEnd().split('\n');

  // 1. Full verification: didOpen of a 10k-step document → its diagnostics.
  const client = await LspClient.start();
  const open: number[] = [];
  for (let i = 0; i < 12; i++) {
    const uri = pathToFileURL(join(dir, `open-${i}.lar.jsonl`)).toString();
    const t0 = performance.now();
    const rewards = client.nextRewards();
    await client.next(uri, () =>
      client.connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'lar-trajectory', version: 1, text: text10k },
      }),
    );
    open.push(performance.now() - t0);
    await rewards; // let the rewards notification go out before the next document
    await client.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }
  open.splice(0, 2); // warm-up
  open.sort((a, b) => a - b);

  // 2. Live append: a run of 10k steps on disk, then one lar/appendStep at a time → diagnostics.
  const file = join(dir, 'live.lar.jsonl');
  writeFileSync(file, text10k);
  const uri = pathToFileURL(file).toString();
  const extra = generateTrajectory(1_000).trimEnd().split('\n').slice(1, 601);
  // The server has not seen this run: the first append makes it catch up from the file.
  await client.next(uri, () =>
    client.connection.sendNotification('lar/appendStep', { uri, text: lines10k.at(-1)!, line: lines10k.length + 5 }),
  );
  const appends: number[] = [];
  const rewards: number[] = [];
  let line = lines10k.length;
  for (const text of extra) {
    line++;
    const t0 = performance.now();
    const reward = client.nextRewards().then(() => rewards.push(performance.now() - t0));
    await client.next(uri, () => client.connection.sendNotification('lar/appendStep', { uri, text, line }));
    appends.push(performance.now() - t0);
    await reward;
  }
  const diagnosticsCount = (await client.nthDiagnostics(uri, client.published(uri))).diagnostics.length;
  for (const list of [appends, rewards]) {
    list.splice(0, 100);
    list.sort((a, b) => a - b);
  }
  await client.stop();

  // 3. Memory: a fresh server holding one 100k-step document.
  const big = await LspClient.start();
  const before = rssMb(big.child.pid!, 'VmRSS');
  const t0 = performance.now();
  await big.open(pathToFileURL(join(dir, 'big.lar.jsonl')).toString(), generateTrajectory(100_000));
  const open100k = performance.now() - t0;
  const after = rssMb(big.child.pid!, 'VmRSS');
  const peak = rssMb(big.child.pid!, 'VmHWM');
  await big.stop();

  const f = (x: number) => x.toFixed(1);
  console.log(`didOpen 10k → diagnostics: median ${f(pct(open, 50))} ms, p95 ${f(pct(open, 95))} ms`);
  console.log(
    `live append on 10k → ${diagnosticsCount} diagnostics: p50 ${f(pct(appends, 50))} ms, p95 ${f(pct(appends, 95))} ms; → lar/rewards p50 ${f(pct(rewards, 50))} ms, p95 ${f(pct(rewards, 95))} ms`,
  );
  console.log(
    `100k steps: didOpen → diagnostics ${f(open100k)} ms, RSS ${f(before)} → ${f(after)} MB (peak ${f(peak)} MB)`,
  );
  writeSection(
    resolve(__dirname, '../../docs/performance.md'),
    'lsp',
    [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}, server over stdio (dist/server.js), round trips as a client sees them.`,
      '',
      '| measure | figure | target |',
      '|---|---:|---:|',
      `| live append (lar/appendStep) on a 10k-step run → all ${diagnosticsCount} diagnostics of the run received, p50 / p95 | ${f(pct(appends, 50))} / ${f(pct(appends, 95))} ms | p95 ≤ 5 ms |`,
      `| live append on the same run → its lar/rewards (what the gutter draws) received, p50 / p95 | ${f(pct(rewards, 50))} / ${f(pct(rewards, 95))} ms | |`,
      `| didOpen of a 10k-step trajectory → diagnostics, median / p95 | ${f(pct(open, 50))} / ${f(pct(open, 95))} ms | ≤ 150 ms |`,
      `| didOpen of a 100k-step trajectory → diagnostics | ${f(open100k)} ms | |`,
      `| server memory holding a 100k-step trajectory (RSS before → after, peak) | ${f(before)} → ${f(after)} MB (peak ${f(peak)} MB) | |`,
    ].join('\n'),
  );
  console.log('figures written to docs/performance.md');
}

void main();
