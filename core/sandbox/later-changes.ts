/**
 * Files the user's tools may execute later that a run changed: a Makefile,
 * package.json (its scripts run on `npm install` and `npm test`), shell
 * scripts, anything executable, build files that run code (setup.py,
 * build.rs, Gradle, CMake, Dockerfile). They cannot all be read-only (the
 * task may be to change them), so they are listed at the run's end with
 * their diff, "changed files that run later", for the user to read before
 * committing.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GIT_PROGRAM_FILES } from './git-metadata';

export interface LaterChange {
  /** Workspace-relative. */
  path: string;
  change: 'changed' | 'added' | 'removed';
  /** A unified diff (at most 200 lines), when the contents could be kept and compared. */
  diff?: string;
}

/** Build and task files that run code when the user builds, tests or installs. */
const RUN_FILES = new Set([
  'Makefile',
  'makefile',
  'GNUmakefile',
  'package.json',
  'justfile',
  'Justfile',
  '.justfile',
  'Taskfile.yml',
  'Taskfile.yaml',
  'Rakefile',
  'Gemfile',
  'noxfile.py',
  'tox.ini',
  'setup.py',
  'setup.cfg',
  'pyproject.toml',
  'conftest.py',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'gradlew',
  'pom.xml',
  'build.rs',
  'Cargo.toml',
  'CMakeLists.txt',
  'meson.build',
  'Dockerfile',
  'Containerfile',
  'docker-compose.yml',
  'docker-compose.yaml',
  'compose.yml',
  'compose.yaml',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  'deno.json',
  'bunfig.toml',
  'flake.nix',
  'shell.nix',
  'default.nix',
]);
const RUN_CONFIG = /^(?:\.?(?:eslint|prettier|stylelint|commitlint)(?:\.config|rc)|\.eslintrc)\.[cm]?[jt]s$/;
const RUN_EXTENSIONS = /\.(?:sh|bash|zsh|fish|ksh|ps1|bat|cmd|mk|command)$/;

const MAX_ENTRIES = 50_000;
const MAX_FILES = 5000;
const MAX_KEPT_BYTES = 512 * 1024;
const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
const MAX_DIFF_LINES = 200;

interface Seen {
  /** Over the mode and the content (a link: its target), so `chmod +x` is a change too. */
  hash: string;
  /** The content, when small enough to keep for a diff. */
  content?: Buffer;
}

/** Whether the user's tools may run this file: its name, its extension, or an execute bit. */
function mayRun(name: string, mode: number): boolean {
  return RUN_FILES.has(name) || RUN_EXTENSIONS.test(name) || RUN_CONFIG.test(name) || (mode & 0o111) !== 0;
}

interface Candidate {
  size: number;
  mode: number;
  /** A symbolic link's target: a Makefile that became a link runs what it leads to. */
  link?: string;
}

