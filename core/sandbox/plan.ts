/**
 * Which sandbox a run gets: from the workflow's `sandbox` section, the
 * user's setting (`auto`, `required`, `off`) and what this machine can do.
 * A confined plan is the launcher (bwrap and its arguments) and the built
 * environment the shell starts with; an unconfined one says why, what would
 * fix it, and whether commands must then be refused.
 */
import { ensureLarDir } from '../workspace/lar-layout';
import { existsSync, mkdirSync } from 'node:fs';
import { entryKind, realPath as real } from '../workspace/path-kind';
import { isInside } from '../workspace/fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ALWAYS_READ_ONLY, type SandboxSection } from '../schema/workflow';
import type { SandboxRecord } from '../schema/trajectory';
import { bwrapArgs, probeBwrap, seccompLauncher, type BwrapFound, type BwrapProbe, type Mounts } from './bwrap';
import { seccompFile } from './seccomp';
import { sandboxEnv } from './env';
import { limitValues } from './limit-values';
import { forwarderLauncher, type ProxyEndpoint } from './forwarder';
import { gitIdentity, gitMetadata } from './git-metadata';
import { CREDENTIAL_FILES, expandHostPath, isHostPath, nodeFolder, toolFoldersUnder } from './home';

/** `container`: the run is inside a container that is its sandbox (Harbor, Docker), so no bubblewrap (lar run only). */
export type SandboxSetting = 'auto' | 'required' | 'off' | 'container';
export const SANDBOX_SETTINGS: readonly SandboxSetting[] = ['auto', 'required', 'off', 'container'];

/** What the trajectory header records about the sandbox a run had. */
export type SandboxSummary = SandboxRecord;

export interface ConfinedPlan {
  confined: true;
  summary: SandboxSummary;
  /** The shell is started as `file args... -- shell shellArgs...`. */
  launcher: { file: string; args: string[] };
  env: Record<string, string>;
  mounts: Mounts;
}

export interface UnconfinedPlan {
  confined: false;
  summary: SandboxSummary;
  /** What would give the run a sandbox. */
  fix?: string;
  /** The sandbox is required: run_command must not run at all. */
  refuseCommands: boolean;
}

export type SandboxPlan = ConfinedPlan | UnconfinedPlan;

export interface PlanRequest {
  workspace: string;
  section: SandboxSection;
  setting: SandboxSetting;
  /** The host environment: PATH, locale and home come from it, nothing else. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The shell that will run inside (its path is kept; the sandbox sees the host's /usr). */
  shell: string;
  /** Where the shell starts (default: the workspace). */
  chdir?: string;
  /** Test seams. */
  platform?: NodeJS.Platform;
  probe?: () => BwrapProbe;
  home?: string;
  /** Extra read-only paths inside the workspace. */
  readOnly?: string[];
  /** Extra host folders to hide entirely. */
  hiddenDirs?: string[];
  /** Extra host paths the sandbox reads (the terminal's command files when they are outside the workspace). */
  alsoReadable?: string[];
  /** gitMetadata(workspace), when the caller has it already (it asks git for core.hooksPath). */
  gitMetadata?: readonly string[];
  /**
   * With `sandbox.network: "allowlist"`: the run's proxy and its forwarder (RunSandbox starts
   * them). Without it such a sandbox reaches nothing but its own loopback.
   */
  proxy?: ProxyEndpoint;
}

/** `p` is `root` or below it (whole segments; paths as the system spells them, real paths here). */
const inside = (root: string, p: string): boolean => isInside(root, p, false);

/** A plan without a sandbox: why, what would fix it, and whether commands must then be refused. */
function unconfinedPlan(required: boolean, reason: string, fix?: string): UnconfinedPlan {
  return {
    confined: false,
    summary: { confined: false, required, reason },
    ...(fix ? { fix } : {}),
    refuseCommands: required,
  };
}

