/**
 * The messages between the chat webview and the extension, as zod schemas
 * shared by both sides: each side validates what it receives (and the
 * extension also what it sends). Nothing here imports `vscode` or the DOM.
 */
import { z } from 'zod';
import { CheckpointId, EndEvent, RUN_FILE } from '../schema/trajectory';
import { PickerRequest, PickerUpdate } from './models';
import { ReviewAction, RunReview } from './run-review';
import { AttachmentChips, AttachmentRef, AttachOptions, MAX_ATTACHMENTS } from './attachments';

/** The id of one file change the chat can show in a diff editor (extension/checkpoints/file-changes.ts). */
export const CHANGE_ID = /^c[0-9]{1,12}$/;

/** The most of a running command's output a live card shows (its last lines). */
export const OUTPUT_TAIL = 4000;

const Reward = z.union([z.literal(-1), z.literal(0), z.literal(1)]);
const short = (max: number) => z.string().max(max);

/** What a button under an error does: open the setting at fault, test the connection, or set the key. */
export const ErrorAction = z.enum([
  'openSettings',
  'openEndpointSetting',
  'openModelSetting',
  'openWorkflowSetting',
  'testConnection',
  'setApiKey',
]);
export type ErrorAction = z.infer<typeof ErrorAction>;

/** The id the webview gives each message it sends: the extension's answer (started, queued, failed) names it. */
export const SendId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
/** A conversation's id as History names it (the extension looks it up again among the listed ones, never as a path). */
export const ThreadId = z.string().min(1).max(300);

/** Webview → extension. */
export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }).strict(),
  z
    .object({
      type: z.literal('start'),
      id: SendId,
      task: z.string().trim().min(1).max(20_000),
      attachments: z.array(AttachmentRef).max(MAX_ATTACHMENTS).optional(),
    })
    .strict(),
  /** The picker's choices for what follows `@` (the extension answers with attachOptions). */
  z.object({ type: z.literal('attachQuery'), query: z.string().max(200) }).strict(),
  /** A message that could not be sent was taken back into the input (Edit): a reload no longer shows it. */
  z.object({ type: z.literal('discardFailed'), id: SendId }).strict(),
  z.object({ type: z.literal('stop') }).strict(),
  z
    .object({ type: z.literal('approve'), id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), approved: z.boolean() })
    .strict(),
  z.object({ type: z.literal('action'), action: ErrorAction }).strict(),
  z.object({ type: z.literal('openTrajectory') }).strict(),
  z.object({ type: z.literal('newChat') }).strict(),
  /** Show the diff of a file change a step made. */
  z.object({ type: z.literal('showChange'), id: z.string().regex(CHANGE_ID) }).strict(),
  /** Check the connection to the inference server again. */
  z.object({ type: z.literal('checkConnection') }).strict(),
  /** List the workspace's recorded conversations. */
  z.object({ type: z.literal('history') }).strict(),
  /** Bring a recorded conversation back into the chat, to continue it (by its id as History listed it). */
  z.object({ type: z.literal('openThread'), id: ThreadId }).strict(),
  /** Open a recorded run's trajectory (by file name in .lar/runs, nothing else). */
  z.object({ type: z.literal('openRun'), file: z.string().regex(RUN_FILE) }).strict(),
  /** Put the workspace back to a checkpoint (a step's, or the snapshot before a restore: Undo). */
  z
    .object({
      type: z.literal('restoreCheckpoint'),
      commit: CheckpointId,
      step: z.number().int().positive().optional(),
      run: z.string().regex(RUN_FILE).optional(),
    })
    .strict(),
  /** Go back to before a step, workspace and conversation, and continue from there in a new run (Branch from here). */
  z
    .object({
      type: z.literal('branchFrom'),
      commit: CheckpointId,
      step: z.number().int().positive(),
      run: z.string().regex(RUN_FILE).optional(),
    })
    .strict(),
  /** Continue an interrupted run (named by its file in .lar/runs) in a new run of the same chat. */
  z.object({ type: z.literal('resume'), file: z.string().regex(RUN_FILE) }).strict(),
  /** Copy a code block's text (the extension writes the clipboard: it works in every host). */
  z.object({ type: z.literal('copy'), text: z.string().max(200_000) }).strict(),
  /** Open a link from model text; the extension decides whether it may (http/https, files of the workspace). */
  z.object({ type: z.literal('openLink'), href: z.string().min(1).max(4000) }).strict(),
  ...PickerRequest,
  /** A file of a run's review (by the id the extension gave it): its diff, Keep or Undo; or all of them. */
  ReviewAction,
]);
export type FromWebview = z.infer<typeof FromWebview>;

