import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FromWebview, ToWebview, clip } from '../extension/agent/chatProtocol';
import { parseMarkdown, renderMarkdown, type MiniDocument, type MiniElement, type MiniNode } from '../extension/agent/markdown';
import { shortArgs, toStepCard } from '../extension/agent/cards';

test('messages from the webview: good ones pass, bad ones are rejected', () => {
  assert.ok(FromWebview.safeParse({ type: 'start', task: 'fix the failing test' }).success);
  assert.ok(FromWebview.safeParse({ type: 'approve', id: 'a1', approved: true }).success);
  assert.ok(FromWebview.safeParse({ type: 'action', action: 'testConnection' }).success);
  for (const bad of [
    null,
    'start',
    {},
    { type: 'start' },
    { type: 'start', task: '   ' },
    { type: 'start', task: 'x'.repeat(20_001) },
    { type: 'start', task: 'ok', extra: 1 },
    { type: 'approve', id: 'a1', approved: 'yes' },
    { type: 'approve', id: '../../etc', approved: true },
    { type: 'action', action: 'runShell' },
    { type: 'eval', code: 'alert(1)' },
  ]) {
    assert.equal(FromWebview.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

test('messages to the webview are checked too', () => {
  assert.ok(ToWebview.safeParse({ type: 'step', card: { line: 3, tool: 'read_file', args: 'a.js', status: 'ok', toolReward: 1, failed: [] } }).success);
  assert.equal(ToWebview.safeParse({ type: 'step', card: { line: 3, tool: 'read_file', args: 'a.js', status: 'ok', toolReward: 2, failed: [] } }).success, false);
  assert.equal(ToWebview.safeParse({ type: 'error', message: 'down', actions: ['rm -rf'] }).success, false);
  assert.equal(ToWebview.safeParse({ type: 'text' }).success, false);
  assert.equal(clip('abcdef', 4), 'abc…');
});

/** A fake DOM that records what was built and throws on any HTML parsing path. */
class FakeEl implements MiniElement {
  className = '';
  textContent: string | null = null;
  children: (FakeEl | FakeText)[] = [];
  constructor(readonly tag: string) {}
  appendChild(child: MiniNode): unknown {
    this.children.push(child as FakeEl | FakeText);
    return child;
  }
  set innerHTML(_v: string) {
    throw new Error('innerHTML used');
  }
  text(): string {
    return this.textContent ?? this.children.map((c) => (c instanceof FakeEl ? c.text() : c.data)).join('');
  }
  tags(): string[] {
    return [this.tag, ...this.children.flatMap((c) => (c instanceof FakeEl ? c.tags() : []))];
  }
}
class FakeText {
  constructor(readonly data: string) {}
  appendChild(): unknown {
    throw new Error('text nodes have no children');
  }
}
const fakeDoc: MiniDocument = { createElement: (t) => new FakeEl(t), createTextNode: (t) => new FakeText(t) };

test('model text with HTML stays text: no element comes from it', () => {
  const evil = 'Look: <img src=x onerror=alert(1)> and `<script>alert(2)</script>`\n\n```html\n<iframe src="javascript:alert(3)"></iframe>\n```';
  const root = renderMarkdown(fakeDoc, evil) as FakeEl;
  assert.deepEqual(root.tags().sort(), ['code', 'code', 'div', 'p', 'pre'].sort());
  assert.match(root.text(), /<img src=x onerror=alert\(1\)>/);
  assert.match(root.text(), /<script>alert\(2\)<\/script>/);
  assert.match(root.text(), /<iframe src="javascript:alert\(3\)"><\/iframe>/);
});

test('the markdown subset: paragraphs, inline code, fenced blocks', () => {
  assert.deepEqual(parseMarkdown('one\ntwo\n\nthree `x` end\n```js\nlet a = 1;\n\nlet b;\n```\nafter'), [
    { kind: 'p', inlines: [{ kind: 'text', text: 'one\ntwo' }] },
    { kind: 'p', inlines: [{ kind: 'text', text: 'three ' }, { kind: 'code', text: 'x' }, { kind: 'text', text: ' end' }] },
    { kind: 'pre', lang: 'js', text: 'let a = 1;\n\nlet b;' },
    { kind: 'p', inlines: [{ kind: 'text', text: 'after' }] },
  ]);
  // An unclosed fence runs to the end.
  assert.deepEqual(parseMarkdown('```\nopen'), [{ kind: 'pre', lang: '', text: 'open' }]);
});

test('step cards: short args, failed checks, stage change', () => {
  assert.equal(shortArgs('run_command', { command: 'npm test' }), 'npm test');
  assert.equal(shortArgs('edit_file', { path: 'src/a.js', search: 'x', replace: 'y' }), 'src/a.js');
  assert.equal(shortArgs('search', { pattern: 'foo' }), '{"pattern":"foo"}');
  const card = toStepCard(
    5,
    { type: 'tool_call', tool: 'write_file', args: { path: 'a.js', content: '' }, status: 'blocked', result: {}, at: '2026-01-01T00:00:00Z' },
    { line: 5, type: 'tool_call', step: 3, tool: 'write_file', stage: 'explore', verdicts: [{ check: 'tool.allowed_in_stage', ok: false, reason: 'write_file is not allowed in explore' }] as never, toolReward: -1, runningReturn: 0, stageVisit: { stage: 'explore', reward: 0.5 } as never },
    { decision: 'block', verdicts: [], reason: 'x', toolReward: -1 },
  );
  assert.equal(ToWebview.safeParse({ type: 'step', card }).success, true);
  assert.equal(card.blocked, true);
  assert.deepEqual(card.failed, [{ check: 'tool.allowed_in_stage', reason: 'write_file is not allowed in explore' }]);
  assert.deepEqual(card.stageVisit, { stage: 'explore', reward: 0.5 });
});
