/**
 * A chat run's MCP servers: gathered from the user setting and the workspace's files, those the
 * run's workflow could use kept, the workspace's allowed by the user once (in a trusted workspace
 * only), their inputs asked once per server, and resolved before the run opens; then what the chat shows of them as the run goes (chat-view.ts).
 */
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import type { AgentEvent } from '../../core/agent/types';
import type { McpServerConfig } from '../../core/mcp/config';
import type { McpTools } from '../../core/mcp/types';
import { clip, type ToWebview } from '../../core/protocol/chat';
import type { Workflow } from '../../core/schema/workflow';
import { readMcpServersSetting } from '../config';
import { McpChatView } from './chat-view';
import {
  consentPrompt,
  deniedNote,
  splitByConsent,
  splitByWorkflow,
  unusedNote,
  withAnswers,
  type ConsentAnswers,
} from './consent';
import { askMcpInput } from './input-box';
import { McpInputs } from './inputs';
import { readWorkspaceSource, sourceExists } from './read-source';
import { inputsNeeded, resolveCandidates, type InputValues } from './resolve';
import { gatherServers, PORTABLE_SOURCE, VSCODE_SOURCE, type McpCandidate } from './sources';

/** The workspace's answers to the allow prompt, by configuration digest. */
export const CONSENT_KEY = 'lean4Agentic.mcpConsent';

export interface RunMcpHost {
  readonly context: vscode.ExtensionContext;
  readonly output: vscode.LogOutputChannel;
  /** The workspace folder the run works in, as a path and as its URI's text. */
  readonly ws: string;
  readonly folder: string;
  /** What was said once already: shared by the chat's runs. */
  readonly said: Set<string>;
  readonly signal: AbortSignal;
}

interface Note {
  text: string;
  warn: boolean;
}

export class RunMcp {
  private view: McpChatView | undefined;
  private tools: McpTools | undefined;

  private constructor(
    private readonly host: RunMcpHost,
    private readonly servers: McpServerConfig[],
    private readonly secrets: string[],
    private readonly notes: Note[],
    private readonly digests: ReadonlyMap<string, string>,
  ) {}

  /**
   * The servers the run starts: read (the workspace's files only in a trusted workspace), those the
   * workflow could use, allowed, their inputs asked for, resolved.
   */
  static async prepare(host: RunMcpHost, workflow: Workflow): Promise<RunMcp> {
    const notes: Note[] = [];
    const gathered = gatherServers({ setting: readMcpServersSetting(), ...workspaceTexts(host, notes) });
    notes.push(...gathered.problems.map((text) => ({ text, warn: true })));
    const { usable, unused } = splitByWorkflow(gathered.candidates, workflow);
    for (const c of unused) sayOnce(host, notes, `unused:${workflow.id}:${c.digest}`, unusedNote(c, workflow), false);
    const allowed = await allowedServers(host, usable, notes, workflow);
    const values = await inputValues(host, allowed);
    const ctx = { workspaceFolder: host.ws, userHome: homedir(), env: process.env };
    const r = resolveCandidates(allowed, ctx, values);
    notes.push(...r.notes.map((text) => ({ text, warn: true })));
    for (const n of notes)
      if (n.warn) host.output.warn(n.text);
      else host.output.info(n.text);
    if (r.servers.length) host.output.info(`MCP servers for the run: ${r.servers.map((s) => s.name).join(', ')}`);
    const digests = new Map(allowed.map((c) => [c.server.name, c.digest]));
    return new RunMcp(host, r.servers, r.secrets, notes, digests);
  }

  /** What openRun takes: nothing when no server starts. */
  forRun(): { mcp?: { servers: McpServerConfig[]; secrets: string[] } } {
    return this.servers.length ? { mcp: { servers: this.servers, secrets: this.secrets } } : {};
  }

  /** The run started: the sentences about its servers in the chat; from now on their list follows its events. */
  started(
    post: (m: ToWebview) => void,
    run: { tools: McpTools | undefined; workflow: Workflow; runFile: string; mask: (t: string) => string },
  ): void {
    for (const n of this.notes) post({ type: 'mcpNotice', text: clip(run.mask(n.text), 4000), warn: n.warn });
    this.tools = run.tools;
    if (!run.tools) return;
    const { workflow, runFile, mask } = run;
    this.view = new McpChatView({ workflow, runFile, digests: this.digests, said: this.host.said, mask });
  }

