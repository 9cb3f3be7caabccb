/**
 * The model picker next to Run: the model this chat runs with, and a menu of what every configured endpoint
 * serves, listed afresh each time it opens (an endpoint that fails is shown greyed with its error).
 */
import { $, el, send } from './page';
import type { Msg } from './state';

const button = $<HTMLButtonElement>('model-picker');
const label = $('model-label');
const menu = $('model-menu');
let current: { endpoint: string; model: string } | undefined;
/** The menu's models, in order (for the arrow keys). */
let options: HTMLButtonElement[] = [];

function open(): void {
  if (button.disabled) return;
  menu.hidden = false;
  button.setAttribute('aria-expanded', 'true');
  options = [];
  menu.replaceChildren(el('div', 'model-loading', 'Asking the endpoints for their models…'));
  send({ type: 'listModels' });
}

function close(focusButton: boolean): void {
  if (menu.hidden) return;
  menu.hidden = true;
  button.setAttribute('aria-expanded', 'false');
  if (focusButton) button.focus();
}

function option(endpoint: string, model: string): HTMLButtonElement {
  const selected = current?.endpoint === endpoint && current.model === model;
  const o = el('button', selected ? 'model-option selected' : 'model-option', model);
  o.setAttribute('role', 'option');
  o.setAttribute('aria-selected', String(selected));
  options.push(o);
  o.title = `${model} on ${endpoint}`;
  o.addEventListener('click', () => {
    send({ type: 'chooseModel', endpoint, model });
    close(true);
  });
  return o;
}

/** The menu: one group per endpoint, its models, or its error. */
export function showModels(msg: Msg<'models'>): void {
  if (menu.hidden) return;
  options = [];
  const groups: HTMLElement[] = msg.endpoints.map((e) => {
    const group = el('div', e.error !== undefined ? 'model-group failed' : 'model-group');
    group.setAttribute('role', 'group');
    group.setAttribute('aria-label', e.name);
    const head = el('div', 'model-endpoint', e.name);
    head.title = e.url;
    group.appendChild(head);
    if (e.error !== undefined) {
      const why = el('div', 'model-error', e.error);
      why.title = e.error;
      group.appendChild(why);
    } else if (!e.models?.length) group.appendChild(el('div', 'model-error', 'serves no models'));
    else for (const m of e.models) group.appendChild(option(e.name, m));
    return group;
  });
  for (const p of msg.problems) groups.push(el('div', 'model-problem', p));
  menu.replaceChildren(...groups);
  (options.find((o) => o.getAttribute('aria-selected') === 'true') ?? options[0])?.focus();
}

/** The button: this chat's model, clipped to fit; the whole of it in the tooltip. */
export function showModelChoice(msg: Msg<'modelChoice'>): void {
  current = msg.problem ? undefined : { endpoint: msg.endpoint, model: msg.model };
  label.textContent = msg.model || 'first served model';
  button.className = msg.problem !== undefined ? 'secondary problem' : 'secondary';
  button.title =
    msg.problem ??
    `Model for this chat: ${msg.model || 'the first the server lists'} on "${msg.endpoint}" (${msg.url})${msg.chosen ? '' : ", the settings' default"}. Change it between runs.`;
}

/** During a run the model stays as it is. */
export function setPickerRunning(running: boolean): void {
  button.disabled = running;
  if (running) close(false);
}

button.addEventListener('click', () => (menu.hidden ? open() : close(true)));
menu.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    // Not the view's Escape (Stop): only the menu closes.
    e.stopPropagation();
    close(true);
    return;
  }
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  e.preventDefault();
  const at = options.indexOf(document.activeElement as HTMLButtonElement);
  const n = options.length;
  options[e.key === 'ArrowDown' ? (at + 1) % n : at <= 0 ? n - 1 : at - 1]?.focus();
});
document.addEventListener('mousedown', (e) => {
  if (!menu.hidden && !menu.contains(e.target as Node) && !button.contains(e.target as Node)) close(false);
});
