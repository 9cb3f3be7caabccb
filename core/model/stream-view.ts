import { THINK_CLOSE, THINK_OPEN } from './reasoning';

/**
 * What a person should see of a streamed answer while it arrives: the
 * prose, with reasoning apart and without the tool calls a model writes as
 * text (those become tool cards once the answer is whole). Deltas are cut
 * anywhere, so a tail that may be the start of a tag is held back until the
 * next delta says what it is. The same rules as the exact reading of the
 * whole answer (reasoning.ts, formats/): reasoning only at the start,
 * Harmony's analysis channel as reasoning, nothing inside a ``` fence taken
 * for a call. The final answer is split again, exactly, when it is
 * complete; this is only the live view of it.
 */
export type StreamPiece =
  | { kind: 'text'; delta: string }
  | { kind: 'reasoning'; delta: string }
  /** A bare `</think>` arrived: the text shown so far in this answer was reasoning. */
  | { kind: 'retract'; text: string };

interface Block {
  open: string;
  /** Where the block ends; undefined: it runs to the end of the answer. */
  close?: string;
  /** What its content is: reasoning, or a call (hidden). */
  shows: 'reasoning' | 'nothing';
}

/** Where the text forms of tool calls begin (see core/model/formats). */
const CALL_BLOCKS: Block[] = [
  { open: '<tool_call>', close: '</tool_call>', shows: 'nothing' },
  { open: '<function=', close: '</function>', shows: 'nothing' },
  { open: '[TOOL_CALLS]', shows: 'nothing' },
  { open: '<|python_tag|>', shows: 'nothing' },
  // Harmony (gpt-oss) with its special tokens kept: a call goes to a recipient and ends at <|call|>.
  { open: ' to=functions.', close: '<|call|>', shows: 'nothing' },
];

/** Harmony's analysis channel: reasoning wherever it stands. */
const ANALYSIS: Block = { open: '<|channel|>analysis<|message|>', close: '<|end|>', shows: 'reasoning' };

const THINKS: Block[] = [
  { open: THINK_OPEN, close: THINK_CLOSE, shows: 'reasoning' },
  { open: '[THINK]', close: '[/THINK]', shows: 'reasoning' },
];

/**
 * Markers that say nothing to a reader: a stray closing tag (a slip), and
 * Harmony's framing around the final answer and its preambles.
 */
const DROPPED = [
  '</tool_call>',
  '</function>',
  '<|start|>assistant',
  '<|channel|>final<|message|>',
  '<|channel|>commentary<|message|>',
  '<|channel|>commentary',
  '<|end|>',
  '<|return|>',
  '<|constrain|>json<|message|>',
];

const FENCE = '```';

export class StreamView {
  private pending = '';
  private inside: Block | undefined;
  /** Text shown so far (for a retract). */
  private shown = '';
  /** Reasoning stands only at the start (reasoning.ts): once prose or a call came, think tags are text. */
  private thinkDone = false;
  /** Inside a ``` fence: a quote, where nothing is a tag but the closing fence. */
  private inFence = false;
  /** Nothing but whitespace has come yet: a JSON call (Llama's form) may be starting. */
  private atStart = true;

  /** `promptOpensThinking`: a closing tag alone ends the reasoning (reasoning.ts SplitOptions). */
  constructor(private readonly opts: { promptOpensThinking?: boolean } = {}) {}

  /** The tags that mean something at this point of the answer. */
  private tags(): string[] {
    if (this.inFence) return [FENCE];
    const out = [FENCE, ...CALL_BLOCKS.map((b) => b.open), ANALYSIS.open, ...DROPPED];
    if (!this.thinkDone) {
      if (!this.shown.trim()) out.push(...THINKS.map((b) => b.open));
      // A closing tag alone ends the reasoning the prompt opened (only the first one, a call drafted before it included).
      if (this.opts.promptOpensThinking) out.push(THINK_CLOSE);
    }
    return out;
  }