/** An MCP tool as the chat names it: its server (as in tool names) and the tool's own name. */
export const McpToolLabel = z.object({ server: short(200), tool: short(200) }).strict();
export type McpToolLabel = z.infer<typeof McpToolLabel>;

/** One MCP server of a run as the chat lists it: its state, and the tools the current stage lets the agent use. */
export const McpServerView = z
  .object({
    name: short(200),
    transport: z.enum(['stdio', 'http', 'sse']),
    state: z.enum(['ready', 'failed', 'stopped']),
    /** The tools in force in the stage (the server's own names), out of `offered`. */
    tools: z.array(short(200)).max(256),
    offered: z.number().int().nonnegative(),
    /** Why it failed or stopped (the tail of its stderr). */
    error: short(2000).optional(),
  })
  .strict();
export type McpServerView = z.infer<typeof McpServerView>;

export const StepCard = z.object({
  line: z.number().int().positive(),
  /** The call's id: the card replaces the live card of the same call. */
  id: short(200).optional(),
  durationMs: z.number().int().nonnegative().optional(),
  step: z.number().int().positive().optional(),
  tool: short(200),
  /** An MCP tool's call: the card names the server and the tool. */
  mcp: McpToolLabel.optional(),
  /** A short rendering of the arguments (the command, the path, or JSON). */
  args: short(400),
  status: short(40),
  toolReward: Reward.optional(),
  stage: short(200).optional(),
  failed: z.array(z.object({ check: short(100), reason: short(1000) })).max(50),
  /** The stage visit this step ended, with its reward. */
  stageVisit: z.object({ stage: short(200), reward: z.number() }).optional(),
  /** Start of the output or error, for the card. */
  excerpt: short(2000).optional(),
  blocked: z.boolean().optional(),
  /** What the sandbox refused the command, read from its output (core/sandbox/refusals.ts). */
  sandboxNote: short(2000).optional(),
  /** The checkpoint taken just before this step, for its Restore button, and the run file the step is in. */
  checkpoint: CheckpointId.optional(),
  run: z.string().regex(RUN_FILE).optional(),
  /** The file change this step made, for its Diff button. */
  change: z.object({ id: z.string().regex(CHANGE_ID), path: short(2000), created: z.boolean() }).optional(),
});
export type StepCard = z.infer<typeof StepCard>;

/** How a recorded run ended; `unfinished`: the file has no end line (the editor stopped mid-run). */
export const RunStatus = z.enum([...EndEvent.shape.reason.options, 'unfinished']);

/** One run file of a conversation in History: the trajectory its Trajectories list opens. */
const ThreadRunEntry = z
  .object({ file: z.string().regex(RUN_FILE), task: short(200), started: short(40), status: RunStatus })
  .strict();

/** One conversation in History; its status and figures are its latest run's. */
export const ThreadEntry = z
  .object({
    id: ThreadId,
    /** Its first message. */
    task: short(300),
    started: short(40),
    lastActive: short(40),
    /** How many runs it has (the runs listed are the latest 100 of them). */
    turns: z.number().int().positive(),
    status: RunStatus,
    model: short(300).optional(),
    steps: z.number().int().nonnegative().optional(),
    return: z.number().optional(),
    outcome: z.number().optional(),
    note: short(500).optional(),
    runs: z.array(ThreadRunEntry).min(1).max(100),
  })
  .strict();
export type ThreadEntry = z.infer<typeof ThreadEntry>;

