/**
 * A run's sandbox from start to outcome: the plan, the snapshot of the
 * protected paths taken before the first step, what the terminal is started
 * with, and the outcome check, which runs only after every process of the run
 * has ended, with the protected paths put back, in a fresh sandbox of its own
 * (clean home and environment).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { OutcomeEvent } from '../schema/trajectory';
import { ALWAYS_READ_ONLY, type Workflow } from '../schema/workflow';
import { entryKind } from '../workspace/path-kind';
import { runOutcomeCheck } from '../outcome/check';
import { planSandbox, type PlanRequest, type SandboxPlan, type SandboxSetting, type SandboxSummary } from './plan';
import { findRepositories, GIT_PROGRAM_FILES, gitConfigValue, gitMetadata, nestedGitMetadata } from './git-metadata';
import {
  disposeSnapshot,
  restoreSnapshot,
  takeSnapshot,
  type ProtectedSnapshot,
  type SnapshotLimits,
} from './snapshot';
import type { BwrapProbe } from './bwrap';
import { limitValues, SandboxLimits, type LimitMechanism } from './limits';
import { LaterBaseline, type LaterChange } from './later-changes';
import { addedDenied, scanProtections, type Protection, type ProtectionLimits } from './protections';
import { breakHardLinks, hardLinked, type HardLinkLimits } from './hard-links';
import { AllowlistProxy, type Lookup, type ProxyTally } from './proxy';
import { writeForwarder, type ProxyEndpoint } from './forwarder';
import { execAllowed, runtimeRoot } from './scratch';
import { quarantineDir } from '../workspace/lar-layout';

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
  /** How memory and tasks are bounded, in order of preference (test seam; default: limits.ts's order). */
  limitMechanisms?: readonly LimitMechanism[];
  /** The home folder the sandbox hides and replaces (default: the user's). */
  home?: string;
  /** How the allowlist's proxy resolves names (test seam; default: the system's resolver). */
  lookup?: Lookup;
  /**
   * The user allows making each multiply-linked workspace file its own copy
   * (`lar run --break-hard-links`, lean4Agentic.breakHardLinks): instead of a
   * read-only mount each, and past their bound instead of refusing the run.
   */
  breakHardLinks?: boolean;
  /** Bounds of the search for them (test seam). */
  hardLinkLimits?: HardLinkLimits;
  /** Bounds of the protections' search and mounts (test seam). */
  protectionLimits?: ProtectionLimits;
}

export class HardLinksError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HardLinksError';
  }
}

export interface TerminalSetup {
  env: Record<string, string | undefined>;
  launcher?: { file: string; args: string[] };
  shellCopyDir?: string;
  scriptDir?: string;
}

/** What both of a run's sandboxes (the terminal's, the outcome check's) share from the options (and the run's scratch folder, where an allowlist's proxy is). */
function common(o: RunSandboxOptions, gitMetadata: readonly string[], shellDir?: string): Partial<PlanRequest> {
  const proxy = proxyEndpoint(o, shellDir);
  return {
    gitMetadata,
    ...(o.hidden ? { hiddenDirs: o.hidden } : {}),
    ...(o.probe ? { probe: o.probe } : {}),
    ...(o.home ? { home: o.home } : {}),
    ...(proxy ? { proxy } : {}),
  };
}

/**
 * With `sandbox.network: "allowlist"`: where the run's proxy listens and its forwarder's script
 * is, in a folder of the run's scratch folder (which the sandbox sees read-only). The outcome
 * check gets the same hosts through the same proxy: its command is the workflow's (a test that
 * fetches a fixture, `npm ci`), and the agent's code it runs had them during the run anyway.
 */
