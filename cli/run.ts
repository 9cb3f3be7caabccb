import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { runAgent, type AgentEvent, type AgentResult } from '../core/agent/loop';
import { endNotes, LATER_TITLE, LATER_WHY, openRun } from '../core/agent/run-setup';
import { groupAdvantages } from '../core/rewards/advantages';
import { verifyTrajectoryText } from '../core/verifier/verify';
import { fileResolver } from '../core/workflow/resolve';
import { newRunId } from '../core/agent/run-id';
import { DEFAULT_RULE_FILES } from '../core/agent/rules';
import { groupDir as groupFolder, LAR_DIR, outputDir, trajectoryFile } from '../core/workspace/lar-layout';
import { ModelClient } from '../core/model/client';
import type { ToolFormatSetting } from '../core/model/formats';
import { describeSandbox, type SandboxSetting } from '../core/sandbox/plan';
import { loadNodePty } from '../core/shell/process';
import type { Workflow } from '../core/schema/workflow';
import type { WorkflowRef } from '../core/schema/trajectory';
import type { Style } from './report-format';
import { signed } from '../core/verifier/checks';
import { maskEndpoint } from '../core/model/endpoint';

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
  /** How commands are confined (default auto). */
  sandbox?: SandboxSetting;
}

type Io = { out: (s: string) => void; err: (s: string) => void };

/**
 * `lar run`: the verified agent without an editor. The API key comes from
 * $LAR_API_KEY (never from an argument, so it stays out of shell history).
 * With `--rollouts N` (N > 1) it runs N rollouts of the task one after the
 * other, each in its own copy of the workspace (so they cannot see each
 * other's edits and the workspace itself is left as it was), writes the group
 * to `.lar/runs/GROUP/rollout-K.lar.jsonl` and their GRPO advantages to
 * `.lar/runs/GROUP/advantages.jsonl`.
 */
