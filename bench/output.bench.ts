/**
 * `npm run bench`: a command printing 200 MB through TerminalSession — wall
 * time, and memory sampled during the capture, as peak minus the baseline
 * taken just before the command. Each case runs in a fresh Node process so its
 * memory is its own. A bare node-pty reader (counting bytes, nothing else)
 * running the same command shows what the pseudo-terminal itself costs.
 * Figures go to docs/performance.md between the BENCH:output markers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_CAP } from '../core/shell/output';
import { loadNodePty } from '../core/shell/process';
import { TerminalSession } from '../core/shell/session';
import { machineLine, writeSection } from './report';
import { loadNote } from './stats';

const LINE = 'compiling module 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ done';

interface Case {
  name: string;
  command: string;
  reader: 'session' | 'bare-pty';
}

const CASES: Case[] = [
  { name: '20 MB in 88-byte lines', command: `yes '${LINE}' | head -c 20000000`, reader: 'session' },
  { name: '200 MB in 88-byte lines', command: `yes '${LINE}' | head -c 200000000`, reader: 'session' },
  { name: '200 MB in one line', command: `head -c 200000000 /dev/zero | tr '\\0' x`, reader: 'session' },
  { name: '200 MB in 88-byte lines', command: `yes '${LINE}' | head -c 200000000`, reader: 'bare-pty' },
  { name: '200 MB in one line', command: `head -c 200000000 /dev/zero | tr '\\0' x`, reader: 'bare-pty' },
];

interface Figures {
  wallMs: number;
  /** Bytes read from the pty (the line discipline turns each \n into \r\n). */
  ptyBytes: number;
  savedBytes?: number;
  excerptBytes?: number;
  truncated?: boolean;
  completion?: string;
  rssPeakMb: number;
  heapPeakMb: number;
  buffersPeakMb: number;
  maxRssMb: number;
  baselineRssMb: number;
}

const MB = 2 ** 20;
const REPEAT = 3;

/** Samples memory until stopped; peaks are relative to the first sample. */
function memorySampler(): { stop(): Pick<Figures, 'rssPeakMb' | 'heapPeakMb' | 'buffersPeakMb' | 'baselineRssMb'> } {
  const base = process.memoryUsage();
  const peak = { rss: base.rss, heap: base.heapUsed, buffers: base.arrayBuffers };
  const sample = (): void => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heap = Math.max(peak.heap, m.heapUsed);
    peak.buffers = Math.max(peak.buffers, m.arrayBuffers);
  };
  const timer = setInterval(sample, 10);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return {
        rssPeakMb: (peak.rss - base.rss) / MB,
        heapPeakMb: (peak.heap - base.heapUsed) / MB,
        buffersPeakMb: (peak.buffers - base.arrayBuffers) / MB,
        baselineRssMb: base.rss / MB,
      };
    },
  };
}

