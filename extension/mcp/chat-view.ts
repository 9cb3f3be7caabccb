/**
 * Pure: what the chat shows of a run's MCP servers: the list of servers with their state and the
 * tools the current stage permits (sent again when a server or the stage changes), the sentences
 * the run's servers give, and a server that could not start said once per configuration, not per run.
 */
import type { AgentEvent } from '../../core/agent/types';
import type { McpServerState } from '../../core/mcp/types';
import { clip, type McpServerView, type ToWebview } from '../../core/protocol/chat';
import type { Workflow } from '../../core/schema/workflow';
import { stagePermits } from '../../core/verifier/pre-checks';

export interface McpChatViewOptions {
  workflow: Workflow;
  /** The run's trajectory file name: the chat's list of this run is replaced in place. */
  runFile: string;
  /** The configuration digest of each server the run started, by its configured name. */
  digests: ReadonlyMap<string, string>;
  /** The digests whose failure was said already: shared by the chat's runs. */
  said: Set<string>;
  mask: (text: string) => string;
}

export interface McpChatOutput {
  post: ToWebview[];
  /** Warnings for a notification (a server that could not start, the first time). */
  warnings: string[];
}

const MAX_ERROR = 2000;

export class McpChatView {
  private shown: string | undefined;
  private stage: string | undefined;

  constructor(private readonly o: McpChatViewOptions) {
    this.stage = o.workflow.start;
  }

  /** What the chat shows after an event of the run; `stage` is the stage the run is in now (undefined once it ended). */
  onEvent(e: AgentEvent, states: () => McpServerState[], stage: string | undefined): McpChatOutput {
    const out: McpChatOutput = { post: [], warnings: [] };
    if (e.kind === 'mcpNotes') {
      const failed = states().filter((s) => s.state === 'failed');
      // A failure is said from its `mcp` line, once per configuration: not again here, run after run.
      for (const note of e.notes)
        if (!failed.some((s) => s.error && note.includes(s.label) && note.includes(s.error)))
          out.post.push({ type: 'mcpNotice', text: clip(this.o.mask(note), 4000), warn: false });
      return out;
    }
    if (e.kind !== 'mcp' && e.kind !== 'step') return out;
    const now = states();
    if (e.kind === 'mcp' && e.event.error)
      this.failure(
        now.find((s) => s.server === e.event.server),
        out,
      );
    // Where the run ended, the list keeps the stage it was last in.
    if (stage !== undefined) this.stage = stage;
    const list = this.list(now);
    const key = JSON.stringify(list);
    if (key !== this.shown) {
      this.shown = key;
      out.post.push(list);
    }
    return out;
  }

  /** The servers and the tools the stage permits, as the chat lists them. */
  list(states: readonly McpServerState[]): ToWebview {
    const stage = this.o.workflow.stages.find((s) => s.id === this.stage);
    const servers: McpServerView[] = states.slice(0, 64).map((s) => {
      const prefix = `mcp__${s.server}__`;
      const permitted = stage ? s.tools.filter((name) => stagePermits(stage, name)) : [];
      return {
        name: clip(s.label, 200),
        transport: s.transport,
        state: s.state,
        tools: permitted
          .slice(0, 256)
          .map((name) => clip(name.startsWith(prefix) ? name.slice(prefix.length) : name, 200)),
        offered: s.tools.length,
        ...(s.error ? { error: tail(this.o.mask(s.error), MAX_ERROR) } : {}),
      };
    });
    return {
      type: 'mcp',
      run: this.o.runFile,
      ...(this.stage !== undefined ? { stage: clip(this.stage, 200) } : {}),
      servers,
    };
  }

  /** A server that could not start: a notice and a notification, unless this configuration's failure was said. */
  private failure(s: McpServerState | undefined, out: McpChatOutput): void {
    if (s?.state !== 'failed' || !s.error) return;
    const digest = this.o.digests.get(s.label) ?? `name:${s.label}`;
    if (this.o.said.has(digest)) return;
    this.o.said.add(digest);
    const error = this.o.mask(s.error);
    out.post.push({
      type: 'mcpNotice',
      text: clip(`MCP server "${s.label}" could not start, so its tools are not offered: ${tail(error, 3000)}`, 4000),
      warn: true,
    });
    out.warnings.push(`MCP server "${s.label}" could not start: ${tail(error, 400)}`);
  }
}

/** The end of a text (a stderr's last lines matter most), marked where it was cut. */
function tail(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max + 1)}`;
}