export async function runFromCli(a: RunArgs, io: Io, st: Style, signal?: AbortSignal): Promise<number> {
  const workspace = resolve(a.workspace);
  const apiKey = process.env.LAR_API_KEY;
  const client = new ModelClient({
    endpoint: a.endpoint,
    ...(apiKey ? { apiKey } : {}),
    ...(a.model ? { model: a.model } : {}),
    ...(a.toolFormat ? { toolFormat: a.toolFormat } : {}),
    ...(a.contextLength ? { contextLength: a.contextLength } : {}),
    ...(a.thinking ? { thinking: a.thinking } : {}),
  });
  let modelName: string;
  try {
    modelName = await client.resolveModel(signal);
  } catch (e) {
    io.err(`lar run: ${(e as Error).message}`);
    return 1;
  }
  const np = loadNodePty();
  if ('error' in np)
    io.err(
      `lar run: node-pty cannot be loaded (${np.error}): commands run over pipes, without a terminal (commands that read input get end-of-file)`,
    );
  const rollouts = a.rollouts ?? 1;
  if (rollouts === 1) {
    const runId = newRunId();
    const trajectoryPath = resolve(a.out ?? trajectoryFile(workspace, runId));
    io.err(
      `lar run: ${modelName} at ${maskEndpoint(a.endpoint)}, workflow ${a.workflow.id}, ${await windowLine(client, signal)}, trajectory ${trajectoryPath}`,
    );
    const r = await runOnce(
      a,
      { client, modelName, apiKey, workspace, trajectoryPath, runId, outputDir: outputDir(workspace, runId) },
      io,
      st,
      '',
      signal,
    );
    return r.endReason === 'submitted' ? 0 : 1;
  }

  const groupId = newRunId().replace(/^run-/, 'group-');
  const groupDir = resolve(a.out ?? groupFolder(workspace, groupId));
  mkdirSync(groupDir, { recursive: true });
  io.err(
    `lar run: ${rollouts} rollouts of one task with ${modelName} at ${maskEndpoint(a.endpoint)}, workflow ${a.workflow.id}, group ${groupDir}`,
  );
  const files: string[] = [];
  const digests = new Map<string, string | undefined>();
  const rows: string[] = [];
  for (let k = 1; k <= rollouts && !signal?.aborted; k++) {
    const copy = mkdtempSync(join(tmpdir(), `lar-rollout-${k}-`));
    try {
      copyWorkspace(workspace, copy, groupDir);
      const trajectoryPath = join(groupDir, `rollout-${k}.lar.jsonl`);
      io.out(st.bold(`\n── rollout ${k}/${rollouts} ──\n`));
      let r: AgentResult;
      try {
        // The copy's own output folder (its .lar), so its sandbox sees its files and nothing of the group's.
        r = await runOnce(
          a,
          {
            client,
            modelName,
            apiKey,
            workspace: copy,
            trajectoryPath,
            runId: `${groupId}-${k}`,
            outputDir: outputDir(copy, `rollout-${k}`),
            hidden: [workspace, groupDir],
          },
          io,
          st,
          `[${k}] `,
          signal,
        );
        if (!sameDigest(trajectoryPath, r.digest)) {
          rows.push(`rollout ${k}: left out: its trajectory changed after the run (it is not the file this run wrote)`);
          continue;
        }
      } catch (e) {
        // One rollout failing (its file is closed and says why) does not lose the others.
        rows.push(`rollout ${k}: failed (${e instanceof Error ? e.message : String(e)})`);
        continue;
      }
      rows.push(
        `rollout ${k}: ${r.endReason}, outcome ${r.summary.outcome.reward}, return ${r.summary.return.toFixed(3)}, ${r.summary.steps} steps`,
      );
      // A stopped rollout is not a sample of the policy: it stays on disk but out of the group.
      if (r.endReason !== 'cancelled') {
        files.push(trajectoryPath);
        digests.set(trajectoryPath, r.digest);
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }
  // Checked again now: an unconfined rollout could have written another's file after it ended.
  for (const f of [...files]) {
    if (sameDigest(f, digests.get(f))) continue;
    files.splice(files.indexOf(f), 1);
    rows.push(`${relative(groupDir, f)}: left out: it changed after its run ended`);
  }
  const reports = files.map((f) => ({
    source: f,
    report: verifyTrajectoryText(readFileSync(f, 'utf8'), { resolve: fileResolver(f) }),
  }));
  const advantagesPath = join(groupDir, 'advantages.jsonl');
  if (reports.length) {
    writeFileSync(
      advantagesPath,
      groupAdvantages(reports)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
  }
  io.out(
    `\n${st.bold('group')}: ${files.length} of ${rollouts} rollouts in the group${signal?.aborted ? ' (stopped)' : ''}\n  ${rows.join('\n  ')}\n`,
  );
  if (reports.length) io.out(`advantages: ${advantagesPath}\n`);
  return !signal?.aborted && files.length === rollouts ? 0 : 1;
}

interface Rollout {
  client: ModelClient;
  modelName: string;
  apiKey: string | undefined;
  workspace: string;
  trajectoryPath: string;
  runId: string;
  outputDir: string;
  /** Host folders the rollout's sandbox must not see (the original workspace, the group). */
  hidden?: string[];
}

async function runOnce(
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
  });
  const { sandbox, rules } = run;
  if (!sandbox.plan.confined) {
    if (!warnedUnconfined || sandbox.refusal)
      io.err(
        `lar run: ${prefix}${sandbox.refusal ? `commands will not run: ${sandbox.refusal}` : `commands are NOT confined: ${sandbox.summary.reason}${sandbox.plan.fix ? `\n  fix: ${sandbox.plan.fix}` : ''}`}`,
      );
    warnedUnconfined = true;
  } else if (!prefix) io.err(`lar run: ${describeSandbox(sandbox.summary)}`);
  for (const p of rules.problems) io.err(`lar run: ${prefix}rules: ${p}`);
  if (rules.files.length && !prefix) io.err(`lar run: rules in force: ${rules.files.map((f) => f.path).join(', ')}`);
  try {
    const result = await runAgent({
      ...run.agentOptions,
      task: a.task,
      workflow: a.workflow,
      workflowRef: a.workflowRef,
      model: r.client,
      modelInfo: { name: r.modelName, endpoint: maskEndpoint(a.endpoint) },
      approve: (req) => {
        io.err(
          `lar run: ${prefix}${req.tool} needs approval (${req.reason}): ${a.yes ? 'approved (--yes)' : 'rejected (use --yes to approve such calls)'}`,
        );
        return Promise.resolve(a.yes);
      },
      enforcement: a.enforcement,
      ...(a.toolFormat ? { toolFormat: a.toolFormat } : {}),
      onEvent: printer(io, st, prefix),
      limits: {
        ...(a.maxSteps !== undefined ? { maxSteps: a.maxSteps } : {}),
        ...(a.maxRepeatedFailures !== undefined ? { maxRepeatedFailures: a.maxRepeatedFailures } : {}),
      },
      ...(signal ? { signal } : {}),
    });
    const s = result.summary;
    io.out(`\n${prefix}${st.bold('run ended')}: ${result.endReason}${result.detail ? ` (${result.detail})` : ''}\n`);
    io.out(
      `${prefix}outcome ${s.outcome.reward} · return ${s.return.toFixed(3)} · ${s.steps} steps · ${r.trajectoryPath}\n`,
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

/** How `lar run` prints a run's events: prose and steps (rollouts their steps only), never reasoning or the window's fill. */
function printer(io: Io, st: Style, prefix: string): (e: AgentEvent) => void {
  let atLineStart = true;
  return (e) => {
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

/** The window and the tool format a run starts with, for its first line. */
async function windowLine(client: ModelClient, signal?: AbortSignal): Promise<string> {
  const w = await client.contextWindow(signal).catch(() => undefined);
  if (!w) return 'context window unknown';
  const from =
    w.source === 'setting'
      ? '--context-length'
      : w.source === 'default'
        ? 'assumed: the server does not say; set --context-length'
        : 'from the server';
  return `context window ${w.tokens} tokens (${from})`;
}

/** Whether the file holds exactly what its writer wrote (sha-256 of the whole file). */
function sameDigest(path: string, digest: string | undefined): boolean {
  try {
    return (
      digest !== undefined && digest !== '' && createHash('sha256').update(readFileSync(path)).digest('hex') === digest
    );
  } catch {
    return false;
  }
}

/** The workspace as the rollout starts from it: everything but the runs and outputs in `.lar`, and the group's own folder (`--out` may be in the workspace: a rollout must not read another's trajectory). */
function copyWorkspace(from: string, to: string, group: string): void {
  cpSync(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => relative(from, src) !== LAR_DIR && src !== group && !src.startsWith(`${group}${sep}`),
  });
}
