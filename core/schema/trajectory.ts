import { z } from 'zod';
import { MessagePart } from './message-parts';
import { LAR_VERSION, NetworkMode, Workflow } from './workflow';
import { McpCallRecord, McpServerRecord, McpToolsEvent } from './mcp';
import { TokensEvent } from './tokens';

export { MAX_TURN_IDS, TokensEvent } from './tokens';

/**
 * A trajectory is JSON Lines: a header, then one event per line. Events carry
 * what happened; the verifier derives every verdict and reward from them, so
 * nothing a writer claims about rewards is trusted.
 */

const IsoTime = z.string().min(1);

export const ModelInfo = z.object({
  name: z.string(),
  endpoint: z.string().optional(),
  /** The endpoint's name among those the user named (`default`: lean4Agentic.endpoint); a chat picks its model by it. */
  endpointName: z.string().optional(),
  /** How tool calls were carried at the start: `native`, or a text format (core/model/formats). */
  toolFormat: z.string().optional(),
  /** The model's context window in tokens, and where that figure came from. */
  contextWindow: z.number().int().positive().optional(),
  contextWindowSource: z.enum(['setting', 'server', 'server_info', 'error', 'default']).optional(),
  /** The sampling the run asked for (absent: the server's defaults); a group's rollouts each have their own seed. */
  temperature: z.number().nonnegative().optional(),
  seed: z.number().int().nonnegative().optional(),
  /**
   * The run recorded each turn's token ids and logprobs (`--record-tokens`): which engine's fields
   * asked for them, and whether they came streamed (vLLM) or one unstreamed request per turn (SGLang,
   * or a server that did not say what it is). Compaction is off in such a run: one linear segment.
   */
  tokens: z.object({ engine: z.enum(['vllm', 'sglang', 'unknown']), streamed: z.boolean() }).optional(),
});
export type ModelInfo = z.infer<typeof ModelInfo>;

/** `workflow` is inline, a path relative to the trajectory file, or `builtin:ID`. */
export const WorkflowRef = z.union([Workflow, z.string().min(1)]);
export type WorkflowRef = z.infer<typeof WorkflowRef>;

/** The sandbox a run's commands had (core/sandbox/plan.ts SandboxSummary). */
export const SandboxRecord = z.object({
  /** Every command ran in the OS sandbox. */
  confined: z.boolean(),
  /**
   * The run was inside a container that is itself its sandbox (`lar run --sandbox container`: Harbor,
   * Docker): commands ran without bubblewrap (`confined` false), held by the container the user vouched for.
   */
  container: z.boolean().optional(),
  /** e.g. "bubblewrap 0.8.0". */
  tool: z.string().optional(),
  network: NetworkMode.optional(),
  /** With `allowlist`: the hosts commands could reach, as the workflow lists them. */
  hosts: z.array(z.string()).optional(),
  protected: z.array(z.string()).optional(),
  /** The bounds on the sandbox (core/sandbox/limits.ts); absent in trajectories from before them. */
  limits: z
    .object({
      /** How memory and tasks are bounded: a delegated cgroup v2, a systemd scope, cgroup v1 hierarchies, or per-process rlimits (the last resort). */
      mechanism: z.enum(['cgroup-v2', 'systemd-scope', 'cgroup-v1', 'rlimit']),
      /** Bytes the sandbox's processes may use together (rlimit: each process, RLIMIT_DATA). */
      memory: z.number().int().positive(),
      /** Processes and threads (rlimit: the user's processes, RLIMIT_NPROC); absent when not bounded (rlimit as root). */
      tasks: z.number().int().positive().optional(),
      /** Bytes /tmp holds (/var/tmp and the home half of it, /run and /dev/shm a quarter). */
      tmp: z.number().int().positive(),
    })
    .optional(),
  /** The workflow or the user required the sandbox. */
  required: z.boolean().optional(),
  /** Why commands were not confined. */
  reason: z.string().optional(),
  /**
   * What the run could not change, and why (core/sandbox/protections.ts): always read-only, the workflow's
   * protected paths, its path deny patterns, git's metadata, what the user's tools run later. At most 300.
   */
  protections: z
    .array(
      z.object({
        path: z.string(),
        why: z.enum(['always', 'workflow', 'outcome', 'path_deny', 'git', 'runs_later', 'hard_link']),
        note: z.string().optional(),
      }),
    )
    .optional(),
  /** Protections left out of `protections` (more than 300). */
  protectionsOmitted: z.number().int().positive().optional(),
  /** What a bound left unprotected, a sentence each. */
  protectionsBounded: z.array(z.string()).optional(),
  /** Multiply-linked workspace files made their own copies before the first step (the user allowed it). */
  hardLinksBroken: z.number().int().positive().optional(),
});
export type SandboxRecord = z.infer<typeof SandboxRecord>;
export type SandboxLimitsRecord = NonNullable<SandboxRecord['limits']>;