  /** The chat's messages for an event of the run, and a notification for a server that could not start. */
  onEvent(e: AgentEvent, stage: string | undefined, post: (m: ToWebview) => void): void {
    const tools = this.tools;
    if (!this.view || !tools) return;
    const out = this.view.onEvent(e, () => tools.state(), stage);
    for (const m of out.post) post(m);
    for (const w of out.warnings) {
      this.host.output.warn(w);
      void vscode.window.showWarningMessage(`Lean4 Agentic: ${w}`);
    }
  }
}

/**
 * The texts of the workspace's configuration files, in a trusted workspace only: in Restricted Mode
 * a planted file is not even read, only said to wait for trust. A file refused is said once.
 */
function workspaceTexts(host: RunMcpHost, notes: Note[]): { vscode?: string; portable?: string } {
  const names = [VSCODE_SOURCE, PORTABLE_SOURCE];
  if (!vscode.workspace.isTrusted) {
    if (names.some((name) => sourceExists(host.ws, name)))
      notes.push({ text: `The workspace's MCP servers start only once you trust the workspace.`, warn: true });
    return {};
  }
  const [vscodeFile, portable] = names.map((name) => {
    const read = readWorkspaceSource(host.ws, name);
    if (read.problem) sayOnce(host, notes, `source:${read.problem}`, read.problem, true);
    return read.text;
  });
  return {
    ...(vscodeFile !== undefined ? { vscode: vscodeFile } : {}),
    ...(portable !== undefined ? { portable } : {}),
  };
}

/** A note said once in the chat's life (shared by its runs), under `key`. */
function sayOnce(host: RunMcpHost, notes: Note[], key: string, text: string, warn: boolean): void {
  if (host.said.has(key)) return;
  host.said.add(key);
  notes.push({ text, warn });
}

/**
 * The user's servers, and the workspace's that the user allowed: in a trusted workspace only, asked
 * once per configuration in a modal that names each and what it runs. No answer (Escape) asks again next run.
 */
async function allowedServers(
  host: RunMcpHost,
  candidates: McpCandidate[],
  notes: Note[],
  workflow: Workflow,
): Promise<McpCandidate[]> {
  // Read only in a trusted workspace (workspaceTexts); and should trust be withdrawn meanwhile, not started.
  if (!vscode.workspace.isTrusted) candidates = candidates.filter((c) => c.origin === 'user');
  const state = host.context.workspaceState;
  const answers = state.get<ConsentAnswers>(CONSENT_KEY) ?? {};
  const split = splitByConsent(candidates, answers, workflow);
  if (split.ask.length && !host.signal.aborted) {
    const { message, detail, asked } = consentPrompt(split.ask, workflow);
    const allow = 'Allow';
    const deny = "Don't Allow";
    const pick = asked.length
      ? await vscode.window.showWarningMessage(message, { modal: true, detail }, allow, deny)
      : undefined;
    if (pick !== undefined) {
      await state.update(CONSENT_KEY, withAnswers(answers, asked, pick === allow ? 'allow' : 'deny', workflow));
      (pick === allow ? split.allowed : split.denied).push(...asked);
    }
    // What was not shown, or not answered, is not started this run and is asked about again.
    for (const c of split.ask.filter((a) => pick === undefined || !asked.includes(a)))
      notes.push({
        text: `MCP server "${c.server.name}" is not started: it was not allowed in the prompt.`,
        warn: true,
      });
  }
  for (const c of split.denied) sayOnce(host, notes, `deny:${c.digest}`, deniedNote(c), false);
  // In the order the sources were read (the user's first): the hub records them so.
  return candidates.filter((c) => split.allowed.includes(c));
}

/** Each `${input:…}` the allowed servers mention, per server: kept, else asked once; one the user dismissed stays missing. */
async function inputValues(host: RunMcpHost, allowed: readonly McpCandidate[]): Promise<InputValues> {
  const inputs = new McpInputs(host.context, host.folder, askMcpInput);
  const values = new Map<string, Map<string, string>>();
  for (const c of allowed) {
    const mine = new Map<string, string>();
    for (const input of inputsNeeded(c)) {
      if (host.signal.aborted) break;
      const value = await inputs.value(input, c.server.name);
      if (value !== undefined) mine.set(input.id, value);
    }
    values.set(c.server.name, mine);
  }
  return values;
}
