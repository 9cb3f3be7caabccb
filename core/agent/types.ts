/**
 * What runAgent takes, tells and returns: apart from the loop so the loop's parts share them
 * without importing the loop itself.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { CompleteRequest } from '../model/client';
import type { ModelReply } from '../model/reply';
import type { ContextWindow } from '../model/server-info';
import type { ToolFormatSetting } from '../model/formats';
import type {
  ModelInfo,
  CompactionEvent,
  OutcomeEvent,
  RestoreEvent,
  SandboxRecord,
  ToolCallEvent,
  TokensEvent,
  WorkflowRef,
} from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import type { ToolExecutor } from '../tools/types';
import type { McpTools } from '../mcp/types';
import type { McpToolsEvent } from '../schema/mcp';
import type { GateResult, ProposedCall, StepResult, TrajectorySummary } from '../verifier/types';
import type { AttachmentPart } from '../schema/message-parts';
import type { Conversation } from './conversation';
import type { Rules } from './rules';
import type { UserInput } from '../schema/user-message';

export interface AgentModel {
  complete(req: CompleteRequest): Promise<ModelReply>;
  /** The model's context window (ModelClient asks the server); absent: the default is assumed. */
  contextWindow?(signal?: AbortSignal): Promise<ContextWindow>;
  /** Exact prompt tokens of a request where the server can count them. */
  countTokens?(
    messages: ChatCompletionMessageParam[],
    tools?: ChatCompletionTool[],
    signal?: AbortSignal,
  ): Promise<number | undefined>;
  /** A refusal said what the window is. */
  learnWindow?(tokens: number): void;
  /** Whether the model's template opens `<think>` in the prompt (answers then hold only the closing tag). */
  opensThinking?(): boolean;
}

/** Decides whether a call may run; by default the run's own builtin verifier state. */
export type AgentGate = (call: ProposedCall) => Promise<GateResult>;

export type AgentEvent =
  /** The header, line 1, written when the run starts. */
  | { kind: 'header'; line: 1; text: string }
  /** Streamed prose of the answer (tool calls written as text and reasoning held apart). */
  | { kind: 'text'; delta: string }
  /** Streamed reasoning. */
  | { kind: 'reasoning'; delta: string }
  /** The prose streamed so far in this answer was reasoning after all (a bare </think> came). */
  | { kind: 'retract'; text: string }
  /** A request to the model is on its way (nothing streamed yet): for a "waiting" indicator. */
  | { kind: 'request' }
  /** How full the window is after an answer (prompt tokens of the last request), and the completion tokens of the run so far. */
  | { kind: 'context'; used: number; window: number; source: ContextWindow['source']; completionTokens: number }
  /** A tool call passed the gate and starts now (its step event follows when it ends). */
  | { kind: 'toolStart'; id: string; tool: string; args: unknown }
  /** The restore the user made before this run, recorded after the header. */
  | { kind: 'restore'; line: number; text: string; event: RestoreEvent }
  | { kind: 'compaction'; line: number; text: string; event: CompactionEvent }
  /** A turn's token ids were recorded (or why they could not be). */
  | { kind: 'tokens'; line: number; text: string; event: TokensEvent }
  /** An MCP server's tools as the run now sees them (at the start, after a change, when it stopped). */
  | { kind: 'mcp'; line: number; text: string; event: McpToolsEvent }
  /** Sentences about the MCP servers for the user (a server that could not start, with its stderr's tail; a changed list). */
  | { kind: 'mcpNotes'; notes: string[] }
  | { kind: 'step'; line: number; text: string; event: ToolCallEvent; result: StepResult; gate: GateResult }
  | { kind: 'outcome'; line: number; text: string; event: OutcomeEvent }
  | { kind: 'message'; line: number; text: string }
  | { kind: 'end'; line: number; text: string; reason: string; detail?: string };

export interface AgentLimits {
  /** Most tool calls in the run. Default 200. */
  maxSteps?: number;
  /** Longest the run may take. Default 1 h. */
  maxTimeMs?: number;
  /** Most completion tokens over the run. Default unlimited. */
  maxTokens?: number;
  /** Replies in a row without a tool call before the run stops. Default 3. */
  maxIdleTurns?: number;
  /** The model's context window in tokens; default: what the model client says (the server), else 32768. */
  contextWindow?: number;
  /** Tokens kept for each answer (`max_tokens`); default a quarter of the window, at most 8192. */
  maxOutputTokens?: number;
  /**
   * Times the same call (same tool, same arguments) may fail with no file
   * changed in between before the run stops with `limit`; the model is warned
   * on the time before. Other calls in between that change no file do not
   * reset the count. Default 3, at least 2.
   */
  maxRepeatedFailures?: number;
}

