/**
 * A run's sandbox from start to outcome: the plan, the snapshot of the
 * protected paths taken before the first step, what the terminal is started
 * with, and the outcome check, which runs only after every process of the run
 * has ended, with the protected paths put back, in a fresh sandbox of its own
 * (clean home and environment).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { OutcomeEvent } from '../schema/trajectory';
import { ALWAYS_READ_ONLY, outcomeCommand, type OutcomeCheck } from '../schema/workflow';
import { runOutcomeCheck } from '../outcome/check';
import { planSandbox, type SandboxPlan, type SandboxSummary } from './plan';
import { findRepositories } from './git-metadata';
import { disposeSnapshot, restoreSnapshot, type ProtectedSnapshot } from './snapshot';
import { limitValues } from './limit-values';
import { SandboxLimits } from './limits';
import { LaterBaseline, type LaterChange } from './later-changes';
import { addedDenied, type Protection } from './protections';
import type { AllowlistProxy, ProxyTally } from './proxy';
import { execAllowed, runtimeRoot } from './scratch';
import { quarantineDir } from '../workspace/lar-layout';
import {
  common,
  findKept,
  keptLinks,
  keptPaths,
  planRun,
  proxyEndpoint,
  realInside,
  refusedCheck,
  snapshotKept,
  startProxy,
  type RunSandboxOptions,
} from './run-start';

export interface TerminalSetup {
  env: Record<string, string | undefined>;
  launcher?: { file: string; args: string[] };
  shellCopyDir?: string;
  scriptDir?: string;
}

export interface EndReport {
  /** Protected paths (and git metadata) the run had changed, put back. */
  restored: string[];
  /** Git repositories the run had created (`.git` folders and files), moved to .lar/quarantine/<time>/. */
  quarantinedRepositories: string[];
  /** Why the protected paths could not be put back. */
  error?: string;
  /** Files the user's tools may execute later (a Makefile, package.json, scripts) that the run changed, with their diffs (dispose only). */
  later?: LaterChange[];
  /** With `sandbox.network: "allowlist"`: every host and port commands asked the proxy for, allowed or refused. */
  network?: ProxyTally[];
}

/** A sandbox for one more process of the run (an MCP server): start it as `launcher.file launcher.args… program args…`. */
export interface ServerSandbox {
  launcher: { file: string; args: string[] };
  env: Record<string, string>;
  dispose(): Promise<void>;
}

/** Most protections listed in the header (the rest are counted). */
const MAX_RECORDED = 300;

export class RunSandbox {
  private constructor(
    readonly plan: SandboxPlan,
    private readonly opts: RunSandboxOptions,
    private readonly snapshot: ProtectedSnapshot | undefined,
    /** Where the terminal's execute-only shell copy goes: outside the workspace (where `git add -A` would trip on an unreadable file), mounted read-only. */
    private readonly shellDir: string | undefined,
    /** The shell's execute-only copy can be run from shellDir (its mount is not noexec). */
    private readonly copyShell: boolean,
    /** The git metadata paths of the workspace (gitMetadata), for the outcome check's sandbox. */
    private readonly gitMeta: readonly string[],
    /** Every workspace path the agent may read but not change (the file tools refuse them). */
    readonly readOnlyPaths: readonly string[],
    /** The git repositories (`.git` folders or files, by device and inode) there were at the start. */
    private readonly repositories: ReadonlySet<string>,
  ) {
    // Made with the sandbox's plan, before anything runs in it; recorded in the header with the plan.
    if (plan.confined) {
      this.limits = SandboxLimits.open(
        limitValues(opts.workflow.sandbox.limits),
        opts.limitMechanisms ? { mechanisms: opts.limitMechanisms } : {},
      );
      plan.summary.limits = this.limits.record;
    }
  }

  /** The bounds on the terminal's sandbox (memory, tasks), when it is confined: the tool executor watches each command with them. */
  readonly limits: SandboxLimits | undefined;

  private finishing: Promise<EndReport> | undefined;

