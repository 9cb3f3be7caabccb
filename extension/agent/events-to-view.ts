/**
 * What the chat shows of a run's events: pure (no `vscode`), so what is posted, masked and clipped is tested
 * under node --test. It keeps what the view holds of the answer being streamed and the file just written.
 */
import type { AgentEvent } from '../../core/agent/loop';
import { clip, type StepCard, type ToWebview } from '../../core/protocol/chat';
import { mcpLabel, shortArgs, toStepCard } from '../chat/cards';
import type { FileChange } from '../checkpoints/file-changes';
import { refusalNote } from '../../core/sandbox/refusals';
import { redactJsonStrings } from '../../core/secrets/redact';
import type { SandboxRecord } from '../../core/schema/trajectory';

/** What the chat shows of a step never carries the key (a command or its output could echo it). */
function redactCard(card: StepCard, mask: (text: string) => string): StepCard {
  return {
    ...card,
    args: mask(card.args),
    failed: card.failed.map((f) => ({ ...f, reason: mask(f.reason) })),
    ...(card.excerpt !== undefined ? { excerpt: mask(card.excerpt) } : {}),
  };
}

export interface EventsToViewOptions {
  /** Masks the key and the host's secret-looking values. */
  mask: (text: string) => string;
  /** The workflow's passing exit code of the outcome check. */
  expectExitCode: number;
  /** The run's trajectory file name (its steps' Restore and Branch buttons name it). */
  runFile: string;
}

export class EventsToView {
  /** Characters of the current answer's streamed text as the chat received them (masked). */
  private streamedChars = 0;
  /** The write a file tool just made: the next step's (one tool runs at a time). */
  private written: Pick<FileChange, 'id' | 'path' | 'created'> | undefined;

  /** How the run's commands are confined (known once the sandbox is up): a refusal is said on the card. */
  private sandbox: SandboxRecord | undefined;
  private workspace: string | undefined;

  constructor(private readonly o: EventsToViewOptions) {}

  confinedBy(sandbox: SandboxRecord, workspace: string): void {
    this.sandbox = sandbox;
    this.workspace = workspace;
  }

  /** A file tool wrote a file (its change, for the Diff button of the step that follows). */
  wrote(change: Pick<FileChange, 'id' | 'path' | 'created'> | undefined): void {
    this.written = change;
  }

  /** The messages for the chat of one event, in order (none for the events it does not show). */
  map(e: AgentEvent): ToWebview[] {
    const mask = this.o.mask;
    switch (e.kind) {
      case 'request':
        return [{ type: 'waiting' }];
      case 'toolStart':
        return [
          {
            type: 'toolStarted',
            id: clip(e.id, 200),
            tool: clip(e.tool, 200),
            args: shortArgs(e.tool, redactJsonStrings(e.args, mask)),
            ...mcpLabel(e.tool),
          },
        ];
      case 'text': {
        const shown = clip(mask(e.delta), 100_000);
        this.streamedChars += shown.length;
        return [{ type: 'text', delta: shown }];
      }
      case 'reasoning':
        return [{ type: 'reasoning', delta: clip(mask(e.delta), 100_000) }];
      case 'retract': {
        // The view holds exactly what was streamed since the answer began (masked as sent): all of it moves.
        const chars = this.streamedChars;
        this.streamedChars = 0;
        return [{ type: 'retract', chars }];
      }
      case 'context':
        return [
          {
            type: 'context',
            used: Math.max(0, Math.round(e.used)),
            window: e.window,
            assumed: e.source === 'default',
            completionTokens: Math.max(0, Math.round(e.completionTokens)),
          },
        ];
      case 'compaction':
        return [{ type: 'compaction', text: compactionText(e.event) }];
      case 'tokens':
        // For a trainer, not the chat (the editor's runs do not record them).
        return [];
      case 'mcp':
      case 'mcpNotes':
        // The run's MCP list and notices: extension/mcp/chat-view.ts, which knows the servers' state.
        return [];
      case 'message':
        this.streamedChars = 0;
        return assistantMessage(e.text);
      case 'step':
        this.streamedChars = 0;
        return [{ type: 'step', card: this.stepCard(e) }];
      case 'outcome':
        return [
          {
            type: 'outcome',
            command: clip(e.event.command, 2000),
            exitCode: e.event.exitCode ?? null,
            passed: e.event.exitCode === this.o.expectExitCode && e.event.testsRan !== 0,
            excerpt: clip(mask((e.event.output ?? '').trim()), 2000),
          },
        ];
      case 'header':
      case 'end':
      case 'restore':
        return [];
    }
  }

  private stepCard(e: AgentEvent & { kind: 'step' }): StepCard {
    const card = redactCard(toStepCard(e.line, e.event, e.result, e.gate), this.o.mask);
    const written = this.written;
    if (written && e.event.status === 'ok')
      card.change = { id: written.id, path: clip(written.path, 2000), created: written.created };
    if (e.event.checkpoint) card.checkpoint = e.event.checkpoint;
    if (e.event.result?.sandboxed) {
      const r = e.event.result;
      const note = refusalNote(`${r.output ?? ''}\n${r.error ?? ''}`, this.sandbox, {
        exitCode: r.exitCode,
        ...(this.workspace !== undefined ? { workspace: this.workspace } : {}),
      });
      if (note) card.sandboxNote = clip(this.o.mask(note), 2000);
    }
    card.run = this.o.runFile;
    this.written = undefined;
    return card;
  }
}

function compactionText(c: (AgentEvent & { kind: 'compaction' })['event']): string {
  return clip(
    `Context compacted to fit the model's ${c.window.toLocaleString()}-token window (${c.reason === 'context_error' ? 'the server refused a request as too long' : 'it was filling'}): ${c.tokensBefore.toLocaleString()} → ${c.tokensAfter.toLocaleString()} tokens; ${c.elided} old results elided, ${c.summarized} turns summarized${c.summaryBy ? ` by the ${c.summaryBy === 'model' ? 'model' : 'host (the model could not)'}` : ''}.`,
    2000,
  );
}

/** The model's finished reply, as recorded: shown whole (what was streamed of it is replaced). */
function assistantMessage(text: string): ToWebview[] {
  const m = JSON.parse(text) as { role?: string; content?: string; reasoning?: string };
  if (m.role !== 'assistant' || typeof m.content !== 'string') return [];
  // An empty answer is recorded for its token counts; there is nothing to show.
  if (!m.content && !m.reasoning) return [];
  return [
    {
      type: 'assistant',
      text: clip(m.content, 200_000),
      ...(m.reasoning ? { reasoning: clip(m.reasoning, 200_000) } : {}),
    },
  ];
}
