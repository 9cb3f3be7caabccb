/**
 * Git against the shadow repository only: an environment built from nothing, config that turns off
 * hooks, filters and conversions, and one operation at a time on the shared index.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.symlinks=true',
  'core.quotePath=false',
  'core.excludesFile=',
  'core.attributesFile=',
  'core.untrackedCache=true',
  'commit.gpgSign=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'advice.addEmbeddedRepo=false',
  'advice.addIgnoredFile=false',
  'submodule.recurse=false',
  'protocol.allow=never',
].flatMap((c) => ['-c', c]);

export class ShadowGit {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    /** The store's folder: the bare repository in `git`, its own HOME, the lock. */
    private readonly dir: string,
    private readonly workspace: string,
    private readonly git: string,
  ) {}

  private env(worktree = true): NodeJS.ProcessEnv {
    // From nothing: nothing the host environment holds reaches git but PATH.
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'C',
      LC_ALL: 'C',
      TMPDIR: tmpdir(),
      HOME: join(this.dir, 'home'),
      XDG_CONFIG_HOME: join(this.dir, 'home', '.config'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_SYSTEM: '/dev/null',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_DIR: join(this.dir, 'git'),
      ...(worktree ? { GIT_WORK_TREE: this.workspace } : {}),
      GIT_INDEX_FILE: join(this.dir, 'git', 'index'),
      GIT_TERMINAL_PROMPT: '0',
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'lar-checkpoint',
      GIT_AUTHOR_EMAIL: 'checkpoint@localhost',
      GIT_COMMITTER_NAME: 'lar-checkpoint',
      GIT_COMMITTER_EMAIL: 'checkpoint@localhost',
    };
  }

  run(
    args: string[],
    opts: { worktree?: boolean; env?: NodeJS.ProcessEnv; input?: string; allowFail?: boolean } = {},
  ): Promise<{ stdout: Buffer; code: number; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        this.git,
        [...CONFIG, ...args],
        // In the workspace (pathspecs are relative to it); GIT_DIR is explicit, so nothing is discovered from here.
        {
          env: { ...this.env(opts.worktree ?? true), ...opts.env },
          cwd: (opts.worktree ?? true) ? this.workspace : this.dir,
          encoding: 'buffer',
          maxBuffer: 256 * 1024 * 1024,
          windowsHide: true,
        },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : -1
            : 0;
          if (err && !opts.allowFail)
            reject(new Error(`git ${args[0]} failed: ${stderr.toString().trim() || err.message}`));
          else resolve({ stdout, code, stderr: stderr.toString() });
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }

  /**
   * One operation at a time on the store (the index is shared): in this
   * process by a queue, across windows on the same folder by a lock
   * directory (taken over when it is older than any operation lasts).
   */
  serial<T>(f: () => Promise<T>): Promise<T> {
    const locked = async () => {
      await this.lock();
      try {
        return await f();
      } finally {
        rmSync(join(this.dir, 'lock'), { recursive: true, force: true });
      }
    };
    const next = this.queue.then(locked, locked);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async lock(): Promise<void> {
    const path = join(this.dir, 'lock');
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        mkdirSync(path);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      try {
        if (Date.now() - statSync(path).mtimeMs > 5 * 60_000) rmSync(path, { recursive: true, force: true });
      } catch {
        // Released meanwhile.
      }
      if (Date.now() > deadline)
        throw new Error(`the checkpoint store is busy (${path} held by another window for a minute)`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
