/** One agent run of `lar run` from its open to its close, and how its events are printed; a rollout is one such run. */
import { runAgent, type AgentEvent, type AgentResult } from '../core/agent/loop';
import { DEFAULT_RULE_FILES } from '../core/agent/rules';
import { endNotes, LATER_TITLE, LATER_WHY, openRun } from '../core/agent/run-setup';
import type { ModelClient } from '../core/model/client';
import { maskEndpoint } from '../core/secrets/endpoint';
import type { ToolFormatSetting } from '../core/model/formats';
import { describeSandbox, type SandboxSetting } from '../core/sandbox/plan';
import type { RunSandbox } from '../core/sandbox/run';
import type { ModelInfo, WorkflowRef } from '../core/schema/trajectory';
import type { Workflow } from '../core/schema/workflow';
import { signed } from '../core/verifier/checks';
import { outcomeText } from '../core/verifier/score';
import type { Style } from './report-format';
import { resolveForRun } from './mcp-config';
import type { McpConfig } from '../core/mcp/config';

export interface RunArgs {
  task: string;
  endpoint: string;
  model?: string;
  workspace: string;
  out?: string;
  workflow: Workflow;
  workflowRef: WorkflowRef;
  enforcement: 'block' | 'warn';
  /** Approve every call that asks (otherwise each is rejected: there is nobody to ask). */
  yes: boolean;
  /** Make multiply-linked workspace files their own copies before the first step (--break-hard-links). */
  breakHardLinks?: boolean;
  maxSteps?: number;
  /** The same failing call this many times ends the run (default 3). */
  maxRepeatedFailures?: number;
  toolFormat?: ToolFormatSetting;
  /** The model's window in tokens (0 or absent: ask the server). */
  contextLength?: number;
  thinking?: 'auto' | 'on' | 'off';
  /** Rule files for the system prompt, workspace-relative (default AGENTS.md). */
  rules?: string[];
  /** Rollouts of the task (a group for GRPO); default 1, in the workspace itself. */
  rollouts?: number;
  /** With rollouts: how many run at the same time (1 to 16). */
  concurrency?: number;
  /** With rollouts: keep each rollout's copy of the workspace. */
  keep?: boolean;
  /** A run's time limit in seconds (checked between turns; a command has its own timeout). Default 1 hour. */
  maxTimeSec?: number;
  /** Sampling asked of the server (absent: its defaults); with rollouts, rollout k gets seed + k − 1. */
  temperature?: number;
  seed?: number;
  /** Record each turn's token ids and logprobs (`--record-tokens`); the conversation is then never compacted. */
  recordTokens?: boolean;
  /** How commands are confined (default auto). */
  sandbox?: SandboxSetting;
  /** MCP servers (`--mcp-config`), resolved for each rollout's workspace. */
  mcp?: McpConfig;
}

export type Io = { out: (s: string) => void; err: (s: string) => void };

export interface Rollout {
  client: ModelClient;
  modelName: string;
  apiKey: string | undefined;
  workspace: string;
  trajectoryPath: string;
  runId: string;
  outputDir: string;
  /** Host folders the rollout's sandbox must not see (the original workspace, the group). */
  hidden?: string[];
  /** This run's seed (the client sends it), recorded in the header. */
  seed?: number;
  /** With `--record-tokens`: how the server is asked for ids, recorded in the header. */
  tokens?: ModelInfo['tokens'];
}

/** The model a run talks to, the same for every rollout of a group. */
export type ModelSetup = Pick<Rollout, 'client' | 'modelName' | 'apiKey' | 'tokens'>;

export async function runOnce(
  a: RunArgs,
  r: Rollout,
  io: Io,
  st: Style,
  prefix: string,
  signal?: AbortSignal,
): Promise<AgentResult> {
  const run = await openRun({
    workspace: r.workspace,
    workflow: a.workflow,
    sandbox: a.sandbox ?? 'auto',
    breakHardLinks: a.breakHardLinks === true,
    hostEnv: process.env,
    ...(r.apiKey ? { apiKey: r.apiKey } : {}),
    rules: a.rules ?? DEFAULT_RULE_FILES,
    runId: r.runId,
    trajectoryPath: r.trajectoryPath,
    outputDir: r.outputDir,
    ...(r.hidden ? { hidden: r.hidden } : {}),
    ...(a.mcp ? { mcp: resolveForRun(a.mcp, r.workspace, process.env) } : {}),
  });
  const { sandbox, rules } = run;
  saySandbox(sandbox, io, prefix);
  for (const p of rules.problems) io.err(`lar run: ${prefix}rules: ${p}`);
  if (rules.files.length && !prefix) io.err(`lar run: rules in force: ${rules.files.map((f) => f.path).join(', ')}`);
  try {
    const result = await runAgent({
      ...run.agentOptions,
      task: a.task,
      workflow: a.workflow,
      workflowRef: a.workflowRef,
      model: r.client,
      modelInfo: {
        name: r.modelName,
        endpoint: maskEndpoint(a.endpoint),
        ...(a.temperature !== undefined ? { temperature: a.temperature } : {}),
        ...(r.seed !== undefined ? { seed: r.seed } : {}),
        ...(r.tokens ? { tokens: r.tokens } : {}),
      },
      approve: (req) => {
        io.err(
          `lar run: ${prefix}${req.tool} needs approval (${req.reason}): ${a.yes ? 'approved (--yes)' : 'rejected (use --yes to approve such calls)'}`,
        );
        return Promise.resolve(a.yes);
      },
      enforcement: a.enforcement,
      ...(a.toolFormat ? { toolFormat: a.toolFormat } : {}),
      onEvent: printer(io, st, prefix, run.redact),
      limits: {
        ...(a.maxSteps !== undefined ? { maxSteps: a.maxSteps } : {}),
        ...(a.maxRepeatedFailures !== undefined ? { maxRepeatedFailures: a.maxRepeatedFailures } : {}),
        ...(a.maxTimeSec !== undefined ? { maxTimeMs: a.maxTimeSec * 1000 } : {}),
      },
      ...(signal ? { signal } : {}),
    });
    const s = result.summary;
    io.out(`\n${prefix}${st.bold('run ended')}: ${result.endReason}${result.detail ? ` (${result.detail})` : ''}\n`);
    io.out(
      `${prefix}outcome ${outcomeText(s.outcome)} · return ${s.return.toFixed(3)} · ${s.steps} steps · ${r.trajectoryPath}\n`,
    );
    return result;
  } finally {
    const end = await run.close();
    for (const n of endNotes(end)) {
      if (n.kind !== 'later') io.err(`lar run: ${prefix}${n.text}`);
      else
        io.out(`\n${prefix}${st.bold(LATER_TITLE)} ${LATER_WHY}:\n${(n.detail ?? '').replace(/^/gm, `${prefix}  `)}\n`);
    }
    // A run whose end failed is not a good sample whatever it scored: `lar run` fails, a rollout leaves the group.
    if (end.error) throw new Error(`the end of the run failed: ${end.error}`);
  }
}

