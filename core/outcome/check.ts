import { spawn } from 'node:child_process';
import type { OutcomeEvent } from '../schema/trajectory';
import type { OutcomeCheck } from '../schema/workflow';
import { capOutput } from '../shell/output';
import { testsRanFrom } from './tests-ran';

/** Environment variables the outcome check keeps: enough to find tools, nothing the agent could have set up. */
const KEPT_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'USER', 'SHELL'];

/**
 * Runs the workflow's outcome check the way a grader would: a fresh,
 * non-interactive `/bin/sh -c` (no rc files, no shell the agent used), in the
 * workspace, with a clean environment (`BASH_ENV`, `ENV` and the rest of the
 * agent's environment are not passed on), stopped at its timeout. When the
 * output is a test runner's we recognise, the number of tests it ran is
 * recorded: a check that ran none is not a pass.
 */
export interface OutcomeSpawn {
  /** Start the check through this program (the sandbox): `file args... /bin/sh -c command`. */
  launcher?: { file: string; args: string[] };
  /** Use `baseEnv` as it is (a sandbox's built environment) instead of picking KEPT_ENV from it. */
  keepEnv?: boolean;
}

export function runOutcomeCheck(
  check: OutcomeCheck,
  workspace: string,
  signal?: AbortSignal,
  baseEnv: NodeJS.ProcessEnv = process.env,
  how: OutcomeSpawn = {},
): Promise<OutcomeEvent> {
  const env: NodeJS.ProcessEnv = {};
  if (how.keepEnv) Object.assign(env, baseEnv);
  else for (const k of KEPT_ENV) if (baseEnv[k] !== undefined) env[k] = baseEnv[k];
  env.CI = 'true';
  const started = Date.now();
  return new Promise((resolve) => {
    const [file, args] = how.launcher
      ? [how.launcher.file, [...how.launcher.args, '/bin/sh', '-c', check.command]]
      : ['/bin/sh', ['-c', check.command]];
    const child = spawn(file, args, { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    // The head and the tail: a test runner prints its summary last, however long its output.
    const HALF = 512 * 1024;
    const head: Buffer[] = [];
    let headSize = 0;
    let tail: Buffer = Buffer.alloc(0);
    let size = 0;
    const collect = (b: Buffer) => {
      size += b.length;
      if (headSize < HALF) {
        const take = b.subarray(0, HALF - headSize);
        head.push(take);
        headSize += take.length;
        b = b.subarray(take.length);
      }
      if (b.length) tail = Buffer.concat([tail, b]).subarray(-HALF);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, check.timeoutMs);
    signal?.addEventListener('abort', () => {
      timedOut = true;
      kill();
    });
    const finish = (exitCode: number | null, error?: string) => {
      clearTimeout(timer);
      // The same head-and-tail cap as command output, so the model and the trajectory see one format.
      const omitted = size - headSize - tail.length;
      const full =
        Buffer.concat(head).toString('utf8') +
        (omitted > 0 ? `\n… ${omitted} bytes not kept …\n` : '') +
        tail.toString('utf8');
      const output = capOutput(full, { maxBytes: 8000 }).text;
      const testsRan = timedOut ? undefined : testsRanFrom(full);
      resolve({
        type: 'outcome',
        command: check.command,
        exitCode: timedOut ? null : exitCode,
        completion: timedOut ? 'timeout' : 'exit',
        output: error ? `${error}\n${output}` : output,
        ...(testsRan !== undefined ? { testsRan } : {}),
        durationMs: Date.now() - started,
        at: new Date().toISOString(),
      });
    };
    child.on('error', (e) => finish(null, `the outcome check could not start: ${e.message}`));
    child.on('close', (code, sig) => finish(code ?? (sig ? 128 : null)));
  });
}
