/**
 * Checkpoints of a workspace in a shadow git repository that lives outside
 * it (the editor's storage), so "restore to step N" never touches the user's
 * repository: not its index, branches, stash or hooks. Git runs with an
 * environment built from nothing (no GIT_* the host leaked, no global or
 * system config, no hooks, no filters, no line-ending conversion), on a
 * persistent index that is its stat cache. A snapshot is write-tree +
 * commit-tree + update-ref (plumbing: no hooks, no HEAD). A restore is a
 * two-tree `read-tree -m -u` from a fresh snapshot of the present to the
 * target: only paths that differ change, nothing untracked is ever cleaned,
 * and it is verified afterwards and can itself be undone (to that snapshot).
 *
 * Not captured, so never deleted by a restore: what the workspace's
 * .gitignore files ignore, node_modules, .lar (our own records), files above
 * the size cap, and nested git repositories.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointId } from '../schema/trajectory';
import { isInside } from '../workspace/fs';
import { changedAmong, diffFiles, withPathsFrom, type FileDiff } from './run-diff';
import { ShadowGit } from './shadow-git';

export interface Checkpoint {
  commit: string;
  tree: string;
  /** Untracked files left out for their size (workspace-relative). */
  skipped: string[];
  /** Nested repositories left out (their content is theirs). */
  nested: string[];
  ms: number;
}

/** What a restore to the target does to a path, seen from the present. */
export interface CheckpointChange {
  path: string;
  /** `deleted`: made after the checkpoint; `added`: deleted since, comes back; `modified`: reverted. */
  change: 'added' | 'deleted' | 'modified';
}

export interface RestoreResult {
  /** The snapshot of the present the restore started from: restoring to it undoes the restore. */
  pre: string;
  changes: CheckpointChange[];
  /** Paths that could not be put back (a permission, a file in the way); empty when the restore is whole. */
  leftovers: string[];
  ms: number;
}

export interface StoreOptions {
  /** Where the shadow repositories live (the extension's global storage); one per workspace inside it. */
  storage: string;
  workspace: string;
  /** Untracked files larger than this are not captured. Default 5 MiB. */
  maxFileBytes?: number;
  /** The git program. Default `git` on PATH. */
  git?: string;
}

/** Always left out: dependencies, and the run records that say what happened (a restore must not rewrite them). */
const ALWAYS_EXCLUDED = ['node_modules/', '/.lar/'];
const ALWAYS_EXCLUDED_SPECS = [
  ':(exclude,top,literal).lar',
  ':(exclude,top,glob)**/node_modules/**',
  ':(exclude,top,literal)node_modules',
];

/** A commit of this store, as the API takes one (never anything git could read as an option or a range). */
function commitId(c: string): string {
  if (!CheckpointId.safeParse(c).success) throw new Error(`not a checkpoint id: ${JSON.stringify(c.slice(0, 80))}`);
  return c;
}

export class CheckpointStore {
  private readonly skipped = new Set<string>();
  private readonly nested = new Set<string>();
  private readonly repo: ShadowGit;

  private constructor(
    readonly dir: string,
    readonly workspace: string,
    git: string,
    private readonly maxFileBytes: number,
    private readonly userExcludes: string,
  ) {
    this.repo = new ShadowGit(dir, workspace, git);
  }

  /**
   * The store of `workspace` (made on first use), or why there can be none
   * (no git, a workspace the store would sit inside).
   */
  static async open(opts: StoreOptions): Promise<CheckpointStore | { unavailable: string }> {
    const workspace = realpathSync(opts.workspace);
    const dir = join(opts.storage, 'checkpoints', createHash('sha256').update(workspace).digest('hex').slice(0, 16));
    if (isInside(workspace, dir, false)) return { unavailable: 'the checkpoint storage is inside the workspace' };
    let userExcludes = '';
    try {
      // The user's own repository-local excludes, read as text (git never runs against their repository).
      userExcludes = readFileSync(join(workspace, '.git', 'info', 'exclude'), 'utf8');
    } catch {
      // No repository, or no excludes.
    }
    const store = new CheckpointStore(
      dir,
      workspace,
      opts.git ?? 'git',
      opts.maxFileBytes ?? 5 * 1024 * 1024,
      userExcludes,
    );
    try {
      await store.init();
    } catch (e) {
      return { unavailable: `git could not make the checkpoint store: ${e instanceof Error ? e.message : String(e)}` };
    }
    return store;
  }

