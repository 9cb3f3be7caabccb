/**
 * Token counts between the server's own: the server says exactly how many
 * prompt tokens a request had (`usage.prompt_tokens`, and `/tokenize` where
 * it has it), but only afterwards. In between, a request is estimated by a
 * rough count of the pieces a BPE tokenizer makes (words, digit groups,
 * punctuation, runs of spaces), scaled by how far that count was off for the
 * last request the server counted. Consecutive requests share nearly all
 * their text, so the scaled estimate is close; it is kept on the high side
 * until the server has counted once.
 */

/** Pieces a BPE vocabulary rarely merges across: letters (in chunks), digit groups, symbol pairs, space runs. */
const PIECE = /[A-Za-z]{1,10}|[0-9]{1,3}|[^\sA-Za-z0-9]{1,2}|\s{1,8}/g;

/** The raw piece count of a text (not yet scaled). */
export function pieces(text: string): number {
  let n = 0;
  PIECE.lastIndex = 0;
  while (PIECE.exec(text)) n++;
  return n;
}

/** Tokens a chat template adds around each message (role markers, separators). */
export const MESSAGE_OVERHEAD = 5;

export interface Countable {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
}

/** The raw piece count of one message (its text and its calls). */
function messagePieces(m: Countable): number {
  const c = m.content;
  let n = MESSAGE_OVERHEAD;
  if (typeof c === 'string') n += pieces(c);
  else if (c !== undefined && c !== null) n += pieces(JSON.stringify(c));
  if (m.tool_calls) n += pieces(JSON.stringify(m.tool_calls));
  return n;
}

/**
 * The raw piece count of a chat request: its messages and, when sent in the
 * API, its tools. `seen` remembers what a message object counted: a
 * conversation hands the same objects for its earlier turns every request,
 * so each is counted once (messages are never changed after they are made).
 */
export function requestPieces(messages: readonly Countable[], tools?: unknown, seen?: WeakMap<object, number>): number {
  let n = 3;
  for (const m of messages) {
    let k = seen?.get(m);
    if (k === undefined) {
      k = messagePieces(m);
      seen?.set(m, k);
    }
    n += k;
  }
  // A template renders tools into the prompt with an instruction around them.
  if (tools !== undefined && typeof tools === 'object' && tools !== null) {
    let k = seen?.get(tools);
    if (k === undefined) {
      k = pieces(JSON.stringify(tools)) + 120;
      seen?.set(tools, k);
    }
    n += k;
  }
  return n;
}

export class TokenMeter {
  /** Tokens per raw piece, from the last request the server counted; above 1 until then (safe side). */
  private scale = 1.15;
  private calibrated = false;
  private readonly seen = new WeakMap<object, number>();

  /** Estimated tokens of a request. */
  estimate(messages: readonly Countable[], tools?: unknown): number {
    return Math.ceil(requestPieces(messages, tools, this.seen) * this.scale);
  }

  /** Estimated tokens of a text alone. */
  estimateText(text: string): number {
    return Math.ceil(pieces(text) * this.scale);
  }

  /** Characters of `text`'s kind that fit in `tokens` (for cutting a text to a token budget). */
  charsFor(tokens: number, sample: string): number {
    const p = pieces(sample);
    const perPiece = p > 0 ? sample.length / p : 4;
    return Math.max(0, Math.floor((tokens / this.scale) * perPiece));
  }

  /** The server counted `promptTokens` for a request: the scale follows it. */
  observe(messages: readonly Countable[], tools: unknown, promptTokens: number): void {
    const raw = requestPieces(messages, tools, this.seen);
    if (!(promptTokens > 0) || raw <= 0) return;
    const next = promptTokens / raw;
    // A wildly different figure is a server that counts something else (cached tokens, another model): not followed.
    if (next < 0.2 || next > 5) return;
    this.scale = this.calibrated ? 0.5 * this.scale + 0.5 * next : next;
    this.calibrated = true;
  }

  get isCalibrated(): boolean {
    return this.calibrated;
  }

  get tokensPerPiece(): number {
    return this.scale;
  }
}
