/**
 * The chat view's script (bundled for the browser to dist/chat.js). Every
 * message from the extension is validated with the shared zod schema; model
 * text becomes DOM nodes through textContent only (see ../markdown.ts).
 */
import { FromWebview, ToWebview, formatTokens, type ErrorAction, type HistoryEntry, type StepCard } from '../chatProtocol';
import { StageTimeline } from '../timeline';
import { renderMarkdown, type MiniDocument } from '../markdown';
import { formatReward } from '../../decorations';

// The little of the DOM used here (the project compiles without the DOM lib).
interface El {
  className: string;
  textContent: string | null;
  hidden: boolean;
  disabled: boolean;
  value: string;
  title: string;
  appendChild(child: unknown): unknown;
  setAttribute(name: string, value: string): void;
  addEventListener(type: string, listener: (e: KeyEvent) => void): void;
  remove(): void;
  replaceChildren(...nodes: unknown[]): void;
  focus(): void;
  scrollIntoView(opts?: unknown): void;
}
interface KeyEvent {
  key?: string;
  shiftKey?: boolean;
  isComposing?: boolean;
  preventDefault(): void;
  data?: unknown;
}
interface Doc {
  createElement(tag: string): El;
  createTextNode(text: string): unknown;
  getElementById(id: string): El | null;
}
declare const document: Doc;
declare const window: {
  addEventListener(type: 'message', listener: (e: { data: unknown }) => void): void;
  addEventListener(type: 'keydown', listener: (e: KeyEvent) => void): void;
};
declare function acquireVsCodeApi(): { postMessage(msg: unknown): void };

const vscode = acquireVsCodeApi();
const $ = (id: string): El => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el;
};
const log = $('log');
const task = $('task');
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
const timeline = new StageTimeline();

function send(msg: FromWebview): void {
  const ok = FromWebview.safeParse(msg);
  if (ok.success) vscode.postMessage(ok.data);
}

