import type { ParsedTrajectory } from '../schema/jsonl';
import { attachmentsOf, type MessagePart } from '../schema/message-parts';
import type { ToolCallEvent, TrajectoryEvent } from '../schema/trajectory';
import { renderAttachment } from '../schema/user-message';
import { toolDefinitions } from '../schema/tool-definitions';
import type { StepResult } from '../verifier/types';
import type { TrajectoryReport } from '../verifier/verify';
import { ATIF_VERSION, AtifTrajectory, type AtifStep } from './atif-schema';

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
 * on its observation result, per step on the step, per run at the root. One
 * agent step per model turn: an assistant message and the tool calls that
 * follow it belong together.
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
    final_metrics: { total_steps: steps.length },
    notes:
      'Exported by lar (Lean4 Agentic). Verifier results are in extra.lar: per tool call on observation results, per model turn on steps, per run at the root; see docs/rewards.md.',
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

/** The steps: the task, then one per message, model turn or system event, in trajectory order. */
function atifSteps(parsed: ParsedTrajectory, report: TrajectoryReport, modelName: string | undefined): AtifStep[] {
  const header = parsed.header;
  const results = new Map(report.steps.map((s) => [s.line, s]));
  const steps: AtifStep[] = [];
  let open: AgentStep | undefined;
  const push = (s: Omit<AtifStep, 'step_id'>): AtifStep => {
    const step = { step_id: steps.length + 1, ...s };
    steps.push(step);
    return step;
  };
  /** A model turn: its text, then the tool calls that follow it. */
  const openAgentStep = (message: string, at: string | undefined, line: number): AgentStep =>
    push({
      source: 'agent',
      message,
      ...(modelName ? { model_name: modelName } : {}),
      ...(at ? { timestamp: at } : {}),
      tool_calls: [],
      observation: { results: [] },
      extra: { lar: { line, calls: [] } },
    }) as AgentStep;

  if (header)
    push({
      source: 'user',
      ...userMessage(header.task, header.parts),
      ...(header.started ? { timestamp: header.started } : {}),
      extra: { lar: { line: parsed.headerLine, kind: 'task', ...attachmentsExtra(header.parts) } },
    });

  for (const line of parsed.lines) {
    if (line.kind !== 'event') continue;
    const e: TrajectoryEvent = line.event;
    const r = results.get(line.line);
    switch (e.type) {
      case 'message':
        open = undefined;
        if (e.role === 'assistant') {
          open = openAgentStep(e.content, e.at, line.line);
          if (e.reasoning) open.reasoning_content = e.reasoning;
        } else if (e.role === 'user' && steps.length === 1 && header?.task === e.content) {
          // The task already opened the document as its first user step.
        } else {
          push({
            source: e.role,
            ...userMessage(e.content, e.parts),
            ...(e.at ? { timestamp: e.at } : {}),
            extra: { lar: { line: line.line, ...attachmentsExtra(e.parts) } },
          });
        }
        break;
      case 'tool_call': {
        if (!open) {
          open = openAgentStep('', e.at, line.line);
        }
        addCall(open, e, line.line, r);
        // A stage change or a submit ends the model turn it belongs to.
        if (e.tool === 'enter_stage' || e.tool === 'submit') open = undefined;
        break;
      }
      case 'outcome':
      case 'compaction':
      case 'restore':
        open = undefined;
        push(systemStep(e, line.line, r));
        break;
      case 'end':
        open = undefined;
        break;
    }
  }
  if (steps.length === 0) push({ source: 'user', message: header?.task ?? '' });
  for (const s of steps) {
    // A model turn without tool calls carries no empty lists.
    if (s.tool_calls?.length === 0) delete s.tool_calls;
    if (s.observation?.results.length === 0) delete s.observation;
  }
  return steps;
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
          outcome: summary.outcome.reward,
          return: summary.return,
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
  const lar = (step.extra as { lar: { calls: number[] } }).lar;
  lar.calls.push(line);
}