  private async init(): Promise<void> {
    mkdirSync(join(this.dir, 'home'), { recursive: true, mode: 0o700 });
    if (!existsSync(join(this.dir, 'git', 'HEAD'))) {
      // Without a work tree in the environment: nothing points the store at the workspace but each call.
      await this.repo.run(['init', '-q', '--bare', '--template='], { worktree: false });
      writeFileSync(
        join(this.dir, 'meta.json'),
        JSON.stringify({ workspace: this.workspace, createdAt: new Date().toISOString() }, null, 2),
      );
    }
    mkdirSync(join(this.dir, 'git', 'info'), { recursive: true });
    // Bytes round-trip as they are: no eol conversion, no ident, no filters, whatever the workspace's .gitattributes say.
    writeFileSync(join(this.dir, 'git', 'info', 'attributes'), '* -text -filter -ident -working-tree-encoding\n');
    this.writeExcludes();
  }

  private writeExcludes(): void {
    // The user's excludes first, ours last (a later line wins in one file). These only keep listings
    // short: what is left out is enforced by the pathspecs of every add (a workspace .gitignore, which
    // outranks this file, cannot bring them back).
    const lines = ['# Written by Lean4 Agentic: what checkpoints leave out.', this.userExcludes, ...ALWAYS_EXCLUDED];
    writeFileSync(join(this.dir, 'git', 'info', 'exclude'), `${lines.join('\n')}\n`);
  }

  /** What every add and listing covers: the whole workspace but what is left out, as literal pathspecs (any file name). */
  private specList(): string[] {
    return [
      ':(top)',
      ...ALWAYS_EXCLUDED_SPECS,
      ...[...this.skipped, ...this.nested].map((p) => `:(exclude,top,literal)${p}`),
    ];
  }

  private pathspecs(): string {
    return `${this.specList().join('\0')}\0`;
  }

  /** Leaves out new untracked files above the size cap (they are listed on the checkpoint). */
  private async capSizes(): Promise<void> {
    const out = await this.repo.run(['ls-files', '-z', '--others', '--exclude-standard', '--', ...this.specList()]);
    let changed = false;
    for (const path of out.stdout.toString('utf8').split('\0')) {
      if (!path || this.skipped.has(path)) continue;
      try {
        const st = statSync(join(this.workspace, path));
        if (st.isFile() && st.size > this.maxFileBytes) {
          this.skipped.add(path);
          changed = true;
        }
      } catch {
        // Gone since the listing.
      }
    }
    if (changed) await this.forget([...this.skipped]);
  }

