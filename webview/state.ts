/** Everything the chat view remembers between messages, in one object every part reads and writes. */
import type { ToWebview } from '../core/protocol/chat';
import type { MarkdownStream } from './markdown';

/** The message of one `type`, as its handler receives it. */
export type Msg<K extends ToWebview['type']> = Extract<ToWebview, { type: K }>;

/** The card of a call that is running: its command, a clock, and the tail of its output as it comes. */
export interface LiveCard {
  el: HTMLElement;
  output: HTMLElement;
  clock: HTMLElement;
  bytes: HTMLElement;
  started: number;
}

interface State {
  /** The log follows new output (the reader is at its bottom). */
  stick: boolean;
  running: boolean;
  /** The answer being streamed, and its text so far. */
  streaming: HTMLElement | undefined;
  streamed: string;
  /** The streamed answer: its settled blocks (rendered once), then the open tail (rendered again each frame). */
  stream: MarkdownStream<HTMLElement> | undefined;
  tailNode: HTMLElement | undefined;
  /** A frame is scheduled to draw the stream. */
  frame: boolean;
  /** The collapsed reasoning of the answer being streamed, and its text. */
  thinking: HTMLElement | undefined;
  thought: string;
  /** The reasoning box's text: set whole (a final answer, a retract) or grown by a delta (appended, not rebuilt). */
  thoughtText: HTMLElement | undefined;
  thoughtSummary: HTMLElement | undefined;
  /** The Resume button of an interrupted run's notice, while it can still be used. */
  resumeButton: HTMLButtonElement | undefined;
  /** What the agent is doing now (shown under the log with its elapsed time), and the run's counters. */
  current: { text: string; since: number } | undefined;
  run: { started: number; ended?: number; steps: number; tokens: number } | undefined;
  ticker: ReturnType<typeof setInterval> | undefined;
  /** The approval boxes still waiting for an answer, by call id. */
  approvals: Map<string, HTMLElement>;
  liveCards: Map<string, LiveCard>;
  /** Each run's MCP list, by its run file: a later message redraws it in place. */
  mcpPanels: Map<string, HTMLElement>;
}

export const state: State = {
  stick: true,
  running: false,
  streaming: undefined,
  streamed: '',
  stream: undefined,
  tailNode: undefined,
  frame: false,
  thinking: undefined,
  thought: '',
  thoughtText: undefined,
  thoughtSummary: undefined,
  resumeButton: undefined,
  current: undefined,
  run: undefined,
  ticker: undefined,
  approvals: new Map(),
  liveCards: new Map(),
  mcpPanels: new Map(),
};
