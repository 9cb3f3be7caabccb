/**
 * Pure: the servers a run starts, their variables resolved each with its own file's format, and the
 * values to mask; a server whose `${input:…}` has no value is left out with a sentence, the others go on.
 */
import {
  inputsOf,
  resolveServer,
  type McpInput,
  type McpServerConfig,
  type VariableContext,
} from '../../core/mcp/config';
import type { McpCandidate } from './sources';

export interface ResolvedServers {
  servers: McpServerConfig[];
  /** Env and header values and secret inputs: masked wherever they could show. */
  secrets: string[];
  /** Sentences for the chat: variables that could not be resolved, servers left out. */
  notes: string[];
}

/** The declared inputs a server's strings mention, in order (an undeclared one is resolveServer's problem to say). */
export function inputsNeeded(c: McpCandidate): McpInput[] {
  return inputsOf(c.server).flatMap((id) => c.inputs.filter((i) => i.id === id));
}

/** Input values by server name, then by input id: one server's value never fills in another's. */
export type InputValues = ReadonlyMap<string, ReadonlyMap<string, string>>;

export function resolveCandidates(
  candidates: readonly McpCandidate[],
  ctx: Omit<VariableContext, 'input'>,
  values: InputValues,
): ResolvedServers {
  const out: ResolvedServers = { servers: [], secrets: [], notes: [] };
  for (const c of candidates) {
    const r = resolveServer(c.server, c.format, c.inputs, {
      ...ctx,
      input: (id) => values.get(c.server.name)?.get(id),
    });
    out.notes.push(...r.problems);
    if (r.missingInputs.length) {
      out.notes.push(
        `MCP server ${JSON.stringify(c.server.name)} is not started: no value was given for ${r.missingInputs.map((id) => `\${input:${id}}`).join(', ')}.`,
      );
      continue;
    }
    out.servers.push(r.server);
    out.secrets.push(...r.secrets);
  }
  return out;
}