function el(tag: string, cls?: string, text?: string): El {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Adds a finished node (children included) and scrolls so all of it shows. */
function append(node: El): El {
  log.appendChild(node);
  node.scrollIntoView({ block: 'end' });
  return node;
}

function rewardClass(n: number | undefined): string {
  return n === undefined ? 'badge' : n > 0 ? 'badge pos' : n < 0 ? 'badge neg' : 'badge zero';
}

let streaming: El | undefined;
let streamed = '';
let running = false;
const approvals = new Map<string, El>();

/** The collapsed reasoning of the answer being streamed, and its text. */
let thinking: El | undefined;
let thought = '';

function endStream(): void {
  streaming = undefined;
  streamed = '';
  thinking = undefined;
  thought = '';
  thoughtText = undefined;
  thoughtSummary = undefined;
}

/** The reasoning box of the current answer, made (collapsed, above the answer) on first use. */
function reasoningBox(): El {
  if (!thinking) {
    thinking = el('details', 'reasoning');
    thinking.appendChild(el('summary', '', 'Thinking'));
    thinking.appendChild(el('div', 'reasoning-text'));
    if (streaming) {
      // The answer already streaming moves below its reasoning.
      log.appendChild(thinking);
      log.appendChild(streaming);
    } else append(thinking);
  }
  return thinking;
}

/** The reasoning box's text: set whole (a final answer, a retract) or grown by a delta (appended, not rebuilt). */
let thoughtText: El | undefined;
let thoughtSummary: El | undefined;

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


function stepCard(c: StepCard): El {
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
  if (c.change) {
    const id = c.change.id;
    const row = el('div', 'row');
    const diff = el('button', 'secondary small', 'Diff');
    diff.title = `Show what this step ${c.change.created ? 'created in' : 'changed in'} ${c.change.path}`;
    diff.setAttribute('aria-label', `Show the diff of ${c.change.path}`);
    diff.addEventListener('click', () => send({ type: 'showChange', id }));
    row.appendChild(diff);
    card.appendChild(row);
  }
  if (c.stageVisit) {
    const s = el('div', 'stage-change');
    s.appendChild(el('span', rewardClass(Math.sign(c.stageVisit.reward)), formatReward(Number(c.stageVisit.reward.toFixed(3)))));
    s.appendChild(document.createTextNode(` stage ${c.stageVisit.stage} closed`));
    card.appendChild(s);
  }
  return card;
}

function drawTimeline(): void {
  timelineBar.hidden = timeline.visits.length === 0;
  const chips = timeline.visits.map((v, i) => {
    const last = i === timeline.visits.length - 1;
    const chip = el('span', `chip ${v.reward === undefined ? 'open' : rewardClass(Math.sign(v.reward)).replace('badge ', '')}`);
    chip.appendChild(document.createTextNode(v.stage));
    if (v.reward !== undefined) chip.appendChild(el('span', 'chip-reward', ` ${formatReward(Number(v.reward.toFixed(3)))}`));
    chip.setAttribute('role', 'listitem');
    chip.setAttribute(
      'aria-label',
      `${v.stage}: ${v.reward === undefined ? (last ? 'in progress' : 'open') : `reward ${v.reward.toFixed(3)}`}, ${v.steps} step${v.steps === 1 ? '' : 's'}`,
    );
    if (v.reward === undefined && last) chip.setAttribute('aria-current', 'step');
    return chip;
  });
  const parts: unknown[] = [];
  chips.forEach((c, i) => {
    if (i) parts.push(el('span', 'arrow', '→'));
    parts.push(c);
  });
  timelineBar.setAttribute('role', 'list');
  timelineBar.replaceChildren(...parts);
}

function historyRow(r: HistoryEntry): El {
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

function actionButton(action: ErrorAction): El {
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
  if (!r) task.focus();
}

function receive(msg: ToWebview): void {
  switch (msg.type) {
    case 'focusInput':
      task.focus();
      return;
    case 'queued': {
      const u = el('div', 'msg user queued');
      u.appendChild(renderMarkdown(document as unknown as MiniDocument, msg.text));
      u.title = 'Reaches the agent at its next turn';
      append(u);
      return;
    }
    case 'clear':
      log.replaceChildren();
      approvals.clear();
      endStream();
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
      if (!msg.shown) {
        const u = el('div', 'msg user');
        u.appendChild(renderMarkdown(document as unknown as MiniDocument, msg.task));
        append(u);
      }
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
      if (!streaming) streaming = append(el('div', 'msg assistant streaming'));
      streamed += msg.delta;
      streaming.textContent = streamed;
      streaming.scrollIntoView({ block: 'end' });
      return;
    case 'reasoning':
      thought += msg.delta;
      showReasoning(thought, msg.delta);
      return;
    case 'retract': {
      const moved = streamed.slice(0, msg.chars);
      streamed = streamed.slice(msg.chars);
      thought += moved;
      showReasoning(thought);
      if (streaming) streaming.textContent = streamed;
      return;
    }
    case 'assistant': {
      if (msg.reasoning) showReasoning(msg.reasoning);
      if (msg.text) {
        const target = streaming ?? append(el('div', 'msg assistant'));
        target.className = 'msg assistant';
        target.replaceChildren(renderMarkdown(document as unknown as MiniDocument, msg.text));
        target.scrollIntoView({ block: 'end' });
      } else streaming?.remove();
      endStream();
      return;
    }
    case 'context': {
      contextBar.hidden = false;
      contextBar.textContent = `${formatTokens(msg.used)} / ${formatTokens(msg.window)}`;
      contextBar.className = msg.used > msg.window * 0.8 ? 'context full' : 'context';
      contextBar.title = `Context in use: ${msg.used.toLocaleString()} prompt tokens of the model's ${msg.window.toLocaleString()}-token window${msg.assumed ? ' (assumed: the server does not report it; set lean4Agentic.contextLength)' : ''}. The conversation is compacted when it fills.`;
      return;
    }
    case 'compaction':
      endStream();
      append(el('div', 'compaction', msg.text));
      return;
    case 'step':
      endStream();
      append(stepCard(msg.card));
      if (timeline.apply(msg.card)) drawTimeline();
      return;
    case 'connection': {
      connection.hidden = false;
      connection.className = `conn ${msg.state}`;
      const text =
        msg.state === 'checking'
          ? `Checking ${msg.endpoint}…`
          : msg.state === 'connected'
            ? `● Connected: ${msg.model ?? '?'} · ${msg.endpoint}${msg.window ? ` · ${formatTokens(msg.window.tokens)} context${msg.window.assumed ? ' (assumed)' : ''}` : ''}`
            : `✕ Not connected to ${msg.endpoint}: ${msg.message ?? ''}`;
      const parts: unknown[] = [el('span', 'conn-text', text)];
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
      const heading = el('div', 'title', msg.runs.length ? `Past runs (${msg.runs.length}, newest first)` : 'No runs recorded in this workspace yet.');
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
      if (box) box.replaceChildren(el('div', msg.approved ? 'why ok' : 'why no', msg.approved ? 'Approved.' : 'Rejected.'));
      approvals.delete(msg.id);
      return;
    }
    case 'outcome': {
      endStream();
      const o = el('div', `outcome ${msg.passed ? 'pass' : 'fail'}`);
      o.appendChild(el('div', 'title', `Outcome check: ${msg.command} → ${msg.exitCode === null ? 'no exit code' : `exit ${msg.exitCode}`} (${msg.passed ? 'passed' : 'failed'})`));
      if (msg.excerpt) o.appendChild(el('pre', 'excerpt', msg.excerpt));
      append(o);
      return;
    }
    case 'end': {
      endStream();
      if (msg.reason === 'answered') {
        // A question answered is not a failed task: the turn is the user's.
        append(el('div', 'answered', 'Answered. Send a follow-up to continue this conversation, or New to start over.'));
        return;
      }
      const e = el('div', 'end');
      const text = `Run ended: ${msg.reason}${msg.detail ? ` (${msg.detail})` : ''}`;
      e.appendChild(el('div', 'title', text));
      if (msg.summary) {
        e.appendChild(el('div', 'summary', `outcome ${msg.summary.outcome} · return ${msg.summary.return.toFixed(3)} · ${msg.summary.steps} steps`));
      }
      append(e);
      return;
    }
    case 'error': {
      endStream();
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
showHistory.addEventListener('click', () => setHistoryVisible(history.hidden));
stop.addEventListener('click', () => send({ type: 'stop' }));
openTrajectory.addEventListener('click', () => send({ type: 'openTrajectory' }));
newChat.addEventListener('click', () => send({ type: 'newChat' }));
window.addEventListener('message', (e) => {
  const parsed = ToWebview.safeParse(e.data);
  if (parsed.success) receive(parsed.data);
});
drawTimeline();
send({ type: 'ready' });