/** Extension → webview. */
export const ToWebview = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('runStarted'),
      task: short(20_000),
      model: short(300),
      endpoint: short(1000),
      trajectory: short(2000),
      sandbox: z
        .object({
          confined: z.boolean(),
          text: short(2000),
          /** What the run's commands cannot change, and why in words (core/sandbox/refusals.ts PROTECTION_WHY). */
          protections: z
            .array(z.object({ path: short(2000), why: short(300) }).strict())
            .max(300)
            .optional(),
        })
        .strict(),
      /** The workspace's rule files in the system prompt. */
      rules: z.array(short(500)).max(20).optional(),
      /** The task is a message already shown (typed during the run before). */
      shown: z.boolean().optional(),
      /** The run continues an interrupted one (Resume). */
      resumed: z.boolean().optional(),
      /** The message the user sent that started it (its bubble is in the log already). */
      id: SendId.optional(),
      /** What the user attached to the message (chips in their bubble). */
      attachments: AttachmentChips.optional(),
    })
    .strict(),
  z.object({ type: z.literal('text'), delta: short(100_000) }).strict(),
  /** Streamed reasoning, shown collapsed above the answer. */
  z.object({ type: z.literal('reasoning'), delta: short(100_000) }).strict(),
  /** The streamed text so far (its first `chars` characters) was reasoning: a bare </think> came. */
  z.object({ type: z.literal('retract'), chars: z.number().int().nonnegative() }).strict(),
  z.object({ type: z.literal('assistant'), text: short(200_000), reasoning: short(200_000).optional() }).strict(),
  /** How full the model's window is: prompt tokens of the last request out of the window; and the run's completion tokens. */
  z
    .object({
      type: z.literal('context'),
      used: z.number().int().nonnegative(),
      window: z.number().int().positive(),
      assumed: z.boolean(),
      completionTokens: z.number().int().nonnegative().optional(),
    })
    .strict(),
  /** A request to the model went out: the chat shows that it waits, until the answer streams. */
  z.object({ type: z.literal('waiting') }).strict(),
  /** A tool call started: a live card until its step arrives. */
  z
    .object({
      type: z.literal('toolStarted'),
      id: short(200),
      tool: short(200),
      args: short(400),
      mcp: McpToolLabel.optional(),
    })
    .strict(),
  /** The latest output of a running command (its tail, not a delta: the newest replaces the one before). */
  z
    .object({
      type: z.literal('toolOutput'),
      id: short(200),
      tail: short(OUTPUT_TAIL),
      bytes: z.number().int().nonnegative(),
    })
    .strict(),
  /** The conversation was compacted to fit the window. */
  z.object({ type: z.literal('compaction'), text: short(2000) }).strict(),
  z.object({ type: z.literal('step'), card: StepCard }).strict(),
  // The whole command, up to the largest a call may be shown: an approval is for exactly what runs.
  z
    .object({
      type: z.literal('approval'),
      id: z.string().max(64),
      tool: short(200),
      args: short(20_000),
      reason: short(1000),
    })
    .strict(),
  z.object({ type: z.literal('approvalDone'), id: z.string().max(64), approved: z.boolean() }).strict(),
  z
    .object({
      type: z.literal('outcome'),
      command: short(2000),
      exitCode: z.number().int().nullable(),
      passed: z.boolean(),
      excerpt: short(2000),
    })
    .strict(),
  z
    .object({
      type: z.literal('end'),
      reason: short(40),
      detail: short(2000).optional(),
      summary: z.object({ return: z.number(), outcome: z.number(), steps: z.number().int().nonnegative() }).optional(),
    })
    .strict(),
  z.object({ type: z.literal('error'), message: short(4000), actions: z.array(ErrorAction).max(3) }).strict(),
  z.object({ type: z.literal('state'), running: z.boolean() }).strict(),
  z.object({ type: z.literal('clear') }).strict(),
  /** The workspace was put back to a checkpoint; `undo` is the snapshot from just before (Undo restores it). */
  z.object({ type: z.literal('checkpointRestored'), text: short(4000), undo: CheckpointId }).strict(),
  /** Files the user's tools may execute later (a Makefile, package.json, scripts) that the run changed, with their diffs. */
  z
    .object({
      type: z.literal('laterChanges'),
      files: z
        .array(
          z
            .object({
              path: short(2000),
              change: z.enum(['changed', 'added', 'removed']),
              diff: short(40_000).optional(),
            })
            .strict(),
        )
        .max(200),
      more: z.number().int().nonnegative(),
    })
    .strict(),
  /** What a run changed, with Keep / Undo (sent again, whole, when a file's state changes: the card is replaced). */
  z.object({ type: z.literal('runChanges'), review: RunReview }).strict(),
  /** The chat was read back from its trajectories (after a reload or a restart). */
  z.object({ type: z.literal('restored'), text: short(2000) }).strict(),
  /** A message of the user's, as recorded (a restored chat). */
  z.object({ type: z.literal('userMessage'), text: short(20_000), attachments: AttachmentChips.optional() }).strict(),
  /** The chat's last run was cut short: say so and offer Resume. */
  z
    .object({
      type: z.literal('interrupted'),
      file: z.string().regex(RUN_FILE),
      text: short(2000),
      resumable: z.boolean(),
    })
    .strict(),
  /** A message typed during a run, held for the agent's next turn. */
  z
    .object({
      type: z.literal('queued'),
      text: short(20_000),
      id: SendId.optional(),
      attachments: AttachmentChips.optional(),
    })
    .strict(),
  AttachOptions,
  /** A message was not sent (an attachment could not be read): back in the input, with why. */
  z
    .object({
      type: z.literal('unsent'),
      /** The message's id: its bubble leaves the log. */
      id: SendId.optional(),
      text: short(20_000),
      attachments: z.array(AttachmentRef).max(MAX_ATTACHMENTS),
      reason: short(2000),
    })
    .strict(),
  /** The extension got the message: it answers with the run's start, `queued` or `sendFailed`. */
  z.object({ type: z.literal('sendReceived'), id: SendId }).strict(),
  /** The message could not be sent: its bubble stays, marked failed, with Retry and Edit (and what fixes it). */
  z
    .object({
      type: z.literal('sendFailed'),
      id: SendId,
      task: short(20_000),
      reason: short(4000),
      actions: z.array(ErrorAction).max(3),
    })
    .strict(),
  /** A run's MCP servers and the tools the current stage permits: sent whole again when a server or the stage changes. */
  z
    .object({
      type: z.literal('mcp'),
      /** The run's file: a later message of the same run replaces its list in place. */
      run: z.string().regex(RUN_FILE),
      stage: short(200).optional(),
      servers: z.array(McpServerView).max(64),
    })
    .strict(),
  /** A sentence about the MCP servers (one left out, one that could not start, a list that changed). */
  z.object({ type: z.literal('mcpNotice'), text: short(4000), warn: z.boolean() }).strict(),
  /** Put the cursor in the task input (the focus command). */
  z.object({ type: z.literal('focusInput') }).strict(),
  /** Scroll to the approval that waits and focus its Approve button (the status bar's or a notification's click). */
  z.object({ type: z.literal('showApproval') }).strict(),
  /** The workspace's conversations, newest activity first; `current`: the one the chat shows. */
  z
    .object({ type: z.literal('history'), threads: z.array(ThreadEntry).max(100), current: ThreadId.optional() })
    .strict(),
  /** Whether the inference server answers, shown above the chat; the latest replaces the one before. */
  z
    .object({
      type: z.literal('connection'),
      state: z.enum(['checking', 'connected', 'failed']),
      endpoint: short(1000),
      /** Where the endpoint in force is set (Workspace settings, User settings, the default). */
      endpointSource: short(100).optional(),
      model: short(300).optional(),
      /** The model's context window, and whether it is only assumed (the server does not say). */
      window: z.object({ tokens: z.number().int().positive(), assumed: z.boolean() }).strict().optional(),
      message: short(2000).optional(),
      actions: z.array(ErrorAction).max(3),
    })
    .strict(),
  ...PickerUpdate,
]);
export type ToWebview = z.infer<typeof ToWebview>;

/** Cuts a string to fit a schema's limit, saying so. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}
