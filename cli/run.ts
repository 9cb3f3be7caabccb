/** `lar run`: the model is resolved once, then one run in the workspace or a group of rollouts. */
import { resolve } from 'node:path';
import { newRunId } from '../core/agent/run-id';
import { ModelClient } from '../core/model/client';
import { tokenRequest } from '../core/model/token-record';
import { maskEndpoint } from '../core/secrets/endpoint';
import { loadNodePty } from '../core/shell/process';
import { outputDir, trajectoryFile } from '../core/workspace/lar-layout';
import type { Style } from './report-format';
import { runGroup } from './rollout-group';
import { runOnce, type Io, type ModelSetup, type RunArgs } from './run-once';

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
  const client = modelClientFor(a, apiKey);
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
  let tokens: ModelSetup['tokens'];
  try {
    tokens = a.recordTokens ? await tokenWay(client, signal) : undefined;
  } catch (e) {
    io.err(`lar run: ${(e as Error).message}`);
    return 1;
  }
  if (tokens)
    io.err(
      `lar run: recording each turn's token ids and logprobs (${tokens.engine === 'unknown' ? 'the server does not say whether it is vLLM or SGLang: asked with both their fields' : tokens.engine}, ${tokens.streamed ? 'streamed' : 'one unstreamed request per turn'}); the conversation is not compacted`,
    );
  const model: ModelSetup = { client, modelName, apiKey, ...(tokens ? { tokens } : {}) };
  const rollouts = a.rollouts ?? 1;
  if (rollouts === 1) return runSingle(a, model, workspace, io, st, signal);
  return runGroup(
    a,
    model,
    { workspace, size: rollouts, ...(a.concurrency ? { concurrency: a.concurrency } : {}), keep: a.keep === true },
    io,
    st,
    signal,
  );
}

function modelClientFor(a: RunArgs, apiKey: string | undefined): ModelClient {
  return new ModelClient({
    endpoint: a.endpoint,
    ...(apiKey ? { apiKey } : {}),
    ...(a.model ? { model: a.model } : {}),
    ...(a.toolFormat ? { toolFormat: a.toolFormat } : {}),
    ...(a.contextLength ? { contextLength: a.contextLength } : {}),
    ...(a.thinking ? { thinking: a.thinking } : {}),
    ...(a.temperature !== undefined ? { temperature: a.temperature } : {}),
    ...(a.seed !== undefined ? { seed: a.seed } : {}),
    ...(a.recordTokens ? { recordTokens: true } : {}),
  });
}

/** One run in the workspace itself; exit 0 when it submitted. */
async function runSingle(
  a: RunArgs,
  m: ModelSetup,
  workspace: string,
  io: Io,
  st: Style,
  signal?: AbortSignal,
): Promise<number> {
  const runId = newRunId();
  const trajectoryPath = resolve(a.out ?? trajectoryFile(workspace, runId));
  io.err(
    `lar run: ${m.modelName} at ${maskEndpoint(a.endpoint)}, workflow ${a.workflow.id}, ${await windowLine(m.client, signal)}, trajectory ${trajectoryPath}`,
  );
  const r = await runOnce(
    a,
    {
      ...m,
      workspace,
      trajectoryPath,
      runId,
      outputDir: outputDir(workspace, runId),
      ...(a.seed !== undefined ? { seed: a.seed } : {}),
    },
    io,
    st,
    '',
    signal,
  );
  return r.endReason === 'submitted' ? 0 : r.windowFull ? EXIT_WINDOW_FULL : 1;
}

/** How the server is asked for token ids: its engine, and whether they come streamed (core/model/token-record.ts). */
async function tokenWay(client: ModelClient, signal?: AbortSignal): Promise<NonNullable<ModelSetup['tokens']>> {
  const engine = await client.engine(signal);
  return { engine: engine ?? 'unknown', streamed: tokenRequest(engine).stream };
}

/** `lar run`'s exit when the model's context window could not hold the run (Harbor's LarAgent raises its context-length error). */
export const EXIT_WINDOW_FULL = 3;

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
