/**
 * A run's MCP servers in the log: one compact, collapsible list under the run's start, redrawn in place
 * when a server or the stage changes (its open or closed state kept), and the sentences about them.
 */
import type { McpServerView } from '../core/protocol/chat';
import { el } from './page';
import { append, pin } from './scroll';
import { state, type Msg } from './state';

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The list's one line: how many servers (and how many are down) and how many tools the stage permits. */
export function mcpSummary(msg: Msg<'mcp'>): string {
  const down = (s: McpServerView['state']) => msg.servers.filter((x) => x.state === s).length;
  const trouble = [
    down('failed') ? `${down('failed')} failed` : '',
    down('stopped') ? `${down('stopped')} stopped` : '',
  ].filter(Boolean);
  const tools = msg.servers.reduce((n, s) => n + (s.state === 'ready' ? s.tools.length : 0), 0);
  const where = msg.stage !== undefined ? ` in stage ${msg.stage}` : '';
  return `MCP · ${plural(msg.servers.length, 'server')}${trouble.length ? ` (${trouble.join(', ')})` : ''} · ${plural(tools, 'tool')}${where}`;
}

function serverRow(s: McpServerView, stage: string | undefined): HTMLElement {
  const row = el('li', `mcp-server s-${s.state}`);
  const head = el('div', 'mcp-head');
  head.appendChild(el('span', 'mcp-name', s.name));
  head.appendChild(el('span', 'mcp-transport', s.transport));
  head.appendChild(el('span', `mcp-state s-${s.state}`, s.state));
  row.appendChild(head);
  if (s.state === 'ready') {
    const tools = el('div', 'mcp-tools');
    const where = stage !== undefined ? ` in ${stage}` : '';
    tools.appendChild(el('span', 'mcp-count', `${s.tools.length} of ${plural(s.offered, 'tool')}${where}`));
    for (const t of s.tools) tools.appendChild(el('code', 'mcp-tool', t));
    row.appendChild(tools);
  }
  if (s.error) row.appendChild(el('pre', 'mcp-error', s.error));
  return row;
}

export function showMcp(msg: Msg<'mcp'>): void {
  let box = state.mcpPanels.get(msg.run);
  const fresh = !box;
  if (!box) {
    box = el('details', 'mcp-panel');
    state.mcpPanels.set(msg.run, box);
  }
  const summary = el('summary', undefined, mcpSummary(msg));
  summary.title = 'The MCP servers of this run, and the tools the current stage lets the agent use';
  const list = el('ul', 'mcp-servers');
  for (const s of msg.servers) list.appendChild(serverRow(s, msg.stage));
  box.replaceChildren(summary, list);
  if (fresh) append(box);
  else pin();
}

export function showMcpNotice(msg: Msg<'mcpNotice'>): void {
  const note = el('div', msg.warn ? 'mcp-notice warn' : 'mcp-notice', msg.text);
  note.setAttribute('role', msg.warn ? 'alert' : 'status');
  append(note);
}