function proxyEndpoint(o: RunSandboxOptions, shellDir: string | undefined): ProxyEndpoint | undefined {
  if (o.workflow.sandbox.network !== 'allowlist' || !shellDir) return undefined;
  const dir = join(shellDir, 'net');
  return { socket: join(dir, 'proxy.sock'), forwarder: join(dir, 'forwarder.js'), node: process.execPath };
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

/** What the sandbox does about the workspace's multiply-linked files: mount them read-only, or break them when allowed; past the bound, refuse. */
function hardLinksFor(
  opts: RunSandboxOptions,
  protections: readonly Protection[],
): { mounted: string[]; broken: number } {
  const found = hardLinked(
    opts.workspace,
    protections.map((p) => p.path),
    opts.hardLinkLimits,
  );
  if (!found.files.length) return { mounted: [], broken: 0 };
  const maxMounts = opts.hardLinkLimits?.maxMounts ?? 3000;
  if (opts.breakHardLinks && found.complete)
    return { mounted: [], broken: breakHardLinks(opts.workspace, found.files) };
  if (found.complete && found.paths.length <= maxMounts) return { mounted: found.paths, broken: 0 };
  const what = found.complete
    ? `${found.files.length} files with more than one link (${found.paths.length} places to mount read-only, more than ${maxMounts})`
    : 'too many entries to look through for files with more than one link in time';
  throw new HardLinksError(
    `the workspace has ${what}, e.g. ${found.files.slice(0, 3).join(', ') || 'in a folder not yet looked at'}: a command writing to one would change the file outside the workspace too (a pnpm store, the repository a local clone came from). ` +
      (found.complete
        ? 'Allow making each its own copy (lar run --break-hard-links; the setting lean4Agentic.breakHardLinks), protect the folder that holds them (sandbox.protected, e.g. node_modules), or run with the sandbox off.'
        : 'Open a smaller folder as the workspace, protect the large folders (sandbox.protected, e.g. node_modules), or run with the sandbox off.'),
  );
}

/** Most protections listed in the header (the rest are counted). */
const MAX_RECORDED = 300;

/** Git metadata to keep as it was even where it does not exist yet (git reads config from commondir). */
const GIT_METADATA = GIT_PROGRAM_FILES.map((f) => `.git/${f}`);

/**
 * Where workspace-relative `paths` really are, for those that exist and lead
 * to a place inside the workspace (not the workspace itself): `abs` for a
 * read-only mount, `rel` (workspace-relative) for the snapshot.
 */
function realInside(workspace: string, paths: readonly string[]): { path: string; abs: string; rel: string }[] {
  let root: string;
  try {
    root = realpathSync(workspace);
  } catch {
    return [];
  }
  const out: { path: string; abs: string; rel: string }[] = [];
  for (const p of paths) {
    let r: string;
    try {
      r = realpathSync(join(workspace, p));
    } catch {
      continue; // not there: nothing to mount; the snapshot still removes it at the end if the run makes it
    }
    const rel = relative(root, r);
    if (rel && !rel.startsWith('..') && !isAbsolute(rel)) out.push({ path: p, abs: r, rel: rel.split(sep).join('/') });
  }
  return out;
}

/** What links among `paths` lead to, inside the workspace: protecting `tests -> src/tests` must protect src/tests, where writes land. */
const linkedTargets = (workspace: string, paths: readonly string[]): string[] =>
  realInside(workspace, paths)
    .filter((x) => x.rel !== x.path)
    .map((x) => x.rel);

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
    // Asked once (git is run for core.hooksPath): the terminal's sandbox, the snapshot and the outcome check's sandbox share it.
    const git = entryKind(join(opts.workspace, '.git'));
    const repositories = findRepositories(opts.workspace);
    // Repositories inside the workspace (a vendored clone, a nested project): the editor's git opens each one it
    // finds and runs `git status`, which runs what their config names; their `.git` file, config and hooks are
    // read-only like the workspace's own.
    const nested = nestedGitMetadata(opts.workspace, repositories);
    // A linked worktree's, a submodule checkout's or a --separate-git-dir's `.git` is a file (or a link): git still
    // reads core.hooksPath (and includes) through it, and the git folder it names, when in the workspace, has its
    // config, commondir and hooks mounted like any other read-only path (planSandbox pins only a `.git` folder's).
    const linked = git === 'file' || git === 'link';
    const own = git === 'dir' || linked ? gitMetadata(opts.workspace) : [];
    const meta = [...own, ...nested];
    // What else the run may not change: files its path deny patterns reach, and what the user's tools run later.
    const scan = scanProtections(
      opts.workspace,
      opts.workflow,
      meta,
      git === 'dir' || linked ? gitConfigValue(opts.workspace, 'core.hooksPath') : undefined,
      opts.protectionLimits,
    );
    const extra = [
      ...scan.protections
        .filter((p) => p.why === 'path_deny' || p.why === 'runs_later' || p.why === 'outcome')
        .map((p) => p.path),
      ...nested,
      ...(linked ? own : []),
    ];
    const planWith = (readOnly: readonly string[]): SandboxPlan =>
      planSandbox({
        workspace: opts.workspace,
        section: opts.workflow.sandbox,
        setting: opts.setting,
        hostEnv: opts.hostEnv,
        shell: opts.shell,
        alsoReadable: [opts.outputDir, shellDir],
        readOnly: realInside(opts.workspace, readOnly).map((x) => x.abs),
        ...common(opts, meta, shellDir),
      });
    let plan = planWith(extra);
    // A write through a hard link lands outside (a pnpm store, the repository a local clone came from): in the
    // sandbox each such file is read-only, or its own copy when the user allows it.
    let links: { mounted: string[]; broken: number } = { mounted: [], broken: 0 };
    if (plan.confined) {
      try {
        links = hardLinksFor(opts, scan.protections);
      } catch (e) {
        rmSync(shellDir, { recursive: true, force: true });
        throw e;
      }
      if (links.mounted.length) plan = planWith([...extra, ...links.mounted]);
    }
    // Kept as they were, whatever the run does, and put back at its end: the protected paths, the
    // git metadata the user's git runs programs from, what runs later, and what links among them lead to.
    const named = [
      ...opts.workflow.sandbox.protected,
      ...(git === 'dir' ? meta : git === undefined ? GIT_METADATA : linked ? ['.git'] : []),
      ...extra,
      ...scan.absent,
      ...scan.restoreOnly,
    ];
    const kept = [...new Set([...named, ...linkedTargets(opts.workspace, named)])];
    let snapshot: ProtectedSnapshot | undefined;
    try {
      snapshot = await takeSnapshot(opts.workspace, kept, opts.snapshotLimits);
    } catch (e) {
      rmSync(shellDir, { recursive: true, force: true });
      throw e;
    }
    const endpoint = plan.confined ? proxyEndpoint(opts, shellDir) : undefined;
    let proxy: AllowlistProxy | undefined;
    if (endpoint) {
      try {
        mkdirSync(dirname(endpoint.socket));
        writeForwarder(endpoint.forwarder);
        proxy = await AllowlistProxy.start({
          hosts: opts.workflow.sandbox.hosts,
          socketPath: endpoint.socket,
          ...(opts.lookup ? { lookup: opts.lookup } : {}),
        });
      } catch (e) {
        if (snapshot) await disposeSnapshot(snapshot);
        rmSync(shellDir, { recursive: true, force: true });
        throw new Error(`the network allowlist's proxy could not start: ${(e as Error).message}`);
      }
    }
    const readOnlyPaths = [...new Set([...ALWAYS_READ_ONLY, '.git/modules', ...kept])];
    const copyShell = plan.confined && execAllowed(shellDir);
    const box = new RunSandbox(
      plan,
      opts,
      snapshot,
      shellDir,
      copyShell,
      meta,
      readOnlyPaths,
      new Set(repositories.map((r) => r.id)),
    );
    box.protections = [...scan.protections, ...links.mounted.map((path): Protection => ({ path, why: 'hard_link' }))];
    box.extraReadOnly = [...extra, ...links.mounted];
    box.restoreOnly = new Set(scan.restoreOnly);
    box.hardLinksBroken = links.broken;
    // What the user's tools may run later but the run may change: compared at its end (EndReport.later).
    box.later = LaterBaseline.take(
      opts.workspace,
      box.protections.map((p) => p.path),
    );
    box.denied = scan.denied;
    box.bounded = scan.bounded;
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
    const check = this.opts.workflow.outcome;
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
   * The workflow's outcome command as the check runs it (a fresh sandbox of its own with the run's
   * read-only paths, a clean home and a built environment), while the run goes on: what a stage
   * exit that asks for the check itself counts, as nothing the agent set in its own shell (a
   * function or an alias named like the command, an exported npm setting) can reach it.
   */
  async checkNow(signal?: AbortSignal): Promise<OutcomeEvent> {
    return { ...(await this.runCheck(signal)), sandboxed: this.plan.confined };
  }

  private async runCheck(signal?: AbortSignal): Promise<OutcomeEvent> {
    const check = this.opts.workflow.outcome;
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
      for (const repo of findRepositories(this.opts.workspace)) {
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
