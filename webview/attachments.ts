/**
 * The `@` attachments in the chat's input: the picker (a listbox under the input, keyboard and mouse), the
 * removable chips of what is attached, and the chips in a sent message's bubble. Only references go to the
 * extension; it reads the content itself when the message is sent.
 */
import type { AttachmentChip, AttachmentRef, AttachOptions } from '../core/protocol/attachments';
import { chipLabel } from '../core/protocol/chip-label';
import {
  choicesFor,
  emptyNote,
  insertToken,
  removeToken,
  sameRef,
  tokenAt,
  type AtToken,
  type Choice,
} from './attach-query';
import { el, send, task } from './page';

interface Attached {
  ref: AttachmentRef;
  label: string;
  detail: string;
}

const attached: Attached[] = [];
const picker = el('div', 'attach-picker');
picker.id = 'attach-picker';
picker.setAttribute('role', 'listbox');
picker.setAttribute('aria-label', 'Attach to the message');
picker.hidden = true;
const chips = el('div', 'chips');
chips.setAttribute('role', 'list');
chips.setAttribute('aria-label', 'Attached to the message');
chips.hidden = true;
const button = el('button', 'secondary attach-button', '@');
button.id = 'attach';
button.title = 'Attach a file, the selection, Problems or the terminal output (type @)';
button.setAttribute('aria-label', 'Attach context');
button.setAttribute('aria-haspopup', 'listbox');

/** The picker while open: the token it completes, its mode, its rows and the highlighted one. */
let open: { token: AtToken; fileMode: boolean; choices: Choice[]; active: number } | undefined;
let options: AttachOptions | undefined;

function close(): void {
  open = undefined;
  picker.hidden = true;
  task.removeAttribute('aria-activedescendant');
  task.setAttribute('aria-expanded', 'false');
}

function draw(): void {
  if (!open) return;
  open.choices = choicesFor(options, open.token.query, open.fileMode);
  open.active = Math.min(open.active, Math.max(0, open.choices.length - 1));
  picker.replaceChildren();
  if (!open.choices.length) picker.append(el('div', 'attach-empty', emptyNote(open.token.query, open.fileMode)));
  open.choices.forEach((c, i) => {
    const row = el('div', i === open!.active ? 'attach-option active' : 'attach-option');
    row.id = `attach-option-${i}`;
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', String(i === open!.active));
    row.append(el('span', 'attach-label', c.label), el('span', 'attach-detail', c.detail));
    row.title = c.detail;
    // The input keeps the focus (and the caret) while the mouse chooses.
    row.addEventListener('mousedown', (e) => e.preventDefault());
    row.addEventListener('click', () => choose(i));
    picker.append(row);
  });
  picker.hidden = false;
  task.setAttribute('aria-expanded', 'true');
  if (open.choices.length) task.setAttribute('aria-activedescendant', `attach-option-${open.active}`);
  picker.querySelector('.active')?.scrollIntoView({ block: 'nearest' });
}

/** After each keystroke: the picker follows the `@word` the caret is in. */
function follow(): void {
  const token = tokenAt(task.value, task.selectionStart ?? task.value.length);
  if (!token) return close();
  const changed = open?.token.query !== token.query;
  open = {
    token,
    fileMode: open?.fileMode ?? false,
    choices: open?.choices ?? [],
    active: changed ? 0 : (open?.active ?? 0),
  };
  if (changed || !options) send({ type: 'attachQuery', query: token.query });
  draw();
}

function choose(i: number): void {
  const c = open?.choices[i];
  if (!open || !c) return;
  if (!c.ref) {
    // File…: the same @word now lists files.
    open.fileMode = true;
    open.active = 0;
    draw();
    task.focus();
    return;
  }
  const caret = task.selectionStart ?? task.value.length;
  const next = insertToken(task.value, open.token, caret, c.ref);
  task.value = next.text;
  task.setSelectionRange(next.caret, next.caret);
  add({ ref: c.ref, label: chipLabel(c.ref), detail: c.detail });
  close();
  task.focus();
}

