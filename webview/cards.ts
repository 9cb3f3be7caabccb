/**
 * The cards of the agent's calls: a live card while a call runs (its clock and output tail), the step
 * card that replaces it with the verdict, and the approval box for a call that needs the user.
 */
import type { McpToolLabel, StepCard } from '../core/protocol/chat';
import { formatReward } from '../core/protocol/display';
import { el, rewardClass, send } from './page';
import { append, pin, scrollToNode } from './scroll';
import { state, type LiveCard, type Msg } from './state';
import { drawCounters, setActivity } from './status';
import { endStream } from './stream';

function stepCard(c: StepCard): HTMLElement {
  const card = el('div', `card${c.blocked ? ' blocked' : ''}`);
  card.setAttribute('role', 'group');
  const head = el('div', 'card-head');
  const badge = el('span', rewardClass(c.toolReward), c.toolReward === undefined ? '·' : formatReward(c.toolReward));
  badge.title = 'tool reward';
  head.appendChild(badge);
  toolName(head, c.tool, c.mcp);
  head.appendChild(el('span', `status s-${c.status.replace(/[^A-Za-z0-9_-]+/g, '-')}`, c.status));
  if (c.stage) head.appendChild(el('span', 'stage', c.stage));
  if (c.step) head.appendChild(el('span', 'num', `#${c.step}`));
  // Only calls that took a while say how long: a quick read is not news.
  if (c.durationMs !== undefined && c.durationMs >= 1000)
    head.appendChild(el('span', 'num', `${(c.durationMs / 1000).toFixed(1)} s`));
  card.appendChild(head);
  card.appendChild(el('code', 'args', c.args));
  if (c.failed.length) {
    const ul = el('ul', 'failed');
    for (const f of c.failed) {
      const li = el('li');
      li.appendChild(el('span', 'check', f.check));
      li.appendChild(document.createTextNode(`: ${f.reason}`));
      ul.appendChild(li);
    }
    card.appendChild(ul);
  }
  if (c.sandboxNote) card.appendChild(el('div', 'sandbox-refusal', c.sandboxNote));
  if (c.excerpt) card.appendChild(el('pre', 'excerpt', c.excerpt));
  if (c.change || c.checkpoint) card.appendChild(stepButtons(c));
  if (c.stageVisit) {
    const s = el('div', 'stage-change');
    s.appendChild(
      el('span', rewardClass(Math.sign(c.stageVisit.reward)), formatReward(Number(c.stageVisit.reward.toFixed(3)))),
    );
    s.appendChild(document.createTextNode(` stage ${c.stageVisit.stage} closed`));
    card.appendChild(s);
  }
  return card;
}

