import type { RepairId } from './repairs';

/**
 * The text forms of tool calls, one per model family. A server with a
 * working tool-call parser turns them into `tool_calls`; without one (or
 * with a parser bug) they reach `content`, and with a text format chosen the
 * client renders the tools, the model's earlier calls and the results itself.
 */
export const TEXT_FORMATS = ['hermes', 'qwen3_coder', 'qwen3_5', 'llama3_json', 'mistral', 'gpt_oss'] as const;
export type TextFormatId = (typeof TEXT_FORMATS)[number];

/** What the `toolCallFormat` setting and `lar run --tool-format` take. */
export const TOOL_FORMATS = ['auto', 'native', ...TEXT_FORMATS] as const;
export type ToolFormatSetting = (typeof TOOL_FORMATS)[number];

/** How one request carries tools: in the API (`native`) or as text in a family's form. */
export type WireFormat = 'native' | TextFormatId;

export function isTextFormat(f: string): f is TextFormatId {
  return (TEXT_FORMATS as readonly string[]).includes(f);
}

/** A tool as the model is told about it (OpenAI's `function` object). */
export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
}

/** A call found in text. */
export interface TextCall {
  name: string;
  /** The arguments; null when they could not be read (then `argsError` says why). */
  args: unknown;
  argsError?: string;
  /** The call's text as the model wrote it. */
  raw: string;
  /** Slips repaired to read it. */
  repairs: RepairId[];
  /** The form it was written in. */
  format: TextFormatId;
}

/** Content with its calls taken out. */
export interface ParsedContent {
  /** The prose around the calls. */
  text: string;
  calls: TextCall[];
  /** Slips in the answer that belong to no single call (a stray closing tag). */
  repairs: RepairId[];
  /** Reasoning the form carries in a channel of its own (gpt-oss's `analysis`). */
  reasoning?: string;
}

/** An earlier call, to render back into the model's history. */
export interface RenderedCall {
  name: string;
  args: unknown;
}

/** A tool's result, to render back into the model's history. */
export interface RenderedResult {
  /** The tool that made it. */
  name: string;
  /** The id of the call (native and Mistral's forms carry it). */
  callId: string;
  content: string;
}

/** A message of the rendered history (the OpenAI chat roles a text format uses). */
export interface TextMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** With role `tool`: the call it answers. */
  tool_call_id?: string;
}

export interface TextToolFormat {
  readonly id: TextFormatId;
  /** Who writes it, for the docs and the connection report. */
  readonly family: string;
  /**
   * The system message and the task (the first user message) with the tools
   * and the call format in them, where the family's chat template puts them
   * (Qwen: the system message; Llama 3: the first user message).
   */
  prompt(system: string, task: string, tools: readonly ToolSpec[]): { system: string; task: string };
  /**
   * An assistant turn: its prose and its calls, as the template renders them
   * back; with `reasoning` for the turns the template keeps it in (the Qwen3
   * and Qwen3.5 templates: those after the last user query, that is the
   * agent's turns on the current task). Formats whose template drops it
   * ignore it.
   */
  assistantContent(text: string, calls: readonly RenderedCall[], reasoning?: string): string;
  /** The results of one assistant turn's calls, as the template renders them back. */
  resultMessages(results: readonly RenderedResult[]): TextMessage[];
  /** Finds the calls in an answer's content (reasoning already taken out); never throws. */
  parse(content: string, tools: readonly ToolSpec[]): ParsedContent;
  /** Whether `content` may hold a call in this form (a cheap test before `parse`). */
  mayContain(content: string): boolean;
}
