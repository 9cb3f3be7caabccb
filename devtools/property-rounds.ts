/**
 * `npm run test:properties [-- ROUNDS]`: every property suite (the test files
 * that take fast-check from test/support/fc.ts) ROUNDS times in a row (default
 * 20), each round with a fresh random seed, printed; stops at the first failing
 * round and names its seed, so `LAR_PROPERTY_SEED=<seed> npm run test:unit`
 * replays it.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './paths';

const rounds = Number(process.argv[2] ?? 20);
if (!Number.isSafeInteger(rounds) || rounds < 1) {
  process.stderr.write(
    `usage: npm run test:properties [-- ROUNDS] (a positive whole number, got ${process.argv[2]})\n`,
  );
  process.exit(2);
}
// test/ mirrors the source tree: the property suites are found at any depth.
const suites = readdirSync(join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .filter(
    (f) =>
      f.endsWith('.test.ts') && /from '(?:\.\.?\/)+support\/fc'/.test(readFileSync(join(REPO_ROOT, 'test', f), 'utf8')),
  )
  .map((f) => join(REPO_ROOT, 'out', 'test', f.replace(/\.ts$/, '.js')));
if (suites.length === 0) {
  process.stderr.write('no property suites found under test/ (test files that import support/fc)\n');
  process.exit(1);
}
process.stdout.write(`${suites.length} property suites, ${rounds} rounds\n`);
for (let i = 1; i <= rounds; i++) {
  const seed = randomBytes(4).readUInt32BE(0);
  const r = spawnSync(
    process.execPath,
    ['--require', join(REPO_ROOT, 'out', 'test', 'support', 'private-tmp.js'), '--test', ...suites],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, LAR_PROPERTY_SEED: String(seed) },
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  const count = (what: string): string => new RegExp(`^# ${what} (\\d+)`, 'm').exec(r.stdout)?.[1] ?? '?';
  process.stdout.write(`round ${i}: seed ${seed}, ${count('pass')} passed, ${count('fail')} failed\n`);
  if (r.status !== 0) {
    process.stdout.write(
      r.stdout
        .split('\n')
        .filter((l) => /^not ok|^\s+error:|Counterexample|seed:/.test(l))
        .join('\n') + '\n',
    );
    process.stdout.write(`round ${i} failed: replay with LAR_PROPERTY_SEED=${seed} npm run test:unit\n`);
    process.exit(1);
  }
}
process.stdout.write(`${rounds} rounds passed, each with its own seed\n`);