/** The candidate files of the workspace now (not in .git, .lar, nor in `skip`, which is read-only anyway; of node_modules only its .bin). */
function candidates(workspace: string, skip: ReadonlySet<string>): Map<string, Candidate> {
  const out = new Map<string, Candidate>();
  let budget = MAX_ENTRIES;
  const walk = (dir: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(join(workspace, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (--budget < 0 || out.size >= MAX_FILES) return;
      const p = dir ? `${dir}/${e.name}` : e.name;
      if (skip.has(p) || (!dir && e.name === '.lar')) continue;
      if (e.name === '.git') {
        gitEntry(p, e.isDirectory(), !dir);
        continue;
      }
      if (e.isDirectory()) {
        // node_modules: only the programs npm scripts run (node_modules/.bin), when it is not protected whole.
        if (e.name === 'node_modules') {
          if (!skip.has(`${p}/.bin`)) walk(`${p}/.bin`, depth + 1);
        } else if (depth < 24 && e.name !== '.git') walk(p, depth + 1);
      } else if (e.isFile() || e.isSymbolicLink()) {
        try {
          const st = lstatSync(join(workspace, p));
          const inBin = dir.endsWith('node_modules/.bin');
          if (st.isSymbolicLink() ? inBin || mayRun(e.name, 0) : inBin || mayRun(e.name, st.mode)) {
            out.set(p, {
              size: st.size,
              mode: st.mode & 0o7777,
              ...(st.isSymbolicLink() ? { link: readlinkSync(join(workspace, p)) } : {}),
            });
          }
        } catch {
          // gone meanwhile
        }
      }
    }
  };
  const add = (p: string, always: boolean): void => {
    try {
      const st = lstatSync(join(workspace, p));
      if (st.isSymbolicLink() || (st.isFile() && (always || (st.mode & 0o111) !== 0))) {
        out.set(p, {
          size: st.size,
          mode: st.mode & 0o7777,
          ...(st.isSymbolicLink() ? { link: readlinkSync(join(workspace, p)) } : {}),
        });
      }
    } catch {
      // not there
    }
  };
  // A git repository made or changed inside the workspace is one the user's git (and the editor's git
  // extension, which opens every repository it finds) reads config and runs hooks from: a `.git` file
  // names its folder anywhere; in a nested `.git` folder, what git runs programs from. The workspace's
  // own `.git` folder is protected apart (read-only, or kept absent).
  const gitEntry = (p: string, isDir: boolean, top: boolean): void => {
    if (!isDir) return add(p, true);
    if (top) return;
    // The hooks folder is not a file: its hooks are listed one by one below.
    for (const f of GIT_PROGRAM_FILES) add(`${p}/${f}`, true);
    let hooks: string[] = [];
    try {
      hooks = readdirSync(join(workspace, p, 'hooks'));
    } catch {
      // no hooks folder
    }
    for (const h of hooks.slice(0, 200)) if (!h.endsWith('.sample')) add(`${p}/hooks/${h}`, true);
  };
  walk('', 0);
  return out;
}

function read(workspace: string, p: string, c: Candidate, budget: { bytes: number }): Seen | undefined {
  let content: Buffer;
  try {
    content = c.link !== undefined ? Buffer.from(`(a symbolic link to ${c.link})\n`) : readFileSync(join(workspace, p));
  } catch {
    return undefined;
  }
  const hash = createHash('sha256')
    .update(`${c.mode.toString(8)}\0`)
    .update(content)
    .digest('hex');
  const size = content.length;
  if (size > MAX_KEPT_BYTES || budget.bytes + size > MAX_TOTAL_BYTES) return { hash };
  budget.bytes += size;
  return { hash, content };
}

/** A unified diff of two contents by `git diff --no-index` (no config, attributes, pagers or external drivers); undefined without git. */
function unifiedDiff(path: string, before: Buffer | undefined, after: Buffer | undefined): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'lar-diff-'));
  try {
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    writeFileSync(a, before ?? '');
    writeFileSync(b, after ?? '');
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LC_ALL: 'C',
    };
    const r = spawnSync('git', ['diff', '--no-index', '--no-color', '--no-ext-diff', '--no-textconv', '--', a, b], {
      encoding: 'utf8',
      env,
      timeout: 10_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    if (r.error || (r.status !== 0 && r.status !== 1)) return undefined;
    const name = path.replace(/\n/g, '\\n');
    const lines = r.stdout
      .split('\n')
      .filter((l) => !/^(diff --git|index |new file mode|deleted file mode|old mode|new mode)/.test(l))
      .map((l) => (l.startsWith('--- ') ? `--- a/${name}` : l.startsWith('+++ ') ? `+++ b/${name}` : l));
    const body = lines.slice(0, MAX_DIFF_LINES).join('\n').replace(/\n+$/, '');
    return lines.length > MAX_DIFF_LINES ? `${body}\n… ${lines.length - MAX_DIFF_LINES} more lines` : body;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the files that run later held before the first step; `changes()` compares the workspace with it. */
export class LaterBaseline {
  private constructor(
    private readonly workspace: string,
    private readonly skip: ReadonlySet<string>,
    private readonly before: ReadonlyMap<string, Seen>,
  ) {}

  static take(workspace: string, skip: Iterable<string> = []): LaterBaseline {
    const s = new Set(skip);
    const budget = { bytes: 0 };
    const before = new Map<string, Seen>();
    for (const [p, c] of candidates(workspace, s)) {
      const seen = read(workspace, p, c, budget);
      if (seen) before.set(p, seen);
    }
    return new LaterBaseline(workspace, s, before);
  }

  /** What changed since the baseline, in path order, each with its diff where both sides were kept. */
  changes(): LaterChange[] {
    const now = candidates(this.workspace, this.skip);
    const budget = { bytes: 0 };
    const out: LaterChange[] = [];
    for (const p of [...new Set([...this.before.keys(), ...now.keys()])].sort()) {
      const was = this.before.get(p);
      const c = now.get(p);
      const is = c === undefined ? undefined : read(this.workspace, p, c, budget);
      if (was && is && was.hash === is.hash) continue;
      if (!was && !is) continue;
      const change: LaterChange['change'] = !was ? 'added' : !is ? 'removed' : 'changed';
      const diff =
        (was ? was.content !== undefined : true) && (is ? is.content !== undefined : true)
          ? unifiedDiff(p, was?.content, is?.content)
          : undefined;
      out.push({ path: p, change, ...(diff ? { diff } : {}) });
    }
    return out;
  }
}

/** The list as lar run prints it and the chat shows it. */
export function describeLaterChanges(changes: readonly LaterChange[]): string {
  return changes
    .map((c) => `${c.change} ${c.path}${c.diff ? `\n${c.diff}` : c.change === 'removed' ? '' : ' (too large to show)'}`)
    .join('\n\n');
}
