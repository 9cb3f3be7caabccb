/** The run's stage timeline bar, showing and hiding History, and the buttons that fix what an error names. */
import type { ErrorAction } from '../core/protocol/chat';
import { formatReward } from '../core/protocol/display';
import { el, history, log, rewardClass, send, showHistory, timelineBar } from './page';
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

export function setHistoryVisible(show: boolean): void {
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

export function actionButton(action: ErrorAction): HTMLElement {
  const label = ACTION_LABEL[action];
  const b = el('button', 'secondary', label);
  b.addEventListener('click', () => send({ type: 'action', action }));
  return b;
}
