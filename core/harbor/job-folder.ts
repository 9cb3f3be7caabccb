/**
 * A Harbor job folder as `lar harbor` reads it: each trial's result (Harbor's
 * TrialResult, only the fields we use, checked) and the lar trajectory its agent
 * left in agent/. Harbor wrote these files, but a trial's agent/ folder holds what
 * the agent wrote, so every file is read bounded and every field is checked.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { MAX_TRAJECTORY_BYTES, readBoundedText } from '../workspace/bounded-read';

const MAX_RESULT_BYTES = 16 * 1024 * 1024;

/** The part of Harbor's TrialResult (harbor/models/trial/result.py) a summary needs. */
const TrialResultFields = z.object({
  task_name: z.string().min(1),
  trial_name: z.string().min(1),
  reward_valid: z.boolean().optional(),
  verifier_result: z
    .object({
      rewards: z
        .record(z.string(), z.union([z.number(), z.null()]))
        .nullable()
        .optional(),
    })
    .nullable()
    .optional(),
  exception_info: z
    .object({ exception_type: z.string(), exception_message: z.string().nullable().optional() })
    .nullable()
    .optional(),
  agent_info: z.object({ name: z.string() }).nullable().optional(),
});

export interface Trial {
  /** The trial's folder. */
  dir: string;
  name: string;
  task: string;
  agent?: string;
  /** Harbor's verifier reward (`reward`, or the only key), when Harbor counts it as valid. */
  reward?: number;
  /** Why there is no usable reward (no verifier result, an error Harbor does not grade …). */
  noReward?: string;
  exception?: string;
  /** The lar trajectory in agent/, as text, and its path relative to the trial. */
  trajectory?: { path: string; text: string };
  /** Why a trajectory that is there could not be read. */
  trajectoryProblem?: string;
  /**
   * The workflow the job gave the agent (`--ak workflow=…`, else LarAgent's default): the
   * trajectory is verified against it, never against one its own header names, which the run wrote.
   */
  workflow?: string;
}

/** LarAgent's default workflow (integrations/harbor/src/lar_harbor/agent.py). */
export const LAR_AGENT_WORKFLOW = 'builtin:terminal-task';

const TrialConfigFields = z.object({
  agent: z
    .object({
      name: z.string().nullable().optional(),
      import_path: z.string().nullable().optional(),
      kwargs: z.record(z.string(), z.unknown()).nullable().optional(),
    })
    .optional(),
});

function configuredWorkflow(dir: string): string | undefined {
  const file = join(dir, 'config.json');
  if (!existsSync(file)) return undefined;
  try {
    const config = TrialConfigFields.safeParse(
      JSON.parse(readBoundedText(file, MAX_RESULT_BYTES, "the trial's config")),
    );
    const agent = config.success ? config.data.agent : undefined;
    const named = agent?.kwargs?.workflow;
    if (typeof named === 'string' && named) return named;
    // `-a lar_harbor:LarAgent` is recorded as the agent's name; an agent config file may use import_path.
    const isLar = [agent?.name, agent?.import_path].some((v) => typeof v === 'string' && v.startsWith('lar_harbor'));
    return isLar ? LAR_AGENT_WORKFLOW : undefined;
  } catch {
    return undefined;
  }
}

export class JobFolderError extends Error {}

function rewardOf(fields: z.infer<typeof TrialResultFields>): { reward?: number; noReward?: string } {
  if (fields.reward_valid === false) return { noReward: 'Harbor marked the reward invalid' };
  const rewards = fields.verifier_result?.rewards;
  if (!rewards) return { noReward: 'no verifier result' };
  const keys = Object.keys(rewards);
  const key = keys.includes('reward') ? 'reward' : keys.length === 1 ? keys[0]! : undefined;
  if (key === undefined) return { noReward: `no "reward" among the verifier's ${keys.length} rewards` };
  const value = rewards[key];
  if (typeof value !== 'number' || !Number.isFinite(value)) return { noReward: `the reward is ${String(value)}` };
  return { reward: value };
}

