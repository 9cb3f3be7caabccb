/**
 * What the chat says about the run around the log: running or not, the activity line and its clock,
 * the run's counters, the model connection and how full the context is.
 */
import { formatTokens } from '../core/protocol/display';
import { actionButton } from './history';
import { activity, activityText, connection, contextBar, counters, el, run, send, stop, task } from './page';
import { state, type Msg } from './state';

export function setRunning(r: boolean): void {
  state.running = r;
  // The input stays open during a run: what is typed reaches the agent at its next turn.
  run.textContent = r ? 'Queue' : 'Run';
  run.title = r ? 'Send to the agent at its next turn' : 'Run the task';
  stop.hidden = !r;
  if (!r) {
    // However the run stopped (an error posts no end), nothing stays "running".
    for (const c of state.liveCards.values()) {
      c.el.className = 'card stopped';
      c.el.setAttribute('aria-busy', 'false');
    }
    state.liveCards.clear();
    setActivity(undefined);
    task.focus();
  }
}

function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function setActivity(a: { text: string; since: number } | undefined): void {
  state.current = a;
  tick();
}

export function drawCounters(): void {
  const run_ = state.run;
  counters.hidden = !run_;
  if (!run_) return;
  const time = elapsed((run_.ended ?? Date.now()) - run_.started);
  counters.textContent = `${run_.steps} step${run_.steps === 1 ? '' : 's'} · ${formatTokens(run_.tokens)} tokens · ${time}`;
  counters.title = `This run: ${run_.steps} verified steps, ${run_.tokens.toLocaleString()} completion tokens, ${time}${run_.ended ? '' : ' so far'}`;
}

/** One clock for the activity line, the counters and every live card. */
function tick(): void {
  const { current, run: run_, liveCards } = state;
  activity.hidden = !current && !run_;
  activityText.hidden = !current;
  activityText.textContent = current ? `${current.text} · ${elapsed(Date.now() - current.since)}` : '';
  drawCounters();
  for (const c of liveCards.values()) c.clock.textContent = elapsed(Date.now() - c.started);
  const live =
    current !== undefined || liveCards.size > 0 || (run_ !== undefined && run_.ended === undefined && state.running);
  if (live && !state.ticker) state.ticker = setInterval(tick, 1000);
  if (!live && state.ticker) {
    clearInterval(state.ticker);
    state.ticker = undefined;
  }
}

export function showContext(msg: Msg<'context'>): void {
  contextBar.hidden = false;
  contextBar.textContent = `${formatTokens(msg.used)} / ${formatTokens(msg.window)}`;
  contextBar.className = msg.used > msg.window * 0.8 ? 'context full' : 'context';
  contextBar.title = `Context in use: ${msg.used.toLocaleString()} prompt tokens of the model's ${msg.window.toLocaleString()}-token window${msg.assumed ? ' (assumed: the server does not report it; set lean4Agentic.contextLength)' : ''}. The conversation is compacted when it fills.`;
  if (state.run && msg.completionTokens !== undefined) {
    state.run.tokens = msg.completionTokens;
    drawCounters();
  }
}

export function showConnection(msg: Msg<'connection'>): void {
  connection.hidden = false;
  connection.className = `conn ${msg.state}`;
  const text =
    msg.state === 'checking'
      ? `Checking ${msg.endpoint}…`
      : msg.state === 'connected'
        ? `● Connected: ${msg.model ?? '?'} · ${msg.endpoint}${msg.window ? ` · ${formatTokens(msg.window.tokens)} context${msg.window.assumed ? ' (assumed)' : ''}` : ''}`
        : `✕ Not connected to ${msg.endpoint}: ${msg.message ?? ''}`;
  const parts: (string | Node)[] = [el('span', 'conn-text', text)];
  // Where the endpoint in force is set: a workspace value outranks the user's.
  if (msg.endpointSource && msg.state !== 'checking')
    parts.push(el('span', 'conn-source', ` (endpoint from ${msg.endpointSource})`));
  if (msg.state === 'failed') {
    const row = el('div', 'row');
    for (const a of msg.actions) row.appendChild(actionButton(a));
    const retry = el('button', 'secondary', 'Retry');
    retry.addEventListener('click', () => send({ type: 'checkConnection' }));
    row.appendChild(retry);
    parts.push(row);
  }
  connection.replaceChildren(...parts);
}
