/**
 * `lar harbor JOB`: the rewards of a Harbor job at the three levels. Harbor's
 * verifier runs after the agent, so its reward becomes each lar trajectory's
 * outcome here; lar-rewards.json goes beside each trial's result.json, each
 * task's group advantages into lar-advantages/, and a summary to the terminal.
 */
import { lstatSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJobFolder, JobFolderError, type Trial } from '../core/harbor/job-folder';
import { jobRewards, type JobRewards, type TaskSummary } from '../core/harbor/job-rewards';
import type { VerifierBackend } from '../core/verifier/backend';
import { verifyTrajectoryTextWith, type TrajectoryReport } from '../core/verifier/verify';
import { loadWorkflowRef } from '../core/workflow/resolve';
import type { Flags, Io } from './args';
import { UsageError } from './read-input';
import { withBackend } from './trajectory-input';

async function reportOf(trial: Trial, flags: Flags, backend: VerifierBackend): Promise<TrajectoryReport | undefined> {
  if (!trial.trajectory) return undefined;
  const ref = flags.values.get('--workflow') ?? trial.workflow;
  if (ref === undefined) {
    trial.trajectoryProblem = "the job's config names no workflow for this agent: give one with --workflow W";
    return undefined;
  }
  const loaded = loadWorkflowRef(ref, process.cwd());
  if ('error' in loaded) throw new UsageError(`${trial.name}: the job's workflow ${ref}: ${loaded.error}`);
  return verifyTrajectoryTextWith(backend, trial.trajectory.text, {
    workflow: loaded.workflow,
    // The workflow the job named, whatever the trajectory's header (which the run wrote) says.
    workflowSource: loaded.source,
  });
}

const num = (v: number | null, digits = 3): string => (v === null ? '–' : v.toFixed(digits));

function row(name: string, t: Omit<TaskSummary, 'task'>): string[] {
  return [
    name,
    `${t.passes}/${t.attempts}`,
    num(t.pass1),
    num(t.passK),
    num(t.meanReturn),
    num(t.meanOutcome),
    num(t.meanStage),
    num(t.meanTool),
  ];
}

function formatSummary(job: string, r: JobRewards): string {
  const head = ['task', 'passed', 'pass@1', `pass@${r.k}`, 'return', 'outcome', 'stage', 'tool'];
  const rows = [head, ...r.tasks.map((t) => row(t.task, t)), row(`overall (${r.overall.tasks} tasks)`, r.overall)];
  const widths = head.map((_, i) => Math.max(...rows.map((cells) => cells[i]!.length)));
  const lines = rows.map((cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '),
  );
  lines.splice(1, 0, widths.map((w) => '─'.repeat(w)).join('  '));
  const notes = [
    ...r.trials.filter((t) => t.problem).map((t) => `${t.trial}: ${t.problem}`),
    ...r.trials
      .filter((t) => t.noReward)
      .map((t) => `${t.trial}: no reward (${t.noReward}${t.exception ? `, ${t.exception}` : ''})`),
    ...r.groups.filter((g) => g.leftOut).map((g) => `${g.task}: no group advantages (${g.leftOut})`),
  ];
  return [`${job}: ${r.overall.attempts} trials`, '', ...lines, ...(notes.length ? ['', ...notes] : [])].join('\n');
}

function slug(task: string): string {
  return task.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120) || 'task';
}

/** Writes `file` by a rename over it: a link a crafted job folder put there is replaced, never written through. */
function writeReplacing(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { flag: 'wx' }); // O_EXCL: not through a link at that name either
  renameSync(temporary, file);
}

function write(dir: string, r: JobRewards, trials: readonly Trial[]): void {
  for (const [i, t] of r.trials.entries())
    writeReplacing(join(trials[i]!.dir, 'lar-rewards.json'), `${JSON.stringify(t, null, 2)}\n`);
  const groups = r.groups.filter((g) => g.advantages);
  if (!groups.length) return;
  const out = join(dir, 'lar-advantages');
  const kind = lstatSync(out, { throwIfNoEntry: false });
  if (kind && !kind.isDirectory()) throw new UsageError(`${out} is not a folder (a link?): not written through`);
  mkdirSync(out, { recursive: true });
  for (const g of groups)
    writeReplacing(join(out, `${slug(g.task)}.jsonl`), g.advantages!.map((a) => JSON.stringify(a)).join('\n') + '\n');
}

export async function cmdHarbor(flags: Flags, io: Io): Promise<number> {
  if (flags.positional.length !== 1) throw new UsageError('usage: lar harbor JOB_FOLDER [--workflow W] [--json]');
  const dir = flags.positional[0]!;
  let trials: Trial[];
  try {
    trials = readJobFolder(dir);
  } catch (e) {
    if (e instanceof JobFolderError) throw new UsageError(e.message);
    throw e;
  }
  const reports = await withBackend(flags, io, async (backend) => {
    const map = new Map<string, TrajectoryReport>();
    for (const t of trials) {
      const report = await reportOf(t, flags, backend);
      if (report) map.set(t.dir, report);
    }
    return map;
  });
  const rewards = jobRewards(trials, reports);
  write(dir, rewards, trials);
  io.out(flags.switches.has('--json') ? JSON.stringify(rewards, null, 2) : formatSummary(dir, rewards));
  return 0;
}
