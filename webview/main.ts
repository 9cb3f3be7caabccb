/**
 * The chat view's script (bundled for the browser to dist/chat.js). Every
 * message from the extension is validated with the shared zod schema; model
 * text becomes DOM nodes through textContent only (see ../markdown.ts).
 */
import { FromWebview, ToWebview, type ErrorAction, type HistoryEntry, type StepCard } from '../core/protocol/chat';
import { formatReward, formatTokens } from '../core/protocol/display';
import { StageTimeline } from './timeline';
import { MarkdownStream, renderMarkdown, type MiniDocument, type RenderHooks } from './markdown';

/** The webview's handle on the extension (VS Code injects it; one call per page). */
declare function acquireVsCodeApi(): { postMessage(msg: unknown): void };

const vscode = acquireVsCodeApi();
/** The page's element `id`, as the kind of element the page (extension/chat/view.ts) declares it. */
function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
}
const log = $('log');
const task = $<HTMLTextAreaElement>('task');
const run = $('run');
const stop = $('stop');
const status = $('status');
const openTrajectory = $('open-trajectory');
const newChat = $('new-chat');
const showHistory = $('show-history');
const history = $('history');
const timelineBar = $('timeline');
const connection = $('connection');
const contextBar = $('context');
const activity = $('activity');
const activityText = $('activity-text');
const counters = $('counters');
const jump = $('jump');
const timeline = new StageTimeline();
const doc: MiniDocument<HTMLElement> = document;