  /** Plans the sandbox and snapshots the protected paths (before the first step: call it before the run starts). */
  static async open(opts: RunSandboxOptions): Promise<RunSandbox> {
    // The command files must be readable inside wherever they are (under .lar they already are).
    mkdirSync(opts.outputDir, { recursive: true });
    const shellDir = mkdtempSync(join(runtimeRoot(), 'lar-run-'));
    const found = findKept(opts);
    const { plan, links } = planRun(opts, found, shellDir);
    const kept = keptPaths(opts, found);
    const snapshot = await snapshotKept(opts, kept, shellDir);
    const proxy = await startProxy(opts, plan, shellDir, snapshot);
    const readOnlyPaths = [...new Set([...ALWAYS_READ_ONLY, '.git/modules', ...kept])];
    const copyShell = plan.confined && execAllowed(shellDir);
    const box = new RunSandbox(
      plan,
      opts,
      snapshot,
      shellDir,
      copyShell,
      found.meta,
      readOnlyPaths,
      new Set(found.repositories.map((r) => r.id)),
    );
    box.protections = [
      ...found.scan.protections,
      ...links.mounted.map((path): Protection => ({ path, why: 'hard_link' })),
    ];
    box.extraReadOnly = [...found.extra, ...links.mounted];
    box.restoreOnly = new Set([...found.scan.restoreOnly, ...keptLinks(opts.workspace, kept)]);
    box.hardLinksBroken = links.broken;
    // What the user's tools may run later but the run may change: compared at its end (EndReport.later).
    box.later = LaterBaseline.take(
      opts.workspace,
      box.protections.map((p) => p.path),
    );
    box.denied = found.scan.denied;
    box.bounded = found.scan.bounded;
    box.proxy = proxy;
    return box;
  }

  /** The allowlist's proxy (proxy.ts), while the run lasts; what it counted is in dispose's report. */
  private proxy: AllowlistProxy | undefined;

  /** Everything the run may not change, with why (recorded in the header). */
  protections: readonly Protection[] = [];
  /** What matched the workflow's path deny patterns at the start. */
  private denied: ReadonlySet<string> = new Set();
  /** What a bound left out of the protections, a sentence each. */
  bounded: readonly string[] = [];
  /** Multiply-linked files made their own copies before the first step (the user allowed it). */
  hardLinksBroken = 0;
  /** Read-only beyond the workflow's paths (deny patterns, what runs later, hard links): for the outcome check's sandbox too, as it runs the agent's code. */
  private extraReadOnly: readonly string[] = [];
  /** Past the bound of read-only mounts: put back at the end even in the sandbox. */
  private restoreOnly: ReadonlySet<string> = new Set();
  /** The files that run later as they were before the first step. */
  private later: LaterBaseline | undefined;

  get summary(): SandboxSummary {
    const shown = this.protections.slice(0, MAX_RECORDED);
    return {
      ...this.plan.summary,
      ...(shown.length
        ? { protections: shown.map((p) => ({ path: p.path, why: p.why, ...(p.note ? { note: p.note } : {}) })) }
        : {}),
      ...(this.protections.length > shown.length ? { protectionsOmitted: this.protections.length - shown.length } : {}),
      ...(this.bounded.length ? { protectionsBounded: [...this.bounded] } : {}),
      ...(this.hardLinksBroken ? { hardLinksBroken: this.hardLinksBroken } : {}),
    };
  }

  /** Set when commands must not run at all (the sandbox is required and there is none). */
  get refusal(): string | undefined {
    if (this.plan.confined || !this.plan.refuseCommands) return undefined;
    const why = this.plan.summary.required
      ? 'the sandbox is required and commands cannot be confined here'
      : 'commands cannot run here';
    return `${why} (${this.plan.summary.reason})${this.plan.fix ? `; ${this.plan.fix}` : ''}`;
  }

  /** What the terminal starts with: inside the sandbox a built environment; outside the host's, without the API key. */
  terminal(): TerminalSetup {
    if (this.plan.confined) {
      const copy = this.shellDir && this.copyShell ? { shellCopyDir: this.shellDir } : {};
      return {
        env: this.plan.env,
        launcher: this.limits ? this.limits.wrap(this.plan.launcher) : this.plan.launcher,
        ...copy,
        ...(this.shellDir ? { scriptDir: this.shellDir } : {}),
      };
    }
    return { env: { ...this.opts.hostEnv, LAR_API_KEY: undefined } };
  }