export interface AgentOptions {
  task: string;
  /** What the user attached to the task (`@`): recorded as the message's parts, rendered into the model's message. */
  attachments?: readonly AttachmentPart[];
  /**
   * Takes a checkpoint of the workspace before a call that may change files
   * runs (after the gate and any approval): its id is recorded on the step.
   * Undefined (or a failure) records none; the call runs either way.
   */
  checkpoint?: (call: { id: string; tool: string; step: number }) => Promise<string | undefined>;
  /** The restores the user made since the chat's last run: recorded first, and the model is told of the last. */
  restored?: readonly RestoreEvent[];
  workflow: Workflow;
  /** How the header names the workflow (inline object, builtin:ID or a path). */
  workflowRef: WorkflowRef;
  model: AgentModel;
  /**
   * The model as the header records it: name, endpoint, sampling, and with `tokens` the run records
   * each turn's token ids (core/agent/token-log.ts), with compaction off: one linear segment.
   */
  modelInfo: Omit<ModelInfo, 'toolFormat' | 'contextWindow' | 'contextWindowSource'>;
  workspace: string;
  trajectoryPath: string;
  execute: ToolExecutor;
  /**
   * The run's MCP servers (core/mcp/): their tools are offered where a stage permits them, called
   * through the same gate, and their listings recorded. Started and closed by the caller.
   */
  mcp?: McpTools;
  runOutcomeCheck: (signal?: AbortSignal) => Promise<OutcomeEvent>;
  /** Asked for calls that match an approval pattern; no answer means no. */
  approve?: (req: { tool: string; args: unknown; reason: string; pattern?: string }) => Promise<boolean>;
  /** `block`: a call the gate blocks does not run. `warn`: it runs and is scored −1, unless the command or path policy forbids it (those are always blocked). */
  enforcement?: 'block' | 'warn';
  gate?: AgentGate;
  limits?: AgentLimits;
  onEvent?: (e: AgentEvent) => void;
  signal?: AbortSignal;
  /** Removes secrets from everything written to the trajectory and from every tool result the model is sent. */
  redact?: (text: string) => string;
  runId?: string;
  /** The sandbox the run's commands have, recorded in the header. */
  sandbox?: SandboxRecord;
  /** How tool calls travel (default `auto`: native, text calls in content read too, a text format when the server has no parser). */
  toolFormat?: ToolFormatSetting;
  /** The workspace's rules for agents (core/agent/rules.ts), added to the system prompt and named in the header. */
  rules?: Rules;
  /**
   * A chat's conversation so far (the previous run's `conversation`): the task is
   * then a follow-up, added to it as the user's next message, and the model keeps
   * its whole context. Absent: a new conversation.
   */
  conversation?: Conversation;
  /** Recorded in the header: the chat this run belongs to. */
  thread?: { id: string; turn: number; previous?: string; step?: number };
  /**
   * What a reply without a tool call does: `nudge` (default, for `lar run`, where nobody answers)
   * asks the model to call a tool, `end` (a chat) ends the run `answered` and hands the turn back.
   */
  onIdle?: 'nudge' | 'end';
  /**
   * Messages the user typed while the run worked: asked at each turn boundary
   * (before the next request to the model); each one is the user's next
   * message in the conversation, recorded as such.
   */
  nextUserMessage?: () => string | UserInput | undefined;
  /**
   * Gets, once the trajectory exists, a way to end its file at once (marked
   * interrupted, synchronously) when the host is going away and cannot wait
   * for the loop: an editor reloading mid-run.
   */
  onStart?: (run: { interrupt: (detail: string) => void }) => void;
}

export interface AgentResult {
  trajectoryPath: string;
  /** sha-256 of the trajectory as this run wrote it (absent when someone else changed the file). */
  digest?: string;
  summary: TrajectorySummary;
  endReason: 'submitted' | 'answered' | 'limit' | 'error' | 'cancelled';
  detail?: string;
  /** The run ended because the model's context window could not hold it, compacted or not (a harness scores it 0). */
  windowFull?: true;
  /** The conversation as it stands at the end, for a follow-up to continue. */
  conversation: Conversation;
}
