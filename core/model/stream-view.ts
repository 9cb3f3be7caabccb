import { THINK_CLOSE, THINK_OPEN } from './reasoning';

/**
 * What a person should see of a streamed answer while it arrives: the
 * prose, with reasoning apart and without the tool calls a model writes as
 * text (those become tool cards once the answer is whole). Deltas are cut
 * anywhere, so a tail that may be the start of a tag is held back until the
 * next delta says what it is. The final answer is split again, exactly, when
 * it is complete; this is only the live view of it.
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
}

/** Where the text forms of tool calls begin (see core/model/formats). */
const CALL_BLOCKS: Block[] = [
  { open: '<tool_call>', close: '</tool_call>' },
  { open: '<function=', close: '</function>' },
  { open: '[TOOL_CALLS]' },
  { open: '<|python_tag|>' },
  // Harmony (gpt-oss) with its special tokens kept: channels are sorted out once the answer is whole.
  { open: '<|channel|>' },
  { open: '<|start|>' },
];

const THINK: Block = { open: THINK_OPEN, close: THINK_CLOSE };
const OPENERS = [THINK, ...CALL_BLOCKS];
/** Closing tags with nothing open: dropped from the view (a stray `</tool_call>` is a slip, not prose). */
const STRAY = [THINK_CLOSE, '</tool_call>', '</function>'];
const TAGS = [...OPENERS.map((b) => b.open), ...STRAY];

export class StreamView {
  private pending = '';
  private inside: Block | undefined;
  /** Text shown so far (for a retract). */
  private shown = '';
  private sawThinkOpen = false;
  /** Nothing but whitespace has come yet: a JSON call (Llama's form) may be starting. */
  private atStart = true;

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
        // Llama 3's call is a bare JSON object as the whole answer: hidden, parsed at the end.
        this.inside = { open: '{' };
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
        if (end < 0) {
          if (this.inside === THINK) {
            const keep = heldBack(text, [close]);
            this.emit(out, 'reasoning', text.slice(0, text.length - keep));
            this.pending = text.slice(text.length - keep);
          } else this.pending = text.slice(-(close.length - 1));
          return out;
        }
        if (this.inside === THINK) this.emit(out, 'reasoning', text.slice(0, end));
        text = text.slice(end + close.length);
        this.inside = undefined;
        continue;
      }
      const next = firstTag(text);
      if (!next) {
        const keep = heldBack(text, TAGS);
        this.emit(out, 'text', text.slice(0, text.length - keep));
        this.pending = text.slice(text.length - keep);
        return out;
      }
      this.emit(out, 'text', text.slice(0, next.at));
      text = text.slice(next.at + next.tag.length);
      if (next.tag === THINK_CLOSE) {
        if (!this.sawThinkOpen && this.shown) {
          // The template opened the block in the prompt: all of it so far was thinking.
          out.push({ kind: 'retract', text: this.shown });
          this.shown = '';
        }
        continue;
      }
      if (STRAY.includes(next.tag)) continue;
      const block = OPENERS.find((b) => b.open === next.tag)!;
      if (block === THINK) this.sawThinkOpen = true;
      this.inside = block;
    }
  }

  /** What is still held back, once the answer has ended (nothing of an unfinished call). */
  flush(): StreamPiece[] {
    const rest = this.pending;
    this.pending = '';
    if (!rest) return [];
    if (this.inside === THINK) return [{ kind: 'reasoning', delta: rest }];
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

function firstTag(text: string): { at: number; tag: string } | undefined {
  let best: { at: number; tag: string } | undefined;
  for (const tag of TAGS) {
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
