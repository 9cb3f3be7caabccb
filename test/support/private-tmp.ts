/**
 * Preloaded into every test process (`node --require …/private-tmp.js --test`):
 * the process and everything it starts get a temporary folder of their own
 * (TMPDIR, which `os.tmpdir()` reads), removed when the process exits. Tests
 * make their scratch folders with `mkdtempSync(join(tmpdir(), …))` as usual and
 * leave nothing behind in /tmp, so no run can depend on what an earlier one left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

if (!process.env.LAR_TEST_TMP_OWNER) {
  const dir = mkdtempSync(join(tmpdir(), 'lar-test-'));
  process.env.TMPDIR = dir;
  // Where runs record their digests (core/agent/run-digests.ts): the test's own, not the user's state folder.
  process.env.LAR_STATE_DIR = join(dir, 'state');
  // Children (shells, servers, nested node processes) share it; only this process removes it.
  process.env.LAR_TEST_TMP_OWNER = String(process.pid);
  const remove = (): void => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // A folder a test made read-only: left for the system's cleaning.
    }
  };
  process.on('exit', remove);
  // Ctrl+C or a kill ends a process without 'exit': remove the folder, then die of the signal as before.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      remove();
      process.kill(process.pid, signal);
    });
  }
}
