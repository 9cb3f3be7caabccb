/**
 * The empty chat's welcome: what the agent does, that each step is checked, and a few tasks to start
 * from. It shows whenever the log is empty (a new view, after New) and goes as soon as anything is in it.
 */
import { el, inner, log, task } from './page';

/** Tasks that fit most workspaces; a click puts one in the input to edit or send. */
export const EXAMPLE_TASKS = ['Find why the tests fail and fix the code.', 'Explain how this project is organised.'];

function welcomeBox(): HTMLElement {
  const box = el('section', 'welcome');
  box.id = 'welcome';
  box.setAttribute('aria-label', 'Getting started');
  box.appendChild(el('div', 'title', 'Give the agent a task in this workspace'));
  box.appendChild(
    el(
      'p',
      '',
      'It reads files, runs commands in a sandbox and edits code, one call at a time. Every step is checked against the workflow: a call its stage does not allow is blocked before it runs, and each step is scored.',
    ),
  );
  box.appendChild(el('p', '', 'Try one of these (a click puts it in the input):'));
  const list = el('div', 'examples');
  for (const text of EXAMPLE_TASKS) {
    const b = el('button', 'secondary example', text);
    b.title = 'Put this task in the input';
    b.addEventListener('click', () => {
      task.value = text;
      task.focus();
      task.setSelectionRange(text.length, text.length);
    });
    list.appendChild(b);
  }
  box.appendChild(list);
  return box;
}

/** Shows the welcome while the log is empty, whatever emptied or filled it. */
export function watchWelcome(): void {
  // Without one (an old or a test's DOM) nothing would hide it again: no welcome rather than one that stays.
  if (typeof MutationObserver !== 'function') return;
  const box = welcomeBox();
  log.insertBefore(box, inner);
  const update = () => {
    box.hidden = inner.childElementCount > 0;
  };
  new MutationObserver(update).observe(inner, { childList: true });
  update();
}
