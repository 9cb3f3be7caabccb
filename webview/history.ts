/** The run's stage timeline bar, the panel of past runs, and the buttons that fix what an error names. */
import type { ErrorAction, HistoryEntry } from '../core/protocol/chat';
import { formatReward } from '../core/protocol/display';
import { el, history, log, rewardClass, send, showHistory, timelineBar } from './page';
import type { Msg } from './state';
import { StageTimeline } from './timeline';

export const timeline = new StageTimeline();

export function drawTimeline(): void {
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

export function setHistoryVisible(show: boolean): void {
  history.hidden = !show;
  log.hidden = show;
  showHistory.setAttribute('aria-expanded', String(show));
  showHistory.textContent = show ? 'Chat' : 'History';
  if (show) send({ type: 'history' });
}

/** The panel of past runs, newest first, each opening its trajectory. */
export function listRuns(msg: Msg<'history'>): void {
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
}

const ACTION_LABEL: Record<ErrorAction, string> = {
  openSettings: 'Open Settings',
  openEndpointSetting: 'Open Endpoint Setting',
  openModelSetting: 'Open Model Setting',
  openWorkflowSetting: 'Open Workflow Setting',
  testConnection: 'Test Connection',
  setApiKey: 'Set API Key',
};

export function actionButton(action: ErrorAction): HTMLElement {
  const label = ACTION_LABEL[action];
  const b = el('button', 'secondary', label);
  b.addEventListener('click', () => send({ type: 'action', action }));
  return b;
}
