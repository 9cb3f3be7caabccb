/**
 * Pure: which MCP servers of the workspace the user allowed to start, as VS Code asks for a
 * workspace's servers: once per server, again when its configuration changes (answers are kept by
 * the configuration's digest). The user's own setting needs no answer; a server no stage of the
 * run's workflow could use is neither asked about nor started.
 */
import type { McpServerConfig } from '../../core/mcp/config';
import { workflowMayUse } from '../../core/mcp/usable';
import { clip } from '../../core/protocol/chat';
import { MCP_PREFIX, serverSlug } from '../../core/schema/mcp';
import type { Workflow } from '../../core/schema/workflow';
import type { McpCandidate } from './sources';

export type ConsentAnswer = 'allow' | 'deny';
/** The answers kept in the workspace's state, by configuration digest. */
export type ConsentAnswers = Readonly<Record<string, ConsentAnswer>>;

export interface ConsentSplit {
  /** The user's own servers and the workspace's the user allowed. */
  allowed: McpCandidate[];
  denied: McpCandidate[];
  /** The workspace's servers never answered for (or whose configuration changed since). */
  ask: McpCandidate[];
}

/**
 * What an answer is kept by: the configuration's digest, and whether the workflow grants the server the
 * network (an answer given for a server without network is no answer for one with it).
 */
export const consentKey = (c: McpCandidate, workflow: Workflow): string =>
  (workflow.mcp?.network ?? []).includes(c.server.name) ? `${c.digest}+network` : c.digest;

export function splitByConsent(
  candidates: readonly McpCandidate[],
  answers: ConsentAnswers,
  workflow: Workflow,
): ConsentSplit {
  const out: ConsentSplit = { allowed: [], denied: [], ask: [] };
  for (const c of candidates) {
    const key = consentKey(c, workflow);
    const answer = c.origin === 'user' ? 'allow' : Object.hasOwn(answers, key) ? answers[key] : undefined;
    (answer === 'allow' ? out.allowed : answer === 'deny' ? out.denied : out.ask).push(c);
  }
  return out;
}

/** The answers with `answer` kept for each of `asked`. */
export function withAnswers(
  answers: ConsentAnswers,
  asked: readonly McpCandidate[],
  answer: ConsentAnswer,
  workflow: Workflow,
): Record<string, ConsentAnswer> {
  const out: Record<string, ConsentAnswer> = { ...answers };
  for (const c of asked) out[consentKey(c, workflow)] = answer;
  return out;
}

/** A value shown in the prompt: at most this many characters of it, and how many more there are said. */
const MAX_VALUE = 600;
/** The whole prompt's detail at most: the servers past it are not asked about now (nor allowed by this answer). */
const MAX_DETAIL = 16_000;

/**
 * What the prompt says: each server as its file writes it, before its variables are filled in (a
 * planted file's variables hold no secret yet, and what they would fill in is what the user must see):
 * what it runs or reaches (the URL with its query), every env and header entry, its cwd, the
 * variables it would take from the user and from the environment, and where it runs, with the
 * network the workflow grants it.
 */
export function consentPrompt(
  candidates: readonly McpCandidate[],
  workflow: Workflow,
): { message: string; detail: string; asked: McpCandidate[] } {
  // Only what is shown whole is asked about: an answer never covers a server the user did not see.
  const asked: McpCandidate[] = [];
  const blocks: string[] = [];
  let length = 0;
  for (const c of candidates) {
    const block = describeCandidate(c, workflow).join('\n');
    if (length + block.length > MAX_DETAIL) break;
    asked.push(c);
    blocks.push(block);
    length += block.length + 2;
  }
  const rest = candidates.length - asked.length;
  if (rest)
    blocks.push(
      `${rest} more server${rest === 1 ? '' : 's'} of the workspace ${rest === 1 ? 'is' : 'are'} not asked about now (too long to show with these): ${rest === 1 ? 'it is' : 'they are'} asked about on a later run.`,
    );
  const one = asked.length === 1;
  const message = `Start ${one ? 'this MCP server' : `these ${asked.length} MCP servers`} that the workspace configures? ${one ? 'It starts' : 'They start'} with each agent run of workflow ${shown(workflow.id)}, which decides which tools the agent may call. ${one ? 'It is' : 'Each is'} shown as its file writes it, before its variables are filled in.`;
  return { message, detail: blocks.join('\n\n'), asked };
}