function send(msg: FromWebview): void {
  const ok = FromWebview.safeParse(msg);
  if (ok.success) vscode.postMessage(ok.data);
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/*
 * Stick to the bottom only while the reader is there: scrolling up (wheel,
 * keys, the scrollbar) lets them read while the run goes on; coming back to
 * the bottom, or "Jump to latest", follows again. Only the log scrolls (never
 * scrollIntoView, which also moves the view's own frame).
 */
const NEAR_BOTTOM = 32;
let stick = true;
const atBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight <= NEAR_BOTTOM;
function pin(): void {
  if (stick) log.scrollTop = log.scrollHeight;
  jump.hidden = stick;
}
log.addEventListener('scroll', () => {
  stick = atBottom();
  jump.hidden = stick;
});
log.addEventListener('wheel', (e) => {
  // Upward, on the log itself (a code block or a command's output scrolls on its own), and only when the log can scroll.
  const target = e.target as Element | null;
  const inner = typeof target?.closest === 'function' ? target.closest('pre, .md table') : null;
  if (e.deltaY < 0 && !inner && log.scrollHeight > log.clientHeight) stick = false;
});
jump.addEventListener('click', () => {
  stick = true;
  pin();
});
const inner = $('log-inner');
if (typeof ResizeObserver === 'function') new ResizeObserver(pin).observe(inner);

/** Adds a finished node (children included) and follows it if the reader is at the bottom. */
function append(node: HTMLElement): HTMLElement {
  inner.appendChild(node);
  pin();
  return node;
}

/** Links open through the extension (which checks them); code blocks get a Copy button. */
const hooks: RenderHooks<HTMLElement> = {
  link(a, href) {
    const el = a;
    const open = (e: Event) => {
      // Stopped here, the webview host's own link handler never sees it: one policy, one opening.
      e.preventDefault();
      e.stopPropagation();
      send({ type: 'openLink', href });
    };
    el.addEventListener('click', open);
    el.addEventListener('auxclick', (e) => {
      e.preventDefault();
      e.stopPropagation();
    });
  },
  codeBlock(head, code) {
    const b = el('button', 'secondary small copy', 'Copy');
    b.title = 'Copy the code';
    b.setAttribute('aria-label', 'Copy the code');
    b.addEventListener('click', () => {
      send({ type: 'copy', text: code.slice(0, 200_000) });
      b.textContent = 'Copied';
      setTimeout(() => (b.textContent = 'Copy'), 1500);
    });
    head.appendChild(b);
  },
};
const markdown = (text: string): HTMLElement => renderMarkdown(doc, text, hooks);

/** A message of the user's, as the chat shows it. */
function userBubble(text: string, cls = 'msg user'): HTMLElement {
  const u = el('div', cls);
  u.appendChild(markdown(text));
  return u;
}

function rewardClass(n: number | undefined): string {
  return n === undefined ? 'badge' : n > 0 ? 'badge pos' : n < 0 ? 'badge neg' : 'badge zero';
}

let streaming: HTMLElement | undefined;
let streamed = '';
/** The streamed answer: its settled blocks (rendered once), then the open tail (rendered again each frame). */
let stream: MarkdownStream<HTMLElement> | undefined;
let tailNode: HTMLElement | undefined;
let frame = false;
let running = false;
const schedule = (f: () => void) =>
  typeof requestAnimationFrame === 'function' ? requestAnimationFrame(f) : setTimeout(f, 16);

/** Draws what streamed since the last frame (at most once a frame, however many deltas came). */
function drawStream(): void {
  frame = false;
  if (!streaming || !stream) return;
  const u = stream.update(streamed);
  for (const d of u.done) streaming.insertBefore(d, tailNode ?? null);
  const tail = u.tail;
  if (tailNode) tailNode.replaceWith(tail);
  else streaming.appendChild(tail);
  tailNode = tail;
  pin();
}

function requestDraw(): void {
  if (frame) return;
  frame = true;
  schedule(drawStream);
}
const approvals = new Map<string, HTMLElement>();
/** The Resume button of an interrupted run's notice, while it can still be used. */
let resumeButton: HTMLButtonElement | undefined;

/** The collapsed reasoning of the answer being streamed, and its text. */
let thinking: HTMLElement | undefined;
let thought = '';

function endStream(): void {
  streaming = undefined;
  streamed = '';
  stream = undefined;
  tailNode = undefined;
  thinking = undefined;
  thought = '';
  thoughtText = undefined;
  thoughtSummary = undefined;
}

/** The reasoning box of the current answer, made (collapsed, above the answer) on first use. */
function reasoningBox(): HTMLElement {
  if (!thinking) {
    thinking = el('details', 'reasoning');
    thinking.appendChild(el('summary', '', 'Thinking'));
    thinking.appendChild(el('div', 'reasoning-text'));
    if (streaming) {
      // The answer already streaming moves below its reasoning.
      inner.appendChild(thinking);
      inner.appendChild(streaming);
      pin();
    } else append(thinking);
  }
  return thinking;
}

/** The reasoning box's text: set whole (a final answer, a retract) or grown by a delta (appended, not rebuilt). */
let thoughtText: HTMLElement | undefined;
let thoughtSummary: HTMLElement | undefined;

function showReasoning(text: string, delta?: string): void {
  const box = reasoningBox();
  if (delta === undefined || !thoughtText || !thoughtSummary) {
    thoughtSummary = el('summary', '', '');
    thoughtText = el('div', 'reasoning-text');
    thoughtText.appendChild(document.createTextNode(text));
    box.replaceChildren(thoughtSummary, thoughtText);
  } else thoughtText.appendChild(document.createTextNode(delta));
  thoughtSummary.textContent = `Thinking (${text.length.toLocaleString()} characters)`;
}

function stepCard(c: StepCard): HTMLElement {
  const card = el('div', `card${c.blocked ? ' blocked' : ''}`);
  card.setAttribute('role', 'group');
  const head = el('div', 'card-head');
  const badge = el('span', rewardClass(c.toolReward), c.toolReward === undefined ? '·' : formatReward(c.toolReward));
  badge.title = 'tool reward';
  head.appendChild(badge);
  head.appendChild(el('span', 'tool', c.tool));
  head.appendChild(el('span', `status s-${c.status}`, c.status));
  if (c.stage) head.appendChild(el('span', 'stage', c.stage));
  if (c.step) head.appendChild(el('span', 'num', `#${c.step}`));
  // Only calls that took a while say how long: a quick read is not news.
  if (c.durationMs !== undefined && c.durationMs >= 1000)
    head.appendChild(el('span', 'num', `${(c.durationMs / 1000).toFixed(1)} s`));
  card.appendChild(head);
  card.appendChild(el('code', 'args', c.args));
  if (c.failed.length) {
    const ul = el('ul', 'failed');
    for (const f of c.failed) {
      const li = el('li');
      li.appendChild(el('span', 'check', f.check));
      li.appendChild(document.createTextNode(`: ${f.reason}`));
      ul.appendChild(li);
    }
    card.appendChild(ul);
  }
  if (c.excerpt) card.appendChild(el('pre', 'excerpt', c.excerpt));
  const row = el('div', 'row');
  if (c.change) {
    const id = c.change.id;
    const diff = el('button', 'secondary small', 'Diff');
    diff.title = `Show what this step ${c.change.created ? 'created in' : 'changed in'} ${c.change.path}`;
    diff.setAttribute('aria-label', `Show the diff of ${c.change.path}`);
    diff.addEventListener('click', () => send({ type: 'showChange', id }));
    row.appendChild(diff);
  }
  if (c.checkpoint) {
    const commit = c.checkpoint;
    const restore = el('button', 'secondary small', 'Restore to here');
    restore.title = `Put the workspace back as it was before this step${c.step ? ` (#${c.step})` : ''}: the diff is shown first`;
    const run = c.run ? { run: c.run } : {};
    restore.addEventListener('click', () =>
      send({ type: 'restoreCheckpoint', commit, ...(c.step ? { step: c.step } : {}), ...run }),
    );
    row.appendChild(restore);
    if (c.step) {
      const step = c.step;
      const branch = el('button', 'secondary small', 'Branch from here');
      branch.title =
        'Go back to before this step, the workspace and the conversation, and continue from there in a new run';
      branch.addEventListener('click', () => send({ type: 'branchFrom', commit, step, ...run }));
      row.appendChild(branch);
    }
  }
  if (c.change || c.checkpoint) card.appendChild(row);
  if (c.stageVisit) {
    const s = el('div', 'stage-change');
    s.appendChild(
      el('span', rewardClass(Math.sign(c.stageVisit.reward)), formatReward(Number(c.stageVisit.reward.toFixed(3)))),
    );
    s.appendChild(document.createTextNode(` stage ${c.stageVisit.stage} closed`));
    card.appendChild(s);
  }
  return card;
}

function drawTimeline(): void {
  timelineBar.hidden = timeline.visits.length === 0;
  const chips = timeline.visits.map((v, i) => {
    const last = i === timeline.visits.length - 1;
    const chip = el(
      'span',
      `chip ${v.reward === undefined ? 'open' : rewardClass(Math.sign(v.reward)).replace('badge ', '')}`,
    );
    chip.appendChild(document.createTextNode(v.stage));
    if (v.reward !== undefined)
      chip.appendChild(el('span', 'chip-reward', ` ${formatReward(Number(v.reward.toFixed(3)))}`));
    chip.setAttribute('role', 'listitem');
    chip.setAttribute(
      'aria-label',
      `${v.stage}: ${v.reward === undefined ? (last ? 'in progress' : 'open') : `reward ${v.reward.toFixed(3)}`}, ${v.steps} step${v.steps === 1 ? '' : 's'}`,
    );
    if (v.reward === undefined && last) chip.setAttribute('aria-current', 'step');
    return chip;
  });
  const parts: (string | Node)[] = [];
  chips.forEach((c, i) => {
    if (i) parts.push(el('span', 'arrow', '→'));
    parts.push(c);
  });
  timelineBar.setAttribute('role', 'list');
  timelineBar.replaceChildren(...parts);
}

function historyRow(r: HistoryEntry): HTMLElement {
  const b = el('button', 'run-row');
  const when = r.started.replace('T', ' ').slice(0, 16);
  const figures = r.return === undefined ? (r.note ?? '') : `return ${r.return.toFixed(3)} · outcome ${r.outcome ?? 0}`;
  b.appendChild(el('span', 'run-task', r.task));
  b.appendChild(el('span', 'run-meta', `${when} · ${r.status} · ${r.steps} steps${figures ? ` · ${figures}` : ''}`));
  b.title = `Open ${r.file}${r.model ? ` (${r.model})` : ''}`;
  b.addEventListener('click', () => send({ type: 'openRun', file: r.file }));
  return b;
}

function setHistoryVisible(show: boolean): void {
  history.hidden = !show;
  log.hidden = show;
  showHistory.setAttribute('aria-expanded', String(show));
  showHistory.textContent = show ? 'Chat' : 'History';
  if (show) send({ type: 'history' });
}

const ACTION_LABEL: Record<ErrorAction, string> = {
  openSettings: 'Open Settings',
  openEndpointSetting: 'Open Endpoint Setting',
  openModelSetting: 'Open Model Setting',
  openWorkflowSetting: 'Open Workflow Setting',
  testConnection: 'Test Connection',
  setApiKey: 'Set API Key',
};

function actionButton(action: ErrorAction): HTMLElement {
  const label = ACTION_LABEL[action];
  const b = el('button', 'secondary', label);
  b.addEventListener('click', () => send({ type: 'action', action }));
  return b;
}

function setRunning(r: boolean): void {
  running = r;
  // The input stays open during a run: what is typed reaches the agent at its next turn.
  run.textContent = r ? 'Queue' : 'Run';
  run.title = r ? 'Send to the agent at its next turn' : 'Run the task';
  stop.hidden = !r;
  if (!r) {
    // However the run stopped (an error posts no end), nothing stays "running".
    for (const c of liveCards.values()) {
      c.el.className = 'card stopped';
      c.el.setAttribute('aria-busy', 'false');
    }
    liveCards.clear();
    setActivity(undefined);
    task.focus();
  }
}

/** What the agent is doing now (shown under the log with its elapsed time), and the run's counters. */
let current: { text: string; since: number } | undefined;
let run_: { started: number; ended?: number; steps: number; tokens: number } | undefined;
let ticker: ReturnType<typeof setInterval> | undefined;

function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function setActivity(a: { text: string; since: number } | undefined): void {
  current = a;
  tick();
}

function drawCounters(): void {
  counters.hidden = !run_;
  if (!run_) return;
  const time = elapsed((run_.ended ?? Date.now()) - run_.started);
  counters.textContent = `${run_.steps} step${run_.steps === 1 ? '' : 's'} · ${formatTokens(run_.tokens)} tokens · ${time}`;
  counters.title = `This run: ${run_.steps} verified steps, ${run_.tokens.toLocaleString()} completion tokens, ${time}${run_.ended ? '' : ' so far'}`;
}

/** One clock for the activity line, the counters and every live card. */
function tick(): void {
  activity.hidden = !current && !run_;
  activityText.hidden = !current;
  activityText.textContent = current ? `${current.text} · ${elapsed(Date.now() - current.since)}` : '';
  drawCounters();
  for (const c of liveCards.values()) c.clock.textContent = elapsed(Date.now() - c.started);
  const live =
    current !== undefined || liveCards.size > 0 || (run_ !== undefined && run_.ended === undefined && running);
  if (live && !ticker) ticker = setInterval(tick, 1000);
  if (!live && ticker) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

interface LiveCard {
  el: HTMLElement;
  output: HTMLElement;
  clock: HTMLElement;
  bytes: HTMLElement;
  started: number;
}
const liveCards = new Map<string, LiveCard>();

/** The card of a call that is running: its command, a clock, and the tail of its output as it comes. */
function liveCard(tool: string, args: string): LiveCard {
  const card = el('div', 'card live');
  card.setAttribute('role', 'group');
  card.setAttribute('aria-busy', 'true');
  const head = el('div', 'card-head');
  head.appendChild(el('span', 'spinner', ''));
  head.appendChild(el('span', 'tool', tool));
  head.appendChild(el('span', 'status s-running', 'running'));
  const clock = el('span', 'num clock', '0 s');
  const bytes = el('span', 'num bytes', '');
  head.appendChild(clock);
  head.appendChild(bytes);
  card.appendChild(head);
  card.appendChild(el('code', 'args', args));
  const output = el('pre', 'excerpt live-output');
  output.hidden = true;
  output.setAttribute('aria-label', 'Latest output');
  card.appendChild(output);
  return { el: card, output, clock, bytes, started: Date.now() };
}

function receive(msg: ToWebview): void {
  switch (msg.type) {
    case 'focusInput':
      task.focus();
      return;
    case 'queued': {
      const u = userBubble(msg.text, 'msg user queued');
      u.title = 'Reaches the agent at its next turn';
      stick = true;
      append(u);
      return;
    }
    case 'checkpointRestored': {
      const box = el('div', 'restored-checkpoint');
      box.setAttribute('role', 'status');
      box.appendChild(el('span', '', msg.text));
      const undo = el('button', 'secondary small', 'Undo');
      undo.title = 'Put the workspace back as it was just before this restore';
      undo.addEventListener('click', () => send({ type: 'restoreCheckpoint', commit: msg.undo }));
      box.appendChild(undo);
      append(box);
      return;
    }
    case 'restored':
      append(el('div', 'restored-note', msg.text));
      return;
    case 'laterChanges': {
      // Read before committing: the user's own tools run these, outside any sandbox.
      const box = el('div', 'later-changes');
      box.setAttribute('role', 'status');
      const n = msg.files.length + msg.more;
      box.appendChild(
        el(
          'div',
          'title',
          `${n} changed file${n === 1 ? '' : 's'} that run later: your tools (make, npm, git hooks, a shell) may execute ${n === 1 ? 'it' : 'them'} outside the sandbox. Read the ${n === 1 ? 'diff' : 'diffs'} before you commit.`,
        ),
      );
      for (const f of msg.files) {
        const d = el('details', 'later-file');
        d.appendChild(el('summary', '', `${f.change} ${f.path}`));
        d.appendChild(
          el('pre', 'diff', f.diff ?? (f.change === 'removed' ? '(removed)' : '(too large to show: open the file)')),
        );
        box.appendChild(d);
      }
      if (msg.more)
        box.appendChild(el('div', '', `… and ${msg.more} more (lar run and the output channel list them all)`));
      append(box);
      return;
    }
    case 'userMessage':
      append(userBubble(msg.text));
      return;
    case 'interrupted': {
      const box = el('div', 'interrupted');
      box.setAttribute('role', 'status');
      box.appendChild(el('div', 'title', msg.text));
      if (msg.resumable) {
        const row = el('div', 'row');
        const resume = el('button', '', 'Resume');
        resume.title = 'Continue this run in a new run of the chat, from its trajectory';
        resume.addEventListener('click', () => {
          resume.disabled = true;
          send({ type: 'resume', file: msg.file });
        });
        row.appendChild(resume);
        box.appendChild(row);
        resumeButton = resume;
      }
      append(box);
      return;
    }
    case 'clear':
      inner.replaceChildren();
      approvals.clear();
      liveCards.clear();
      endStream();
      setActivity(undefined);
      run_ = undefined;
      drawCounters();
      status.textContent = '';
      contextBar.hidden = true;
      openTrajectory.hidden = true;
      timeline.clear();
      drawTimeline();
      return;
    case 'state':
      setRunning(msg.running);
      return;
    case 'runStarted': {
      endStream();
      setHistoryVisible(false);
      timeline.clear();
      drawTimeline();
      // The user sent something: follow the run from here.
      stick = true;
      // Resumed or not, the notice's button is spent once another run begins.
      if (resumeButton) resumeButton.disabled = true;
      resumeButton = undefined;
      run_ = { started: Date.now(), steps: 0, tokens: 0 };
      drawCounters();
      if (!msg.shown) append(userBubble(msg.task));
      // How the commands of this run are confined, under the task: a warning when they are not.
      const box = el('div', msg.sandbox.confined ? 'sandbox-note' : 'sandbox-note unconfined');
      box.textContent = msg.sandbox.confined ? `Commands: ${msg.sandbox.text}` : `Commands run ${msg.sandbox.text}`;
      append(box);
      if (msg.rules?.length) append(el('div', 'rules-note', `Rules in force: ${msg.rules.join(', ')}`));
      status.textContent = `${msg.model} · ${msg.endpoint}`;
      status.title = msg.trajectory;
      openTrajectory.hidden = false;
      return;
    }
    case 'text':
      setActivity(undefined);
      if (!streaming) {
        streaming = append(el('div', 'msg assistant streaming'));
        stream = new MarkdownStream(doc, hooks);
      }
      streamed += msg.delta;
      requestDraw();
      return;
    case 'reasoning':
      setActivity(undefined);
      thought += msg.delta;
      showReasoning(thought, msg.delta);
      return;
    case 'retract': {
      const moved = streamed.slice(0, msg.chars);
      streamed = streamed.slice(msg.chars);
      thought += moved;
      showReasoning(thought);
      if (streaming) {
        // Drawn again from the start: the text that moved may have been in settled blocks.
        streaming.replaceChildren();
        stream = new MarkdownStream(doc, hooks);
        tailNode = undefined;
        requestDraw();
      }
      return;
    }
    case 'assistant': {
      if (msg.reasoning) showReasoning(msg.reasoning);
      setActivity(undefined);
      if (msg.text) {
        // The whole answer once more: this rendering is the authoritative one.
        const target = streaming ?? append(el('div', 'msg assistant'));
        target.className = 'msg assistant';
        target.replaceChildren(markdown(msg.text));
        pin();
      } else streaming?.remove();
      endStream();
      return;
    }
    case 'context': {
      contextBar.hidden = false;
      contextBar.textContent = `${formatTokens(msg.used)} / ${formatTokens(msg.window)}`;
      contextBar.className = msg.used > msg.window * 0.8 ? 'context full' : 'context';
      contextBar.title = `Context in use: ${msg.used.toLocaleString()} prompt tokens of the model's ${msg.window.toLocaleString()}-token window${msg.assumed ? ' (assumed: the server does not report it; set lean4Agentic.contextLength)' : ''}. The conversation is compacted when it fills.`;
      if (run_ && msg.completionTokens !== undefined) {
        run_.tokens = msg.completionTokens;
        drawCounters();
      }
      return;
    }
    case 'waiting':
      if (running) setActivity({ text: 'Waiting for the model', since: Date.now() });
      return;
    case 'toolStarted': {
      endStream();
      const card = liveCard(msg.tool, msg.args);
      liveCards.set(msg.id, card);
      append(card.el);
      setActivity({ text: `Running ${msg.tool === 'run_command' ? msg.args : msg.tool}`, since: card.started });
      return;
    }
    case 'toolOutput': {
      const card = liveCards.get(msg.id);
      if (!card) return;
      card.output.hidden = msg.tail.length === 0;
      card.output.textContent = msg.tail;
      card.bytes.textContent = msg.bytes ? formatBytes(msg.bytes) : '';
      // The newest line shows, as in a terminal.
      card.output.scrollTop = card.output.scrollHeight;
      pin();
      return;
    }
    case 'compaction':
      endStream();
      append(el('div', 'compaction', msg.text));
      return;
    case 'step': {
      endStream();
      setActivity(undefined);
      const card = stepCard(msg.card);
      const live = msg.card.id ? liveCards.get(msg.card.id) : undefined;
      if (live) {
        // The finished card takes the live card's place.
        liveCards.delete(msg.card.id!);
        live.el.replaceWith(card);
        pin();
      } else append(card);
      if (run_ && msg.card.step !== undefined) {
        run_.steps = Math.max(run_.steps, msg.card.step);
        drawCounters();
      }
      if (timeline.apply(msg.card)) drawTimeline();
      return;
    }
    case 'connection': {
      connection.hidden = false;
      connection.className = `conn ${msg.state}`;
      const text =
        msg.state === 'checking'
          ? `Checking ${msg.endpoint}…`
          : msg.state === 'connected'
            ? `● Connected: ${msg.model ?? '?'} · ${msg.endpoint}${msg.window ? ` · ${formatTokens(msg.window.tokens)} context${msg.window.assumed ? ' (assumed)' : ''}` : ''}`
            : `✕ Not connected to ${msg.endpoint}: ${msg.message ?? ''}`;
      const parts: (string | Node)[] = [el('span', 'conn-text', text)];
      // Where the endpoint in force is set: a workspace value outranks the user's.
      if (msg.endpointSource && msg.state !== 'checking')
        parts.push(el('span', 'conn-source', ` (endpoint from ${msg.endpointSource})`));
      if (msg.state === 'failed') {
        const row = el('div', 'row');
        for (const a of msg.actions) row.appendChild(actionButton(a));
        const retry = el('button', 'secondary', 'Retry');
        retry.addEventListener('click', () => send({ type: 'checkConnection' }));
        row.appendChild(retry);
        parts.push(row);
      }
      connection.replaceChildren(...parts);
      return;
    }
    case 'history': {
      const heading = el(
        'div',
        'title',
        msg.runs.length ? `Past runs (${msg.runs.length}, newest first)` : 'No runs recorded in this workspace yet.',
      );
      const list = el('div', 'runs');
      list.setAttribute('role', 'list');
      for (const r of msg.runs) {
        const item = el('div', 'run-item');
        item.setAttribute('role', 'listitem');
        item.appendChild(historyRow(r));
        list.appendChild(item);
      }
      history.replaceChildren(heading, list);
      return;
    }
    case 'approval': {
      endStream();
      setActivity({ text: 'Waiting for your approval', since: Date.now() });
      const box = el('div', 'approval');
      box.setAttribute('role', 'alertdialog');
      box.appendChild(el('div', 'why', `Approve ${msg.tool}? ${msg.reason}`));
      box.appendChild(el('code', 'args', msg.args));
      const yes = el('button', '', 'Approve');
      const no = el('button', 'secondary', 'Reject');
      yes.addEventListener('click', () => send({ type: 'approve', id: msg.id, approved: true }));
      no.addEventListener('click', () => send({ type: 'approve', id: msg.id, approved: false }));
      const row = el('div', 'row');
      row.appendChild(yes);
      row.appendChild(no);
      box.appendChild(row);
      append(box);
      approvals.set(msg.id, box);
      yes.focus();
      return;
    }
    case 'approvalDone': {
      const box = approvals.get(msg.id);
      if (box)
        box.replaceChildren(el('div', msg.approved ? 'why ok' : 'why no', msg.approved ? 'Approved.' : 'Rejected.'));
      approvals.delete(msg.id);
      return;
    }
    case 'outcome': {
      endStream();
      const o = el('div', `outcome ${msg.passed ? 'pass' : 'fail'}`);
      o.appendChild(
        el(
          'div',
          'title',
          `Outcome check: ${msg.command} → ${msg.exitCode === null ? 'no exit code' : `exit ${msg.exitCode}`} (${msg.passed ? 'passed' : 'failed'})`,
        ),
      );
      if (msg.excerpt) o.appendChild(el('pre', 'excerpt', msg.excerpt));
      append(o);
      return;
    }
    case 'end': {
      endStream();
      setActivity(undefined);
      for (const c of liveCards.values()) c.el.remove();
      liveCards.clear();
      if (run_) {
        run_.ended = Date.now();
        drawCounters();
      }
      if (msg.reason === 'answered') {
        // A question answered is not a failed task: the turn is the user's.
        append(
          el('div', 'answered', 'Answered. Send a follow-up to continue this conversation, or New to start over.'),
        );
        return;
      }
      const e = el('div', 'end');
      const text = `Run ended: ${msg.reason}${msg.detail ? ` (${msg.detail})` : ''}`;
      e.appendChild(el('div', 'title', text));
      if (msg.summary) {
        e.appendChild(
          el(
            'div',
            'summary',
            `outcome ${msg.summary.outcome} · return ${msg.summary.return.toFixed(3)} · ${msg.summary.steps} steps`,
          ),
        );
      }
      append(e);
      return;
    }
    case 'error': {
      endStream();
      setActivity(undefined);
      const e = el('div', 'error');
      e.setAttribute('role', 'alert');
      e.appendChild(el('div', 'title', msg.message));
      if (msg.actions.length) {
        const row = el('div', 'row');
        for (const a of msg.actions) row.appendChild(actionButton(a));
        e.appendChild(row);
      }
      append(e);
      return;
    }
  }
}

function submit(): void {
  const text = task.value.trim();
  if (!text) return;
  send({ type: 'start', task: text });
  task.value = '';
}

run.addEventListener('click', submit);
task.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});
// Escape stops a run from anywhere in the view, as the Stop button does.
window.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && running) send({ type: 'stop' });
});
showHistory.addEventListener('click', () => setHistoryVisible(history.hidden !== false));
stop.addEventListener('click', () => send({ type: 'stop' }));
openTrajectory.addEventListener('click', () => send({ type: 'openTrajectory' }));
newChat.addEventListener('click', () => send({ type: 'newChat' }));
window.addEventListener('message', (e) => {
  const parsed = ToWebview.safeParse(e.data);
  if (parsed.success) receive(parsed.data);
});
drawTimeline();
send({ type: 'ready' });
