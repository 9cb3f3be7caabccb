/**
 * `npm run bench` (second part): the language server as clients see it, over a real stdio connection to
 * dist/server.js: a client that pulls diagnostics as VS Code's does (test/support/pull-client.ts), and one
 * that cannot pull and gets them pushed. Figures go to docs/performance.md between the BENCH:lsp markers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LspClient } from '../test/support/lsp-client';
import { CLIENTS, PullClient } from '../test/support/pull-client';
import { generateTrajectory } from './generate';
import { machineLine, writeSection } from './report';
import { loadNote, summarize, type Summary } from './stats';

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** What one client saw: each figure a list of round trips in ms (warm-up dropped). */
interface Figures {
  open: Summary;
  liveDiagnostics: Summary;
  liveRewards: Summary;
  editorAppend: Summary;
  diagnostics: number;
}

const APPENDS = 400;
const WARM_UP = 50;
const tail = (list: number[]) => summarize(list.slice(WARM_UP));
const appendAt = (line: number, text: string) => [
  { range: { start: { line, character: 0 }, end: { line, character: 0 } }, text: text + '\n' },
];

/** A client that cannot pull: every diagnostic of the document in each publishDiagnostics. */
async function pushFigures(dir: string, lines: string[], extra: string[]): Promise<Figures> {
  const text = lines.join('\n') + '\n';
  const client = await LspClient.start();
  const open: number[] = [];
  for (let i = 0; i < 12; i++) {
    const uri = pathToFileURL(join(dir, `push-open-${i}.lar.jsonl`)).toString();
    const t0 = performance.now();
    const rewards = client.nextRewards();
    await client.next(uri, () =>
      client.connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'lar-trajectory', version: 1, text },
      }),
    );
    open.push(performance.now() - t0);
    await rewards; // let the rewards notification go out before the next document
    await client.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }
  const uri = liveFile(dir, 'push-live', text);
  await client.next(uri, () =>
    client.connection.sendNotification('lar/appendStep', { uri, text: lines.at(-1)!, line: lines.length + 5 }),
  );
  const diags: number[] = [];
  const rewards: number[] = [];
  let line = lines.length;
  for (const t of extra) {
    line++;
    const t0 = performance.now();
    const reward = client.nextRewards().then(() => rewards.push(performance.now() - t0));
    await client.next(uri, () => client.connection.sendNotification('lar/appendStep', { uri, text: t, line }));
    diags.push(performance.now() - t0);
    await reward;
  }
  const diagnostics = (await client.nthDiagnostics(uri, client.published(uri))).diagnostics.length;
  const doc = pathToFileURL(join(dir, 'push-editor.lar.jsonl')).toString();
  await client.open(doc, text);
  const editor: number[] = [];
  for (let i = 0; i < extra.length; i++) {
    const t0 = performance.now();
    await client.next(doc, () =>
      client.connection.sendNotification('textDocument/didChange', {
        textDocument: { uri: doc, version: i + 2 },
        contentChanges: appendAt(lines.length + i, extra[i]!),
      }),
    );
    editor.push(performance.now() - t0);
  }
  await client.stop();
  return {
    open: summarize(open.slice(2)),
    liveDiagnostics: tail(diags),
    liveRewards: tail(rewards),
    editorAppend: tail(editor),
    diagnostics,
  };
}

function liveFile(dir: string, name: string, text: string): string {
  const file = join(dir, `${name}.lar.jsonl`);
  writeFileSync(file, text);
  return pathToFileURL(file).toString();
}

/** Resolves when the workspace request's partial result for `uri`'s live part has come. */
function livePart(client: PullClient, uri: string): Promise<void> {
  return new Promise((res) => {
    client.onReport = (id, _n, via, at) => {
      if (at === uri && id === 'lar.live' && via === 'workspace') res();
    };
  });
}

/** Live appends to a run with no editor: lar/appendStep → the live part's partial result, and → lar/rewards. */
async function pullLive(client: PullClient, dir: string, name: string, lines: string[], extra: string[]) {
  const uri = liveFile(dir, name, lines.join('\n') + '\n');
  const caughtUp = livePart(client, uri);
  await client.connection.sendNotification('lar/appendStep', { uri, text: lines.at(-1)!, line: lines.length + 5 });
  await caughtUp;
  const diags: number[] = [];
  const rewards: number[] = [];
  let line = lines.length;
  for (const text of extra) {
    line++;
    const t0 = performance.now();
    const reward = client.nextRewards().then(() => rewards.push(performance.now() - t0));
    const got = livePart(client, uri);
    await client.connection.sendNotification('lar/appendStep', { uri, text, line });
    await got;
    diags.push(performance.now() - t0);
    await reward;
  }
  await client.settle();
  return { uri, diags, rewards };
}