  /**
   * The outcome check. `endRun` must end every process of the run (the
   * terminal's sandbox) before it resolves; then the protected paths are put
   * back and the check runs in a sandbox of its own when the run had one.
   */
  async outcome(endRun: () => Promise<boolean | void> | boolean | void, signal?: AbortSignal): Promise<OutcomeEvent> {
    const check = this.outcomeCheck();
    if ((await endRun()) === false) {
      // Fail closed: a process of the run still alive could change the workspace under the check.
      return {
        type: 'outcome',
        command: check.command,
        exitCode: null,
        completion: 'unobserved',
        output: 'the outcome check did not run: processes of the run were still alive 5 s after they were killed',
        sandboxed: this.plan.confined,
        at: new Date().toISOString(),
      };
    }
    const end = await this.finish();
    if (end.error) {
      return {
        type: 'outcome',
        command: check.command,
        exitCode: null,
        completion: 'unobserved',
        output: `the outcome check did not run: the protected paths could not be restored (${end.error})`,
        sandboxed: this.plan.confined,
        at: new Date().toISOString(),
      };
    }
    const restored = end.restored;
    const event = await this.runCheck(signal);
    return { ...event, sandboxed: this.plan.confined, ...(restored.length ? { restored } : {}) };
  }

  /**
   * The outcome command as the check runs it (its own sandbox, read-only paths, clean home, built env)
   * mid-run, for an exit that asks for the check: nothing set in the agent's shell reaches it, and it
   * does not run over what the run made that the final check would not see (refusedCheck).
   */
  async checkNow(signal?: AbortSignal): Promise<OutcomeEvent> {
    const kept = { snapshot: this.snapshot, always: this.restoreOnly, denied: this.denied };
    const refused = await refusedCheck(this.opts, kept, this.plan.confined);
    return refused ?? { ...(await this.runCheck(signal)), sandboxed: this.plan.confined };
  }

  /**
   * Where an MCP stdio server runs: a sandbox of its own like the outcome check's (the run's
   * read-only paths, a clean home, a built environment, its own bounds), with the host's network only
   * when the workflow grants it; undefined when the run's commands are not confined.
   */
  serverSandbox(network: 'none' | 'host', chdir?: string): ServerSandbox | undefined {
    if (!this.plan.confined) return undefined;
    const section = { ...this.opts.workflow.sandbox, network };
    const plan = planSandbox({
      workspace: this.opts.workspace,
      section,
      setting: 'required',
      hostEnv: this.opts.hostEnv,
      shell: '/bin/sh',
      readOnly: realInside(this.opts.workspace, this.extraReadOnly).map((x) => x.abs),
      ...(chdir ? { chdir } : {}),
      ...common({ ...this.opts, workflow: { ...this.opts.workflow, sandbox: section } }, this.gitMeta),
    });
    if (!plan.confined) return undefined;
    const bounds = SandboxLimits.open(
      limitValues(this.opts.workflow.sandbox.limits),
      this.opts.limitMechanisms ? { mechanisms: this.opts.limitMechanisms } : {},
    );
    return { launcher: bounds.wrap(plan.launcher), env: plan.env, dispose: () => bounds.dispose() };
  }

  /** The workflow's outcome command; a run whose outcome is judged outside it never gets here (the loop runs nothing). */
  private outcomeCheck(): OutcomeCheck {
    const check = outcomeCommand(this.opts.workflow);
    if (!check) throw new Error(`the outcome of workflow "${this.opts.workflow.id}" is judged outside the run`);
    return check;
  }

