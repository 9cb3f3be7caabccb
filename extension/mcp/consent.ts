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

export function splitByConsent(candidates: readonly McpCandidate[], answers: ConsentAnswers): ConsentSplit {
  const out: ConsentSplit = { allowed: [], denied: [], ask: [] };
  for (const c of candidates) {
    const answer = c.origin === 'user' ? 'allow' : Object.hasOwn(answers, c.digest) ? answers[c.digest] : undefined;
    (answer === 'allow' ? out.allowed : answer === 'deny' ? out.denied : out.ask).push(c);
  }
  return out;
}

/** The answers with `answer` kept for each of `asked`. */
export function withAnswers(
  answers: ConsentAnswers,
  asked: readonly McpCandidate[],
  answer: ConsentAnswer,
): Record<string, ConsentAnswer> {
  const out: Record<string, ConsentAnswer> = { ...answers };
  for (const c of asked) out[c.digest] = answer;
  return out;
}

/** A value shown in the prompt: at most this many characters of it. */
const MAX_VALUE = 200;
/** One server's part of the prompt, and the whole prompt's detail, at most. */
const MAX_SERVER_TEXT = 4000;
const MAX_DETAIL = 16_000;

/**
 * What the prompt says: each server as its file writes it, before its variables are filled in (a
 * planted file's variables hold no secret yet, and what they would fill in is what the user must see):
 * what it runs or reaches (the URL with its query), every env and header entry, its cwd, the
 * variables it would take from the user and from the environment, and where it runs, with the
 * network the workflow grants it.
 */
export function consentPrompt(asked: readonly McpCandidate[], workflow: Workflow): { message: string; detail: string } {
  const one = asked.length === 1;
  const message = `Start ${one ? 'this MCP server' : `these ${asked.length} MCP servers`} that the workspace configures? ${one ? 'It starts' : 'They start'} with each agent run of workflow ${JSON.stringify(clip(workflow.id, MAX_VALUE))}, which decides which tools the agent may call. ${one ? 'It is' : 'Each is'} shown as its file writes it, before its variables are filled in.`;
  const blocks: string[] = [];
  let length = 0;
  for (const [i, c] of asked.entries()) {
    const block = clip(describeCandidate(c, workflow).join('\n'), MAX_SERVER_TEXT);
    if (length + block.length > MAX_DETAIL) {
      const rest = asked.slice(i);
      blocks.push(
        `… and ${rest.length} more, not shown here: ${rest.map((r) => `${r.server.name} (${r.server.source})`).join(', ')}. Read their files before you allow them.`,
      );
      break;
    }
    blocks.push(block);
    length += block.length + 2;
  }
  return { message, detail: blocks.join('\n\n') };
}

/** The lines of the prompt about one server: its name and file, then what it runs, reaches and reads. */
export function describeCandidate(c: McpCandidate, workflow: Workflow): string[] {
  const { server } = c;
  const lines = [`${server.name} (${server.source}) — ${describeServer(server)}`];
  const granted = (workflow.mcp?.network ?? []).includes(server.name);
  const wf = JSON.stringify(clip(workflow.id, MAX_VALUE));
  if (server.transport === 'stdio') {
    lines.push(
      granted
        ? `  runs in a sandbox with the host's network: workflow ${wf} grants it the network (mcp.network)`
        : `  runs in the run's sandbox, without network (unconfined only where the run's commands are)`,
    );
    if (server.cwd !== undefined) lines.push(`  cwd: ${shown(server.cwd)}`);
    for (const [name, value] of Object.entries(server.env)) lines.push(`  env: ${shown(name)}=${shown(value)}`);
  } else {
    lines.push(
      `  reached from the editor over the network${granted ? ` (workflow ${wf} also names it in mcp.network)` : ''}`,
    );
    for (const [name, value] of Object.entries(server.headers)) lines.push(`  header: ${shown(name)}: ${shown(value)}`);
  }
  const vars = variablesOf(c);
  if (vars.inputs.length) lines.push(`  asks you for: ${vars.inputs.map(shown).join(', ')}`);
  if (vars.environment.length) lines.push(`  reads your environment: ${vars.environment.map(shown).join(', ')}`);
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

/** A value as the prompt shows it: clipped, bare when it is plain, else quoted with what hides text escaped. */
function shown(value: string): string {
  const v = clip(value, MAX_VALUE);
  if (/^[\w@%+=:,./~{}$?#&-]+$/.test(v)) return v;
  return JSON.stringify(v).replace(HIDDEN, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
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