/** A client that pulls as VS Code's does: parts by identifier, a held workspace request for runs without an editor. */
async function pullFigures(dir: string, lines: string[], extra: string[]): Promise<Figures> {
  const text = lines.join('\n') + '\n';
  const client = await PullClient.start(CLIENTS.vscode);
  const open: number[] = [];
  for (let i = 0; i < 12; i++) {
    const uri = pathToFileURL(join(dir, `pull-open-${i}.lar.jsonl`)).toString();
    const t0 = performance.now();
    const rewards = client.nextRewards();
    await client.didOpen(uri, text);
    await client.idle();
    open.push(performance.now() - t0);
    await rewards;
    await client.didClose(uri);
  }
  const live = await pullLive(client, dir, 'pull-live', lines, extra);
  const diagnostics = client.diagnostics(live.uri).length;
  const doc = pathToFileURL(join(dir, 'pull-editor.lar.jsonl')).toString();
  await client.didOpen(doc, text);
  await client.settle();
  const editor: number[] = [];
  for (let i = 0; i < extra.length; i++) {
    const t0 = performance.now();
    await client.didChange(doc, i + 2, appendAt(lines.length + i, extra[i]!));
    await client.idle();
    editor.push(performance.now() - t0);
  }
  await client.stop();
  return {
    open: summarize(open.slice(2)),
    liveDiagnostics: tail(live.diags),
    liveRewards: tail(live.rewards),
    editorAppend: tail(editor),
    diagnostics,
  };
}

/** 100k steps with the pulling client: didOpen, live appends, and the server's memory holding the document. */
async function bigFigures(dir: string, lines: string[], extra: string[]) {
  const client = await PullClient.start(CLIENTS.vscode);
  const before = rssMb(client.child.pid!, 'VmRSS');
  const t0 = performance.now();
  await client.didOpen(pathToFileURL(join(dir, 'big.lar.jsonl')).toString(), lines.join('\n') + '\n');
  await client.idle();
  const open = performance.now() - t0;
  const after = rssMb(client.child.pid!, 'VmRSS');
  const live = await pullLive(client, dir, 'big-live', lines, extra);
  const peak = rssMb(client.child.pid!, 'VmHWM');
  await client.stop();
  return { open, before, after, peak, liveDiagnostics: tail(live.diags), liveRewards: tail(live.rewards) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lar-lsp-bench-'));
  // The documents written here run to megabytes; none may stay in the temp folder, whatever happens.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const load = loadNote();
  const lines10k = generateTrajectory(10_000).trimEnd().split('\n');
  const lines100k = generateTrajectory(100_000).trimEnd().split('\n');
  const extra = generateTrajectory(1_000)
    .trimEnd()
    .split('\n')
    .slice(1, APPENDS + WARM_UP + 1);
  // The appended steps come from another run: drop its end so the long runs stay open.
  const push = await pushFigures(dir, lines10k.slice(0, -1), extra);
  const pull = await pullFigures(dir, lines10k.slice(0, -1), extra);
  const big = await bigFigures(dir, lines100k.slice(0, -1), extra);
  report(push, pull, big, load);
}

function report(push: Figures, pull: Figures, big: Awaited<ReturnType<typeof bigFigures>>, load: string): void {
  const f = (x: number) => x.toFixed(1);
  const pp = (s: Summary) => `${f(s.p50)} / ${f(s.p95)} ms`;
  const ratio = (a: Summary, b: Summary) => `${(a.p95 / b.p95).toFixed(1)}×`;
  const rows = [
    `| live append (lar/appendStep) to a 10k-step run with no editor → its diagnostics at the client, p50 / p95 | ${pp(push.liveDiagnostics)} | ${pp(pull.liveDiagnostics)} | ${ratio(push.liveDiagnostics, pull.liveDiagnostics)} | p95 ≤ 5 ms |`,
    `| the same append → its lar/rewards (what the gutter draws), p50 / p95 | ${pp(push.liveRewards)} | ${pp(pull.liveRewards)} | ${ratio(push.liveRewards, pull.liveRewards)} | p95 ≤ 5 ms |`,
    `| one step appended to an open 10k-step trajectory (the editor's change) → its diagnostics, p50 / p95 | ${pp(push.editorAppend)} | ${pp(pull.editorAppend)} | ${ratio(push.editorAppend, pull.editorAppend)} | |`,
    `| didOpen of a 10k-step trajectory → its diagnostics, median / p95 | ${pp(push.open)} | ${pp(pull.open)} | ${ratio(push.open, pull.open)} | ≤ 100 ms |`,
    `| live append to a 100k-step run → its diagnostics, p50 / p95 | | ${pp(big.liveDiagnostics)} | ${(big.liveDiagnostics.p95 / pull.liveDiagnostics.p95).toFixed(1)}× the 10k figure | ≤ 10× the 10k figure |`,
    `| the same append → its lar/rewards, p50 / p95 | | ${pp(big.liveRewards)} | ${(big.liveRewards.p95 / pull.liveRewards.p95).toFixed(1)}× the 10k figure | ≤ 10× the 10k figure |`,
    `| didOpen of a 100k-step trajectory → its diagnostics | | ${f(big.open)} ms | ${(big.open / pull.open.p50).toFixed(1)}× the 10k median | ≤ 10× the 10k figure |`,
    `| server memory holding a 100k-step trajectory (RSS before → after open, peak) | | ${f(big.before)} → ${f(big.after)} MB (peak ${f(big.peak)} MB) | | |`,
  ];
  for (const r of rows) console.log(r);
  writeSection(
    resolve(__dirname, '../../docs/performance.md'),
    'lsp',
    [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()} (${load}), server over stdio (dist/server.js), round trips as a client sees them; ${APPENDS} appends after ${WARM_UP} warm-up ones, the 10k-step run carrying ${pull.diagnostics} diagnostics (push: ${push.diagnostics}).`,
      '',
      '| measure | push (a client without pull) | pull (as VS Code pulls) | push ÷ pull, p95 | target |',
      '|---|---:|---:|---:|---:|',
      ...rows,
    ].join('\n'),
  );
  console.log('figures written to docs/performance.md');
}

void main();