/** Where a confined plan starts from, once the setting, the platform, bwrap and the workspace allow one. */
interface Start {
  probe: BwrapFound;
  workspace: string;
  home: string;
}

export function planSandbox(req: PlanRequest): SandboxPlan {
  const required = req.setting === 'required' || req.section.required;
  const start = startOf(req, required);
  if ('confined' in start) return start;
  const { probe, workspace, home } = start;
  prepareWorkspace(workspace);
  const { readOnly, pinned } = protectedMounts(req, workspace);
  const proxy = req.section.network === 'allowlist' ? req.proxy : undefined;
  const { readable, writable } = grantedMounts(req, workspace, home, proxy);
  const { hiddenDirs, hiddenFiles } = hiddenMounts(req, workspace, home, readable, writable);
  const mounts: Mounts = {
    workspace,
    home,
    network: req.section.network,
    disableUserns: probe.disableUserns,
    // Parents before their children: a later mount lands on an earlier one.
    pinned: [...new Set(pinned)].sort((a, b) => a.length - b.length),
    readOnly: [...new Set(readOnly)],
    readable: [...new Set(readable)],
    writable: [...new Set(writable)],
    hiddenDirs,
    hiddenFiles,
    chdir: req.chdir ?? workspace,
    // Every tmpfs bounded (limits.ts), where this bwrap can.
    ...(probe.tmpfsSize ? { tmp: limitValues(req.section.limits).tmp } : {}),
  };
  return {
    confined: true,
    summary: {
      confined: true,
      tool: `bubblewrap ${probe.version}`,
      network: req.section.network,
      ...(req.section.network === 'allowlist' ? { hosts: [...req.section.hosts] } : {}),
      protected: [...req.section.protected],
      required,
    },
    launcher: launcherFor(probe, [...bwrapArgs(mounts), '--'], proxy ? forwarderLauncher(proxy) : []),
    env: sandboxEnv({
      host: req.hostEnv,
      home,
      shell: req.shell,
      identity: gitIdentity(workspace, req.hostEnv),
      proxy: proxy !== undefined,
    }),
    mounts,
  };
}

/** The unconfined plan when the setting, the platform, bwrap or the workspace rule a sandbox out; else where it starts. */
function startOf(req: PlanRequest, required: boolean): UnconfinedPlan | Start {
  const platform = req.platform ?? process.platform;
  const unconfined = (reason: string, fix?: string): UnconfinedPlan => unconfinedPlan(required, reason, fix);
  if (req.setting === 'container') {
    // The container the user vouched for is the sandbox, even where the workflow requires one: the header says so.
    const plan = unconfined(
      `the run is inside a container that is its sandbox (--sandbox container)${required ? ', taken as the sandbox the workflow requires' : ''}: commands run without bubblewrap`,
    );
    return { ...plan, summary: { ...plan.summary, container: true }, refuseCommands: false };
  }
  if (req.setting === 'off') {
    return unconfined(
      required
        ? 'the sandbox is off, but the workflow requires it'
        : 'the sandbox is off (lean4Agentic.sandbox / --sandbox off)',
      required ? 'set lean4Agentic.sandbox (or lar run --sandbox) to auto or required' : undefined,
    );
  }
  if (platform !== 'linux') {
    return unconfined(
      `commands are not confined on ${platform === 'darwin' ? 'macOS' : platform}: the sandbox is bubblewrap, which is Linux only`,
      'run the agent on Linux (or in a Linux VM or dev container) for confined commands',
    );
  }
  const probe = (req.probe ?? (() => probeBwrap()))();
  if (!probe.ok) return unconfined(probe.reason, probe.fix);

  const workspace = real(req.workspace);
  if (!workspace) return unconfined(`the workspace ${req.workspace} cannot be resolved`);
  const home = real(req.home ?? homedir()) ?? req.home ?? homedir();
  // A sandbox around the home folder (or the root, or a shared scratch folder) would put back
  // everything it is meant to hide: the workspace is mounted writable on top of the empty home.
  const tooWide = [home, '/tmp', '/var/tmp', '/dev/shm', '/run'].find((d) => workspace === d || inside(workspace, d));
  if (workspace === '/' || tooWide) {
    // Refused, not run unconfined: unconfined would give the commands all of it, and more.
    return {
      ...unconfined(
        `the workspace ${workspace} is ${workspace === '/' ? 'the root folder' : workspace === home || tooWide === home ? 'your home folder, or holds it' : `${tooWide}, or holds it`}: a sandbox around it would show everything in it`,
        'open a project folder as the workspace (or set the sandbox off, knowing commands then run as in your own terminal)',
      ),
      refuseCommands: true,
    };
  }
  return { probe, workspace, home };
}

