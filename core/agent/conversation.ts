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
 * Reasoning goes back where the family's template keeps it: in a text format
 * of the Qwen family, with the model's turns since the last user query (the
 * template drops it from earlier ones). Natively it is not sent back: the
 * OpenAI API has no field for it, and a server may refuse one it does not
 * know.
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
  /** `reasoning`: rendered back only where the family's template keeps it (see render). */
  | { kind: 'assistant'; text: string; calls: TurnCall[]; reasoning?: string }
  | { kind: 'results'; results: TurnResult[] }
  /** A compaction's note standing for the turns it replaced. */
  | { kind: 'summary'; text: string };

export interface TurnResult {
  readonly callId: string;
  readonly name: string;
  readonly content: string;
  /** Replaced by a stub when the window filled. */
  readonly elided?: boolean;
  /** What a stub stands for, kept for the compaction note that will replace the turn (never sent). */
  readonly original?: string;
}

export class Conversation {
  private readonly list: Turn[] = [];
  /**
   * Each turn's messages as last rendered, per wire format: a turn renders the
   * same until it is changed through this class, so the messages of earlier
   * turns are the same objects from request to request (and the meter counts
   * each once).
   */
  private readonly cache = new WeakMap<
    Turn,
    { format: WireFormat; thought: boolean; messages: ChatCompletionMessageParam[] }
  >();
  private head: { format: WireFormat; note: Turn | undefined; messages: ChatCompletionMessageParam[] } | undefined;

  constructor(
    system: string,
    task: string,
    private tools: readonly ToolSpec[],
  ) {
    this.list.push({ kind: 'system', text: system }, { kind: 'task', text: task });
  }

  /** The turns, in order: read them here, change them through the methods below. */
  get turns(): readonly Turn[] {
    return this.list;
  }

  push(...turns: Turn[]): void {
    this.list.push(...turns);
  }

  /** The user's messages at the end that the model has not answered (oldest first); the task is not among them. */
  unanswered(): string[] {
    const out: string[] = [];
    for (let i = this.list.length - 1; i > 1 && this.list[i]!.kind === 'user'; i--)
      out.unshift((this.list[i] as { text: string }).text);
    return out;
  }

  /** Removes the user's messages at the end that the model has not answered, and returns their texts (oldest first). */
  takeUnanswered(): string[] {
    const out = this.unanswered();
    this.list.splice(this.list.length - out.length, out.length);
    return out;
  }

  /** Removes one of the user's unanswered messages at the end (its index among `unanswered()`). */
  dropUnanswered(index: number): void {
    const n = this.unanswered().length;
    if (index < 0 || index >= n) return;
    this.list.splice(this.list.length - n + index, 1);
  }

  /** Whether the last turn is the user's (the task, a message, a note): the model has not answered it. */
  get awaitsModel(): boolean {
    const k = this.list[this.list.length - 1]?.kind;
    return k === 'task' || k === 'user' || k === 'summary';
  }

  /** Replaces a result's text (a compaction eliding or cutting it); its turn renders anew. */
  setResult(turn: Turn, index: number, content: string, elided: boolean): void {
    if (turn.kind !== 'results' || !turn.results[index]) throw new Error('setResult: not a result of that turn');
    const was = turn.results[index];
    turn.results[index] = {
      ...was,
      content,
      ...(elided ? { elided: true } : {}),
      original: was.original ?? was.content,
    };
    this.cache.delete(turn);
  }

  /** The tools a text format describes in the system prompt (they change with the stage's MCP tools). */
  setTools(tools: readonly ToolSpec[]): void {
    this.tools = tools;
    this.head = undefined;
  }

  /** The system prompt and the task as `format` carries them, without a compaction's note: what every request starts with. */
  headOf(format: WireFormat): ChatCompletionMessageParam[] {
    const f = format === 'native' ? undefined : FORMATS[format];
    const head = f
      ? f.prompt((this.list[0] as { text: string }).text, (this.list[1] as { text: string }).text, this.tools)
      : { system: (this.list[0] as { text: string }).text, task: (this.list[1] as { text: string }).text };
    return [
      { role: 'system', content: head.system },
      { role: 'user', content: head.task },
    ];
  }

  /** Drops an assistant turn's reasoning from what is sent (a compaction making room). */
  dropReasoning(turn: Turn): void {
    if (turn.kind !== 'assistant' || turn.reasoning === undefined) return;
    delete turn.reasoning;
    this.cache.delete(turn);
  }

  /** Replaces `count` turns from `start` (never the system prompt or the task) with `turn`. */
  replace(start: number, count: number, turn: Turn): void {
    if (start < 2) throw new Error('replace: the system prompt and the task stay');
    this.list.splice(start, count, turn);
  }

  /**
   * The request messages for `format`. A compaction's note is part of the
   * task's message (a second user message in a row is refused by templates
   * that want the roles to alternate).
   */
  render(format: WireFormat): ChatCompletionMessageParam[] {
    const f = format === 'native' ? undefined : FORMATS[format];
    const note = this.list[2]?.kind === 'summary' ? this.list[2] : undefined;
    if (this.head?.format !== format || this.head.note !== note) {
      const [system, task] = this.headOf(format);
      const first = note
        ? `${task!.content as string}\n\n${(note as { text: string }).text}`
        : (task!.content as string);
      this.head = { format, note, messages: [system!, { role: 'user', content: first }] };
    }
    const out: ChatCompletionMessageParam[] = [...this.head.messages];
    // As the Qwen templates do: reasoning goes back with the model's turns after the last user query
    // (the task, a nudge, or the task with a compaction's note), and with no earlier ones.
    let lastQuery = 1;
    this.list.forEach((t, i) => {
      if (t.kind === 'task' || t.kind === 'user' || t.kind === 'summary') lastQuery = i;
    });
    this.list.forEach((t, i) => {
      if (i < (note ? 3 : 2)) return;
      const thought = i > lastQuery;
      let c = this.cache.get(t);
      if (!c || c.format !== format || c.thought !== thought)
        this.cache.set(t, (c = { format, thought, messages: renderTurn(t, f, thought) }));
      out.push(...c.messages);
    });
    return out;
  }
}

function renderTurn(
  t: Turn,
  f: (typeof FORMATS)[keyof typeof FORMATS] | undefined,
  thought: boolean,
): ChatCompletionMessageParam[] {
  switch (t.kind) {
    case 'system':
    case 'task':
    case 'user':
    case 'summary':
      return [{ role: 'user', content: t.text }];
    case 'assistant':
      if (!f) {
        return [
          {
            role: 'assistant',
            content: t.text || (t.calls.length ? null : ''),
            ...(t.calls.length
              ? {
                  tool_calls: t.calls.map((c) => ({
                    id: c.id,
                    type: 'function' as const,
                    function: { name: c.name, arguments: c.malformed ? '{}' : JSON.stringify(c.args ?? {}) },
                  })),
                }
              : {}),
          },
        ];
      }
      return [
        {
          role: 'assistant',
          content: f.assistantContent(
            t.text,
            t.calls.map((c) => ({ name: c.name, args: c.malformed ? {} : c.args })),
            thought ? t.reasoning : undefined,
          ),
        },
      ];
    case 'results':
      if (!f) return t.results.map((r) => ({ role: 'tool' as const, tool_call_id: r.callId, content: r.content }));
      return f.resultMessages(t.results).map(toParam);
  }
}

/** A text format's message as an OpenAI chat message. */
export function toParam(m: TextMessage): ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content };
  return { role: m.role, content: m.content };
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
