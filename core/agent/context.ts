import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { WireFormat } from '../model/formats';
import type { TokenMeter } from '../model/tokens';
import type { CompactionEvent } from '../schema/trajectory';
import type { Conversation, Turn, TurnResult } from './conversation';

/**
 * Keeping a run inside its model's context window. Every request is sized
 * before it is sent (server-counted tokens, a calibrated estimate between
 * counts) so that prompt + `max_tokens` stays under the window with a
 * margin. When the next request would not fit, the conversation is
 * compacted once, well below the limit, so that the requests after it share
 * their prefix again until the next compaction: first old tool results are
 * elided, oldest first; if that is not enough, the same model writes a
 * structured note standing for the older turns (task, plan, what was tried,
 * files changed, current stage, what failed), to which the host adds what it
 * knows for certain. The system prompt, the task and the recent turns stay.
 */

export interface Budget {
  /** The window in tokens: prompt and answer together. */
  window: number;
  /** Tokens kept for the answer (`max_tokens`). */
  reserve: number;
  /** Kept free for the estimate's error and the template's own tokens. */
  margin: number;
}

/** The smallest answer worth asking for: below it a model cannot write a call with its arguments. */
export const MIN_ANSWER = 256;

/**
 * The budget of a window. The answer's share is what was asked for (or a
 * quarter of the window, at most 8192), but never so much that the system
 * prompt and the tools (`head`, in tokens) leave no room for the
 * conversation: at least a quarter of what is left past them stays the
 * conversation's.
 */
/** What a request keeps free of the window: for the estimate's error and the template's own tokens. */
function marginFor(window: number): number {
  return Math.max(64, Math.ceil(window * 0.03));
}

export function budgetFor(window: number, maxOutputTokens?: number, head = 0): Budget {
  const wanted =
    maxOutputTokens && maxOutputTokens > 0
      ? maxOutputTokens
      : Math.min(8192, Math.max(MIN_ANSWER, Math.floor(window / 4)));
  const margin = marginFor(window);
  const room = window - margin - head;
  const reserve = Math.max(MIN_ANSWER, Math.min(wanted, Math.floor(window / 2), Math.floor(room * 0.75)));
  return { window, reserve, margin };
}

/**
 * Why a window cannot hold a run at all, when it cannot: the system prompt and
 * the tools, a minimal answer and a little conversation must fit.
 */
export function tooSmall(window: number, head: number): string | undefined {
  const margin = marginFor(window);
  if (window - margin - head >= MIN_ANSWER * 3) return undefined;
  return `the model's context window (${window} tokens) cannot hold the system prompt and the tool descriptions (about ${head} tokens) with room for a conversation and an answer. Serve the model with a longer context (vLLM --max-model-len, SGLang --context-length), or set the context length setting (lar run: --context-length) if the server reports too little`;
}

/** The most prompt tokens a request may have. */
export function promptLimit(b: Budget): number {
  return b.window - b.reserve - b.margin;
}

/** `max_tokens` for a prompt of `promptTokens`: the reserve, or less when the prompt leaves less (possibly nothing: the caller decides). */
export function answerBudget(b: Budget, promptTokens: number): number {
  return Math.min(b.reserve, b.window - b.margin - promptTokens);
}

/** A text cut to about `tokens`, its head and tail kept, saying what was left out. */
export function capText(text: string, tokens: number, meter: TokenMeter, hint: string): string {
  if (meter.estimateText(text) <= tokens) return text;
  const keep = meter.charsFor(tokens, text);
  const head = Math.floor(keep * 0.6);
  const tail = Math.max(0, keep - head);
  const omitted = text.length - head - tail;
  return `${text.slice(0, head)}\n[… ${omitted} characters left out to fit the context window${hint ? `; ${hint}` : ''} …]\n${text.slice(text.length - tail)}`;
}

export interface CompactOptions {
  format: WireFormat;
  /** The tools as sent in the API (native format), for the estimate. */
  tools?: ChatCompletionTool[];
  meter: TokenMeter;
  /** Compact to at most this many prompt tokens. */
  target: number;
  window: number;
  reason: CompactionEvent['reason'];
  /** Asks the model for the note; undefined when it could not write one. */
  summarize: (
    messages: ChatCompletionMessageParam[],
    maxTokens: number,
  ) => Promise<{ text: string; tokens?: number } | undefined>;
  /** What the host knows for certain (stage, files changed, failing calls), appended to the note. */
  facts: () => string;
  /** Which compaction of the run this is (1, 2, …). */
  ordinal: number;
  /** Whether the model may be asked for the note (the run spaces those calls out); default yes. */
  modelNote?: boolean;
}

export type Compaction = Omit<CompactionEvent, 'type' | 'at'>;

const ELIDED = '[earlier result elided to fit the context window';

