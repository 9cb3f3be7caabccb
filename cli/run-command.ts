/** `lar run`: checks each flag of the agent's run and hands them to runFromCli. */
import { TOOL_FORMATS, type ToolFormatSetting } from '../core/model/formats';
import { loadWorkflowRef } from '../core/workflow/resolve';
import type { Flags, Io } from './args';
import { UsageError } from './read-input';
import { COLOR, PLAIN } from './report-format';
import { runFromCli } from './run';
import type { RunArgs } from './run-once';
import { readTaskFrom } from './task-input';
import { readMcpConfig, resolveForRun } from './mcp-config';

export async function cmdRun(flags: Flags, io: Io): Promise<number> {
  const taskFlag = flags.values.get('--task');
  if (!taskFlag || flags.positional.length)
    throw new UsageError('usage: lar run --task TEXT|- [options] (see lar --help)');
  const w = flags.values.get('--workflow') ?? 'builtin:default-coding';
  const wf = loadWorkflowRef(w, process.cwd());
  if ('error' in wf) throw new UsageError(wf.error);
  const enforcement = flags.values.get('--enforcement') ?? 'block';
  if (enforcement !== 'block' && enforcement !== 'warn') throw new UsageError('--enforcement must be block or warn');
  const toolFormat = flags.values.get('--tool-format');
  if (toolFormat !== undefined && !(TOOL_FORMATS as readonly string[]).includes(toolFormat))
    throw new UsageError(`--tool-format must be one of ${TOOL_FORMATS.join(', ')}`);
  const contextLength = flags.values.get('--context-length');
  if (
    contextLength !== undefined &&
    !(
      /^[0-9]+$/.test(contextLength) &&
      (Number(contextLength) === 0 || Number(contextLength) >= 1024) &&
      Number(contextLength) <= 10_000_000
    )
  )
    throw new UsageError('--context-length must be 0 (ask the server) or a number of tokens from 1024 to 10000000');
  const thinking = flags.values.get('--thinking');
  if (thinking !== undefined && thinking !== 'auto' && thinking !== 'on' && thinking !== 'off')
    throw new UsageError('--thinking must be auto, on or off');
  const maxSteps = flags.values.get('--max-steps');
  if (maxSteps !== undefined && !/^[1-9][0-9]*$/.test(maxSteps))
    throw new UsageError('--max-steps must be a positive integer');
  const maxRepeats = flags.values.get('--max-repeated-failures');
  if (maxRepeats !== undefined && !(/^[0-9]+$/.test(maxRepeats) && Number(maxRepeats) >= 2))
    throw new UsageError('--max-repeated-failures must be an integer of at least 2');
  const group = groupAndSampling(flags);
  const sandbox = flags.values.get('--sandbox') ?? 'auto';
  if (sandbox !== 'auto' && sandbox !== 'required' && sandbox !== 'off' && sandbox !== 'container')
    throw new UsageError('--sandbox must be auto, required, off or container');
  const workspace = flags.values.get('--workspace') ?? process.cwd();
  const mcpFile = flags.values.get('--mcp-config');
  const mcp = mcpFile ? readMcpConfig(mcpFile, process.cwd()) : undefined;
  // Every server's variables checked now, so a missing input stops the run before anything starts.
  if (mcp) for (const p of resolveForRun(mcp, workspace, process.env).problems) io.err(`lar run: ${mcpFile}: ${p}`);
  const task = taskFlag === '-' ? await taskFromStdin(io) : taskFlag;
  const out = flags.values.get('--out');
  const model = flags.values.get('--model');
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  return runFromCli(
    {
      task,
      endpoint: flags.values.get('--endpoint') ?? process.env.LAR_ENDPOINT ?? 'http://127.0.0.1:30000/v1',
      ...((model ?? process.env.LAR_MODEL) ? { model: (model ?? process.env.LAR_MODEL)! } : {}),
      workspace,
      ...(mcp ? { mcp } : {}),
      ...(out ? { out } : {}),
      workflow: wf.workflow,
      workflowRef: w.startsWith('builtin:') ? w : wf.workflow,
      enforcement,
      yes: flags.switches.has('--yes'),
      breakHardLinks: flags.switches.has('--break-hard-links'),
      ...(maxSteps ? { maxSteps: Number(maxSteps) } : {}),
      ...(maxRepeats ? { maxRepeatedFailures: Number(maxRepeats) } : {}),
      ...(toolFormat ? { toolFormat: toolFormat as ToolFormatSetting } : {}),
      ...(contextLength ? { contextLength: Number(contextLength) } : {}),
      ...(thinking ? { thinking: thinking } : {}),
      ...(flags.values.has('--rules')
        ? {
            rules: (flags.values.get('--rules') ?? '')
              .split(',')
              .map((r) => r.trim())
              .filter(Boolean),
          }
        : {}),
      ...group,
      sandbox,
    },
    { out: (s) => process.stdout.write(s), err: io.err },
    io.color ? COLOR : PLAIN,
    ac.signal,
  );
}

/** The group's, the sampling's and the training data's flags, checked: `--rollouts`, `--concurrency`, `--keep`, `--max-time`, `--temperature`, `--seed`, `--record-tokens`. */
function groupAndSampling(
  flags: Flags,
): Pick<RunArgs, 'rollouts' | 'concurrency' | 'keep' | 'maxTimeSec' | 'temperature' | 'seed' | 'recordTokens'> {
  const rollouts = flags.values.get('--rollouts');
  if (rollouts !== undefined && !(/^[1-9][0-9]*$/.test(rollouts) && Number(rollouts) <= 64))
    throw new UsageError('--rollouts must be an integer from 1 to 64');
  const concurrency = flags.values.get('--concurrency');
  if (concurrency !== undefined && !(/^[1-9][0-9]*$/.test(concurrency) && Number(concurrency) <= 16))
    throw new UsageError('--concurrency must be an integer from 1 to 16');
  if ((concurrency !== undefined || flags.switches.has('--keep')) && rollouts === undefined)
    throw new UsageError('--concurrency and --keep go with --rollouts N');
  const maxTime = flags.values.get('--max-time');
  if (maxTime !== undefined && !(/^[1-9][0-9]*$/.test(maxTime) && Number(maxTime) <= 86_400))
    throw new UsageError('--max-time must be a whole number of seconds from 1 to 86400');
  const temperature = flags.values.get('--temperature');
  if (temperature !== undefined && !(/^\d+(\.\d+)?$/.test(temperature) && Number(temperature) <= 2))
    throw new UsageError('--temperature must be a number from 0 to 2');
  const seed = flags.values.get('--seed');
  if (seed !== undefined && !(/^\d+$/.test(seed) && Number(seed) < 2 ** 31))
    throw new UsageError('--seed must be an integer from 0 to 2147483647');
  return {
    ...(rollouts ? { rollouts: Number(rollouts) } : {}),
    ...(concurrency ? { concurrency: Number(concurrency) } : {}),
    ...(flags.switches.has('--keep') ? { keep: true } : {}),
    ...(maxTime !== undefined ? { maxTimeSec: Number(maxTime) } : {}),
    ...(temperature !== undefined ? { temperature: Number(temperature) } : {}),
    ...(seed !== undefined ? { seed: Number(seed) } : {}),
    ...(flags.switches.has('--record-tokens') ? { recordTokens: true } : {}),
  };
}

/** `--task -`: read last, after every other flag is checked, so a usage error never waits on stdin. */
function taskFromStdin(io: Io): Promise<string> {
  if (process.stdin.isTTY) io.err('lar run: reading the task from standard input (end it with Ctrl-D)');
  return readTaskFrom(process.stdin);
}
