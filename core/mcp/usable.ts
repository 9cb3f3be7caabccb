/**
 * Whether a workflow could ever permit a server's tools: a server no stage can use is not started
 * (nor, in the editor, asked about), as it would only run all run long for nothing.
 */
import { MCP_PREFIX, serverSlug } from '../schema/mcp';
import type { Workflow } from '../schema/workflow';

/** The literal text of a pattern before its first wildcard. */
const literalHead = (p: string): string =>
  p.slice(0, [p.indexOf('*'), p.indexOf('?'), p.length].filter((i) => i >= 0).sort((a, b) => a - b)[0]);

/**
 * Some stage entry or exit condition may name one of the server's tools: an entry whose literal head
 * and `mcp__SERVER__` agree as far as both go. Sound, not exact: it may keep a server no tool of which
 * a later part of the pattern matches.
 */
export function workflowMayUse(wf: Workflow, serverName: string): boolean {
  const prefix = `${MCP_PREFIX}${serverSlug(serverName)}__`;
  const entries = wf.stages.flatMap((s) => [
    ...s.tools,
    ...s.exit.flatMap((c) => (c.kind === 'tool_succeeded' ? [c.tool] : [])),
  ]);
  return entries.some((e) => {
    if (!e.startsWith(MCP_PREFIX)) return false;
    const head = literalHead(e);
    return head.startsWith(prefix) || prefix.startsWith(head);
  });
}