  private async runCheck(signal?: AbortSignal): Promise<OutcomeEvent> {
    const check = this.outcomeCheck();
    let event: OutcomeEvent;
    if (this.plan.confined) {
      // A fresh plan: what exists now (restored paths included) is mounted read-only.
      const net = this.proxy ? proxyEndpoint(this.opts, this.shellDir) : undefined;
      const fresh = planSandbox({
        workspace: this.opts.workspace,
        section: this.opts.workflow.sandbox,
        setting: 'required',
        hostEnv: this.opts.hostEnv,
        shell: '/bin/sh',
        readOnly: realInside(this.opts.workspace, this.extraReadOnly).map((x) => x.abs),
        ...(net ? { alsoReadable: [dirname(net.socket)] } : {}),
        ...common(this.opts, this.gitMeta, this.proxy && this.shellDir),
      });
      if (!fresh.confined) {
        event = {
          type: 'outcome',
          command: check.command,
          exitCode: null,
          completion: 'unobserved',
          output: `the outcome check did not run: its sandbox could not start (${fresh.summary.reason})`,
          at: new Date().toISOString(),
        };
      } else {
        const env = { ...fresh.env, CI: 'true' };
        // Bounded as the run's sandbox was, in a cgroup of its own.
        const bounds = SandboxLimits.open(
          limitValues(this.opts.workflow.sandbox.limits),
          this.opts.limitMechanisms ? { mechanisms: this.opts.limitMechanisms } : {},
        );
        try {
          event = await runOutcomeCheck(check, this.opts.workspace, signal, env, {
            launcher: bounds.wrap(fresh.launcher),
            keepEnv: true,
          });
        } finally {
          await bounds.dispose();
        }
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
    return event;
  }

  /**
   * The end of the run's changes (the outcome check calls it before it runs,
   * dispose after it, as the check runs the agent's code too): the protected
   * paths and the git metadata put back from the snapshot (in the sandbox only
   * those that did not exist: the rest was read-only to the run, and a change
   * there is the user's), and git repositories the run created moved to
   * .lar/quarantine (the editor's git would run their config outside the
   * sandbox). Safe to call again; one at a time.
   */
  finish(): Promise<EndReport> {
    const next = (this.finishing ?? Promise.resolve(undefined)).then(async () => {
      const report: EndReport = { restored: [], quarantinedRepositories: [] };
      if (this.snapshot) {
        try {
          report.restored = await restoreSnapshot(this.opts.workspace, this.snapshot, this.opts.snapshotLimits, {
            onlyAbsent: this.plan.confined,
            always: this.restoreOnly,
          });
        } catch (e) {
          report.error = (e as Error).message;
        }
      }
      const quarantine = quarantineDir(this.opts.workspace);
      // Files the workflow's path deny patterns reach that the run added: moved away, as the file tools could not have written them.
      for (const p of addedDenied(this.opts.workspace, this.opts.workflow, this.denied)) {
        const to = join(quarantine, p);
        try {
          await mkdir(dirname(to), { recursive: true });
          await rename(join(this.opts.workspace, p), to);
          report.restored.push(p);
        } catch (e) {
          report.error = `${report.error ? `${report.error}; ` : ''}${p}, which the run added where the workflow denies writes, could not be moved away: ${(e as Error).message}`;
        }
      }
      // In its own container no editor's git runs a repository's config: one the task asked for stays.
      for (const repo of this.plan.summary.container ? [] : findRepositories(this.opts.workspace)) {
        if (this.repositories.has(repo.id)) continue;
        const to = join(quarantine, repo.rel);
        try {
          await mkdir(dirname(to), { recursive: true });
          await rename(join(this.opts.workspace, repo.rel), to);
          report.quarantinedRepositories.push(repo.rel);
        } catch (e) {
          report.error = `${report.error ? `${report.error}; ` : ''}the repository ${repo.rel} the run created could not be moved away: ${(e as Error).message}`;
        }
      }
      return report;
    });
    this.finishing = next;
    return next;
  }

  /** Finishes the run (if nothing did) and removes the run's scratch files; what was put back or removed. */
  async dispose(): Promise<EndReport> {
    const before = this.finishing ? await this.finishing : undefined;
    const after = await this.finish();
    const report: EndReport = {
      restored: [...new Set([...(before?.restored ?? []), ...after.restored])],
      quarantinedRepositories: [...(before?.quarantinedRepositories ?? []), ...after.quarantinedRepositories],
      ...(before?.error || after.error ? { error: [before?.error, after.error].filter(Boolean).join('; ') } : {}),
    };
    // After everything was put back: what is left changed is the run's, for the user to review.
    const later = this.later?.changes() ?? [];
    if (later.length) report.later = later;
    if (this.proxy) {
      report.network = this.proxy.tallies();
      await this.proxy.close();
    }
    if (this.shellDir) rmSync(this.shellDir, { recursive: true, force: true });
    await this.limits?.dispose();
    if (this.snapshot) await disposeSnapshot(this.snapshot);
    return report;
  }
}