export async function compact(conv: Conversation, o: CompactOptions): Promise<Compaction> {
  const t0 = Date.now();
  const size = () => o.meter.estimate(conv.render(o.format), o.format === 'native' ? o.tools : undefined);
  const tokensBefore = size();
  const elided = elideOld(conv, o, tokensBefore);
  let tokens = size();
  const out: Compaction = {
    reason: o.reason,
    window: o.window,
    tokensBefore,
    tokensAfter: tokens,
    elided,
    summarized: 0,
  };
  if (tokens > o.target) {
    await summarizeOlder(conv, o, out);
    tokens = size();
    // Still too big: the last turn's reasoning goes too, then the kept turns' results are cut, largest first.
    if (tokens > o.target) {
      const t = conv.turns[recentStart(conv.turns, 1)];
      if (t?.kind === 'assistant' && t.reasoning) {
        conv.dropReasoning(t);
        tokens = size();
      }
    }
    if (tokens > o.target) tokens = shrinkResults(conv, o, tokens, size);
  }
  out.tokensAfter = tokens;
  out.durationMs = Date.now() - t0;
  return out;
}

/**
 * Stage 1: old tool results become one-line stubs, oldest first; the last two turns keep theirs.
 * Returns how many results were elided.
 */
function elideOld(conv: Conversation, o: CompactOptions, tokensBefore: number): number {
  let tokens = tokensBefore;
  let elided = 0;
  // Reasoning goes first, oldest first, the last turn's last: a turn's calls and results say what came of it.
  const lastModelTurn = recentStart(conv.turns, 1);
  for (let i = 2; i < conv.turns.length && tokens > o.target; i++) {
    const t = conv.turns[i]!;
    if (t.kind !== 'assistant' || !t.reasoning || i === lastModelTurn) continue;
    const before = o.meter.estimateText(t.reasoning);
    conv.dropReasoning(t);
    tokens -= before;
  }
  const recent = recentStart(conv.turns, 2);
  for (let i = 2; i < recent && tokens > o.target; i++) {
    const t = conv.turns[i]!;
    if (t.kind !== 'results') continue;
    t.results.forEach((r, k) => {
      if (r.elided || tokens <= o.target) return;
      const before = o.meter.estimateText(r.content);
      const short = stub(r);
      conv.setResult(t, k, short, true);
      elided++;
      tokens -= before - o.meter.estimateText(short);
    });
  }
  return elided;
}

/**
 * Stage 2: the older turns become a note, recorded in `out`; the recent turns that fit beside the
 * system prompt, the task and the note stay as they are.
 */
async function summarizeOlder(conv: Conversation, o: CompactOptions, out: Compaction): Promise<void> {
  const maxTokens = Math.min(2048, Math.max(256, Math.floor(o.window / 8)));
  const fixed = o.meter.estimate(conv.headOf(o.format), o.format === 'native' ? o.tools : undefined);
  const cut = keepFrom(
    conv,
    o,
    Math.floor((o.target - fixed - maxTokens - o.meter.estimateText(o.facts()) - 100) * 0.9),
  );
  if (cut <= 2) return;
  const older = conv.turns.slice(2, cut);
  const room = o.window - maxTokens - marginFor(o.window) - 600;
  const request = summaryRequest(older, o.meter, room);
  let note: { text: string; tokens?: number } | undefined;
  // A model call for a note pays only when there is much to stand for (what elided results held
  // counts: the note is where it survives); a few turns get the host's, as does a run that asked lately.
  const worth =
    (o.modelNote ?? true) && older.reduce((n, t) => n + o.meter.estimateText(turnText(t, true)), 0) >= o.target / 4;
  try {
    note = worth ? await o.summarize(request, maxTokens) : undefined;
  } catch {
    note = undefined;
  }
  const written = note?.text.trim();
  // The user's latest message, when it is among the turns replaced, is kept word for word: it is what the model is working on.
  const latestUser = [...conv.turns].reverse().find((t) => t.kind === 'user');
  const pinned =
    latestUser && older.includes(latestUser) && latestUser.kind === 'user'
      ? `The user's latest message, word for word:\n${capText(latestUser.text, Math.floor(maxTokens / 2), o.meter, '')}`
      : '';
  const text = [
    `[The conversation so far, summarized to fit the model's context window (compaction ${o.ordinal} of this run). ${older.length} earlier turns were replaced by this note; the turns after it are as they were.]`,
    capText(written ? written : hostNote(older, maxTokens, o.meter), maxTokens, o.meter, ''),
    ...(pinned ? [pinned] : []),
    o.facts(),
  ].join('\n\n');
  conv.replace(2, cut - 2, { kind: 'summary', text });
  out.summarized = older.length;
  out.summary = text;
  out.summaryBy = written ? 'model' : 'host';
  if (note?.tokens !== undefined) out.summaryTokens = note.tokens;
}

function stub(r: TurnResult): string {
  const first = r.content.split('\n', 1)[0]!.slice(0, 120);
  return `${ELIDED}: ${r.content.length} characters from ${r.name}; it began: ${first}]`;
}

/** Index of the first of the last `n` assistant turns (with what follows them). */
function recentStart(turns: readonly Turn[], n: number): number {
  let seen = 0;
  for (let i = turns.length - 1; i >= 2; i--) {
    if (turns[i]!.kind === 'assistant' && ++seen === n) return i;
  }
  return 2;
}

/**
 * Where the kept recent turns begin: at an assistant turn (so a call and its
 * results stay together), as far back as `budget` tokens allow, and never
 * after the last assistant turn.
 */
