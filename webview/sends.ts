/**
 * The messages the user sends, until the extension answers for each: its bubble shows at once and stays,
 * marked failed with Retry and Edit, when it could not be sent (nothing typed is lost); ↑ recalls them.
 */
import type { AttachmentRef } from '../core/protocol/attachments';
import type { ErrorAction } from '../core/protocol/chat';
import { restoreInput } from './attachments';
import { actionButton } from './history';
import { el, send, task } from './page';
import { Recall } from './recall';
import { append } from './scroll';
import { state, type Msg } from './state';
import { userBubble } from './stream';

/** How long the extension has to say it got a message before the bubble says it was not sent. */
const RECEIPT_MS = 10_000;

/** A message sent and not yet answered, or failed (it may be sent again). */
interface Outgoing {
  id: string;
  text: string;
  /** What the user attached (`@`): sent again with a Retry, back in the input with Edit. */
  refs: readonly AttachmentRef[];
  bubble: HTMLElement;
  timer?: ReturnType<typeof setTimeout>;
  received: boolean;
  /** The reason and the buttons under a failed bubble. */
  failure?: HTMLElement;
}

const outgoing = new Map<string, Outgoing>();
const recall = new Recall();
let seq = 0;

/** Unique over reloads of the view (a failed message read back keeps its id for Retry). */
function newId(): string {
  return `m${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** Sends what the user typed: the bubble now, its fate when the extension answers. */
export function sendMessage(text: string, refs: readonly AttachmentRef[] = []): void {
  const o: Outgoing = { id: newId(), text, refs, bubble: userBubble(text), received: false };
  state.stick = true;
  append(o.bubble);
  recall.add(text, o.id);
  dispatch(o);
}

function dispatch(o: Outgoing): void {
  outgoing.set(o.id, o);
  clearTimeout(o.timer);
  o.received = false;
  setBubble(o, 'msg user sending', true);
  o.bubble.title = 'Sending…';
  o.timer = setTimeout(() => {
    if (!o.received)
      markFailed(o, `the extension did not answer within ${RECEIPT_MS / 1000} s (reload the window if it goes on)`, []);
  }, RECEIPT_MS);
  send({ type: 'start', id: o.id, task: o.text, ...(o.refs.length ? { attachments: [...o.refs] } : {}) });
}

function setBubble(o: Outgoing, cls: string, busy = false): void {
  o.bubble.className = cls;
  o.bubble.setAttribute('aria-busy', String(busy));
  o.bubble.title = '';
  o.failure?.remove();
  o.failure = undefined;
}

export function sendReceived(msg: Msg<'sendReceived'>): void {
  const o = outgoing.get(msg.id);
  if (!o) return;
  o.received = true;
  clearTimeout(o.timer);
  // It came after the wait ran out: the message is on its way after all, and a Retry would send it twice.
  if (o.failure) setBubble(o, 'msg user sending', true);
}

/**
 * The run started or the message was queued: its bubble, now `cls`; drawn here when it is not in the log yet
 * (a reload's replay, a message the chat sends itself). Kept by id: the model may still fail to answer it.
 */
export function bubbleFor(id: string | undefined, text: string, cls: string): HTMLElement {
  const known = id === undefined ? undefined : outgoing.get(id);
  const o = known ?? { id: id ?? '', text, refs: [], bubble: append(userBubble(text)), received: true };
  o.received = true;
  clearTimeout(o.timer);
  setBubble(o, cls);
  recall.add(text, id);
  if (id !== undefined) outgoing.set(id, o);
  return o.bubble;
}

/** The extension could not send it (or a reload reads back one that failed): the bubble says why. */
export function sendFailed(msg: Msg<'sendFailed'>): void {
  bubbleFor(msg.id, msg.task, 'msg user');
  markFailed(outgoing.get(msg.id)!, msg.reason, msg.actions);
}

function markFailed(o: Outgoing, reason: string, actions: ErrorAction[]): void {
  clearTimeout(o.timer);
  setBubble(o, 'msg user send-failed');
  const box = el('div', 'send-failure');
  box.setAttribute('role', 'alert');
  box.appendChild(el('div', 'send-reason', `✕ Not sent: ${reason}`));
  const row = el('div', 'row');
  const retry = el('button', 'small', 'Retry');
  retry.title = 'Send this message again';
  retry.addEventListener('click', () => dispatch(o));
  const edit = el('button', 'secondary small', 'Edit');
  edit.title = 'Put the message back in the input to change it';
  edit.addEventListener('click', () => takeBack(o));
  row.appendChild(retry);
  row.appendChild(edit);
  for (const a of actions) {
    // The buttons that fix the cause, as small as Retry and Edit beside them.
    const fix = actionButton(a);
    fix.className = 'secondary small';
    row.appendChild(fix);
  }
  box.appendChild(row);
  o.bubble.appendChild(box);
  o.failure = box;
}

/** A message the extension sent back to the input (an attachment it could not read): its bubble goes. */
export function forgetSend(id: string): void {
  const o = outgoing.get(id);
  if (!o) return;
  clearTimeout(o.timer);
  outgoing.delete(id);
  o.bubble.remove();
}

/** Edit: the text goes back into the input (before what is typed there) and the failed bubble goes. */
function takeBack(o: Outgoing): void {
  forgetSend(o.id);
  send({ type: 'discardFailed', id: o.id });
  const text = task.value.trim() ? `${o.text}\n\n${task.value}` : o.text;
  if (o.refs.length) restoreInput(text, o.refs);
  else task.value = text;
  task.focus();
  task.setSelectionRange(o.text.length, o.text.length);
}

/** A message of a restored chat: ↑ finds it. */
export function remember(text: string): void {
  recall.add(text);
}

/** The log was cleared (New, or a reload about to replay it): no bubble waits, nothing to recall. */
export function clearSends(): void {
  for (const o of outgoing.values()) clearTimeout(o.timer);
  outgoing.clear();
  recall.clear();
}

/** ↑/↓ walk the chat's messages, Escape leaves them: true when the key was recall's (the caller stops it). */
export function recallKey(e: KeyboardEvent): boolean {
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.isComposing) return false;
  const before = task.value.slice(0, task.selectionStart);
  const after = task.value.slice(task.selectionEnd);
  const caret = { onFirstLine: !before.includes('\n'), onLastLine: !after.includes('\n') };
  const text =
    e.key === 'ArrowUp'
      ? recall.up(task.value, caret)
      : e.key === 'ArrowDown'
        ? recall.down(task.value, caret)
        : e.key === 'Escape'
          ? recall.cancel()
          : undefined;
  if (text === undefined) return false;
  task.value = text;
  task.setSelectionRange(text.length, text.length);
  return true;
}

/** What the user typed: a recalled message edited becomes theirs. */
export function inputChanged(): void {
  recall.edited(task.value);
}
