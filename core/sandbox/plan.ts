/**
 * Which sandbox a run gets: from the workflow's `sandbox` section, the
 * user's setting (`auto`, `required`, `off`) and what this machine can do.
 * A confined plan is the launcher (bwrap and its arguments) and the built
 * environment the shell starts with; an unconfined one says why, what would
 * fix it, and whether commands must then be refused.
 */
import { existsSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { ALWAYS_READ_ONLY, type SandboxSection } from '../schema/workflow';
import { bwrapArgs, probeBwrap, type BwrapProbe, type Mounts } from './bwrap';
import { sandboxEnv } from './env';

export type SandboxSetting = 'auto' | 'required' | 'off';
export const SANDBOX_SETTINGS: readonly SandboxSetting[] = ['auto', 'required', 'off'];

/** What the trajectory header records about the sandbox a run had (schema/trajectory.ts SandboxRecord). */
export interface SandboxSummary {
  confined: boolean;
  /** e.g. "bubblewrap 0.8.0". */
  tool?: string;
  network?: 'none' | 'host';
  protected?: string[];
  required: boolean;
  /** Why commands are not confined. */
  reason?: string;
}

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
}


function real(p: string): string | undefined {
  try {
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}

const inside = (root: string, p: string): boolean => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** `~/x` → home/x; absolute paths as they are. */
export function expandHostPath(p: string, home: string): string {
  return p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : resolve(p);
}

/**
 * The tool folders of PATH that the empty home would hide (a Node from nvm,
 * Python from pyenv, cargo's and rustup's toolchains): the top folder under
 * home that holds each PATH entry is made readable again, as its programs
 * load from around it (pyenv's shims run ~/.pyenv/libexec, npm lives in
 * nvm's lib). ~/.local is the exception, being also where keyrings and app
 * data live: only its bin and lib. Credentials known to live in such folders
 * stay hidden (CREDENTIAL_FILES).
 */
function toolFoldersUnder(home: string, path: string | undefined): string[] {
  const out = new Set<string>();
  for (const d of (path ?? '').split(delimiter)) {
    if (!d.startsWith('/')) continue;
    const r = real(d);
    if (!r || !inside(home, r) || r === home) continue;
    const top = r.slice(home.length + 1).split(sep)[0]!;
    if (top === '.local') {
      for (const sub of ['bin', 'lib']) {
        const x = real(join(home, '.local', sub));
        if (x && inside(home, x)) out.add(x);
      }
      continue;
    }
    const t = real(join(home, top));
    if (t && inside(home, t) && t !== home) out.add(t);
  }
  return [...out];
}

/** Secrets inside tool folders that toolFoldersUnder makes readable. */
export const CREDENTIAL_FILES = ['.cargo/credentials', '.cargo/credentials.toml', '.npmrc', '.pypirc', '.netrc', '.docker/config.json'];

export function planSandbox(req: PlanRequest): SandboxPlan {
  const platform = req.platform ?? process.platform;
  const required = req.setting === 'required' || req.section.required;
  const unconfined = (reason: string, fix?: string): UnconfinedPlan => ({
    confined: false,
    summary: { confined: false, required, reason },
    ...(fix ? { fix } : {}),
    refuseCommands: required,
  });
  if (req.setting === 'off') {
    return unconfined(
      required ? 'the sandbox is off, but the workflow requires it' : 'the sandbox is off (lean4Agentic.sandbox / --sandbox off)',
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
  // The run's records must exist to be mounted read-only over.
  mkdirSync(join(workspace, '.lar'), { recursive: true });
  // Without a hooks folder, one made inside would run at the user's next commit, outside.
  if (isRealDir(join(workspace, '.git'))) mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });

  const readOnly: string[] = [];
  for (const rel of [...ALWAYS_READ_ONLY, ...req.section.protected]) {
    const abs = join(workspace, rel);
    if (!existsSync(abs) && !isLink(abs)) continue;
    const r = real(abs);
    // A protected path that leads out of the workspace is already read-only there (the host is).
    if (r && inside(workspace, r) && r !== workspace) readOnly.push(r);
  }
  for (const p of req.readOnly ?? []) readOnly.push(p);

  const readable: string[] = [];
  for (const p of [...toolFoldersUnder(home, req.hostEnv.PATH), ...req.section.readable.map((x) => expandHostPath(x, home)), ...(req.alsoReadable ?? [])]) {
    const r = real(p);
    if (r && !inside(workspace, r)) readable.push(r);
  }
  const writable: string[] = [];
  for (const p of req.section.writable.map((x) => expandHostPath(x, home))) {
    const r = real(p);
    if (r && !inside(workspace, r)) writable.push(r);
  }
  const hiddenDirs: string[] = [];
  const hiddenFiles: string[] = [];
  for (const d of req.hiddenDirs ?? []) {
    const r = real(d);
    if (r && r !== workspace && !inside(r, workspace)) hiddenDirs.push(r);
  }
  const granted = (p: string): boolean => readable.some((r) => inside(r, p)) || writable.some((w) => inside(w, p));
  for (const p of [...CREDENTIAL_FILES.map((f) => join(home, f)).filter(granted), ...req.section.hidden.map((x) => expandHostPath(x, home))]) {
    const r = real(p);
    if (!r) continue;
    if (isRealDir(r)) hiddenDirs.push(r);
    else hiddenFiles.push(r);
  }
  // A folder inside one already hidden is hidden with it (and could not be mounted on: the empty folder is read-only).
  const keep = [...new Set(hiddenDirs)].filter((d) => !hiddenDirs.some((o) => o !== d && inside(o, d)));
  hiddenDirs.length = 0;
  hiddenDirs.push(...keep);
  const mounts: Mounts = {
    workspace,
    home,
    network: req.section.network,
    disableUserns: probe.disableUserns,
    readOnly: [...new Set(readOnly)],
    readable: [...new Set(readable)],
    writable: [...new Set(writable)],
    hiddenDirs,
    hiddenFiles,
    chdir: req.chdir ?? workspace,
  };
  return {
    confined: true,
    summary: { confined: true, tool: `bubblewrap ${probe.version}`, network: req.section.network, protected: [...req.section.protected], required },
    launcher: { file: probe.path, args: [...bwrapArgs(mounts), '--'] },
    env: sandboxEnv({ host: req.hostEnv, home, shell: req.shell }),
    mounts,
  };
}

function isRealDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** One line for the chat, the status bar and the terminal's name. */
export function describeSandbox(s: SandboxSummary): string {
  if (!s.confined) return `unconfined: ${s.reason ?? 'no sandbox'}`;
  const parts = [s.network === 'host' ? 'host network' : 'network off'];
  if (s.protected?.length) parts.push(`${s.protected.length} protected path${s.protected.length === 1 ? '' : 's'}`);
  return `sandboxed (${s.tool ?? 'bubblewrap'}; ${parts.join(', ')})`;
}
