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
import { TerminalSession } from '../core/shell/session';
import { planSandbox } from '../core/sandbox/plan';
import { SandboxSection } from '../core/schema/workflow';
import { RunSandbox } from '../core/sandbox/run';
import { defaultWorkflow } from '../core/workflow/load';
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
  /** In the sandbox (bubblewrap), as every run's commands are by default. */
  ours: Summary;
  /** The same session without the sandbox. */
  bare: Summary;
  tmux: Summary;
}

/** How long a sandboxed shell takes to start (bwrap + shell + its first marker), p50 / p95. */
async function sandboxStartup(dir: string, box: RunSandbox): Promise<Summary> {
  const times: number[] = [];
  for (let i = 0; i < 5 + STARTS; i++) {
    // A new session each time: bwrap, the namespaces and mounts, the shell's execute-only copy, bash, its first marker.
    const t = new TerminalSession({
      cwd: dir,
      shell: SHELL,
      outputDir: join(dir, '.lar', 'output', 'starts'),
      ...box.terminal(),
    });
    const t0 = performance.now();
    await t.start();
    times.push(performance.now() - t0);
    t.dispose();
  }
  return summarize(times.slice(5));
}

const STARTS = 40;

async function main(): Promise<void> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'lar-command-bench-')));
  const env = { ...process.env, SHELL };
  const plan = planSandbox({
    workspace: dir,
    section: SandboxSection.parse({}),
    setting: 'required',
    hostEnv: process.env,
    shell: SHELL,
  });
  if (!plan.confined)
    throw new Error(`the sandbox cannot start here (npm run setup installs bubblewrap): ${plan.summary.reason}`);
  // As a run has it: the run's sandbox, its shell copy and command files on a tmpfs, the logs under .lar.
  const outputDir = join(dir, '.lar', 'output', 'bench');
  const box = await RunSandbox.open({
    workspace: dir,
    workflow: defaultWorkflow(),
    setting: 'required',
    hostEnv: process.env,
    shell: SHELL,
    outputDir,
  });
  const terminal = new TerminalSession({ cwd: dir, shell: SHELL, outputDir, ...box.terminal() });
  const bare = new TerminalSession({ cwd: dir, env, shell: SHELL, outputDir: join(dir, 'output') });
  let tmux: TmuxHarness | undefined;
  // A crash or Ctrl-C must not leave a tmux server or a shell behind.
  const cleanUp = (): void => {
    tmux?.close();
    terminal.dispose();
    bare.dispose();
    void box.dispose();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', cleanUp);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  const load = loadNote();
  try {
    await terminal.start();
    await bare.start();
    tmux = await TmuxHarness.start({ shell: SHELL, cwd: dir, logPath: join(dir, 'tmux-pane.log'), env });
    const h = tmux;
    const pairs: Pair[] = [];
    mkdirSync(join(dir, 'sub'));
    for (const { label, command, cwd, tmux: tmuxCommand } of COMMANDS) {
      const ours: number[] = [];
      const plain: number[] = [];
      const theirs: number[] = [];
      const options = cwd ? { cwd: join(dir, cwd) } : {};
      const timeOurs = async (): Promise<void> => {
        const t0 = performance.now();
        const r = await terminal.run(command, options);
        ours.push(performance.now() - t0);
        if (r.output !== 'hi\n' || r.exitCode !== 0)
          throw new Error(`TerminalSession: ${JSON.stringify(r.output)} exit ${r.exitCode}`);
      };
      const timeBare = async (): Promise<void> => {
        const t0 = performance.now();
        const r = await bare.run(command, options);
        plain.push(performance.now() - t0);
        if (r.output !== 'hi\n' || r.exitCode !== 0)
          throw new Error(`TerminalSession (no sandbox): ${JSON.stringify(r.output)} exit ${r.exitCode}`);
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
          await timeBare();
        } else {
          await timeTmux();
          await timeBare();
          await timeOurs();
        }
      }
      pairs.push({
        command: label,
        ours: summarize(ours.slice(WARMUP)),
        bare: summarize(plain.slice(WARMUP)),
        tmux: summarize(theirs.slice(WARMUP)),
      });
    }
    report(pairs, await sandboxStartup(dir, box), load);
  } finally {
    cleanUp();
    process.removeListener('exit', cleanUp);
  }
}

function report(pairs: Pair[], startup: Summary, load: string): void {
  const f = (x: number) => x.toFixed(2);
  const rows = pairs.map(
    (p) =>
      `| ${p.command} | ${f(p.ours.p50)} / ${f(p.ours.p95)} | ${f(p.bare.p50)} / ${f(p.bare.p95)} | ${f(p.tmux.p50)} / ${f(p.tmux.p95)} | ${(p.tmux.p50 / p.ours.p50).toFixed(1)}× | ${(p.tmux.p95 / p.ours.p95).toFixed(1)}× | ${(p.ours.p50 / p.bare.p50).toFixed(2)} |`,
  );
  for (const p of pairs)
    console.log(
      `${p.command}: sandboxed p50 ${f(p.ours.p50)} ms p95 ${f(p.ours.p95)} ms; no sandbox p50 ${f(p.bare.p50)} ms; tmux p50 ${f(p.tmux.p50)} ms p95 ${f(p.tmux.p95)} ms; ${(p.tmux.p50 / p.ours.p50).toFixed(1)}× at the median`,
    );
  console.log(`sandboxed shell start-up: p50 ${f(startup.p50)} ms, p95 ${f(startup.p95)} ms`);
  const plainEcho = pairs.filter((p) => !p.command.includes('cwd'));
  const worst = Math.min(...plainEcho.map((p) => p.tmux.p50 / p.ours.p50));
  const section = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()} (${load}); tmux ${tmuxVersion()}, ${SHELL}; ${RUNS} runs of each command per side after ${WARMUP} warm-up runs, the three sides interleaved. Ours runs in the bubblewrap sandbox, as every run's commands do by default; the same session without it is shown for the cost of the sandbox (1.00: none).`,
    '',
    '| command | TerminalSession.run in the sandbox, p50 / p95 ms | without the sandbox, p50 / p95 ms | tmux send-keys + wait-for + capture-pane, p50 / p95 ms | tmux ÷ ours at p50 | at p95 | sandboxed ÷ unsandboxed at p50 |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `The sandboxed shell's start-up (bwrap, the user namespace, mounts, bash and its first marker; once per run): p50 ${f(startup.p50)} ms, p95 ${f(startup.p95)} ms over ${STARTS} starts.`,
    '',
    `Target: ours in the sandbox ≥ 10× faster than the tmux round trip for \`echo\` and \`/bin/echo\` — ${worst >= 10 ? 'met' : 'not met'} (slowest ratio at the median ${worst.toFixed(1)}×).`,
  ].join('\n');
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'commands', section);
  console.log('figures written to docs/performance.md');
}

function tmuxVersion(): string {
  try {
    return execFileSync('/usr/bin/tmux', ['-V'], { encoding: 'utf8' })
      .trim()
      .replace(/^tmux /, '');
  } catch {
    return 'unknown';
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