/** The sandbox the run has, said once (a group's unconfined rollouts warn once, a refusal every time). */
function saySandbox(sandbox: RunSandbox, io: Io, prefix: string): void {
  if (sandbox.summary.container) {
    if (!prefix) io.err(`lar run: ${describeSandbox(sandbox.summary)}`);
  } else if (!sandbox.plan.confined) {
    if (!warnedUnconfined || sandbox.refusal)
      io.err(
        `lar run: ${prefix}${sandbox.refusal ? `commands will not run: ${sandbox.refusal}` : `commands are NOT confined: ${sandbox.summary.reason}${sandbox.plan.fix ? `\n  fix: ${sandbox.plan.fix}` : ''}`}`,
      );
    warnedUnconfined = true;
  } else if (!prefix) io.err(`lar run: ${describeSandbox(sandbox.summary)}`);
}

/** How `lar run` prints a run's events: prose and steps (rollouts their steps only), never reasoning or the window's fill. */
function printer(io: Io, st: Style, prefix: string, mask: (t: string) => string): (e: AgentEvent) => void {
  let atLineStart = true;
  const missing = new Set<string>();
  return (e) => {
    // Each reason once: a server that sends no ids sends none on every turn.
    if (e.kind === 'tokens') {
      const why = e.event.missing;
      if (why !== undefined && !missing.has(why)) {
        missing.add(why);
        io.err(`lar run: ${prefix}turn ${e.event.turn} has no token ids (${why}); the run goes on`);
      }
      return;
    }
    if (e.kind === 'mcpNotes') {
      // A server's stderr may hold what the run masks everywhere else.
      for (const n of e.notes) io.err(`lar run: ${prefix}${mask(n)}`);
      return;
    }
    if (e.kind === 'mcp') {
      if (e.event.reason === 'start' && !prefix)
        io.err(
          `lar run: MCP server "${e.event.server}": ${e.event.tools.length} tools (${e.event.tools.map((t) => t.name).join(', ') || 'none'})`,
        );
      return;
    }
    if (
      e.kind === 'reasoning' ||
      e.kind === 'context' ||
      e.kind === 'retract' ||
      e.kind === 'header' ||
      e.kind === 'message' ||
      e.kind === 'end'
    )
      return;
    if (e.kind === 'text') {
      // Interleaved prose from N runs reads badly.
      if (prefix) return;
      io.out(e.delta.replace(/\n/g, '\n  '));
      atLineStart = e.delta.endsWith('\n');
      return;
    }
    if (!atLineStart) io.out('\n');
    atLineStart = true;
    if (e.kind === 'step') {
      const rw = e.result.toolReward ?? 0;
      const mark = rw > 0 ? st.good(signed(rw)) : rw < 0 ? st.bad(signed(rw)) : st.warn(signed(rw));
      const failed = e.result.verdicts.filter((v) => !v.ok).map((v) => `${v.check}: ${v.reason}`);
      io.out(
        `${prefix}${mark} [${e.result.stage ?? '—'}] ${e.event.tool} ${st.dim(JSON.stringify(e.event.args)?.slice(0, 100) ?? '')} → ${e.event.status}${failed.length ? `\n     ${failed.join('\n     ')}` : ''}\n`,
      );
      if (e.result.stageVisit)
        io.out(st.bold(`${prefix}   stage ${e.result.stageVisit.stage}: ${signed(e.result.stageVisit.reward)}\n`));
    } else if (e.kind === 'outcome') {
      io.out(st.bold(`${prefix}outcome check: ${e.event.command} → exit ${e.event.exitCode}\n`));
    } else if (e.kind === 'compaction') {
      const c = e.event;
      io.out(
        st.dim(
          `${prefix}context compacted (${c.reason === 'context_error' ? 'the server refused a request as too long' : 'the window filled'}): ${c.tokensBefore} → ${c.tokensAfter} of ${c.window} tokens; ${c.elided} results elided, ${c.summarized} turns summarized${c.summaryBy ? ` by the ${c.summaryBy}` : ''}\n`,
        ),
      );
    }
  };
}

let warnedUnconfined = false;
