/** `lar run --rollouts N`: N rollouts of one task, each in its own copy of the workspace, and their advantages. */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash, randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import type { AgentResult } from '../core/agent/loop';
import { newRunId } from '../core/agent/run-id';
import { maskEndpoint } from '../core/secrets/endpoint';
import { groupAdvantages } from '../core/rewards/advantages';
import { outcomeText } from '../core/verifier/score';
import { verifyTrajectoryText } from '../core/verifier/verify';
import { fileResolver } from '../core/workflow/resolve';
import { groupDir as groupFolder, LAR_DIR, outputDir } from '../core/workspace/lar-layout';
import type { Style } from './report-format';
import { runOnce, type Io, type ModelSetup, type RunArgs } from './run-once';

export interface Group {
  workspace: string;
  size: number;
  /** Rollouts at the same time (default 1), each in its own copy and sandbox; only the endpoint is shared. */
  concurrency?: number;
  /** Keep each rollout's copy of the workspace (its path is printed) instead of removing it. */
  keep?: boolean;
}

/** What the group's progress line counts. */
interface Progress {
  done: number;
  running: number;
  passed: number;
  failed: number;
}

/** A trajectory of the group with the digest its run recorded. */
interface Member {
  path: string;
  digest: string | undefined;
}

/** N rollouts, `concurrency` at a time, then their advantages; exit 0 when all N ran and joined the group. */
export async function runGroup(
  a: RunArgs,
  m: ModelSetup,
  g: Group,
  io: Io,
  st: Style,
  signal?: AbortSignal,
): Promise<number> {
  const groupId = newRunId().replace(/^run-/, 'group-');
  // Each rollout samples with its own seed, recorded in its header: the group is reproducible from its first.
  const firstSeed = a.seed ?? randomInt(0, 2 ** 31 - g.size);
  const groupDir = resolve(a.out ?? groupFolder(g.workspace, groupId));
  mkdirSync(groupDir, { recursive: true });
  io.err(
    `lar run: ${g.size} rollouts of one task, ${g.concurrency ?? 1} at a time, with ${m.modelName} at ${maskEndpoint(a.endpoint)}, workflow ${a.workflow.id}, seeds ${firstSeed}–${firstSeed + g.size - 1}${a.temperature !== undefined ? `, temperature ${a.temperature}` : ''}, group ${groupDir}`,
  );
  const results: { row: string; member?: Member }[] = [];
  const progress: Progress = { done: 0, running: 0, passed: 0, failed: 0 };
  let next = 1;
  // A pool of workers, each taking the next rollout: a slow one holds only its own worker.
  const worker = async (): Promise<void> => {
    while (next <= g.size && !signal?.aborted) {
      const k = next++;
      progress.running++;
      const seed = firstSeed + k - 1;
      const rollout = { ...m, client: m.client.withSampling({ seed }), seed };
      const one = await runRollout(a, rollout, { ...g, id: groupId, dir: groupDir }, k, io, st, signal);
      progress.running--;
      progress.done++;
      if (!one.member) progress.failed++;
      else if (one.passed) progress.passed++;
      results[k - 1] = one;
      io.err(
        `lar run: group ${progress.done}/${g.size} done, ${progress.running} running, ${progress.passed} passed, ${progress.failed} left out`,
      );
    }
  };
  const width = Math.max(1, Math.min(g.concurrency ?? 1, g.size));
  await Promise.all(Array.from({ length: width }, worker));
  const rows = results.filter(Boolean).map((r) => r.row);
  const members = results.filter((r) => r?.member).map((r) => r.member!);
  const files = stillAsWritten(members, groupDir, rows);
  const advantagesPath = writeGroupAdvantages(files, groupDir);
  io.out(
    `\n${st.bold('group')}: ${files.length} of ${g.size} rollouts in the group${signal?.aborted ? ' (stopped)' : ''}\n  ${rows.join('\n  ')}\n`,
  );
  if (advantagesPath) io.out(`advantages: ${advantagesPath}\n`);
  return !signal?.aborted && files.length === g.size ? 0 : 1;
}

/** Rollout k in a fresh copy of the workspace: its line of the group's table, and its trajectory if it joins the group. */
async function runRollout(
  a: RunArgs,
  m: ModelSetup & { seed: number },
  g: Group & { id: string; dir: string },
  k: number,
  io: Io,
  st: Style,
  signal?: AbortSignal,
): Promise<{ row: string; member?: Member; passed?: boolean }> {
  const copy = mkdtempSync(join(tmpdir(), `lar-rollout-${k}-`));
  try {
    copyWorkspace(g.workspace, copy, g.dir);
    const trajectoryPath = join(g.dir, `rollout-${k}.lar.jsonl`);
    io.out(st.bold(`\n── rollout ${k}/${g.size}${g.keep ? ` in ${copy}` : ''} ──\n`));
    let r: AgentResult;
    try {
      // The copy's own output folder (its .lar), so its sandbox sees its files and nothing of the group's.
      r = await runOnce(
        a,
        {
          ...m,
          workspace: copy,
          trajectoryPath,
          runId: `${g.id}-${k}`,
          outputDir: outputDir(copy, `rollout-${k}`),
          hidden: [g.workspace, g.dir],
        },
        io,
        st,
        `[${k}] `,
        signal,
      );
      if (!sameDigest(trajectoryPath, r.digest))
        return {
          row: `rollout ${k}: left out: its trajectory changed after the run (it is not the file this run wrote)`,
        };
    } catch (e) {
      // One rollout failing (its file is closed and says why) does not lose the others.
      return { row: `rollout ${k}: failed (${e instanceof Error ? e.message : String(e)})` };
    }
    const row = `rollout ${k}: ${r.endReason}, outcome ${outcomeText(r.summary.outcome)}, return ${r.summary.return.toFixed(3)}, ${r.summary.steps} steps`;
    // A rollout the server or the host broke off is no sample of the policy (trainers mask it); one the
    // context window could not hold is, and scores 0.
    if (r.endReason === 'error' && !r.windowFull)
      return { row: `${row}: left out: it ended on an error (${r.detail ?? 'unknown'})` };
    // A stopped rollout is not a sample of the policy: it stays on disk but out of the group.
    const passed = r.summary.outcome.reward === 1;
    return r.endReason !== 'cancelled' ? { row, member: { path: trajectoryPath, digest: r.digest }, passed } : { row };
  } finally {
    if (!g.keep) rmSync(copy, { recursive: true, force: true });
  }
}

/** Checked again now: an unconfined rollout could have written another's file after it ended. */
function stillAsWritten(members: Member[], groupDir: string, rows: string[]): string[] {
  const files: string[] = [];
  for (const { path, digest } of members) {
    if (sameDigest(path, digest)) files.push(path);
    else rows.push(`${relative(groupDir, path)}: left out: it changed after its run ended`);
  }
  return files;
}

/** The group's advantages.jsonl, or undefined when no rollout joined the group. */
function writeGroupAdvantages(files: string[], groupDir: string): string | undefined {
  const reports = files.map((f) => ({
    source: f,
    report: verifyTrajectoryText(readFileSync(f, 'utf8'), { resolve: fileResolver(f) }),
  }));
  if (!reports.length) return undefined;
  const advantagesPath = join(groupDir, 'advantages.jsonl');
  writeFileSync(
    advantagesPath,
    groupAdvantages(reports)
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  return advantagesPath;
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
