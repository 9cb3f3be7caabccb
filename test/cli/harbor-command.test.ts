import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { lar } from '../support/lar-cli';

/** A Harbor job folder with one trial of the oracle (no trajectory), as `harbor run` leaves it. */
function job(reward: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'lar-job-'));
  writeFileSync(join(dir, 'config.json'), '{}');
  writeFileSync(join(dir, 'result.json'), '{}');
  for (const name of ['t__a', 't__b']) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'config.json'), JSON.stringify({ agent: { name: 'oracle', kwargs: {} } }));
    const result = { task_name: 'x/t', trial_name: name, reward_valid: true, verifier_result: { rewards: { reward } } };
    writeFileSync(join(dir, name, 'result.json'), JSON.stringify(result));
  }
  return dir;
}

test('lar harbor replaces a link a crafted job folder put where it writes, and never writes through it', async () => {
  const dir = job(1);
  const victim = join(mkdtempSync(join(tmpdir(), 'lar-victim-')), 'victim.txt');
  writeFileSync(victim, 'precious\n');
  symlinkSync(victim, join(dir, 't__a', 'lar-rewards.json'));
  const r = await lar(['harbor', dir, '--json']);
  assert.equal(r.code, 0, r.err);
  assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  assert.ok(lstatSync(join(dir, 't__a', 'lar-rewards.json')).isFile());
  const out = JSON.parse(r.out) as { tasks: { passes: number; pass1: number; meanReturn: number }[] };
  assert.deepEqual(
    out.tasks.map((t) => [t.passes, t.pass1, t.meanReturn]),
    [[2, 1, 1]],
  );
});

test('lar harbor refuses a folder that is not a Harbor job, saying what it is', async () => {
  const r = await lar(['harbor', mkdtempSync(join(tmpdir(), 'lar-nojob-'))]);
  assert.equal(r.code, 2);
  assert.match(r.err, /not a Harbor job folder/);
});