  /** Takes paths out of the index (they were captured before they were left out). */
  private async forget(paths: string[]): Promise<void> {
    if (!paths.length) return;
    await this.repo.run(
      ['rm', '--cached', '-f', '-q', '-r', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'],
      { input: `${paths.map((p) => `:(top,literal)${p}`).join('\0')}\0` },
    );
  }

  /** Nested repositories became gitlinks: they are left out (and listed). */
  private async dropGitlinks(): Promise<void> {
    const out = await this.repo.run(['ls-files', '-s', '-z']);
    const links: string[] = [];
    for (const entry of out.stdout.toString('utf8').split('\0')) {
      if (entry.startsWith('160000 ')) links.push(entry.slice(entry.indexOf('\t') + 1));
    }
    if (!links.length) return;
    for (const l of links) this.nested.add(l);
    await this.forget(links);
  }

  private async capture(): Promise<string> {
    await this.capSizes();
    // --ignore-errors: an unreadable file is skipped (and said), not the whole snapshot; anything else is an error.
    const add = await this.repo.run(['add', '-A', '--ignore-errors', '--pathspec-from-file=-', '--pathspec-file-nul'], {
      input: this.pathspecs(),
      allowFail: true,
    });
    // (It also exits 1 to say that an excluded path is ignored anyway: that is not a failure.)
    if (add.code !== 0 && /fatal:|index\.lock/.test(add.stderr))
      throw new Error(`git add failed: ${add.stderr.trim().split('\n').slice(0, 3).join(' ')}`);
    await this.dropGitlinks();
    return (await this.repo.run(['write-tree'])).stdout.toString().trim();
  }

  /** The workspace now, as a commit under `refs/lar/<ref>`. */
  async snapshot(ref: string, message: string): Promise<Checkpoint> {
    return this.repo.serial(() => this.snapshotNow(ref, message));
  }

  private async snapshotNow(ref: string, message: string): Promise<Checkpoint> {
    if (
      !/^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$/.test(ref) ||
      ref.includes('..') ||
      ref.endsWith('/') ||
      ref.endsWith('.lock')
    )
      throw new Error(`not a checkpoint name: ${ref}`);
    const t0 = Date.now();
    const tree = await this.capture();
    const full = `refs/lar/${ref}`;
    // No parent: each checkpoint stands alone (blobs and trees are shared by content anyway), so
    // forgetting an old one's ref lets its objects go.
    const commit = (await this.repo.run(['commit-tree', tree, '-m', message])).stdout.toString().trim();
    await this.repo.run(['update-ref', full, commit]);
    await this.repo.run(['update-ref', 'refs/lar/latest', commit]);
    return { commit, tree, skipped: [...this.skipped].sort(), nested: [...this.nested].sort(), ms: Date.now() - t0 };
  }

  private async changesBetween(from: string, to: string): Promise<CheckpointChange[]> {
    const out = await this.repo.run([
      'diff-tree',
      '-r',
      '-z',
      '--no-renames',
      '--name-status',
      commitId(from),
      commitId(to),
    ]);
    const parts = out.stdout
      .toString('utf8')
      .split('\0')
      .filter((x) => x !== '');
    const changes: CheckpointChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const status = parts[i]!;
      const path = parts[i + 1]!;
      // Read from the present (from) to the target (to).
      const change = status === 'A' ? 'added' : status === 'D' ? 'deleted' : 'modified';
      changes.push({ path, change });
    }
    return changes;
  }

  /** What restoring `target` would change, from the workspace as it is now (a snapshot of it is taken). */
  async preview(target: string): Promise<{ pre: Checkpoint; changes: CheckpointChange[] }> {
    commitId(target);
    return this.repo.serial(async () => {
      await this.exists(target);
      const pre = await this.snapshotNow(`restores/${Date.now()}-pre`, 'before a restore');
      return { pre, changes: await this.changesBetween(pre.commit, target) };
    });
  }

  /**
   * Puts the workspace back to `target`, starting from `pre` (a preview's
   * snapshot: the restore refuses if the workspace changed since). Only the
   * paths that differ change; a file in the way (untracked, not captured)
   * stops it before anything is written.
   */
  async restore(target: string, pre: string): Promise<RestoreResult> {
    commitId(target);
    commitId(pre);
    return this.repo.serial(async () => {
      const t0 = Date.now();
      await this.exists(target);
      await this.exists(pre);
      const now = await this.capture();
      const preTree = (await this.repo.run(['rev-parse', `${pre}^{tree}`])).stdout.toString().trim();
      if (now !== preTree) throw new Error('the workspace changed since the preview: preview the restore again');
      const changes = await this.changesBetween(pre, target);
      const r = await this.repo.run(['read-tree', '-m', '-u', pre, target], { allowFail: true });
      if (r.code !== 0) throw new Error(`nothing was restored: ${r.stderr.trim().split('\n').slice(0, 3).join(' ')}`);
      // Verify: what is on disk now is the target, path for path.
      const after = await this.capture();
      const want = (await this.repo.run(['rev-parse', `${target}^{tree}`])).stdout.toString().trim();
      const leftovers = after === want ? [] : (await this.changesBetween(want, after)).map((c) => c.path);
      await this.repo.run(['update-ref', 'refs/lar/latest', target]);
      return { pre, changes, leftovers, ms: Date.now() - t0 };
    });
  }