async function throughSession(command: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'lar-output-bench-'));
  const terminal = new TerminalSession({
    cwd: dir,
    env: { ...process.env, SHELL: '/bin/bash' },
    shell: '/bin/bash',
    outputDir: dir,
  });
  try {
    await terminal.start();
    global.gc?.();
    const sampler = memorySampler();
    const t0 = performance.now();
    const r = await terminal.run(command, { timeoutMs: 600_000 });
    const wallMs = performance.now() - t0;
    const mem = sampler.stop();
    return {
      wallMs,
      ptyBytes: r.outputBytes,
      savedBytes: statSync(r.outputPath).size,
      excerptBytes: Buffer.byteLength(r.output),
      truncated: r.truncated,
      completion: r.completion,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      ...mem,
    };
  } finally {
    terminal.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

function throughBarePty(command: string): Promise<Figures> {
  const np = loadNodePty();
  if (!('pty' in np)) throw new Error(`node-pty cannot be loaded: ${np.error}`);
  const pty = np.pty;
  global.gc?.();
  const sampler = memorySampler();
  const t0 = performance.now();
  const p = pty.spawn('/bin/bash', ['-c', command], {
    name: 'xterm-256color',
    cols: 120,
    rows: 30,
    cwd: tmpdir(),
    env: process.env,
    encoding: null,
  });
  let bytes = 0;
  p.onData((d: string | Buffer) => (bytes += d.length));
  return new Promise((done, fail) => {
    const guard = setTimeout(() => {
      p.kill('SIGKILL');
      fail(new Error('the bare pty run took over 10 minutes'));
    }, 600_000);
    p.onExit(() => {
      clearTimeout(guard);
      const wallMs = performance.now() - t0;
      // The last reads can follow the exit; they are counted but not timed, which favours this baseline.
      setTimeout(
        () => done({ wallMs, ptyBytes: bytes, maxRssMb: process.resourceUsage().maxRSS / 1024, ...sampler.stop() }),
        500,
      );
    });
  });
}

function table(rows: { c: Case; f: Figures }[]): string {
  const mb = (x: number) => `${x.toFixed(1)} MB`;
  const lines = rows.map(({ c, f }) =>
    [
      c.name,
      c.reader === 'session' ? 'TerminalSession.run' : 'bare node-pty, bytes counted',
      `${(f.wallMs / 1000).toFixed(2)} s`,
      `${(f.ptyBytes / MB / (f.wallMs / 1000)).toFixed(0)} MB/s`,
      f.savedBytes === undefined
        ? '—'
        : `${f.savedBytes.toLocaleString('en-US')} of ${f.ptyBytes.toLocaleString('en-US')}`,
      f.excerptBytes === undefined ? '—' : `${f.excerptBytes.toLocaleString('en-US')} B`,
      `${mb(f.rssPeakMb)} / ${mb(f.heapPeakMb)} / ${mb(f.buffersPeakMb)}`,
      mb(f.maxRssMb),
    ].join(' | '),
  );
  return [
    '| output | read by | wall time | pty throughput | bytes saved to the output file, of read | model excerpt | peak − baseline: RSS / JS heap / Buffers | process max RSS |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...lines.map((l) => `| ${l} |`),
  ].join('\n');
}

async function main(): Promise<void> {
  const one = process.argv.indexOf('--case');
  if (one >= 0) {
    const c = CASES[Number(process.argv[one + 1])]!;
    const f = c.reader === 'session' ? await throughSession(c.command) : await throughBarePty(c.command);
    process.stdout.write(JSON.stringify(f));
    return;
  }
  const load = loadNote();
  const rows: { c: Case; f: Figures }[] = [];
  CASES.forEach((c, i) => {
    // The machine is shared: each case runs REPEAT times, the median wall time and the largest memory growth reported.
    const runs = Array.from(
      { length: REPEAT },
      () =>
        JSON.parse(
          execFileSync(process.execPath, ['--expose-gc', __filename, '--case', String(i)], {
            encoding: 'utf8',
            maxBuffer: 1 << 20,
          }),
        ) as Figures,
    );
    const median = [...runs].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(REPEAT / 2)]!;
    const worst = (k: 'rssPeakMb' | 'heapPeakMb' | 'buffersPeakMb' | 'maxRssMb') => Math.max(...runs.map((r) => r[k]));
    const f: Figures = {
      ...median,
      rssPeakMb: worst('rssPeakMb'),
      heapPeakMb: worst('heapPeakMb'),
      buffersPeakMb: worst('buffersPeakMb'),
      maxRssMb: worst('maxRssMb'),
    };
    if (c.reader === 'session' && runs.some((r) => r.savedBytes !== r.ptyBytes))
      f.savedBytes = Math.min(...runs.map((r) => r.savedBytes ?? 0));
    rows.push({ c, f });
    console.log(
      `${c.name}, ${c.reader}: ${runs.map((r) => (r.wallMs / 1000).toFixed(2)).join(' / ')} s, RSS +${f.rssPeakMb.toFixed(1)} MB, heap +${f.heapPeakMb.toFixed(1)} MB, saved ${f.savedBytes ?? '—'} of ${f.ptyBytes}`,
    );
  });
  const sessions = rows.filter((r) => r.c.reader === 'session');
  const complete = sessions.every((r) => r.f.savedBytes === r.f.ptyBytes && r.f.completion === 'marker');
  const maxExcerpt = DEFAULT_CAP.maxBytes + 200; // the cap plus the omission marker
  const capped = sessions.every((r) => r.f.truncated && r.f.excerptBytes! <= maxExcerpt);
  const bounded = Math.max(...sessions.map((r) => r.f.rssPeakMb)) < 64;
  const section = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()} (${load}); /bin/bash. Each case ran ${REPEAT} times, each time in a fresh Node process: median wall time, largest memory growth (sampled every 10 ms from just before the command started to its result).`,
    '',
    table(rows),
    '',
    `Target: memory bounded whatever the output size, the full output saved and the model's text capped — ${bounded && complete && capped ? 'met' : 'not met'}: the output file holds every byte read ${complete ? 'in every case' : 'NOT in every case'}, the excerpt is ≤ ${DEFAULT_CAP.maxBytes / 1024} KiB plus the omission marker ${capped ? 'in every case' : 'NOT in every case'}, and the largest RSS growth is ${Math.max(...sessions.map((r) => r.f.rssPeakMb)).toFixed(1)} MB.`,
  ].join('\n');
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'output', section);
  console.log('figures written to docs/performance.md');
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
