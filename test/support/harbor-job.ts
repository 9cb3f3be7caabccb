/** Runs the real `harbor` CLI from setup's venv over a task folder, and reads what the job left. */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../devtools/paths';

export interface HarborTrial {
  dir: string;
  name: string;
  task: string;
  reward: number | null;
  exception: string | null;
}

/** `harbor run …` into `jobsDir`; resolves with the job's folder (the only one there) and Harbor's output. */
export function harborRun(
  venv: string,
  jobsDir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ job: string; out: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(venv, 'bin', 'harbor'), ['run', ...args, '-o', jobsDir], {
      cwd: REPO_ROOT,
      // Harbor's LiteLLM asks the internet for a price list at import: this machine has none to give.
      env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True', NO_COLOR: '1', COLUMNS: '200', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const jobs = existsSync(jobsDir)
        ? readdirSync(jobsDir).filter((d) => existsSync(join(jobsDir, d, 'config.json')))
        : [];
      if (jobs.length !== 1)
        reject(new Error(`harbor run left ${jobs.length} jobs in ${jobsDir} (exit ${code}):\n${out.slice(-4000)}`));
      else resolve({ job: join(jobsDir, jobs[0]!), out, code });
    });
  });
}

/** The job's trials as Harbor recorded them in each result.json. */
export function trialsOf(job: string): HarborTrial[] {
  const trials: HarborTrial[] = [];
  for (const entry of readdirSync(job, { withFileTypes: true })) {
    const file = join(job, entry.name, 'result.json');
    if (!entry.isDirectory() || !existsSync(file)) continue;
    const r = JSON.parse(readFileSync(file, 'utf8')) as {
      trial_name: string;
      task_name: string;
      verifier_result?: { rewards?: Record<string, number> } | null;
      exception_info?: { exception_type: string } | null;
    };
    trials.push({
      dir: join(job, entry.name),
      name: r.trial_name,
      task: r.task_name.replace(/^.*\//, ''),
      reward: r.verifier_result?.rewards?.reward ?? null,
      exception: r.exception_info?.exception_type ?? null,
    });
  }
  return trials.sort((a, b) => a.name.localeCompare(b.name));
}

/** Runs `python -c CODE ARGS…` in the venv; resolves with its exit code and output. */
export function python(venv: string, code: string, args: string[] = []): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(join(venv, 'bin', 'python'), ['-c', code, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (c) => resolve({ code: c, out }));
  });
}
