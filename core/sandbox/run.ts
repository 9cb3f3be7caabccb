/**
 * A run's sandbox from start to outcome: the plan, the snapshot of the
 * protected paths taken before the first step, what the terminal is started
 * with, and the outcome check, which runs only after every process of the run
 * has ended, with the protected paths put back, in a fresh sandbox of its own
 * (clean home and environment).
 */
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OutcomeEvent } from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import { runOutcomeCheck } from '../agent/outcome-check';
import { planSandbox, type PlanRequest, type SandboxPlan, type SandboxSetting, type SandboxSummary } from './plan';
import { disposeSnapshot, restoreSnapshot, takeSnapshot, type ProtectedSnapshot, type SnapshotLimits } from './snapshot';
import type { BwrapProbe } from './bwrap';

export interface RunSandboxOptions {
  workspace: string;
  workflow: Workflow;
  setting: SandboxSetting;
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The shell the terminal will run (inside the sandbox when confined). */
  shell: string;
  /** Where the terminal keeps its command files (the sandbox sees it read-only: it is under .lar). */
  outputDir: string;
  snapshotLimits?: SnapshotLimits;
  /** Host folders the sandbox must not see at all (in rollouts: the original workspace and the group). */
  hidden?: string[];
  probe?: () => BwrapProbe;
  /** The home folder the sandbox hides and replaces (default: the user's). */
  home?: string;
}

export interface TerminalSetup {
  env: Record<string, string | undefined>;
  launcher?: { file: string; args: string[] };
  shellCopyDir?: string;
  scriptDir?: string;
}

/**
 * Where the run's private scratch files go (the shell copy, the command
 * files): a tmpfs when there is one (a file there costs microseconds, on some
 * disks half a millisecond), else the temporary folder. The sandbox sees the
 * run's folder read-only; its own /tmp and /dev/shm are empty.
 */
function runtimeRoot(): string {
  for (const d of ['/dev/shm']) {
    try {
      accessSync(d, constants.W_OK);
      return d;
    } catch {
      // not here, or not writable
    }
  }
  return tmpdir();
}

/** What both of a run's sandboxes (the terminal's, the outcome check's) share from the options. */
function common(o: RunSandboxOptions): Partial<PlanRequest> {
  return { ...(o.hidden ? { hiddenDirs: o.hidden } : {}), ...(o.probe ? { probe: o.probe } : {}), ...(o.home ? { home: o.home } : {}) };
}

export class RunSandbox {
  private constructor(
    readonly plan: SandboxPlan,
    private readonly opts: RunSandboxOptions,
    private readonly snapshot: ProtectedSnapshot | undefined,
    /** Where the terminal's execute-only shell copy goes: outside the workspace (where `git add -A` would trip on an unreadable file), mounted read-only. */
    private readonly shellDir: string | undefined,
  ) {}

  /** Plans the sandbox and snapshots the protected paths (before the first step: call it before the run starts). */
  static async open(opts: RunSandboxOptions): Promise<RunSandbox> {
    // The command files must be readable inside wherever they are (under .lar they already are).
    mkdirSync(opts.outputDir, { recursive: true });
    const shellDir = mkdtempSync(join(runtimeRoot(), 'lar-run-'));
    const plan = planSandbox({ workspace: opts.workspace, section: opts.workflow.sandbox, setting: opts.setting, hostEnv: opts.hostEnv, shell: opts.shell, alsoReadable: [opts.outputDir, shellDir], ...common(opts) });
    const protectedPaths = opts.workflow.sandbox.protected;
    let snapshot: ProtectedSnapshot | undefined;
    try {
      snapshot = protectedPaths.length ? await takeSnapshot(opts.workspace, protectedPaths, opts.snapshotLimits) : undefined;
    } catch (e) {
      rmSync(shellDir, { recursive: true, force: true });
      throw e;
    }
    return new RunSandbox(plan, opts, snapshot, shellDir);
  }

  get summary(): SandboxSummary {
    return this.plan.summary;
  }

  /** Set when commands must not run at all (the sandbox is required and there is none). */
  get refusal(): string | undefined {
    if (this.plan.confined || !this.plan.refuseCommands) return undefined;
    return `the sandbox is required and commands cannot be confined here (${this.plan.summary.reason})${this.plan.fix ? `; ${this.plan.fix}` : ''}`;
  }

  /** What the terminal starts with: inside the sandbox a built environment; outside the host's, without the API key. */
  terminal(): TerminalSetup {
    if (this.plan.confined) return { env: this.plan.env, launcher: this.plan.launcher, ...(this.shellDir ? { shellCopyDir: this.shellDir, scriptDir: this.shellDir } : {}) };
    return { env: { ...this.opts.hostEnv, LAR_API_KEY: undefined } };
  }

  /**
   * The outcome check. `endRun` must end every process of the run (the
   * terminal's sandbox) before it resolves; then the protected paths are put
   * back and the check runs in a sandbox of its own when the run had one.
   */
  async outcome(endRun: () => Promise<void> | void, signal?: AbortSignal): Promise<OutcomeEvent> {
    const check = this.opts.workflow.outcome;
    await endRun();
    let restored: string[] = [];
    if (this.snapshot) {
      try {
        restored = await restoreSnapshot(this.opts.workspace, this.snapshot, this.opts.snapshotLimits);
      } catch (e) {
        return {
          type: 'outcome',
          command: check.command,
          exitCode: null,
          completion: 'unobserved',
          output: `the outcome check did not run: the protected paths could not be restored (${(e as Error).message})`,
          sandboxed: this.plan.confined,
          at: new Date().toISOString(),
        };
      }
    }
    let event: OutcomeEvent;
    if (this.plan.confined) {
      // A fresh plan: what exists now (restored paths included) is mounted read-only.
      const fresh = planSandbox({ workspace: this.opts.workspace, section: this.opts.workflow.sandbox, setting: 'required', hostEnv: this.opts.hostEnv, shell: '/bin/sh', ...common(this.opts) });
      if (!fresh.confined) {
        event = { type: 'outcome', command: check.command, exitCode: null, completion: 'unobserved', output: `the outcome check did not run: its sandbox could not start (${fresh.summary.reason})`, at: new Date().toISOString() };
      } else {
        const env = { ...fresh.env, CI: 'true' };
        event = await runOutcomeCheck(check, this.opts.workspace, signal, env, { launcher: fresh.launcher, keepEnv: true });
      }
    } else {
      // Unconfined, still a clean home: the user's ~/.npmrc (a script-shell, a registry) must not decide it.
      const home = mkdtempSync(join(tmpdir(), 'lar-check-home-'));
      try {
        event = await runOutcomeCheck(check, this.opts.workspace, signal, { ...this.opts.hostEnv, HOME: home });
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    }
    return { ...event, sandboxed: this.plan.confined, ...(restored.length ? { restored } : {}) };
  }

  async dispose(): Promise<void> {
    if (this.shellDir) rmSync(this.shellDir, { recursive: true, force: true });
    if (this.snapshot) await disposeSnapshot(this.snapshot);
  }
}
