/**
 * Pure: which MCP servers of the workspace the user allowed to start, as VS Code asks for a
 * workspace's servers: once per server, again when its configuration changes (answers are kept by
 * the configuration's digest). The user's own setting needs no answer.
 */
import type { McpServerConfig } from '../../core/mcp/config';
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

/** What the prompt says: each server's name, transport and what it runs or reaches, as written. */
export function consentPrompt(asked: readonly McpCandidate[]): { message: string; detail: string } {
  const one = asked.length === 1;
  const message = `Start ${one ? 'this MCP server' : `these ${asked.length} MCP servers`} that the workspace configures? ${one ? 'It starts' : 'They start'} with each agent run, confined as its commands are, and the workflow decides which tools the agent may call.`;
  const detail = asked.map((c) => `${c.server.name} (${c.server.source}) — ${describeServer(c.server)}`).join('\n');
  return { message, detail: clipLines(detail, 4000) };
}

/** `stdio: node server.js --stdio`, `http: https://host/mcp` (no credentials or query: a key may ride there). */
export function describeServer(server: McpServerConfig): string {
  if (server.transport === 'stdio') {
    const words = [server.command, ...server.args].map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : JSON.stringify(w)));
    return `stdio: ${clipLines(words.join(' '), 500)}`;
  }
  return `${server.transport}: ${shownUrl(server.url)}`;
}

function shownUrl(raw: string): string {
  // A variable in it: shown as written (a URL parser would rewrite it) up to its query, credentials masked.
  if (raw.includes('${')) return raw.replace(/[?#].*$/s, '?…').replace(/\/\/[^/]*@/, '//***@');
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}

function clipLines(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Why a server the user did not allow is not started (said once per configuration). */
export function deniedNote(c: McpCandidate): string {
  return `MCP server ${JSON.stringify(c.server.name)} (${c.server.source}) is not started: you did not allow it in this workspace. "Lean4 Agentic: Reset MCP Server Permissions" asks again.`;
}