export const Header = z.object({
  lar: z.literal(LAR_VERSION),
  type: z.literal('header'),
  /** The task as the user typed it; with attachments, `parts` has them too (absent in older files). */
  task: z.string(),
  parts: z.array(MessagePart).optional(),
  workflow: WorkflowRef,
  model: ModelInfo.optional(),
  started: IsoTime,
  id: z.string().optional(),
  /** The sandbox in force for the run's commands; absent in trajectories from before it existed. */
  sandbox: SandboxRecord.optional(),
  /** The workspace's rule files (AGENTS.md …) that were in the system prompt. */
  rules: z.array(z.string()).optional(),
  /**
   * The chat this run belongs to: a follow-up continues the model's conversation from the run
   * before (`previous`, a file name in the same folder), each run a trajectory scored on its own.
   * `step`: a branch — the conversation continues from `previous` only as it was before that
   * step (Branch from here), the workspace restored to that step's checkpoint.
   */
  thread: z
    .object({
      id: z.string().min(1),
      turn: z.number().int().positive(),
      previous: z.string().optional(),
      step: z.number().int().positive().optional(),
    })
    .optional(),
  /** Limits of the run that shape what the model was told (a chat restored from the file tells it the same). */
  limits: z.object({ maxRepeatedFailures: z.number().int().min(2).optional() }).optional(),
  /** The MCP servers the run started (core/mcp/): how each was reached and confined; their tools follow in `mcp_tools` lines. */
  mcp: z.object({ servers: z.array(McpServerRecord) }).optional(),
});
export type Header = z.infer<typeof Header>;

export const CALL_STATUSES = ['ok', 'error', 'blocked', 'denied', 'timeout', 'interrupted'] as const;
/**
 * ok: the tool ran to completion (a command may still have a non-zero exit code);
 * error: the tool failed (file not found, search text not unique, ...);
 * blocked: the verifier gate refused it, it did not run;
 * denied: the user rejected it at the approval prompt, it did not run;
 * timeout: it ran out of time and was stopped;
 * interrupted: the run was cancelled while it ran.
 */
export const CallStatus = z.enum(CALL_STATUSES);
export type CallStatus = z.infer<typeof CallStatus>;

/**
 * How the end of a command was observed. Only `marker` (the host's own
 * end-of-command marker with the exit code) and `exit` (the process exited) count
 * as observed; a command whose end was not observed never counts as a success.
 */
export const Completion = z.enum(['marker', 'exit', 'timeout', 'unobserved']);
export type Completion = z.infer<typeof Completion>;

export const ToolResult = z.object({
  exitCode: z.number().int().nullable().optional(),
  completion: Completion.optional(),
  output: z.string().optional(),
  outputTruncated: z.boolean().optional(),
  outputPath: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  /** Workspace-relative paths this call changed (written, edited, or seen changed after a command). */
  filesChanged: z.array(z.string()).optional(),
  error: z.string().optional(),
  /** A command: whether it ran in the OS sandbox. */
  sandboxed: z.boolean().optional(),
  /** A command that had to be stopped with its shell: what earlier commands set in the shell is gone. */
  shellRestarted: z.boolean().optional(),
  /** A command that waited for input (quiet while reading the terminal) and was interrupted. */
  waitingForInput: z.boolean().optional(),
  /** A command a limit of the sandbox stopped, and which: "the sandbox's memory limit (8 GiB) was reached". */
  killed: z.string().optional(),
  /** The workflow's outcome command, run as the check runs it (a fresh shell, not the agent's terminal). */
  ranAsCheck: z.boolean().optional(),
  /** A command: how many tests its output says ran, when the host recognised a test runner (core/outcome/tests-ran.ts). */
  testsRan: z.number().int().nonnegative().optional(),
});
export type ToolResult = z.infer<typeof ToolResult>;

