// ↑ recall in the chat's input (webview/recall.ts): what the user gets back when walking their messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Recall } from '../../webview/recall';

const anywhere = { onFirstLine: true, onLastLine: true };

function withMessages(...texts: string[]): Recall {
  const r = new Recall();
  for (const t of texts) r.add(t);
  return r;
}

test('↑ in the empty input brings back the last message, and again the one before', () => {
  const r = withMessages('first', 'second');
  assert.equal(r.up('', anywhere), 'second');
  assert.equal(r.up('second', anywhere), 'first');
  // At the oldest it stays there.
  assert.equal(r.up('first', anywhere), 'first');
});

test('↓ walks forward, and past the newest gives back the empty input', () => {
  const r = withMessages('first', 'second');
  r.up('', anywhere);
  r.up('second', anywhere);
  assert.equal(r.down('first', anywhere), 'second');
  assert.equal(r.down('second', anywhere), '');
  assert.equal(r.recalling, false);
  assert.equal(r.down('', anywhere), undefined, '↓ with nothing recalled moves the caret as usual');
});

test('↑ with text of the user’s own in the input moves the caret, it does not replace the text', () => {
  const r = withMessages('first');
  assert.equal(r.up('half a thought', anywhere), undefined);
});

test('typing into a recalled message ends recall: ↑ then moves the caret', () => {
  const r = withMessages('first', 'second');
  r.up('', anywhere);
  r.edited('second, edited');
  assert.equal(r.recalling, false);
  assert.equal(r.up('second, edited', anywhere), undefined);
});

test('in a recalled message of several lines, ↑ off the first line and ↓ off the last move the caret', () => {
  const r = withMessages('one', 'two\nlines');
  r.up('', anywhere);
  assert.equal(r.up('two\nlines', { onFirstLine: false, onLastLine: true }), undefined);
  assert.equal(r.down('two\nlines', { onFirstLine: true, onLastLine: false }), undefined);
  assert.equal(r.up('two\nlines', { onFirstLine: true, onLastLine: false }), 'one');
});

test('Escape ends recall and gives back what the input had before', () => {
  const r = withMessages('first');
  assert.equal(r.cancel(), undefined, 'nothing to cancel');
  r.up('  ', anywhere);
  assert.equal(r.cancel(), '  ');
  assert.equal(r.recalling, false);
});

test('a message is kept once: the same id read back again, or the same text twice in a row', () => {
  const r = new Recall();
  r.add('fix the test', 'm1');
  r.add('fix the test', 'm1');
  r.add('again', 'm2');
  r.add('again');
  assert.equal(r.up('', anywhere), 'again');
  assert.equal(r.up('again', anywhere), 'fix the test');
  assert.equal(r.up('fix the test', anywhere), 'fix the test');
});

test('a new chat has nothing to recall, and blank messages are never kept', () => {
  const r = withMessages('first');
  r.clear();
  r.add('   ');
  assert.equal(r.up('', anywhere), undefined);
});
