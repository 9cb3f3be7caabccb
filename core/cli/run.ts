import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runAgent, type AgentEvent } from '../agent/loop';
import { runOutcomeCheck } from '../agent/outcome-check';
import { createToolExecutor } from '../agent/tools';
import { newRunId } from '../agent/run-file';
import { ModelClient, redact } from '../model/client';
import { TerminalSession } from '../tools/terminal';
import { NodeWorkspaceFs } from '../tools/workspace-fs';
import type { Workflow } from '../schema/workflow';
import type { WorkflowRef } from '../schema/trajectory';
import type { Style } from './format';
import { signed } from '../verifier/checks';

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
  maxSteps?: number;
  toolFormat?: 'native' | 'hermes';
}

/**
 * `lar run`: the verified agent without an editor. The API key comes from
 * $LAR_API_KEY (never from an argument, so it stays out of shell history).
 */
export async function runFromCli(a: RunArgs, io: { out: (s: string) => void; err: (s: string) => void }, st: Style, signal?: AbortSignal): Promise<number> {
  const workspace = resolve(a.workspace);
  const apiKey = process.env.LAR_API_KEY;
  const client = new ModelClient({ endpoint: a.endpoint, ...(apiKey ? { apiKey } : {}), ...(a.model ? { model: a.model } : {}), ...(a.toolFormat ? { toolFormat: a.toolFormat } : {}) });
  let modelName: string;
  try {
    modelName = await client.resolveModel(signal);
  } catch (e) {
    io.err(`lar run: ${(e as Error).message}`);
    return 1;
  }
  const runId = newRunId();
  const trajectoryPath = resolve(a.out ?? join(workspace, '.lar', 'runs', `${runId}.lar.jsonl`));
  const outputDir = join(workspace, '.lar', 'output', runId);
  mkdirSync(outputDir, { recursive: true });
  const terminal = new TerminalSession({ cwd: workspace, env: { ...process.env, LAR_API_KEY: undefined }, outputDir });
  io.err(`lar run: ${modelName} at ${a.endpoint}, workflow ${a.workflow.id}, trajectory ${trajectoryPath}`);
  let atLineStart = true;
  const onEvent = (e: AgentEvent) => {
    if (e.kind === 'text') {
      io.out(e.delta.replace(/\n/g, '\n  '));
      atLineStart = e.delta.endsWith('\n');
      return;
    }
    if (!atLineStart) io.out('\n');
    atLineStart = true;
    if (e.kind === 'step') {
      const r = e.result.toolReward ?? 0;
      const mark = r > 0 ? st.good(signed(r)) : r < 0 ? st.bad(signed(r)) : st.warn(signed(r));
      const failed = e.result.verdicts.filter((v) => !v.ok).map((v) => `${v.check}: ${v.reason}`);
      io.out(`${mark} [${e.result.stage ?? '—'}] ${e.event.tool} ${st.dim(JSON.stringify(e.event.args)?.slice(0, 100) ?? '')} → ${e.event.status}${failed.length ? `\n     ${failed.join('\n     ')}` : ''}\n`);
      if (e.result.stageVisit) io.out(st.bold(`   stage ${e.result.stageVisit.stage}: ${signed(e.result.stageVisit.reward)}\n`));
    } else if (e.kind === 'outcome') {
      io.out(st.bold(`outcome check: ${e.event.command} → exit ${e.event.exitCode}\n`));
    }
  };
  try {
    const result = await runAgent({
      task: a.task,
      workflow: a.workflow,
      workflowRef: a.workflowRef,
      model: client,
      modelInfo: { name: modelName, endpoint: a.endpoint },
      workspace,
      trajectoryPath,
      execute: createToolExecutor({ fs: new NodeWorkspaceFs(workspace), terminal }),
      runOutcomeCheck: (s) => runOutcomeCheck(a.workflow.outcome, workspace, s),
      approve: async (req) => {
        io.err(`lar run: ${req.tool} needs approval (${req.reason}): ${a.yes ? 'approved (--yes)' : 'rejected (use --yes to approve such calls)'}`);
        return a.yes;
      },
      enforcement: a.enforcement,
      onEvent,
      redact: (t) => redact(t, apiKey),
      runId,
      ...(a.maxSteps !== undefined ? { limits: { maxSteps: a.maxSteps } } : {}),
      ...(signal ? { signal } : {}),
    });
    const s = result.summary;
    io.out(`\n${st.bold('run ended')}: ${result.endReason}${result.detail ? ` (${result.detail})` : ''}\n`);
    io.out(`outcome ${s.outcome.reward} · return ${s.return.toFixed(3)} · ${s.steps} steps · ${trajectoryPath}\n`);
    return result.endReason === 'submitted' ? 0 : 1;
  } finally {
    terminal.dispose();
  }
}
