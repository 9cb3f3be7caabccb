import assert from 'node:assert/strict';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FileRefusedError, readBoundedText } from '../../../core/workspace/bounded-read';

test('noFollow refuses a link as the last part of the path; a check sees the descriptor before anything is read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-bounded-'));
  writeFileSync(join(dir, 'real.json'), '{"ok":true}');
  symlinkSync(join(dir, 'real.json'), join(dir, 'link.json'));
  assert.equal(readBoundedText(join(dir, 'link.json'), 1024), '{"ok":true}');
  assert.throws(() => readBoundedText(join(dir, 'link.json'), 1024, 'the file', { noFollow: true }), /ELOOP/);
  let seen = -1;
  const text = readBoundedText(join(dir, 'real.json'), 1024, 'the file', { check: (fd) => (seen = fd) });
  assert.equal(text, '{"ok":true}');
  assert.ok(seen >= 0);
  assert.throws(
    () =>
      readBoundedText(join(dir, 'real.json'), 1024, 'the file', {
        check: () => {
          throw new FileRefusedError('moved');
        },
      }),
    /moved/,
  );
});