/** The most tokens one count may hold: far above any context window, low enough to stay an exact integer in every reader. */
export const MAX_TURN_TOKENS = 1_000_000_000;
const TokenCount = z.number().int().min(0).max(MAX_TURN_TOKENS);

/**
 * What one model turn cost in tokens, as the server counted them in its `usage` (never estimated;
 * absent when the server sent none): the prompt, the answer, and of the prompt what its prefix
 * cache already held. Not scored by the verifier: there for a reader, a trainer and the ATIF export.
 */
export const TurnUsage = z
  .object({ prompt: TokenCount, completion: TokenCount, cached: TokenCount.optional() })
  .refine((u) => u.cached === undefined || u.cached <= u.prompt, {
    message: 'cached tokens are part of the prompt, so at most prompt',
    path: ['cached'],
  });
export type TurnUsage = z.infer<typeof TurnUsage>;

/** A commit of the checkpoint store (SHA-1 or SHA-256 hex). */
export const CheckpointId = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/);

export const ToolCallEvent = z.object({
  type: z.literal('tool_call'),
  /** The model's tool-call id. */
  id: z.string().optional(),
  /** Any tool name: unknown names are judged by the verifier, not rejected as malformed lines. */
  tool: z.string(),
  /** The arguments as the model sent them; judged against the tool's schema by the verifier. */
  args: z.unknown(),
  /** When the model's argument text was not JSON: the parser's message (args is then null). */
  argsError: z.string().optional(),
  /** The argument text as the model wrote it, when it was not JSON (what a reader, and the loop breaker, compare). */
  argsText: z.string().optional(),
  /**
   * Slips in how the model wrote the call that were repaired so it could run
   * (core/model/formats/repairs.ts: code_fence, trailing_comma, missing_close_tag …).
   * Not scored by the verifier: there for a reward or a reader to see a sloppy call.
   */
  repairs: z.array(z.string()).optional(),
  /** `text`: the call came as text in the answer (a text format, or a server that did not parse it). */
  via: z.enum(['native', 'text']).optional(),
  /**
   * The model's reply (1, 2, … in the run) the call came in: calls of one
   * reply share it (parallel calls). Not scored; it lets a reader, and a chat
   * resumed from this file, rebuild the conversation turn by turn.
   */
  reply: z.number().int().positive().optional(),
  /** The first call of a reply that had no words: the reply's token counts (else on its message). */
  usage: TurnUsage.optional(),
  /**
   * The workspace just before this call ran, as a commit of the editor's
   * checkpoint store (a shadow git repository outside the workspace): "Restore
   * to here" puts it back. Not scored.
   */
  checkpoint: CheckpointId.optional(),
  /** An MCP tool's call (`mcp__SERVER__TOOL`): the server, its own name for the tool, and the schema the call was made against. */
  mcp: McpCallRecord.optional(),
  status: CallStatus,
  result: ToolResult.optional(),
  at: IsoTime.optional(),
});
export type ToolCallEvent = z.infer<typeof ToolCallEvent>;

export const MessageEvent = z.object({
  type: z.literal('message'),
  role: z.enum(['system', 'user', 'assistant']),
  /** A user's message: the text as typed; its attachments are in `parts` (core/schema/message-parts.ts). */
  content: z.string(),
  parts: z.array(MessagePart).optional(),
  /** The model's reasoning before this answer (streamed apart, or in <think> tags). */
  reasoning: z.string().optional(),
  /** The model's answer: the turn's token counts, when the server reported them. */
  usage: TurnUsage.optional(),
  at: IsoTime.optional(),
});
export type MessageEvent = z.infer<typeof MessageEvent>;