function add(a: Attached): void {
  if (attached.some((x) => sameRef(x.ref, a.ref)) || attached.length >= 8) return;
  attached.push(a);
  drawChips();
}

function drawChips(): void {
  chips.replaceChildren(
    ...attached.map((a, i) => {
      const chip = chipNode({ kind: a.ref.kind, label: a.label, source: a.detail });
      const remove = el('button', 'chip-remove', '×');
      remove.setAttribute('aria-label', `Remove ${a.label}`);
      remove.title = `Remove ${a.label}`;
      remove.addEventListener('click', () => {
        attached.splice(i, 1);
        task.value = removeToken(task.value, a.label);
        drawChips();
        task.focus();
      });
      chip.append(remove);
      return chip;
    }),
  );
  chips.hidden = attached.length === 0;
}

function chipNode(c: AttachmentChip): HTMLElement {
  const chip = el('span', `chip chip-${c.kind}`);
  chip.setAttribute('role', 'listitem');
  chip.append(el('span', 'chip-label', c.label));
  if (c.source) chip.title = c.source;
  return chip;
}

/** The picker's keys while it is open (↑/↓, Enter or Tab to choose, Escape to close); true when it took the key. */
export function pickerKey(e: KeyboardEvent): boolean {
  if (!open || e.isComposing) return false;
  const n = open.choices.length;
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    if (n) open.active = (open.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
    draw();
  } else if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey && n) choose(open.active);
  else if (e.key === 'Escape') close();
  else return false;
  e.preventDefault();
  // Escape here closes the picker; it must not also stop the run.
  e.stopPropagation();
  return true;
}

/** The extension's choices for a query: drawn if the picker still shows that query. */
export function attachOptions(msg: AttachOptions): void {
  // Answers can come out of order (each query is answered as soon as its files are listed): only the
  // answer to what the picker shows now is kept, or a late one for an earlier query would hide the files.
  if (open && msg.query !== open.token.query) return;
  options = msg;
  draw();
}

/** What goes with the message being sent (references only); the chips are cleared. */
export function takeAttachments(): AttachmentRef[] {
  const refs = attached.map((a) => a.ref);
  attached.length = 0;
  drawChips();
  close();
  return refs;
}

/** A message that was not sent comes back to the input with its chips. */
export function restoreInput(text: string, refs: readonly AttachmentRef[]): void {
  task.value = text;
  for (const ref of refs) add({ ref, label: chipLabel(ref), detail: 'path' in ref && ref.path ? ref.path : ref.kind });
  task.focus();
}

/** A sent message's bubble with the chips of what it carried. */
export function withChips(bubble: HTMLElement, list: readonly AttachmentChip[] | undefined): HTMLElement {
  // A bubble drawn when it was sent gets its chips once, from the run's start or a reload's replay.
  if (!list?.length || bubble.querySelector('.chips.sent')) return bubble;
  const row = el('div', 'chips sent');
  row.setAttribute('role', 'list');
  row.setAttribute('aria-label', 'Attached');
  row.append(...list.map(chipNode));
  bubble.prepend(row);
  return bubble;
}

/** Puts the picker, the chips and the @ button around the input, and follows what is typed. */
export function setUpAttachments(buttons: HTMLElement): void {
  task.before(chips, picker);
  task.setAttribute('aria-controls', picker.id);
  task.setAttribute('aria-autocomplete', 'list');
  task.setAttribute('aria-expanded', 'false');
  buttons.prepend(button);
  task.addEventListener('input', follow);
  task.addEventListener('click', follow);
  task.addEventListener('blur', () => setTimeout(() => document.activeElement !== task && close(), 150));
  button.addEventListener('click', () => {
    const caret = task.selectionStart ?? task.value.length;
    const before = task.value.slice(0, caret);
    const at = before === '' || /\s$/.test(before) ? '@' : ' @';
    task.value = before + at + task.value.slice(caret);
    task.focus();
    task.setSelectionRange(caret + at.length, caret + at.length);
    follow();
  });
}
