// The chat view's browser bundle (dist/chat.js, built by esbuild.mjs) run in
// a vm against a fake DOM: it says ready, renders validated messages as text
// nodes only, ignores malformed ones, and sends schema-valid messages back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runInNewContext } from 'node:vm';
import { FromWebview } from '../extension/agent/chatProtocol';
import { root } from './support/lsp-client';

class Node_ {
  children: Node_[] = [];
  className = '';
  hidden = false;
  disabled = false;
  value = '';
  title = '';
  attrs = new Map<string, string>();
  listeners = new Map<string, ((e: unknown) => void)[]>();
  private text: string | null = null;
  constructor(
    readonly tag: string,
    readonly data?: string,
  ) {}
  get textContent(): string | null {
    return this.data ?? this.text ?? this.children.map((c) => c.textContent ?? '').join('');
  }
  set textContent(v: string | null) {
    this.text = v;
    this.children = [];
  }
  set innerHTML(_v: string) {
    throw new Error('innerHTML used');
  }
  appendChild(c: Node_) {
    this.children.push(c);
    return c;
  }
  replaceChildren(...c: Node_[]) {
    this.text = null;
    this.children = c;
  }
  setAttribute(k: string, v: string) {
    this.attrs.set(k, v);
  }
  addEventListener(t: string, f: (e: unknown) => void) {
    this.listeners.set(t, [...(this.listeners.get(t) ?? []), f]);
  }
  fire(t: string, e: unknown = {}) {
    for (const f of this.listeners.get(t) ?? []) f(e);
  }
  remove() {}
  focus() {}
  scrollIntoView() {}
  all(): Node_[] {
    return [this, ...this.children.flatMap((c) => c.all())];
  }
}

test('the chat bundle renders messages as text and posts valid messages', () => {
  const ids = new Map(['log', 'task', 'run', 'stop', 'status', 'open-trajectory', 'new-chat'].map((id) => [id, new Node_('div')]));
  const posted: unknown[] = [];
  let onMessage: ((e: { data: unknown }) => void) | undefined;
  const context = {
    document: { createElement: (t: string) => new Node_(t), createTextNode: (s: string) => new Node_('#text', s), getElementById: (id: string) => ids.get(id) ?? null },
    window: { addEventListener: (_t: string, f: (e: { data: unknown }) => void) => (onMessage = f) },
    acquireVsCodeApi: () => ({ postMessage: (m: unknown) => posted.push(JSON.parse(JSON.stringify(m))) }),
  };
  runInNewContext(readFileSync(resolve(root, 'dist/chat.js'), 'utf8'), context);
  assert.deepEqual(posted, [{ type: 'ready' }]);
  const log = ids.get('log')!;
  const evil = '<img src=x onerror=alert(1)>';
  onMessage!({ data: { type: 'runStarted', task: evil, model: 'm', endpoint: 'http://e/v1', trajectory: '.lar/runs/r.lar.jsonl' } });
  onMessage!({ data: { type: 'text', delta: evil } });
  onMessage!({ data: { type: 'assistant', text: `${evil}\n\n\`code\`` } });
  onMessage!({ data: { type: 'step', card: { line: 3, step: 1, tool: 'write_file', args: 'a.js', status: 'blocked', toolReward: -1, failed: [{ check: 'tool.allowed_in_stage', reason: 'not in explore' }], blocked: true } } });
  onMessage!({ data: { type: 'approval', id: 'a1', tool: 'run_command', args: 'rm -rf build', reason: 'matches rm -rf *' } });
  onMessage!({ data: { type: 'step', card: { line: 4, tool: 'x', args: '', status: 'ok', toolReward: 7, failed: [] } } }); // malformed: ignored
  onMessage!({ data: { type: 'error', message: 'cannot reach the server', actions: ['openSettings', 'testConnection'] } });
  const nodes = log.all();
  assert.ok(nodes.every((n) => ['div', 'p', 'code', 'pre', 'span', 'ul', 'li', 'button', '#text', 'main'].includes(n.tag)), nodes.map((n) => n.tag).join());
  assert.ok(!nodes.some((n) => n.tag === 'img'));
  assert.match(log.textContent ?? '', /<img src=x onerror=alert\(1\)>/);
  assert.match(log.textContent ?? '', /not in explore/);
  assert.doesNotMatch(log.textContent ?? '', /\b7\b/);
  const buttons = nodes.filter((n) => n.tag === 'button');
  assert.deepEqual(buttons.map((b) => b.textContent), ['Approve', 'Reject', 'Open Settings', 'Test Connection']);
  buttons[1]!.fire('click');
  buttons[3]!.fire('click');
  const task = ids.get('task')!;
  task.value = '  fix the test  ';
  ids.get('run')!.fire('click');
  assert.deepEqual(posted.slice(1), [
    { type: 'approve', id: 'a1', approved: false },
    { type: 'action', action: 'testConnection' },
    { type: 'start', task: 'fix the test' },
  ]);
  assert.ok(posted.every((m) => FromWebview.safeParse(m).success));
});
