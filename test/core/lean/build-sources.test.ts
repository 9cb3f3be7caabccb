/**
 * What `lar verify --backend lean` copies and hashes before `lake build lar-verify`: the lakefile, the
 * toolchain pin and `Main.lean`'s import closure, so that a change to a proof or to the specification
 * never rebuilds the checker (a first build can take half an hour), while any change to the checker does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hashSources, leanHeaderImports, sourceFiles } from '../../../core/lean/build';

const LEAN = path.resolve(__dirname, '../../../../lean');

test('the sources are the lakefile, the toolchain pin and the checker modules, and no proof', () => {
  const files = sourceFiles(LEAN);
  for (const f of ['lakefile.toml', 'lean-toolchain', 'Main.lean', 'Lar.lean', 'Lar/Verifier.lean', 'Lar/Protocol.lean'])
    assert.ok(files.includes(f), `${f} is built`);
  assert.deepEqual(
    files.filter((f) => f.startsWith('LarProofs') || f.startsWith('Lar/Spec/')),
    [],
  );
});

test('the header reader reads import lines after comments, module and modifiers, and stops at the first other line', () => {
  assert.deepEqual(leanHeaderImports('/- a\n/- nested -/ -/\nmodule\npublic import A.B C -- c\n\nimport D\ndef x := 1\nimport E'), [
    'A.B',
    'C',
    'D',
  ]);
  assert.deepEqual(leanHeaderImports('prelude\nimport Init.Core'), ['Init.Core']);
});

test('editing a proof keeps the hash, editing the checker changes it', () => {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'lar-lean-src-'));
  fs.cpSync(LEAN, copy, { recursive: true, filter: (src) => !src.includes(`${path.sep}.lake`) });
  const before = hashSources(copy);
  fs.appendFileSync(path.join(copy, 'LarProofs', 'Gate.lean'), '\n-- a new comment in a proof\n');
  fs.appendFileSync(path.join(copy, 'Lar', 'Spec', 'Trajectory.lean'), '\n-- and in the specification\n');
  assert.equal(hashSources(copy), before, 'a proof or specification edit reuses the built checker');
  fs.appendFileSync(path.join(copy, 'Lar', 'Glob.lean'), '\n-- a checker edit\n');
  assert.notEqual(hashSources(copy), before, 'a checker edit rebuilds it');
  fs.rmSync(copy, { recursive: true, force: true });
});
