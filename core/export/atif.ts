import type { ParsedTrajectory } from '../schema/jsonl';
import { attachmentsOf, type MessagePart } from '../schema/message-parts';
import type { ToolCallEvent, TrajectoryEvent, TurnUsage } from '../schema/trajectory';
import { renderAttachment } from '../schema/user-message';
import { toolDefinitions } from '../schema/tool-definitions';
import type { StepResult } from '../verifier/types';
import type { TrajectoryReport } from '../verifier/verify';
import { finalMetrics, outcomeLevel, stepLevels, stepMetrics } from './atif-levels';
import { ATIF_VERSION, AtifTrajectory, type AtifMetrics, type AtifStep } from './atif-schema';
import { TokenTurns, type FullTurn } from './token-turns';

export interface AtifOptions {
  agentName?: string;
  agentVersion: string;
  /** Used as session_id when the header has no id. */
  fallbackId: string;
}

type AgentStep = AtifStep & {
  tool_calls: NonNullable<AtifStep['tool_calls']>;
  observation: NonNullable<AtifStep['observation']>;
};

function failedChecks(r: StepResult): { check: string; reason: string }[] {
  return r.verdicts.filter((v) => !v.ok).map((v) => ({ check: v.check, reason: v.reason }));
}

/**
 * The trajectory in ATIF-v1.7 with the verifier's results attached. ATIF
 * objects accept no unknown keys, so every result goes in `extra.lar`: per call
 * on its observation result, per step on the step (the three levels: its calls'
 * tool rewards, its stage visit's reward, the run's outcome), per run at the
 * root. One agent step per model turn: an assistant message and the tool calls
 * of its reply belong together, with the server's token counts in `metrics`.
 */
export function exportAtif(parsed: ParsedTrajectory, report: TrajectoryReport, opts: AtifOptions): AtifTrajectory {
  const header = parsed.header;
  const modelName = header?.model?.name;
  const steps = atifSteps(parsed, report, modelName);
  const doc = {
    schema_version: ATIF_VERSION,
    session_id: header?.id ?? opts.fallbackId,
    agent: {
      name: opts.agentName ?? 'lean4-agentic',
      version: opts.agentVersion,
      ...(modelName ? { model_name: modelName } : {}),
      tool_definitions: toolDefinitions() as unknown as Record<string, unknown>[],
    },
    steps,
    final_metrics: finalMetrics(steps),
    notes:
      "Exported by lar (Lean4 Agentic). Verifier results are in extra.lar: per tool call on observation results; per model turn on agent steps (its calls' tool rewards, its stage visit's reward, the run's outcome, null with outcomePending while an outside judge has not given it); per run at the root; see docs/rewards.md. Token counts are the server's, on the turns it reported them for.",
    extra: { lar: runResults(report, header?.task) },
  };
  const checked = AtifTrajectory.safeParse(doc);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new Error(`the ATIF document does not validate at ${issue.path.join('.')}: ${issue.message}`);
  }
  return checked.data;
}

/** A user's message: its text, then each attachment as the model read it, as ATIF's content parts. */
function userMessage(text: string, parts: readonly MessagePart[] | undefined): Pick<AtifStep, 'message'> {
  const attached = attachmentsOf(parts);
  if (!attached.length) return { message: text };
  return { message: [text, ...attached.map(renderAttachment)].map((t) => ({ type: 'text' as const, text: t })) };
}

/** Where each attachment came from (its content is in the message), for a reader of the export. */
function attachmentsExtra(parts: readonly MessagePart[] | undefined): { attachments?: unknown[] } {
  const attached = attachmentsOf(parts);
  if (!attached.length) return {};
  return {
    attachments: attached.map((a) => ({
      kind: a.kind,
      label: a.label,
      source: a.source,
      truncated: a.truncated === true,
    })),
  };
}

/** An agent step being filled: its first event's result and its calls' results, for the reward levels. */
interface OpenTurn {
  step: AgentStep;
  first: StepResult | undefined;
  calls: (StepResult | undefined)[];
  /** The reply its calls came in (files from before `reply` have none: their calls group). */
  reply: number | undefined;
}

/** The steps: the task, then one per message, model turn or system event, in trajectory order. */
function atifSteps(parsed: ParsedTrajectory, report: TrajectoryReport, modelName: string | undefined): AtifStep[] {
  const walk = new StepWalk(report, modelName);
  const header = parsed.header;
  if (header)
    walk.push({
      source: 'user',
      ...userMessage(header.task, header.parts),
      ...(header.started ? { timestamp: header.started } : {}),
      extra: { lar: { line: parsed.headerLine, kind: 'task', ...attachmentsExtra(header.parts) } },
    });
  for (const line of parsed.lines) if (line.kind === 'event') walk.event(line.event, line.line, header?.task);
  return walk.finish(header?.task ?? '');
}

