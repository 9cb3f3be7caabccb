import { z } from 'zod';
import { EndEvent } from '../schema/trajectory';
import { CALL_STATUSES } from '../schema/trajectory';

/**
 * The custom protocol between the extension (or any LSP client) and the
 * language server, on top of LSP. Both sides validate with these schemas;
 * docs/protocol.md describes it for other editors.
 */

export const BackendLabel = z.object({
  /** Which backend decided: `lean` (the Lean checker) or `builtin` (the TypeScript one). */
  backend: z.enum(['lean', 'builtin']),
  /** Why this backend: e.g. "Lean 4.34.1 at ~/.elan/bin/lake" or "no Lean toolchain found: …". */
  reason: z.string(),
});
export type BackendLabel = z.infer<typeof BackendLabel>;

/** `lar/checkToolCall` (client → server request): may this call run now? */
export const CheckToolCallMethod = 'lar/checkToolCall';
export const CheckToolCallParams = z.object({
  /** The trajectory the call would be appended to (an open document or a run announced by lar/appendStep). */
  uri: z.string(),
  call: z.object({ tool: z.string(), args: z.unknown(), argsError: z.string().optional() }),
});
export type CheckToolCallParams = z.infer<typeof CheckToolCallParams>;

export const VerdictWire = z.object({
  check: z.string(),
  ok: z.boolean(),
  reason: z.string(),
  path: z.array(z.union([z.string(), z.number()])).optional(),
});

export const CheckToolCallResult = z.object({
  decision: z.enum(['allow', 'ask', 'block']),
  reason: z.string(),
  askPattern: z.string().optional(),
  toolReward: z.union([z.literal(-1), z.literal(0), z.literal(1)]),
  verdicts: z.array(VerdictWire),
  /** The stage the call would run in (absent once the run has ended). */
  stage: z.string().optional(),
  backend: BackendLabel,
});
export type CheckToolCallResult = z.infer<typeof CheckToolCallResult>;

/** `lar/appendStep` (client → server notification): a live run wrote one more line. */
export const AppendStepMethod = 'lar/appendStep';
export const AppendStepParams = z.object({
  uri: z.string(),
  /** The line exactly as written to the trajectory file (without its newline). */
  text: z.string(),
  /** 1-based line number it was written at; the server checks it follows the lines it has. */
  line: z.number().int().positive(),
});
export type AppendStepParams = z.infer<typeof AppendStepParams>;

/** `lar/rewards` (server → client notification): per-line rewards for drawing. */
export const RewardsMethod = 'lar/rewards';

export const LineReward = z.object({
  /** 0-based line, as in LSP. */
  line: z.number().int().nonnegative(),
  kind: z.enum(['step', 'outcome', 'malformed', 'header']),
  step: z.number().int().positive().optional(),
  tool: z.string().optional(),
  stage: z.string().optional(),
  toolReward: z.union([z.literal(-1), z.literal(0), z.literal(1)]).optional(),
  /** The stage visit this line ended, scored. */
  stageEnd: z.object({ stage: z.string(), reward: z.union([z.literal(-1), z.literal(0), z.literal(1)]) }).optional(),
  /** Check ids that failed on this line (omitted when none). */
  failed: z.array(z.string()).default([]),
  /** Workspace-relative files this step changed, for hints in those files. */
  filesChanged: z.array(z.string()).optional(),
  status: z.enum(CALL_STATUSES).optional(),
});
/** A line reward as a client holds it (after parsing: `failed` is always there). */
export type LineReward = z.output<typeof LineReward>;
/** A line reward as the server writes it. */
export type LineRewardInput = z.input<typeof LineReward>;

export const StageVisitWire = z.object({
  stage: z.string(),
  visit: z.number().int().nonnegative(),
  /** 0-based lines. */
  startLine: z.number().int().nonnegative(),
  endLine: z.number().int().nonnegative().optional(),
  steps: z.number().int().nonnegative(),
  budget: z.number().int().positive(),
  reward: z.union([z.literal(-1), z.literal(0), z.literal(1)]),
});

export const RewardsParams = z.object({
  uri: z.string(),
  /** The document version these rewards are for (absent for runs not open in an editor). */
  version: z.number().int().optional(),
  backend: BackendLabel,
  /**
   * true: `lines` describes the whole document (lines absent from it have no
   * reward). false: only lines from `from` on changed (a live append or an
   * edit); keep earlier lines as they were and drop those past `lineCount`.
   */
  full: z.boolean().default(true),
  /**
   * For a partial update, the first line that changed: rewards the client holds
   * for lines at or after it are replaced by `lines` (a line absent from
   * `lines` no longer has a reward).
   */
  from: z.number().int().nonnegative().optional(),
  /** Lines in the document now. */
  lineCount: z.number().int().nonnegative(),
  lines: z.array(LineReward),
  /**
   * Stage visits: all of them when `full`; otherwise those ending at or after
   * the first changed line and the open one (replace visits by their `visit`
   * index, drop those past the last one listed).
   */
  stages: z.array(StageVisitWire),
  summary: z
    .object({
      return: z.number(),
      outcome: z.union([z.literal(0), z.literal(1)]),
      steps: z.number().int().nonnegative(),
      /** The run submitted (the verifier's `ended`). */
      ended: z.boolean(),
      /** How the run stopped (its `end` event), absent while it runs. */
      endReason: EndEvent.shape.reason.optional(),
      finalStage: z.string().optional(),
    })
    .optional(),
  /** Why nothing could be verified, when that is so. */
  fatal: z.string().optional(),
});
/** The notification as a client holds it, after parsing with the schema. */
export type RewardsParams = z.output<typeof RewardsParams>;
/** The notification as the server writes it (defaults may be left out). */
export type RewardsParamsInput = z.input<typeof RewardsParams>;

/** `lar/backend` (server → client notification): the backend now deciding, sent when it is chosen or changes. */
export const BackendMethod = 'lar/backend';

/** `lar/verify` (client → server request): verify this document (or file) again from scratch. */
export const VerifyMethod = 'lar/verify';
export const VerifyParams = z.object({ uri: z.string() });
export const VerifyResult = z.object({
  backend: BackendLabel,
  summary: z.object({ return: z.number(), outcome: z.number(), steps: z.number() }).nullable(),
  fatal: z.string().nullable(),
});
export type VerifyResult = z.infer<typeof VerifyResult>;

/** Options the client passes at initialize. */
export const ServerOptions = z.object({
  /** `auto` (Lean when a toolchain is found), `lean`, or `builtin`. */
  backend: z.enum(['auto', 'lean', 'builtin']).default('auto'),
  /** Folder (or executable) of lake/lean; empty means unset. */
  leanPath: z.string().optional(),
  /**
   * Leave schema errors of workflow documents to the client's own JSON
   * validation (VS Code validates *.larflow.json against the generated JSON
   * Schema), so they are not reported twice.
   */
  workflowSchemaByClient: z.boolean().default(false),
  /**
   * Whose problems the Problems panel lists: `open` (default) the trajectories
   * open in an editor and the latest live run; `all` every run the server was
   * told of since it started.
   */
  problems: z.enum(['open', 'all']).default('open'),
});
export type ServerOptions = z.input<typeof ServerOptions>;