/** The result of the workflow's outcome check, run by the host after `submit`. */
export const OutcomeEvent = z.object({
  type: z.literal('outcome'),
  command: z.string(),
  exitCode: z.number().int().nullable(),
  completion: Completion.optional(),
  output: z.string().optional(),
  /** Tests the check's output says it ran, when it comes from a test runner the host recognises; 0 means the check is not a pass. */
  testsRan: z.number().int().nonnegative().optional(),
  durationMs: z.number().nonnegative().optional(),
  /** The check ran in a fresh sandbox of its own. */
  sandboxed: z.boolean().optional(),
  /** Protected paths the run had changed, put back from the snapshot before the check ran. */
  restored: z.array(z.string()).optional(),
  at: IsoTime.optional(),
});
export type OutcomeEvent = z.infer<typeof OutcomeEvent>;

/**
 * The conversation was made smaller to fit the model's context window: old
 * tool results elided, older turns replaced by a summary note. It changes
 * what the model sees from then on, nothing that happened: the verifier
 * gives it no reward and its judgement of the run is the same with or
 * without it.
 */
export const CompactionEvent = z.object({
  type: z.literal('compaction'),
  /** `window`: the next request would not have fit; `context_error`: the server refused one as too long. */
  reason: z.enum(['window', 'context_error']),
  /** The window in tokens the compaction aimed under. */
  window: z.number().int().positive(),
  /** Prompt tokens before and after (estimates calibrated on the server's counts). */
  tokensBefore: z.number().int().nonnegative(),
  tokensAfter: z.number().int().nonnegative(),
  /** Tool results replaced by a one-line stub. */
  elided: z.number().int().nonnegative(),
  /** Earlier turns replaced by the summary note. */
  summarized: z.number().int().nonnegative(),
  /** The note that replaced them, when there was one. */
  summary: z.string().optional(),
  /** Who wrote the note: the model, or the host alone when the model could not. */
  summaryBy: z.enum(['model', 'host']).optional(),
  /** Completion tokens the summary cost. */
  summaryTokens: z.number().int().nonnegative().optional(),
  durationMs: z.number().nonnegative().optional(),
  at: IsoTime.optional(),
});
export type CompactionEvent = z.infer<typeof CompactionEvent>;

/**
 * The user put the workspace back to a checkpoint (Restore to here), between
 * runs of a chat: recorded at the start of the run that follows, so what the
 * model and a reader see of the workspace has its history. Not scored.
 */
export const RestoreEvent = z.object({
  type: z.literal('restore'),
  /** The checkpoint the workspace was put back to, and the step and run it was taken before. */
  checkpoint: CheckpointId,
  step: z.number().int().positive().optional(),
  run: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.lar\.jsonl$/)
    .optional(),
  /** The restore undid the one before it (Undo): the workspace is back as it was before that. */
  undo: z.literal(true).optional(),
  /** The snapshot of the workspace just before the restore: restoring it undoes this one. */
  before: CheckpointId,
  /** Paths the restore changed back, deleted (made after the checkpoint) and brought back. */
  reverted: z.array(z.string()),
  deleted: z.array(z.string()),
  restored: z.array(z.string()),
  /** Paths that could not be put back. */
  leftovers: z.array(z.string()).optional(),
  at: IsoTime.optional(),
});
export type RestoreEvent = z.infer<typeof RestoreEvent>;

/** Written when a run stops; `interrupted` marks a run cut short (crash, reload, cancel). */
export const EndEvent = z.object({
  type: z.literal('end'),
  /**
   * `answered`: the model replied without a tool call and the run handed the turn back to the
   * user (a chat: a question answered, or a follow-up awaited); nothing was submitted.
   */
  reason: z.enum(['submitted', 'answered', 'interrupted', 'cancelled', 'limit', 'error']),
  detail: z.string().optional(),
  at: IsoTime.optional(),
});
export type EndEvent = z.infer<typeof EndEvent>;

export const TrajectoryEvent = z.discriminatedUnion('type', [
  ToolCallEvent,
  MessageEvent,
  OutcomeEvent,
  CompactionEvent,
  RestoreEvent,
  TokensEvent,
  McpToolsEvent,
  EndEvent,
]);
export type TrajectoryEvent = z.infer<typeof TrajectoryEvent>;

/**
 * The names of the trajectory files the agent writes into `.lar/runs/`. The
 * chat asks for a past run by such a name and nothing else, so a message
 * cannot make the extension open an arbitrary path.
 */
export const RUN_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.lar\.jsonl$/;
