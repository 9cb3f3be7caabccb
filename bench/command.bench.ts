/**
 * `npm run bench`: the round trip of a short command through our TerminalSession
 * (node-pty, end seen by a marker) against the tmux send-keys + wait-for way
 * Terminal-Bench's harness runs commands (bench/tmux-harness.ts). Same shell
 * binary, same commands, interleaved one by one so both see the same machine
 * noise. Figures go to docs/performance.md between the BENCH:commands markers.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TerminalSession } from '../core/tools/terminal';
import { machineLine, writeSection } from './report';
import { loadNote, summarize, type Summary } from './stats';
import { TmuxHarness } from './tmux-harness';

const RUNS = 200;
const WARMUP = 10;
const SHELL = '/bin/bash';
/**
 * A shell builtin (no process started), an external program (one fork + exec
 * per command in both), and the builtin in a subfolder (`run_command`'s `cwd`:
 * ours runs it in a subshell after a checked `cd`; tmux gets the same subshell).
 */
const COMMANDS: { label: string; command: string; cwd?: string; tmux: string }[] = [
  { label: '`echo hi`', command: 'echo hi', tmux: 'echo hi' },
  { label: '`/bin/echo hi`', command: '/bin/echo hi', tmux: '/bin/echo hi' },
  { label: '`echo hi` with `cwd` `sub`', command: 'echo hi', cwd: 'sub', tmux: '( cd sub && echo hi )' },
];

interface Pair {
  command: string;
  ours: Summary;
  tmux: Summary;
}

async function main(): Promise<void> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'lar-command-bench-')));
  const env = { ...process.env, SHELL };
  const terminal = new TerminalSession({ cwd: dir, env, shell: SHELL, outputDir: join(dir, 'output') });
  let tmux: TmuxHarness | undefined;
  // A crash or Ctrl-C must not leave a tmux server or a shell behind.
  const cleanUp = (): void => {
    tmux?.close();
    terminal.dispose();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', cleanUp);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  const load = loadNote();
  try {
    await terminal.start();
    tmux = await TmuxHarness.start({ shell: SHELL, cwd: dir, logPath: join(dir, 'tmux-pane.log'), env });
    const h = tmux;
    const pairs: Pair[] = [];
    mkdirSync(join(dir, 'sub'));
    for (const { label, command, cwd, tmux: tmuxCommand } of COMMANDS) {
      const ours: number[] = [];
      const theirs: number[] = [];
      const options = cwd ? { cwd: join(dir, cwd) } : {};
      const timeOurs = async (): Promise<void> => {
        const t0 = performance.now();
        const r = await terminal.run(command, options);
        ours.push(performance.now() - t0);
        if (r.output !== 'hi\n' || r.exitCode !== 0) throw new Error(`TerminalSession: ${JSON.stringify(r.output)} exit ${r.exitCode}`);
      };
      const timeTmux = async (): Promise<void> => {
        const t0 = performance.now();
        const text = await h.run(tmuxCommand);
        theirs.push(performance.now() - t0);
        if (!/^hi$/m.test(text)) throw new Error(`tmux: no "hi" in ${JSON.stringify(text.slice(-200))}`);
      };
      for (let i = 0; i < WARMUP + RUNS; i++) {
        // Alternate who goes first so neither always runs right after the other's work.
        if (i % 2) {
          await timeOurs();
          await timeTmux();
        } else {
          await timeTmux();
          await timeOurs();
        }
      }
      pairs.push({ command: label, ours: summarize(ours.slice(WARMUP)), tmux: summarize(theirs.slice(WARMUP)) });
    }
    report(pairs, load);
  } finally {
    cleanUp();
    process.removeListener('exit', cleanUp);
  }
}

function report(pairs: Pair[], load: string): void {
  const f = (x: number) => x.toFixed(2);
  const rows = pairs.map(
    (p) =>
      `| ${p.command} | ${f(p.ours.p50)} / ${f(p.ours.p95)} | ${f(p.tmux.p50)} / ${f(p.tmux.p95)} | ${(p.tmux.p50 / p.ours.p50).toFixed(1)}× | ${(p.tmux.p95 / p.ours.p95).toFixed(1)}× |`,
  );
  for (const p of pairs) console.log(`${p.command}: ours p50 ${f(p.ours.p50)} ms p95 ${f(p.ours.p95)} ms; tmux p50 ${f(p.tmux.p50)} ms p95 ${f(p.tmux.p95)} ms; ${(p.tmux.p50 / p.ours.p50).toFixed(1)}× at the median`);
  const worst = Math.min(...pairs.map((p) => p.tmux.p50 / p.ours.p50));
  const section = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()} (${load}); tmux ${tmuxVersion()}, ${SHELL}; ${RUNS} runs of each command per side after ${WARMUP} warm-up runs, the two sides interleaved.`,
    '',
    '| command | TerminalSession.run, p50 / p95 ms | tmux send-keys + wait-for + capture-pane, p50 / p95 ms | ratio at p50 | ratio at p95 |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
    `Target: ours ≥ 5× faster than the tmux round trip — ${worst >= 5 ? 'met' : 'not met'} (slowest ratio at the median ${worst.toFixed(1)}×).`,
  ].join('\n');
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'commands', section);
  console.log('figures written to docs/performance.md');
}

function tmuxVersion(): string {
  try {
    return execFileSync('/usr/bin/tmux', ['-V'], { encoding: 'utf8' }).trim().replace(/^tmux /, '');
  } catch {
    return 'unknown';
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