  /**
   * Forgets checkpoints older than `maxAgeMs` (their runs' and restores'
   * refs) and lets git reclaim their objects. Restoring such a step then
   * says there is no such checkpoint. Returns how many were forgotten.
   */
  prune(maxAgeMs: number, now = Date.now()): Promise<number> {
    return this.repo.serial(async () => {
      const out = await this.repo.run(
        ['for-each-ref', '--format=%(refname) %(committerdate:unix)', 'refs/lar/runs', 'refs/lar/restores'],
        { worktree: false },
      );
      const old = out.stdout
        .toString()
        .split('\n')
        .map((l) => l.trim().split(' '))
        .filter(([ref, t]) => ref && t && Number(t) * 1000 < now - maxAgeMs)
        .map(([ref]) => ref!);
      if (!old.length) return 0;
      await this.repo.run(['update-ref', '--stdin'], {
        worktree: false,
        input: old.map((r) => `delete ${r}\n`).join(''),
      });
      // Objects only the forgotten refs kept go now (refs/lar/latest and every younger ref keep theirs).
      await this.repo.run(['reflog', 'expire', '--expire=now', '--all'], { worktree: false, allowFail: true });
      await this.repo.run(['gc', '--prune=now', '--quiet'], { worktree: false, allowFail: true });
      return old.length;
    });
  }

  /** Whether `commit` is a commit of this store (else a clear error, not git's). */
  private async exists(commit: string): Promise<void> {
    const r = await this.repo.run(['cat-file', '-t', commitId(commit)], { allowFail: true });
    if (r.code !== 0 || r.stdout.toString().trim() !== 'commit')
      throw new Error(`no checkpoint ${commit.slice(0, 12)} in this workspace's store`);
  }

  /** A file's content at a checkpoint, or undefined when it did not exist there. */
  async show(commit: string, path: string): Promise<Buffer | undefined> {
    commitId(commit);
    const r = await this.repo.run(['cat-file', 'blob', `${commit}:${path}`], { allowFail: true });
    return r.code === 0 ? r.stdout : undefined;
  }

  /** Every file that differs from checkpoint `from` to checkpoint `to`, with line counts (a run's review). */
  async diffFiles(from: string, to: string): Promise<FileDiff[]> {
    return diffFiles(this.repo, commitId(from), commitId(to));
  }

  /**
   * What putting only `paths` back as they were at `source` would do, from the workspace as it is now: the
   * snapshot of now (`pre`), the commit to restore (now's tree but for those paths), and which of the paths
   * changed since checkpoint `since` (edited after the run ended). `restore(target, pre.commit)` then
   * changes those paths and nothing else.
   */
  async previewFiles(
    source: string,
    paths: string[],
    since: string,
  ): Promise<{ pre: Checkpoint; target: string; changedSince: string[] }> {
    commitId(source);
    commitId(since);
    return this.repo.serial(async () => {
      await this.exists(source);
      await this.exists(since);
      const pre = await this.snapshotNow(`restores/${Date.now()}-pre`, 'before putting files back');
      const at = { base: pre.commit, source, paths };
      const target = await withPathsFrom(this.repo, join(this.dir, 'git', 'files-index'), at);
      await this.repo.run(['update-ref', `refs/lar/restores/${Date.now()}-files`, target]);
      return { pre, target, changedSince: await changedAmong(this.repo, since, pre.commit, paths) };
    });
  }
}