/** The step's Diff, Restore and Branch buttons. */
function stepButtons(c: StepCard): HTMLElement {
  const row = el('div', 'row');
  if (c.change) {
    const id = c.change.id;
    const diff = el('button', 'secondary small', 'Diff');
    diff.title = `Show what this step ${c.change.created ? 'created in' : 'changed in'} ${c.change.path}`;
    diff.setAttribute('aria-label', `Show the diff of ${c.change.path}`);
    diff.addEventListener('click', () => send({ type: 'showChange', id }));
    row.appendChild(diff);
  }
  if (c.checkpoint) {
    const commit = c.checkpoint;
    const restore = el('button', 'secondary small', 'Restore to here');
    restore.title = `Put the workspace back as it was before this step${c.step ? ` (#${c.step})` : ''}: the diff is shown first`;
    const run = c.run ? { run: c.run } : {};
    restore.addEventListener('click', () =>
      send({ type: 'restoreCheckpoint', commit, ...(c.step ? { step: c.step } : {}), ...run }),
    );
    row.appendChild(restore);
    if (c.step) {
      const step = c.step;
      const branch = el('button', 'secondary small', 'Branch from here');
      branch.title =
        'Go back to before this step, the workspace and the conversation, and continue from there in a new run';
      branch.addEventListener('click', () => send({ type: 'branchFrom', commit, step, ...run }));
      row.appendChild(branch);
    }
  }
  return row;
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The tool's name in a card's head; an MCP tool's as its server and its own name, marked MCP. */
function toolName(head: HTMLElement, tool: string, mcp: McpToolLabel | undefined): void {
  if (!mcp) {
    head.appendChild(el('span', 'tool', tool));
    return;
  }
  const tag = el('span', 'mcp-tag', 'MCP');
  tag.title = `A tool of the MCP server "${mcp.server}": ${tool}`;
  head.appendChild(tag);
  const name = el('span', 'tool', `${mcp.server} › ${mcp.tool}`);
  name.title = tool;
  head.appendChild(name);
}

function liveCard(tool: string, args: string, mcp?: McpToolLabel): LiveCard {
  const card = el('div', 'card live');
  card.setAttribute('role', 'group');
  card.setAttribute('aria-busy', 'true');
  const head = el('div', 'card-head');
  head.appendChild(el('span', 'spinner', ''));
  toolName(head, tool, mcp);
  head.appendChild(el('span', 'status s-running', 'running'));
  const clock = el('span', 'num clock', '0 s');
  const bytes = el('span', 'num bytes', '');
  head.appendChild(clock);
  head.appendChild(bytes);
  card.appendChild(head);
  card.appendChild(el('code', 'args', args));
  const output = el('pre', 'excerpt live-output');
  output.hidden = true;
  output.setAttribute('aria-label', 'Latest output');
  card.appendChild(output);
  return { el: card, output, clock, bytes, started: Date.now() };
}

export function startTool(msg: Msg<'toolStarted'>): void {
  endStream();
  const card = liveCard(msg.tool, msg.args, msg.mcp);
  state.liveCards.set(msg.id, card);
  append(card.el);
  const what = msg.tool === 'run_command' ? msg.args : msg.mcp ? `MCP ${msg.mcp.server} › ${msg.mcp.tool}` : msg.tool;
  setActivity({ text: `Running ${what}`, since: card.started });
}

export function showToolOutput(msg: Msg<'toolOutput'>): void {
  const card = state.liveCards.get(msg.id);
  if (!card) return;
  card.output.hidden = msg.tail.length === 0;
  card.output.textContent = msg.tail;
  card.bytes.textContent = msg.bytes ? formatBytes(msg.bytes) : '';
  // The newest line shows, as in a terminal.
  card.output.scrollTop = card.output.scrollHeight;
  pin();
}

/** A verified step: its card, in the live card's place when there is one, and the run's step count. */
export function showStep(msg: Msg<'step'>): void {
  endStream();
  setActivity(undefined);
  const card = stepCard(msg.card);
  const live = msg.card.id ? state.liveCards.get(msg.card.id) : undefined;
  if (live) {
    // The finished card takes the live card's place.
    state.liveCards.delete(msg.card.id!);
    live.el.replaceWith(card);
    pin();
  } else append(card);
  if (state.run && msg.card.step !== undefined) {
    state.run.steps = Math.max(state.run.steps, msg.card.step);
    drawCounters();
  }
}

export function askApproval(msg: Msg<'approval'>): void {
  endStream();
  setActivity({ text: 'Waiting for your approval', since: Date.now() });
  const box = el('div', 'approval');
  box.setAttribute('role', 'alertdialog');
  box.appendChild(el('div', 'why', `Approve ${msg.tool}? ${msg.reason}`));
  box.appendChild(el('code', 'args', msg.args));
  const yes = el('button', '', 'Approve');
  const no = el('button', 'secondary', 'Reject');
  yes.addEventListener('click', () => send({ type: 'approve', id: msg.id, approved: true }));
  no.addEventListener('click', () => send({ type: 'approve', id: msg.id, approved: false }));
  const row = el('div', 'row');
  row.appendChild(yes);
  row.appendChild(no);
  box.appendChild(row);
  append(box);
  state.approvals.set(msg.id, box);
  yes.focus();
}

/** The status bar's or a notification's "show me": the first approval that waits, in view, Approve focused. */
export function showApproval(): void {
  const box = state.approvals.values().next().value;
  if (!box) return;
  scrollToNode(box);
  box.querySelector('button')?.focus();
}

export function approvalDone(msg: Msg<'approvalDone'>): void {
  const box = state.approvals.get(msg.id);
  if (box) box.replaceChildren(el('div', msg.approved ? 'why ok' : 'why no', msg.approved ? 'Approved.' : 'Rejected.'));
  state.approvals.delete(msg.id);
}
