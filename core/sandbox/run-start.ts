/**
 * How a run's sandbox opens, before the first step: what the run keeps (git metadata, protections,
 * hard links) and its snapshot, the terminal's plan and the allowlist's proxy (run.ts holds the run after).
 */
import { mkdirSync, realpathSync, rmSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { OutcomeEvent } from '../schema/trajectory';
import { outcomeCommand, type Workflow } from '../schema/workflow';
import { entryKind, type EntryKind } from '../workspace/path-kind';
import { planSandbox, type PlanRequest, type SandboxPlan, type SandboxSetting } from './plan';
import {
  findRepositories,
  GIT_PROGRAM_FILES,
  gitConfigValue,
  gitMetadata,
  nestedGitMetadata,
  type Repository,
} from './git-metadata';
import {
  disposeSnapshot,
  restoreSnapshot,
  takeSnapshot,
  type ProtectedSnapshot,
  type SnapshotLimits,
} from './snapshot';
import type { BwrapProbe } from './bwrap';
import type { LimitMechanism } from './limits';
import {
  addedDenied,
  scanProtections,
  type Protection,
  type ProtectionLimits,
  type ProtectionScan,
} from './protections';
import { breakHardLinks, hardLinked, type HardLinkLimits } from './hard-links';
import { AllowlistProxy, type Lookup } from './proxy';
import { writeForwarder, type ProxyEndpoint } from './forwarder';

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

/** What both of a run's sandboxes (the terminal's, the outcome check's) share from the options (and the run's scratch folder, where an allowlist's proxy is). */
export function common(o: RunSandboxOptions, gitMetadata: readonly string[], shellDir?: string): Partial<PlanRequest> {
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
export function proxyEndpoint(o: RunSandboxOptions, shellDir: string | undefined): ProxyEndpoint | undefined {
  if (o.workflow.sandbox.network !== 'allowlist' || !shellDir) return undefined;
  const dir = join(shellDir, 'net');
  return { socket: join(dir, 'proxy.sock'), forwarder: join(dir, 'forwarder.js'), node: process.execPath };
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

/** Git metadata to keep as it was even where it does not exist yet (git reads config from commondir). */
const GIT_METADATA = GIT_PROGRAM_FILES.map((f) => `.git/${f}`);

/**
 * Where workspace-relative `paths` really are, for those that exist and lead
 * to a place inside the workspace (not the workspace itself): `abs` for a
 * read-only mount, `rel` (workspace-relative) for the snapshot.
 */
export function realInside(workspace: string, paths: readonly string[]): { path: string; abs: string; rel: string }[] {
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

/** What the run keeps that is found before its plan: the git metadata (asked once) and the protections. */
export interface KeptAtStart {
  git: EntryKind | undefined;
  linked: boolean;
  repositories: Repository[];
  meta: string[];
  own: string[];
  scan: ProtectionScan;
  extra: string[];
}

/** The git metadata of the workspace and of the repositories in it, and what else the run may not change. */
export function findKept(opts: RunSandboxOptions): KeptAtStart {
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
  return { git, linked, repositories, meta, own, scan, extra };
}

/** The terminal's sandbox, with the workspace's multiply-linked files in it (the scratch folder goes when they refuse the run). */
export function planRun(
  opts: RunSandboxOptions,
  { meta, scan, extra }: KeptAtStart,
  shellDir: string,
): { plan: SandboxPlan; links: { mounted: string[]; broken: number } } {
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
  return { plan, links };
}

/** The workspace paths the snapshot takes (and the file tools refuse). */
export function keptPaths(opts: RunSandboxOptions, { git, linked, meta, scan, extra }: KeptAtStart): string[] {
  // Kept as they were, whatever the run does, and put back at its end: the protected paths, the
  // git metadata the user's git runs programs from, what runs later, and what links among them lead to.
  const named = [
    ...opts.workflow.sandbox.protected,
    ...(git === 'dir' ? meta : git === undefined ? GIT_METADATA : linked ? ['.git'] : []),
    ...extra,
    ...scan.absent,
    ...scan.restoreOnly,
  ];
  return [...new Set([...named, ...linkedTargets(opts.workspace, named)])];
}

/** The snapshot of what is kept (the scratch folder goes when it cannot be taken). */
export async function snapshotKept(
  opts: RunSandboxOptions,
  kept: readonly string[],
  shellDir: string,
): Promise<ProtectedSnapshot | undefined> {
  let snapshot: ProtectedSnapshot | undefined;
  try {
    snapshot = await takeSnapshot(opts.workspace, kept, opts.snapshotLimits);
  } catch (e) {
    rmSync(shellDir, { recursive: true, force: true });
    throw e;
  }
  return snapshot;
}

/** With `sandbox.network: "allowlist"` and a confined plan: the run's proxy, started (or the run refused). */
export async function startProxy(
  opts: RunSandboxOptions,
  plan: SandboxPlan,
  shellDir: string,
  snapshot: ProtectedSnapshot | undefined,
): Promise<AllowlistProxy | undefined> {
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
  return proxy;
}

/**
 * The kept paths that are symbolic links: not read-only themselves (the target is mounted when it is
 * inside; the link sits in the writable workspace), so whatever the run did to them is put back at the
 * end and counts as made by the run, like the paths past the bound of mounts.
 */
export function keptLinks(workspace: string, kept: readonly string[]): string[] {
  return kept.filter((p) => entryKind(join(workspace, p)) === 'link');
}

/**
 * What the run made that the end of the run would remove or put back before the final check: kept
 * paths absent at the start that exist now (and those in `always`), and the denied files it added.
 * Not what existed and changed outside the sandbox: the check's own caches in node_modules would
 * refuse every later check.
 */
async function madeSinceStart(
  opts: RunSandboxOptions,
  snapshot: ProtectedSnapshot | undefined,
  always: ReadonlySet<string>,
  denied: ReadonlySet<string>,
): Promise<string[]> {
  const changed = snapshot
    ? await restoreSnapshot(opts.workspace, snapshot, opts.snapshotLimits, { onlyAbsent: true, always, leave: true })
    : [];
  return [...changed, ...addedDenied(opts.workspace, opts.workflow, denied)];
}

/**
 * The outcome of a check called as a step that must not run, because of what the run made (what
 * `madeSinceStart` finds), saying how to run it; undefined when it may run.
 */
export async function refusedCheck(
  opts: RunSandboxOptions,
  kept: { snapshot: ProtectedSnapshot | undefined; always: ReadonlySet<string>; denied: ReadonlySet<string> },
  sandboxed: boolean,
): Promise<OutcomeEvent | undefined> {
  const made = await madeSinceStart(opts, kept.snapshot, kept.always, kept.denied);
  if (!made.length) return undefined;
  const command = outcomeCommand(opts.workflow)?.command ?? '';
  const list = made.slice(0, 5).join(', ') + (made.length > 5 ? `, and ${made.length - 5} more` : '');
  return {
    type: 'outcome',
    command,
    exitCode: null,
    completion: 'unobserved',
    output: `the outcome check did not run: the run made or changed ${list}, which the final check removes or puts back before it runs, so this would not be the check. Remove what the run made there (or leave it: the final check runs without it) to run the check now.`,
    sandboxed,
    at: new Date().toISOString(),
  };
}
