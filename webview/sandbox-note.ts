/** How a run's commands are confined, under its task: a warning when they are not, and which paths they cannot change. */
import { el } from './page';
import type { Msg } from './state';

export function sandboxNote(s: Msg<'runStarted'>['sandbox']): HTMLElement {
  const text = s.confined ? `Commands: ${s.text}` : `Commands run ${s.text}`;
  if (!s.confined || !s.protections?.length)
    return el('div', s.confined ? 'sandbox-note' : 'sandbox-note unconfined', text);
  const box = el('details', 'sandbox-note');
  const summary = el('summary', undefined, text);
  summary.title = 'Show what the commands cannot change';
  box.appendChild(summary);
  const list = el('ul', 'protections');
  for (const p of s.protections) {
    const li = el('li');
    li.appendChild(el('code', undefined, p.path));
    li.appendChild(document.createTextNode(` — ${p.why}`));
    list.appendChild(li);
  }
  box.appendChild(list);
  return box;
}
