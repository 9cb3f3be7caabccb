/**
 * History as the user thinks of it: one row per conversation (its first message, when it was last active, how
 * its latest turn went), opening it back in the chat; its trajectories one click away under each row.
 */
import type { ThreadEntry } from '../core/protocol/chat';
import { formatNumber } from '../core/protocol/display';
import { setHistoryVisible } from './history';
import { el, history, send } from './page';
import type { Msg } from './state';

/** A time as the user's clock says it, to the minute (the text as it came when it is not a time). */
function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso.slice(0, 16);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** How the conversation's latest turn went: its status and, when verified, its outcome and return. */
function lastTurn(t: ThreadEntry): string {
  const figures =
    t.return === undefined ? (t.note ?? '') : `outcome ${t.outcome ?? 0} · return ${formatNumber(t.return)}`;
  return `last turn ${t.status}${figures ? `: ${figures}` : ''}`;
}

/** The conversations whose trajectories the user opened: they stay open when the list is drawn again (a run ended). */
const expanded = new Set<string>();

/** The conversation's run files, each opening its trajectory: hidden until its Trajectories button is pressed. */
function trajectories(t: ThreadEntry): { toggle: HTMLButtonElement; list: HTMLElement } {
  const list = el('div', 'thread-runs');
  list.hidden = !expanded.has(t.id);
  list.setAttribute('aria-label', 'Trajectories of this conversation');
  t.runs.forEach((r, i) => {
    const b = el('button', 'run-row');
    b.appendChild(el('span', 'run-task', `${t.turns - t.runs.length + i + 1}. ${r.task}`));
    b.appendChild(el('span', 'run-meta', `${when(r.started)} · ${r.status} · ${r.file}`));
    b.title = `Open the trajectory ${r.file}`;
    b.addEventListener('click', () => send({ type: 'openRun', file: r.file }));
    list.appendChild(b);
  });
  const toggle = el('button', 'secondary small thread-trajectories', `Trajectories (${t.runs.length})`);
  toggle.setAttribute('aria-expanded', String(!list.hidden));
  toggle.title = 'The run files of this conversation, each opening its trajectory';
  toggle.addEventListener('click', () => {
    list.hidden = !list.hidden;
    if (list.hidden) expanded.delete(t.id);
    else expanded.add(t.id);
    toggle.setAttribute('aria-expanded', String(!list.hidden));
  });
  return { toggle, list };
}

function threadRow(t: ThreadEntry, current: boolean): HTMLElement {
  const item = el('div', current ? 'thread-item current' : 'thread-item');
  item.setAttribute('role', 'listitem');
  const row = el('button', 'thread-row');
  row.appendChild(el('span', 'run-task', t.task));
  const turns = `${t.turns} turn${t.turns === 1 ? '' : 's'}`;
  row.appendChild(el('span', 'run-meta', `${when(t.lastActive)} · ${turns} · ${lastTurn(t)}`));
  // A conversation whose latest run was cut short says so at a glance (it can be resumed once opened).
  if (t.status === 'unfinished' || t.status === 'interrupted') row.appendChild(el('span', 'thread-mark', t.status));
  if (current) row.appendChild(el('span', 'thread-mark current', 'in the chat'));
  row.title = `${current ? 'Back to' : 'Open'} this conversation in the chat${t.model ? ` (${t.model})` : ''}`;
  row.addEventListener('click', () => {
    // Back to the chat: the conversation, or why it could not open, shows there.
    setHistoryVisible(false);
    send({ type: 'openThread', id: t.id });
  });
  const { toggle, list } = trajectories(t);
  for (const part of [row, toggle, list]) item.appendChild(part);
  return item;
}

/** The panel of past conversations, newest activity first. */
export function listThreads(msg: Msg<'history'>): void {
  const n = msg.threads.length;
  const heading = el(
    'div',
    'title',
    n
      ? `Conversations (${n}, latest first; outcome and return are the last turn's)`
      : 'No conversations recorded in this workspace yet.',
  );
  const list = el('div', 'runs');
  list.setAttribute('role', 'list');
  for (const t of msg.threads) list.appendChild(threadRow(t, t.id === msg.current));
  history.replaceChildren(heading, list);
}
