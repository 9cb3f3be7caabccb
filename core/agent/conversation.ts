import { randomBytes } from 'node:crypto';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { FORMATS, type TextMessage, type ToolSpec, type WireFormat } from '../model/formats';

/**
 * The conversation a run has with its model, kept as what happened (turns)
 * rather than as request messages, and rendered for the wire format in use:
 * native `tool_calls` and `tool` messages, or a text format's own rendering
 * of the tools, the calls and the results. Rendering is a pure function of
 * the turns, so consecutive requests share their prefix byte for byte (the
 * server's prefix cache); the turns change only when the run compacts them.
 * Reasoning is kept in the trajectory, not sent back: the Qwen templates drop
 * it from earlier turns anyway, and it would cost the window.
 */

export interface TurnCall {
  id: string;
  name: string;
  args: unknown;
  /** Set when the arguments were unreadable: rendered back as an empty object. */
  malformed?: boolean;
}

export type Turn =
  | { kind: 'system'; text: string }
  | { kind: 'task'; text: string }
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; calls: TurnCall[] }
  | { kind: 'results'; results: TurnResult[] }
  /** A compaction's note standing for the turns it replaced. */
  | { kind: 'summary'; text: string };

export interface TurnResult {
  callId: string;
  name: string;
  content: string;
  /** Replaced by a stub when the window filled. */
  elided?: boolean;
}

export class Conversation {
  readonly turns: Turn[] = [];

  constructor(
    system: string,
    task: string,
    private readonly tools: readonly ToolSpec[],
  ) {
    this.turns.push({ kind: 'system', text: system }, { kind: 'task', text: task });
  }

  push(...turns: Turn[]): void {
    this.turns.push(...turns);
  }

  /** The request messages for `format`. */
  render(format: WireFormat): ChatCompletionMessageParam[] {
    const out: ChatCompletionMessageParam[] = [];
    const f = format === 'native' ? undefined : FORMATS[format];
    const system = this.turns[0] as { text: string };
    const task = this.turns[1] as { text: string };
    const head = f ? f.prompt(system.text, task.text, this.tools) : { system: system.text, task: task.text };
    out.push({ role: 'system', content: head.system }, { role: 'user', content: head.task });
    for (const t of this.turns.slice(2)) {
      switch (t.kind) {
        case 'system':
        case 'task':
        case 'user':
        case 'summary':
          out.push({ role: 'user', content: t.text });
          break;
        case 'assistant':
          if (!f) {
            out.push({
              role: 'assistant',
              content: t.text || (t.calls.length ? null : ''),
              ...(t.calls.length ? { tool_calls: t.calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.malformed ? '{}' : JSON.stringify(c.args ?? {}) } })) } : {}),
            } as ChatCompletionMessageParam);
          } else {
            out.push({ role: 'assistant', content: f.assistantContent(t.text, t.calls.map((c) => ({ name: c.name, args: c.malformed ? {} : c.args }))) });
          }
          break;
        case 'results':
          if (!f) for (const r of t.results) out.push({ role: 'tool', tool_call_id: r.callId, content: r.content });
          else for (const m of f.resultMessages(t.results)) out.push(toParam(m));
          break;
      }
    }
    return out;
  }
}

function toParam(m: TextMessage): ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content };
  return { role: m.role, content: m.content } as ChatCompletionMessageParam;
}

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * An id for a call that came as text (it has none from the server): unique
 * in the run, and nine alphanumerics, the only shape the strictest chat
 * templates (Mistral's) accept.
 */
export function newCallId(): string {
  return [...randomBytes(9)].map((b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join('');
}