/** The walk over the events that makes the steps, one model turn open at a time. */
class StepWalk {
  private readonly steps: AtifStep[] = [];
  private readonly turns: OpenTurn[] = [];
  private readonly results: Map<number, StepResult>;
  private open: OpenTurn | undefined;
  private readonly tokenTurns = new TokenTurns();
  /** The ids of the model turn whose message or calls come next. */
  private ids: FullTurn | undefined;

  constructor(
    private readonly report: TrajectoryReport,
    private readonly modelName: string | undefined,
  ) {
    this.results = new Map(report.steps.map((s) => [s.line, s]));
  }

  push(s: Omit<AtifStep, 'step_id'>): AtifStep {
    const step = { step_id: this.steps.length + 1, ...s };
    this.steps.push(step);
    return step;
  }

  event(e: TrajectoryEvent, line: number, task: string | undefined): void {
    const r = this.results.get(line);
    switch (e.type) {
      case 'message':
        this.open = undefined;
        if (e.role === 'assistant') {
          this.open = this.openTurn(e.content, e.at, line, r, e.usage);
          if (e.reasoning) this.open.step.reasoning_content = e.reasoning;
        } else if (e.role === 'user' && this.steps.length === 1 && task === e.content) {
          // The task already opened the document as its first user step.
        } else {
          this.push({
            source: e.role,
            ...userMessage(e.content, e.parts),
            ...(e.at ? { timestamp: e.at } : {}),
            extra: { lar: { line, ...attachmentsExtra(e.parts) } },
          });
        }
        return;
      case 'tool_call':
        return this.call(e, line, r);
      case 'outcome':
      case 'compaction':
      case 'restore':
        this.open = undefined;
        this.push(systemStep(e, line, r));
        return;
      case 'tokens':
        this.open = undefined;
        try {
          this.ids = this.tokenTurns.push(e, line);
        } catch {
          // Ids that cannot be put back (a file no run wrote, or too many in all) are left out; the steps stay.
          this.ids = undefined;
        }
        return;
      case 'end':
        this.open = undefined;
    }
  }

  /** A call joins its model turn; a call of another reply, or one carrying a reply's token counts, starts a new turn. */
  private call(e: ToolCallEvent, line: number, r: StepResult | undefined): void {
    let open = this.open;
    const otherReply = open !== undefined && open.calls.length > 0 && e.reply !== open.reply;
    if (!open || otherReply || e.usage) open = this.open = this.openTurn('', e.at, line, r, e.usage);
    open.reply = e.reply;
    open.calls.push(r);
    addCall(open.step, e, line, r);
    // A stage change or a submit ends the model turn it belongs to.
    if (e.tool === 'enter_stage' || e.tool === 'submit') this.open = undefined;
  }

  /** A model turn: its text, then the tool calls that follow it; its token counts when the server gave them. */
  private openTurn(
    message: string,
    at: string | undefined,
    line: number,
    first: StepResult | undefined,
    usage: TurnUsage | undefined,
  ): OpenTurn {
    const step = this.push({
      source: 'agent',
      message,
      ...(this.modelName ? { model_name: this.modelName } : {}),
      ...(at ? { timestamp: at } : {}),
      tool_calls: [],
      observation: { results: [] },
      ...(usage || this.ids ? { metrics: { ...(usage ? stepMetrics(usage) : {}), ...this.takeIds() } } : {}),
      extra: { lar: { line, calls: [] } },
    }) as AgentStep;
    const turn: OpenTurn = { step, first, calls: [], reply: undefined };
    this.turns.push(turn);
    return turn;
  }

  /** The turn's ids as ATIF metrics carry them, once. */
  private takeIds(): Pick<AtifMetrics, 'prompt_token_ids' | 'completion_token_ids' | 'logprobs'> {
    const ids = this.ids;
    this.ids = undefined;
    return ids
      ? { prompt_token_ids: ids.promptIds, completion_token_ids: ids.completionIds, logprobs: ids.logprobs }
      : {};
  }

  /** The steps, each agent step with its reward levels. */
  finish(task: string): AtifStep[] {
    const { steps } = this;
    if (steps.length === 0) this.push({ source: 'user', message: task });
    for (const t of this.turns) Object.assign(agentLar(t.step), stepLevels(t.first, t.calls, this.report.summary));
    for (const s of steps) {
      // A model turn without tool calls carries no empty lists.
      if (s.tool_calls?.length === 0) delete s.tool_calls;
      if (s.observation?.results.length === 0) delete s.observation;
    }
    return steps;
  }
}