/** Makes what must exist to be mounted read-only over (a folder made during the run would be used outside at once). */
function prepareWorkspace(workspace: string): void {
  // The run's records, and the editor's settings and tasks, must exist to be mounted read-only
  // over: a .vscode made during the run would be read by the editor (outside) at once.
  ensureLarDir(workspace);
  try {
    mkdirSync(join(workspace, '.vscode'), { recursive: true });
  } catch {
    // a file, or a link to nowhere: its real path is mounted read-only below if it leads into the workspace
  }
  // Without a hooks folder, one made inside would run at the user's next commit, outside.
  if (entryKind(join(workspace, '.git')) === 'dir') mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
}

/** The workspace's read-only paths (protected, git metadata) and the folders pinned as mount points above them. */
function protectedMounts(req: PlanRequest, workspace: string): { readOnly: string[]; pinned: string[] } {
  const readOnly: string[] = [];
  for (const rel of [...ALWAYS_READ_ONLY, ...req.section.protected]) {
    const abs = join(workspace, rel);
    if (!existsSync(abs) && entryKind(abs) !== 'link') continue;
    const r = real(abs);
    // A protected path that leads out of the workspace is already read-only there (the host is).
    if (r && inside(workspace, r) && r !== workspace) readOnly.push(r);
  }
  for (const p of req.readOnly ?? []) readOnly.push(p);
  const pinned: string[] = [];
  gitMounts(req, workspace, readOnly, pinned);
  // A read-only mount inside a folder the run may rename is escaped by renaming the folder and making
  // a new one in its place (`mv src src.old; mkdir src`): every folder above one is pinned, as a mount
  // point cannot be renamed or removed.
  for (const p of new Set(readOnly))
    for (let d = dirname(p); d !== workspace && inside(workspace, d); d = dirname(d)) pinned.push(d);
  return { readOnly, pinned };
}

/**
 * git: what it runs from its metadata, read later by the user's own git outside (the editor's
 * git extension runs `git status` by itself): the config of the repository and of its
 * submodules, their hooks, commondir and config.worktree (where git also reads config). The
 * folder itself becomes a mount point, which cannot be renamed away and replaced.
 */
function gitMounts(req: PlanRequest, workspace: string, readOnly: string[], pinned: string[]): void {
  const gitDir = join(workspace, '.git');
  if (entryKind(gitDir) === 'dir') {
    pinned.push(gitDir);
    // A hooks folder missing from a git folder (a submodule's) would be made inside and run outside.
    for (const rel of req.gitMetadata ?? gitMetadata(workspace)) {
      if (rel.endsWith('/hooks') && entryKind(join(workspace, dirname(rel))) === 'dir') {
        try {
          mkdirSync(join(workspace, rel), { recursive: true });
        } catch {
          // a file or a dangling link is there: mounted (or skipped) below like any other path
        }
      }
      const abs = join(workspace, rel);
      if (!existsSync(abs)) continue;
      const r = real(abs);
      // Only what is in the workspace: a hooks link into the (hidden) home is not there anyway.
      if (r && inside(workspace, r) && r !== workspace) readOnly.push(r);
    }
  } else if (entryKind(gitDir) === 'file') readOnly.push(gitDir);
}

