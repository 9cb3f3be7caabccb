/**
 * The sandbox's bounds (core/sandbox/limits.ts) without a sandbox: sizes, the
 * defaults, the workflow's `sandbox.limits`, bwrap's `--size` before every
 * tmpfs, and the launcher that enters the cgroup before bwrap runs.
 * test/suites/sandbox-escape.test.ts runs them for real (a fork bomb, a memory filler, a
 * full tmpfs).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bwrapArgs, type Mounts } from '../../../core/sandbox/bwrap';
import {
  defaultMemory,
  formatSize,
  GiB,
  limitValues,
  MiB,
  parseSize,
  tmpfsSize,
} from '../../../core/sandbox/limit-values';
import { SandboxLimits } from '../../../core/sandbox/limits';
import { SandboxSection, Workflow } from '../../../core/schema/workflow';

describe('sizes and defaults', () => {
  test('sizes are whole numbers of bytes, K, M, G or T (powers of 1024)', () => {
    assert.equal(parseSize('512M'), 512 * MiB);
    assert.equal(parseSize('8G'), 8 * GiB);
    assert.equal(parseSize('1024'), 1024);
    assert.equal(parseSize('2T'), 2 * 1024 * GiB);
    for (const bad of ['', '0', '08G', '1.5G', '8g', '8 G', '8GB', 'G', '-1M'])
      assert.throws(() => parseSize(bad), /not a size/, bad);
    assert.equal(formatSize(256 * MiB), '256 MiB');
    assert.equal(formatSize(8 * GiB), '8 GiB');
    assert.equal(formatSize(1.5 * GiB), '1.5 GiB');
  });

  test('the defaults are for ordinary work: memory half the RAM but at most 8 GiB, 4096 tasks, 1 GiB of /tmp', () => {
    assert.equal(defaultMemory(64 * GiB), 8 * GiB);
    assert.equal(defaultMemory(4 * GiB), 2 * GiB);
    assert.deepEqual(limitValues(undefined, 6 * GiB), { memory: 3 * GiB, tasks: 4096, tmp: GiB });
    assert.deepEqual(limitValues({ memory: '512M', tasks: 100, tmp: '64M' }, 6 * GiB), {
      memory: 512 * MiB,
      tasks: 100,
      tmp: 64 * MiB,
    });
  });

  test("every tmpfs gets a size from /tmp's: the homes and /var/tmp half, /run and /dev/shm a quarter, a hidden folder 1 MiB", () => {
    assert.equal(tmpfsSize('/tmp', GiB, 'scratch'), GiB);
    assert.equal(tmpfsSize('/var/tmp', GiB, 'scratch'), GiB / 2);
    assert.equal(tmpfsSize('/run', GiB, 'scratch'), GiB / 4);
    assert.equal(tmpfsSize('/dev/shm', GiB, 'scratch'), GiB / 4);
    assert.equal(tmpfsSize('/home/me', GiB, 'home'), GiB / 2);
    assert.equal(tmpfsSize('/home/me/.ssh', GiB, 'hidden'), MiB);
  });
});

describe("the workflow's sandbox.limits", () => {
  test('absent, or any of memory, tasks and tmp: parsed; the defaults are left to the host', () => {
    assert.deepEqual(
      Workflow.parse({
        lar: 1,
        id: 'w',
        stages: [{ id: 's', tools: ['submit'], budget: 1 }],
        transitions: {},
        start: 's',
        terminal: ['s'],
        outcome: { command: 'true' },
      }).sandbox.limits,
      {},
    );
    assert.deepEqual(SandboxSection.parse({ limits: { memory: '4G', tasks: 2000, tmp: '2G' } }).limits, {
      memory: '4G',
      tasks: 2000,
      tmp: '2G',
    });
  });

  test('what is not a size, too small, or an unknown key is refused with where and why', () => {
    for (const [limits, message] of [
      [{ memory: '4GB' }, /limits\.memory: a size is a whole number followed by K, M, G or T/],
      [{ memory: 4294967296 }, /limits\.memory/],
      [{ memory: '32M' }, /limits\.memory: must be at least 64M/],
      [{ tmp: '512K' }, /limits\.tmp: must be at least 1M/],
      [{ tasks: 8 }, /limits\.tasks/],
      [{ tasks: 100.5 }, /limits\.tasks/],
      [{ cpu: 2 }, /limits.*cpu/],
    ] as const) {
      const r = SandboxSection.safeParse({ limits });
      assert.equal(r.success, false, JSON.stringify(limits));
      assert.match(
        r.error.issues.map((i) => `${i.path.join('.')}: ${i.message} ${'keys' in i ? String(i.keys) : ''}`).join('; '),
        message,
      );
    }
  });
});

describe('bwrap arguments and the launcher', () => {
  const mounts: Mounts = {
    workspace: '/srv/ws',
    home: '/root',
    network: 'none',
    disableUserns: true,
    readOnly: [],
    readable: [],
    writable: [],
    hiddenDirs: ['/srv/secret'],
    hiddenFiles: [],
    chdir: '/srv/ws',
    tmp: 256 * MiB,
  };

  test('every --tmpfs has its --size just before it, hidden folders included; a bwrap without --size gets none', () => {
    const a = bwrapArgs(mounts);
    const at = a.flatMap((x, i) => (x === '--tmpfs' ? [i] : []));
    assert.ok(at.length >= 6, a.join(' '));
    for (const i of at) assert.equal(a[i - 2], '--size', `before --tmpfs ${a[i + 1]}`);
    // --size N --tmpfs DIR
    const size = (dir: string) => Number(a[at.find((i) => a[i + 1] === dir)! - 1]);
    assert.equal(size('/tmp'), 256 * MiB);
    assert.equal(size('/dev/shm'), 64 * MiB);
    assert.equal(size('/srv/secret'), MiB);
    const { tmp: _, ...unsized } = mounts;
    assert.ok(!bwrapArgs(unsized).includes('--size'));
  });

  test('the launcher enters the cgroup (or sets the rlimits) and only then execs bwrap with its arguments unchanged', () => {
    const limits = SandboxLimits.open({ memory: 256 * MiB, tasks: 64, tmp: GiB }, { mechanisms: ['rlimit'] });
    try {
      const w = limits.wrap({ file: '/usr/bin/bwrap', args: ['--unshare-all', '--', 'x y'] });
      assert.equal(w.file, '/bin/sh');
      assert.equal(w.args[0], '-c');
      assert.match(w.args[1]!, /ulimit -d 262144\b.*exec "\$@"$/);
      if (process.getuid?.() === 0) assert.doesNotMatch(w.args[1]!, /ulimit -u/, 'RLIMIT_NPROC does not apply to root');
      else assert.match(w.args[1]!, /ulimit -u 64\b/);
      assert.deepEqual(w.args.slice(2), ['lar-limits', '0', '/usr/bin/bwrap', '--unshare-all', '--', 'x y']);
    } finally {
      void limits.dispose();
    }
  });
});