/** The lines of the prompt about one server: its name and file, then what it runs, reaches and reads. */
export function describeCandidate(c: McpCandidate, workflow: Workflow): string[] {
  const { server } = c;
  const lines = [`${shown(server.name)} (${shown(server.source)})`];
  const granted = (workflow.mcp?.network ?? []).includes(server.name);
  const wf = shown(workflow.id);
  // Where it runs and what it reads first: the values that follow may be long.
  if (server.transport === 'stdio')
    lines.push(
      granted
        ? `  runs in a sandbox with the host's network: workflow ${wf} grants it the network (mcp.network)`
        : `  runs in the run's sandbox, without network (unconfined only where the run's commands are)`,
    );
  else
    lines.push(
      `  reached from the editor over the network${granted ? ` (workflow ${wf} also names it in mcp.network)` : ''}`,
    );
  const vars = variablesOf(c);
  if (vars.inputs.length)
    lines.push(`  uses your inputs: ${vars.inputs.map(shown).join(', ')} (a value you gave before is used)`);
  if (vars.environment.length) lines.push(`  reads your environment: ${vars.environment.map(shown).join(', ')}`);
  lines.push(`  ${describeServer(server)}`);
  if (server.transport === 'stdio') {
    if (server.cwd !== undefined) lines.push(`  cwd: ${shown(server.cwd)}`);
    for (const [name, value] of Object.entries(server.env)) lines.push(`  env: ${shown(name)}=${shown(value)}`);
  } else
    for (const [name, value] of Object.entries(server.headers)) lines.push(`  header: ${shown(name)}: ${shown(value)}`);
  return lines;
}

/** `stdio: node server.js --stdio`, `http: https://host/mcp?key=…` as written, each value clipped. */
export function describeServer(server: McpServerConfig): string {
  if (server.transport === 'stdio') return `stdio: ${[server.command, ...server.args].map(shown).join(' ')}`;
  return `${server.transport}: ${shown(server.url)}`;
}

/** The strings of a server its variables may be in (as core/mcp/config.ts resolves them). */
function stringsOf(server: McpServerConfig): string[] {
  return server.transport === 'stdio'
    ? [server.command, ...server.args, ...Object.values(server.env), ...(server.cwd !== undefined ? [server.cwd] : [])]
    : [server.url, ...Object.values(server.headers)];
}

/**
 * The variables a server's strings use, as written: the inputs it asks the user for (VS Code's
 * `${input:ID}`) and what it takes from the editor's environment (`${env:NAME}`, and in `.mcp.json`
 * `${NAME}` and `${NAME:-default}`).
 */
export function variablesOf(c: McpCandidate): { inputs: string[]; environment: string[] } {
  const inputs = new Set<string>();
  const environment = new Set<string>();
  for (const text of stringsOf(c.server))
    for (const m of text.matchAll(/\$\{([^{}]+)\}/g)) {
      const body = m[1]!;
      if (body.startsWith('input:')) {
        if (c.format === 'vscode') inputs.add(m[0]);
      } else if (body.startsWith('env:') || (c.format === 'mcpServers' && /^[A-Za-z_][A-Za-z0-9_]*(?::-|$)/.test(body)))
        environment.add(m[0]);
    }
  return { inputs: [...inputs], environment: [...environment] };
}

/** Characters that would hide or reorder what the prompt shows: controls, bidi marks, invisible ones. */
const HIDDEN = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g;

/**
 * A value as the prompt shows it: bare when it is plain, else quoted with what hides text escaped; past
 * MAX_VALUE cut, and how much was cut said (nothing is hidden without saying so).
 */
function shown(value: string): string {
  const cut = value.length > MAX_VALUE ? ` … (${value.length - MAX_VALUE} more characters: read the file)` : '';
  const v = value.slice(0, MAX_VALUE);
  if (/^[\w@%+=:,./~{}$?#&-]+$/.test(v)) return `${v}${cut}`;
  return `${JSON.stringify(v).replace(HIDDEN, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}${cut}`;
}

/** Why a server the user did not allow is not started (said once per configuration). */
export function deniedNote(c: McpCandidate): string {
  return `MCP server ${JSON.stringify(c.server.name)} (${c.server.source}) is not started: you did not allow it in this workspace. "Lean4 Agentic: Reset MCP Server Permissions" asks again.`;
}

/** The servers some stage of the workflow could use, and those none could (neither asked about nor started). */
export function splitByWorkflow(
  candidates: readonly McpCandidate[],
  workflow: Workflow,
): { usable: McpCandidate[]; unused: McpCandidate[] } {
  const usable = candidates.filter((c) => workflowMayUse(workflow, c.server.name));
  return { usable, unused: candidates.filter((c) => !usable.includes(c)) };
}

/** Why a server no stage could use is not started (said once per configuration and workflow). */
export function unusedNote(c: McpCandidate, workflow: Workflow): string {
  return `MCP server ${JSON.stringify(c.server.name)} (${c.server.source}) is not started: no stage of workflow ${JSON.stringify(clip(workflow.id, MAX_VALUE))} permits ${MCP_PREFIX}${serverSlug(c.server.name)}__… tools.`;
}
