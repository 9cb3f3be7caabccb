/**
 * One command's end, without a shell: whatever its files do, the session
 * hears that it ended and its caller gets a result.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Capture } from '../../../core/shell/capture';
import { RunningCommand } from '../../../core/shell/command';

const CAP = { maxBytes: 1000, maxLines: 100 };

test('a runner script that cannot be removed still ends the command: the session is told and the caller gets the output', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-cmd-'));
  try {
    let ended = 0;
    const cmd = new RunningCommand('echo hi', new Capture(join(dir, 'out.log'), 4096), {
      cap: CAP,
      signal: undefined,
      ended: () => ended++,
    });
    // A folder with a file in it where the runner script was: removing it throws.
    cmd.runner = join(dir, 'runner');
    mkdirSync(cmd.runner);
    writeFileSync(join(cmd.runner, 'x'), 'x');
    cmd.read(`__LAR_B_${cmd.begin}__\r\nhi\r\n__LAR_E_${cmd.end}_0__\r\n`);
    const result = await cmd.result;
    assert.equal(ended, 1);
    assert.equal(result.exitCode, 0);
    assert.equal(result.output, 'hi');
    assert.equal(readFileSync(join(dir, 'out.log'), 'utf8'), 'hi');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