  push(delta: string): StreamPiece[] {
    const out: StreamPiece[] = [];
    let text = this.pending + delta;
    this.pending = '';
    if (this.atStart) {
      const lead = text.trimStart();
      if (lead === '') {
        this.pending = text;
        return out;
      }
      if (lead.startsWith('{') || lead.startsWith('[{')) {
        // Llama 3's call is a bare JSON object as the whole answer: held, read when the answer is whole.
        this.inside = { open: '{', shows: 'nothing' };
        this.atStart = false;
        return out;
      }
      this.atStart = false;
    }
    for (;;) {
      if (this.inside) {
        const close = this.inside.close;
        if (close === undefined) return out;
        const end = text.indexOf(close);
        const reasoning = this.inside.shows === 'reasoning';
        if (end < 0) {
          const keep = heldBack(text, [close]);
          if (reasoning) this.emit(out, 'reasoning', text.slice(0, text.length - keep));
          this.pending = text.slice(text.length - keep);
          return out;
        }
        if (reasoning) this.emit(out, 'reasoning', text.slice(0, end));
        if (THINKS.includes(this.inside)) this.thinkDone = true;
        text = text.slice(end + close.length);
        this.inside = undefined;
        continue;
      }
      const tags = this.tags();
      const next = firstTag(text, tags);
      if (!next) {
        const keep = heldBack(text, tags);
        this.emit(out, 'text', text.slice(0, text.length - keep));
        this.pending = text.slice(text.length - keep);
        return out;
      }
      this.emit(out, 'text', text.slice(0, next.at));
      text = text.slice(next.at + next.tag.length);
      if (next.tag === FENCE) {
        this.emit(out, 'text', FENCE);
        this.inFence = !this.inFence;
        continue;
      }
      if (next.tag === THINK_CLOSE && !this.inside) {
        // The template opened the block in the prompt: all of it so far was thinking.
        if (this.shown) out.push({ kind: 'retract', text: this.shown });
        this.shown = '';
        this.thinkDone = true;
        continue;
      }
      if (DROPPED.includes(next.tag)) continue;
      const think = THINKS.find((b) => b.open === next.tag);
      if (think) {
        this.inside = think;
        continue;
      }
      if (next.tag === ANALYSIS.open) {
        this.inside = ANALYSIS;
        continue;
      }
      // A call before the reasoning closed is still reasoning's when the prompt opened it.
      if (!this.opts.promptOpensThinking) this.thinkDone = true;
      this.inside = CALL_BLOCKS.find((b) => b.open === next.tag)!;
    }
  }

  /** What is still held back, once the answer has ended (nothing of an unfinished call). */
  flush(): StreamPiece[] {
    const rest = this.pending;
    this.pending = '';
    if (!rest) return [];
    if (this.inside?.shows === 'reasoning') return [{ kind: 'reasoning', delta: rest }];
    if (this.inside) return [];
    return [{ kind: 'text', delta: rest }];
  }

  private emit(out: StreamPiece[], kind: 'text' | 'reasoning', delta: string): void {
    if (!delta) return;
    if (kind === 'text') this.shown += delta;
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.delta += delta;
    else out.push({ kind, delta });
  }
}

function firstTag(text: string, tags: readonly string[]): { at: number; tag: string } | undefined {
  let best: { at: number; tag: string } | undefined;
  for (const tag of tags) {
    const at = text.indexOf(tag);
    if (at >= 0 && (!best || at < best.at || (at === best.at && tag.length > best.tag.length))) best = { at, tag };
  }
  return best;
}

/** How many trailing characters of `text` could begin one of `tags`. */
function heldBack(text: string, tags: readonly string[]): number {
  let keep = 0;
  for (const tag of tags) {
    for (let n = Math.min(tag.length - 1, text.length); n > keep; n--) {
      if (tag.startsWith(text.slice(-n))) {
        keep = n;
        break;
      }
    }
  }
  return keep;
}
