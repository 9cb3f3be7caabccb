/**
 * The run's side of its MCP servers: their listings written as `mcp_tools` lines (the verifier knows
 * a tool only from them), what changed told to the model, and the tools each request carries: the
 * built-in ones, then the MCP tools the current stage permits, and no others (a server's whole list
 * is what costs people tens of thousands of tokens a request).
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { McpTools } from '../mcp/types';
import { toolDefinitions } from '../schema/tool-definitions';
import type { Workflow } from '../schema/workflow';
import type { VerifierState } from '../verifier/state';
import { stagePermits } from '../verifier/pre-checks';
import type { TrajectoryWriter } from './trajectory-writer';
import type { AgentEvent } from './types';

const BUILTIN: ChatCompletionTool[] = toolDefinitions();

export class McpListings {
  /** Sentences the model has not been told yet. */
  private pending: string[] = [];
  private sent: { defs: ChatCompletionTool[]; all: ChatCompletionTool[] } | undefined;

  constructor(
    private readonly mcp: McpTools | undefined,
    private readonly wf: Workflow,
    private readonly writer: TrajectoryWriter,
    private readonly state: VerifierState,
    private readonly emit: (e: AgentEvent) => void,
  ) {}

  /** Writes what changed since last time; what the model should be told waits for takeNote. */
  record(): void {
    if (!this.mcp) return undefined;
    const { events, notes } = this.mcp.takeChanges();
    for (const event of events) {
      const w = this.writer.append(event);
      this.state.append(event, w.line);
      this.emit({ kind: 'mcp', ...w, event });
    }
    if (notes.length) this.emit({ kind: 'mcpNotes', notes: notes.map((n) => n.user) });
    this.pending.push(...notes.map((n) => n.model));
  }

  /** The pending sentences as one note for the model, once. */
  takeNote(): string | undefined {
    if (!this.pending.length) return undefined;
    const note = `[Lean4 Agentic: ${this.pending.join(' ')}]`;
    this.pending = [];
    return note;
  }

  /** The tools the next request carries; the same array while nothing changed (the prompt's prefix stays). */
  tools(): ChatCompletionTool[] {
    if (!this.mcp) return BUILTIN;
    const stage = this.wf.stages.find((s) => s.id === this.state.currentStage);
    const defs = stage ? this.mcp.definitions((name) => stagePermits(stage, name)) : [];
    if (this.sent?.defs !== defs) this.sent = { defs, all: defs.length ? [...BUILTIN, ...defs] : BUILTIN };
    return this.sent.all;
  }
}