function keepFrom(conv: Conversation, o: CompactOptions, budget: number): number {
  const turns = conv.turns;
  let cut = turns.length;
  let used = 0;
  for (let i = turns.length - 1; i >= 2; i--) {
    used += o.meter.estimateText(turnText(turns[i]!));
    if (turns[i]!.kind === 'assistant') {
      if (used > budget && cut < turns.length) break;
      cut = i;
      if (used > budget) break;
    }
  }
  return cut;
}

function turnText(t: Turn, originals = false): string {
  switch (t.kind) {
    case 'assistant':
      return `${t.reasoning ?? ''}\n${t.text}\n${t.calls.map((c) => `${c.name} ${JSON.stringify(c.args ?? {})}`).join('\n')}`;
    case 'results':
      return t.results.map((r) => (originals ? (r.original ?? r.content) : r.content)).join('\n');
    default:
      return t.text;
  }
}

const SUMMARY_SYSTEM =
  'You write the working notes of a coding agent whose conversation no longer fits its context window. The notes replace the older part of the conversation: from now on the agent sees only them and its most recent turns. Be exact: file paths, commands, error messages, numbers. Do not call tools.';

const SUMMARY_HEADINGS = [
  '## Task',
  '## Plan',
  '## What was tried',
  '## Files changed',
  '## Current stage',
  '## What failed',
];

/** The request for the note: the older turns as a plain transcript, cut to fit `room` tokens. */
export function summaryRequest(older: readonly Turn[], meter: TokenMeter, room: number): ChatCompletionMessageParam[] {
  const perResult = Math.max(200, Math.floor(room / Math.max(4, older.length)));
  const lines: string[] = [];
  for (const t of older) {
    switch (t.kind) {
      case 'assistant':
        if (t.text) lines.push(`AGENT: ${t.text}`);
        for (const c of t.calls) lines.push(`AGENT CALLED ${c.name} ${JSON.stringify(c.args ?? {})}`);
        break;
      case 'results':
        // The summarizer reads what the results held, not their stubs.
        for (const r of t.results)
          lines.push(`RESULT OF ${r.name}:\n${capText(r.original ?? r.content, perResult, meter, '')}`);
        break;
      case 'summary':
        lines.push(`EARLIER NOTES:\n${t.text}`);
        break;
      default:
        lines.push(`USER: ${t.text}`);
    }
  }
  const transcript = capText(lines.join('\n\n'), Math.max(200, room), meter, 'the middle of the transcript');
  return [
    { role: 'system', content: SUMMARY_SYSTEM },
    {
      role: 'user',
      content: `The older part of the conversation:\n\n<conversation>\n${transcript}\n</conversation>\n\nWrite the notes under exactly these headings, each followed by short bullet points, and nothing else:\n${SUMMARY_HEADINGS.join('\n')}`,
    },
  ];
}

/**
 * The note when the model did not write one: an earlier note carried forward
 * (it is where the content of results elided long ago survives), then what
 * the newer turns show, mechanically.
 */
function hostNote(older: readonly Turn[], maxTokens: number, meter: TokenMeter): string {
  const earlier = older.flatMap((t) => (t.kind === 'summary' ? [notesOf(t.text)] : []));
  const calls = older.flatMap((t) =>
    t.kind === 'assistant' ? t.calls.map((c) => `- ${c.name} ${clip(JSON.stringify(c.args ?? {}), 160)}`) : [],
  );
  const said = older.flatMap((t) => (t.kind === 'assistant' && t.text ? [`- ${clip(t.text, 200)}`] : []));
  const newer = [
    '## What was tried since (as the host recorded it)',
    ...(calls.length ? calls.slice(-40) : ['- (no tool calls)']),
    ...(said.length ? ['## What the agent said', ...said.slice(-10)] : []),
  ].join('\n');
  // The earlier note keeps at most half the room, the newer turns the rest.
  return [...earlier.map((e) => capText(e, Math.floor(maxTokens / 2), meter, '')), newer].join('\n\n');
}

/** A note's own content, without the bracketed header and the host's facts (both are written anew). */
function notesOf(summary: string): string {
  return summary
    .replace(/^\[The conversation so far, summarized[^\]]*\]\n\n/, '')
    .replace(/\n\nRecorded by Lean4 Agentic \(exact, from the run itself\):[\s\S]*$/, '')
    .trim();
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function shrinkResults(conv: Conversation, o: CompactOptions, tokens: number, size: () => number): number {
  const results = conv.turns
    .flatMap((t) => (t.kind === 'results' ? t.results.map((r, k) => ({ t, k, r })) : []))
    .filter((x) => !x.r.elided);
  results.sort((a, b) => b.r.content.length - a.r.content.length);
  for (const { t, k, r } of results) {
    if (tokens <= o.target) break;
    const have = o.meter.estimateText(r.content);
    const want = Math.max(64, have - (tokens - o.target));
    conv.setResult(t, k, capText(r.content, want, o.meter, 'read the file or rerun the command for the rest'), false);
    tokens = size();
  }
  return tokens;
}