function trajectoryOf(dir: string): Pick<Trial, 'trajectory' | 'trajectoryProblem'> {
  const agentDir = join(dir, 'agent');
  if (!existsSync(agentDir)) return {};
  const files = readdirSync(agentDir).filter((f) => f.endsWith('.lar.jsonl'));
  if (files.length === 0) return {};
  if (files.length > 1) return { trajectoryProblem: `agent/ holds ${files.length} trajectories (${files.join(', ')})` };
  const path = join('agent', files[0]!);
  try {
    return { trajectory: { path, text: readBoundedText(join(dir, path), MAX_TRAJECTORY_BYTES, 'the trajectory') } };
  } catch (e) {
    return { trajectoryProblem: e instanceof Error ? e.message : String(e) };
  }
}

function readTrial(dir: string): Trial | undefined {
  const file = join(dir, 'result.json');
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readBoundedText(file, MAX_RESULT_BYTES, "the trial's result"));
  } catch (e) {
    throw new JobFolderError(`${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const fields = TrialResultFields.safeParse(parsed);
  if (!fields.success) return undefined; // not a trial's result (the job's own, a stray file)
  const f = fields.data;
  const trial: Trial = { dir, name: f.trial_name, task: f.task_name, ...rewardOf(f), ...trajectoryOf(dir) };
  if (f.agent_info?.name) trial.agent = f.agent_info.name;
  if (f.exception_info) trial.exception = f.exception_info.exception_type;
  const workflow = configuredWorkflow(dir);
  if (workflow) trial.workflow = workflow;
  return trial;
}

/**
 * Harbor's verifier reward for the trajectory at `path` when it is a trial's (`<trial>/agent/*.lar.jsonl`
 * beside `<trial>/result.json`), the reward is valid and in [0, 1], and the trajectory's header names the
 * workflow the job gave the agent (`headerWorkflow`; the run wrote its header): what the editor joins as the outcome.
 */
export function harborRewardFor(path: string, headerWorkflow: unknown): number | undefined {
  if (basename(dirname(path)) !== 'agent') return undefined;
  const trial = dirname(dirname(path));
  if (typeof headerWorkflow !== 'string' || headerWorkflow !== configuredWorkflow(trial)) return undefined;
  const file = join(trial, 'result.json');
  try {
    if (!existsSync(file)) return undefined;
    const fields = TrialResultFields.safeParse(
      JSON.parse(readBoundedText(file, MAX_RESULT_BYTES, "the trial's result")),
    );
    const reward = fields.success ? rewardOf(fields.data).reward : undefined;
    return reward !== undefined && reward >= 0 && reward <= 1 ? reward : undefined;
  } catch {
    return undefined;
  }
}

/** The job's trials, by task then trial name. Throws JobFolderError when `dir` is not a Harbor job folder. */
export function readJobFolder(dir: string): Trial[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new JobFolderError(`${dir} is not a folder`);
  if (!existsSync(join(dir, 'config.json')) || !existsSync(join(dir, 'result.json'))) {
    const jobs = readdirSync(dir).filter(
      (d) => existsSync(join(dir, d, 'config.json')) && existsSync(join(dir, d, 'result.json')),
    );
    const hint = jobs.length ? `: it holds jobs (${jobs.slice(0, 5).join(', ')}); name one` : '';
    throw new JobFolderError(`${dir} is not a Harbor job folder (no config.json and result.json)${hint}`);
  }
  const trials: Trial[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const trial = readTrial(join(dir, entry.name));
    if (trial) trials.push(trial);
  }
  if (trials.length === 0) throw new JobFolderError(`${dir} has no trials with a result.json yet`);
  return trials.sort((a, b) => a.task.localeCompare(b.task) || a.name.localeCompare(b.name));
}
