/**
 * The notices the log shows about a run rather than its steps: a restore and its undo, changes that
 * run later, an interrupted run, the outcome check, the end, an error.
 */
import { actionButton } from './history';
import { el, send } from './page';
import { append } from './scroll';
import { state, type Msg } from './state';
import { drawCounters, setActivity } from './status';
import { endStream } from './stream';

export function checkpointRestored(msg: Msg<'checkpointRestored'>): void {
  const box = el('div', 'restored-checkpoint');
  box.setAttribute('role', 'status');
  box.appendChild(el('span', '', msg.text));
  const undo = el('button', 'secondary small', 'Undo');
  undo.title = 'Put the workspace back as it was just before this restore';
  undo.addEventListener('click', () => send({ type: 'restoreCheckpoint', commit: msg.undo }));
  box.appendChild(undo);
  append(box);
}

/** Read before committing: the user's own tools run these, outside any sandbox. */
export function laterChanges(msg: Msg<'laterChanges'>): void {
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
  if (msg.more) box.appendChild(el('div', '', `… and ${msg.more} more (lar run and the output channel list them all)`));
  append(box);
}

export function interrupted(msg: Msg<'interrupted'>): void {
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
    state.resumeButton = resume;
  }
  append(box);
}

export function outcome(msg: Msg<'outcome'>): void {
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
}

export function runEnded(msg: Msg<'end'>): void {
  endStream();
  setActivity(undefined);
  for (const c of state.liveCards.values()) c.el.remove();
  state.liveCards.clear();
  if (state.run) {
    state.run.ended = Date.now();
    drawCounters();
  }
  if (msg.reason === 'answered') {
    // A question answered is not a failed task: the turn is the user's.
    append(el('div', 'answered', 'Answered. Send a follow-up to continue this conversation, or New to start over.'));
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
}

export function showError(msg: Msg<'error'>): void {
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
}
