import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AttachOptions } from '../../core/protocol/attachments';
import { choicesFor, emptyNote, insertToken, removeToken, tokenAt } from '../../webview/attach-query';

const options: AttachOptions = {
  type: 'attachOptions',
  query: 'ma',
  files: ['src/main.ts', 'docs/manual.md'],
  selection: 'src/a.ts:3-9',
  problemsOf: 'src/a.ts',
  terminal: 'Agent terminal: $ npm test',
};

test('the picker opens on an @ at the start or after a space, not inside a word', () => {
  assert.deepEqual(tokenAt('@', 1), { start: 0, query: '' });
  assert.deepEqual(tokenAt('fix @ma', 7), { start: 4, query: 'ma' });
  assert.equal(tokenAt('mail me@example.com', 19), undefined);
  assert.equal(tokenAt('@main.ts done', 13), undefined);
});

test('the picker offers the kinds the editor has, then the files matching what is typed', () => {
  const all = choicesFor({ ...options, query: '' }, '', false);
  assert.deepEqual(
    all.map((c) => c.label),
    ['File…', 'Selection', 'Problems', 'Terminal output'],
  );
  // The user's terminal is offered beside the agent's only when shell integration let the extension read it.
  const both = choicesFor(
    { ...options, files: [], query: 'term', activeTerminal: 'Terminal "bash": $ make' },
    'term',
    false,
  );
  assert.deepEqual(
    both.map((c) => [c.detail, c.ref]),
    [
      ['Agent terminal: $ npm test', { kind: 'terminal' }],
      ['Terminal "bash": $ make', { kind: 'terminal', of: 'active' }],
    ],
  );
  assert.deepEqual(
    choicesFor(options, 'ma', false).map((c) => c.detail),
    ['src/main.ts', 'docs/manual.md'],
  );
  assert.deepEqual(
    choicesFor(options, 'ma', true).map((c) => c.ref),
    [
      { kind: 'file', path: 'src/main.ts' },
      { kind: 'file', path: 'docs/manual.md' },
    ],
  );
  // Before the extension answered, and with no selection: only what exists is offered.
  assert.deepEqual(
    choicesFor(undefined, 'sel', false).map((c) => c.label),
    [],
  );
  assert.deepEqual(
    choicesFor({ type: 'attachOptions', query: 'sel', files: [] }, 'sel', false).map((c) => c.label),
    [],
  );
});

test('a choice replaces the @word with a readable token, and removing its chip removes the token', () => {
  const text = 'explain @ma please';
  const token = tokenAt(text, 11)!;
  const out = insertToken(text, token, 11, { kind: 'file', path: 'src/main.ts' });
  assert.deepEqual(out, { text: 'explain @main.ts please', caret: 16 });
  assert.equal(removeToken('explain @main.ts and @selection', '@main.ts'), 'explain and @selection');
  assert.equal(removeToken('@selection why?', '@selection'), 'why?');
  assert.equal(removeToken('no token here', '@main.ts'), 'no token here');
});

test('with nothing to offer for @term, the picker says which terminal output it can read', () => {
  assert.match(emptyNote('term', false), /shell integration/);
  assert.equal(emptyNote('zz', false), 'Nothing to attach');
  assert.equal(emptyNote('term', true), 'No matching file');
});