function agentLar(step: AgentStep): { calls: number[] } & Record<string, unknown> {
  return (step.extra as { lar: { calls: number[] } & Record<string, unknown> }).lar;
}

type SystemEvent = Extract<TrajectoryEvent, { type: 'outcome' | 'compaction' | 'restore' }>;

/** The system step that tells a reader what happened outside the conversation. */
function systemStep(e: SystemEvent, line: number, r: StepResult | undefined): Omit<AtifStep, 'step_id'> {
  switch (e.type) {
    case 'outcome':
      return {
        source: 'system',
        message: `Outcome check \`${e.command}\` exited ${e.exitCode ?? 'without an exit code'}${e.completion ? ` (${e.completion})` : ''}.`,
        ...(e.at ? { timestamp: e.at } : {}),
        ...(e.output !== undefined ? { observation: { results: [{ source_call_id: null, content: e.output }] } } : {}),
        extra: { lar: { line, exitCode: e.exitCode, failedChecks: r ? failedChecks(r) : [] } },
      };
    case 'compaction':
      return {
        source: 'system',
        message: `The conversation was compacted to fit the ${e.window}-token context window (${e.tokensBefore} → ${e.tokensAfter} tokens; ${e.elided} tool results elided, ${e.summarized} turns summarized).${e.summary ? `\n\n${e.summary}` : ''}`,
        ...(e.at ? { timestamp: e.at } : {}),
        extra: { lar: { line, kind: 'compaction', reason: e.reason } },
      };
    case 'restore':
      return {
        source: 'system',
        message: e.undo
          ? 'The user undid a restore: the workspace is back as it was before it.'
          : `The user restored the workspace to how it was before step ${e.step ?? '?'}${e.run ? ` of ${e.run}` : ''} (${e.reverted.length} files changed back, ${e.deleted.length} deleted, ${e.restored.length} brought back).`,
        ...(e.at ? { timestamp: e.at } : {}),
        extra: { lar: { line, kind: 'restore', checkpoint: e.checkpoint, before: e.before } },
      };
  }
}

/** The run's results for the root's `extra.lar`: the return, its parts and the stage visits. */
function runResults(report: TrajectoryReport, task: string | undefined): Record<string, unknown> {
  const summary = report.summary;
  return {
    version: 1,
    backend: report.backend,
    task,
    workflow: report.workflow?.id,
    ...(summary
      ? {
          ...outcomeLevel(summary),
          // While the outside judge has not given the outcome, the return so far has none in it: not the run's return.
          ...(summary.outcome.pending
            ? { return: null, returnWithoutOutcome: summary.return }
            : { return: summary.return }),
          alpha: summary.alpha,
          beta: summary.beta,
          toolRewardMean: summary.toolRewards.mean,
          stageRewardMean: summary.stageRewards.mean,
          stages: summary.stages.map((v) => ({
            stage: v.stage,
            visit: v.visit,
            reward: v.reward,
            steps: v.steps,
            budget: v.budget,
            startLine: v.startLine,
            endLine: v.endLine ?? null,
            failedChecks: v.verdicts.filter((x) => !x.ok).map((x) => ({ check: x.check, reason: x.reason })),
          })),
          outcomeChecks: summary.outcome.verdicts.map((v) => ({ check: v.check, ok: v.ok, reason: v.reason })),
        }
      : {}),
    lineErrors: report.lineErrors,
  };
}

function addCall(step: AgentStep, e: ToolCallEvent, line: number, r: StepResult | undefined): void {
  let id = e.id ?? `call_line_${line}`;
  // Ids must be unique within a step; a model that reuses one still exports.
  while (step.tool_calls.some((c) => c.tool_call_id === id)) id = `${id}_line_${line}`;
  const argsIsObject = typeof e.args === 'object' && e.args !== null && !Array.isArray(e.args);
  step.tool_calls.push({
    tool_call_id: id,
    function_name: e.tool,
    arguments: argsIsObject ? (e.args as Record<string, unknown>) : {},
    ...(argsIsObject ? {} : { extra: { lar: { rawArgs: e.args ?? null, argsError: e.argsError ?? null } } }),
  });
  const content = e.result?.output ?? e.result?.error ?? '';
  step.observation.results.push({
    source_call_id: id,
    content,
    extra: {
      lar: {
        line,
        status: e.status,
        ...(e.result?.exitCode !== undefined ? { exitCode: e.result.exitCode } : {}),
        stage: r?.stage ?? null,
        toolReward: r?.toolReward ?? null,
        failedChecks: r ? failedChecks(r) : [],
        ...(r?.stageVisit ? { stageVisit: { stage: r.stageVisit.stage, reward: r.stageVisit.reward } } : {}),
      },
    },
  });
  agentLar(step).calls.push(line);
}