/** The host paths granted: readable (tool folders, the workflow's, the forwarder's Node) and writable (the workflow's). */
function grantedMounts(
  req: PlanRequest,
  workspace: string,
  home: string,
  proxy: ProxyEndpoint | undefined,
): { readable: string[]; writable: string[] } {
  const readable: string[] = [];
  for (const p of [
    ...toolFoldersUnder(home, req.hostEnv.PATH, req.hostEnv),
    ...req.section.readable.map((x) => expandHostPath(x, home)),
    ...(req.alsoReadable ?? []),
    ...(proxy ? nodeFolder(proxy.node, home) : []),
  ]) {
    const r = real(p);
    // Neither inside the workspace (it is there already) nor holding it (the projects next to it would show).
    if (r && !inside(workspace, r) && !inside(r, workspace)) readable.push(r);
  }
  const writable: string[] = [];
  // Workspace-relative entries grant what runs later inside it (protections.ts), not host paths.
  for (const p of req.section.writable.filter(isHostPath).map((x) => expandHostPath(x, home))) {
    const r = real(p);
    if (r && !inside(workspace, r)) writable.push(r);
  }
  return { readable, writable };
}

/** The host paths hidden: the caller's folders, the workflow's, and credentials inside what is granted. */
function hiddenMounts(
  req: PlanRequest,
  workspace: string,
  home: string,
  readable: readonly string[],
  writable: readonly string[],
): { hiddenDirs: string[]; hiddenFiles: string[] } {
  const hiddenDirs: string[] = [];
  const hiddenFiles: string[] = [];
  for (const d of req.hiddenDirs ?? []) {
    const r = real(d);
    if (r && r !== workspace && !inside(r, workspace)) hiddenDirs.push(r);
  }
  const granted = (p: string): boolean => readable.some((r) => inside(r, p)) || writable.some((w) => inside(w, p));
  for (const p of [
    ...CREDENTIAL_FILES.map((f) => join(home, f)).filter(granted),
    ...req.section.hidden.map((x) => expandHostPath(x, home)),
  ]) {
    const r = real(p);
    if (!r) continue;
    if (entryKind(r) === 'dir') hiddenDirs.push(r);
    else hiddenFiles.push(r);
  }
  // A folder inside one already hidden is hidden with it (and could not be mounted on: the empty folder is read-only).
  const keep = [...new Set(hiddenDirs)].filter((d) => !hiddenDirs.some((o) => o !== d && inside(o, d)));
  hiddenDirs.length = 0;
  hiddenDirs.push(...keep);
  return { hiddenDirs, hiddenFiles };
}

/** bwrap with its arguments, through the seccomp launcher when the filter loads here; `then`, what runs inside before the command (the forwarder's start). */
function launcherFor(probe: BwrapFound, args: string[], then: string[]): { file: string; args: string[] } {
  const filter = probe.seccomp ? seccompFile() : undefined;
  if (!filter) return { file: probe.path, args: [...args, ...then] };
  const l = seccompLauncher(probe.path, filter);
  return { file: l.file, args: [...l.args, ...args, ...then] };
}

/** One line for the chat, the status bar and the terminal's name. */
export function describeSandbox(s: SandboxSummary): string {
  if (s.container) return `in a container that is its sandbox (no bubblewrap)`;
  if (!s.confined) return `unconfined: ${s.reason ?? 'no sandbox'}`;
  const parts = [
    s.network === 'host'
      ? 'host network'
      : s.network === 'allowlist'
        ? `network: ${s.hosts?.length ?? 0} allowed host${s.hosts?.length === 1 ? '' : 's'}`
        : 'network off',
  ];
  if (s.protected?.length) parts.push(`${s.protected.length} protected path${s.protected.length === 1 ? '' : 's'}`);
  return `sandboxed (${s.tool ?? 'bubblewrap'}; ${parts.join(', ')})`;
}
