import { readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { ToolName } from '../schema/tools';
import { isFileTool, runFileTool } from './file-tools';
import type { TerminalSession } from '../shell/session';
import { toToolResult } from '../shell/types';
import type { ToolContext, ToolOutcome } from './types';
import { isInside, type WorkspaceFs } from '../workspace/fs';
import type { ToolExecutor } from './types';
import { ShellTextError } from '../shell/quote';
import { testsRanFrom } from '../outcome/tests-ran';
import type { SandboxLimits } from '../sandbox/limits';
import type { OutcomeEvent } from '../schema/trajectory';
import { normalizeSpaces } from '../policy/command';

/** What the model reads of a command: the command, its output, how it ended, what it changed, where the rest is. */
export function commandObservation(
  command: string,
  output: string,
  end: {
    completion?: string;
    exitCode?: number | null;
    waitingForInput?: boolean;
    shellRestarted?: boolean;
    killed?: string;
  },
  files: readonly string[] = [],
  fullOutput?: string,
): string {
  const head =
    end.completion === 'exit' && (end.exitCode === null || end.exitCode === undefined)
      ? "the shell ended during the command; the command's exit code was not observed"
      : end.completion === 'marker' || end.completion === 'exit'
        ? `exit code ${end.exitCode}`
        : end.waitingForInput
          ? 'the command waited for input and was interrupted (run it non-interactively)'
          : end.completion === 'timeout'
            ? 'the command timed out and was stopped'
            : "the command's end was not observed";
  const restarted = end.shellRestarted
    ? '\n[the shell was restarted to stop it: processes that earlier commands left running are gone; the folder and exported variables are kept]'
    : '';
  const killed = end.killed ? `\n[killed: ${end.killed}]` : '';
  const changed = files.length
    ? `\nfiles changed: ${files.slice(0, 20).join(', ')}${files.length > 20 ? ` and ${files.length - 20} more` : ''}`
    : '';
  const full = fullOutput ? `\nfull output: ${fullOutput} (read_file it for the omitted part)` : '';
  return `$ ${command}\n${output}${output.endsWith('\n') || !output ? '' : '\n'}[${head}]${killed}${restarted}${changed}${full}`;
}

const notRun = (error: string): ToolOutcome => ({
  status: 'error',
  result: { error },
  observation: `Not run: ${error}`,
});

function canonical(path: string): { ok: true; path: string } | { ok: false; error: string } {
  try {
    return { ok: true, path: realpathSync.native(path) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** Most files the change scan looks at; past it, a command's changes are not tracked. */
const SCAN_LIMIT = 20_000;
const SKIP = new Set(['.git', 'node_modules', '.lar']);

/** Workspace-relative path → modification time and size, for seeing which files a command changed. */
export function snapshot(root: string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  const walk = (dir: string, rel: string): boolean => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return true;
    }
    for (const name of names) {
      if (SKIP.has(name)) continue;
      const abs = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      let st;
      try {
        st = statSync(abs, { throwIfNoEntry: false });
      } catch {
        continue;
      }
      if (!st) continue;
      if (st.isDirectory()) {
        if (!walk(abs, r)) return false;
      } else {
        out.set(r, `${st.mtimeMs}:${st.size}`);
        if (out.size > SCAN_LIMIT) return false;
      }
    }
    return true;
  };
  return walk(root, '') ? out : undefined;
}

/** Files added, changed or removed between two snapshots, sorted. */
export function changedBetween(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed = new Set<string>();
  for (const [k, v] of after) if (before.get(k) !== v) changed.add(k);
  for (const k of before.keys()) if (!after.has(k)) changed.add(k);
  return [...changed].sort();
}

export interface ExecutorParts {
  fs: WorkspaceFs;
  terminal: TerminalSession;
  /** Default timeout of a command when the call gives none. */
  commandTimeoutMs?: number;
  /** Set when no command may run (the workflow requires the sandbox and there is none): why. */
  refuseCommands?: string;
  /** The sandbox's bounds (RunSandbox.limits): each command is watched, and its result says when a limit stopped it. */
  limits?: SandboxLimits | undefined;
  /**
   * The workflow's outcome command, and how the check runs it (RunSandbox.checkNow): a call of
   * exactly that command (after whitespace normalization, with no `cwd`) runs as the check
   * does, not in the agent's shell, where a function, an alias or an exported setting named
   * like it would decide what the stage reward counts as the tests.
   */
  check?: { command: string; run: (signal?: AbortSignal) => Promise<OutcomeEvent>; mirror?: CheckMirror };
}

/** Where the user sees the outcome command run as the check runs it (the editor's terminal): it never goes through the shell. */
export interface CheckMirror {
  start(command: string): void;
  end(output: string, exitCode: number | null): void;
}

/** What the model reads of the outcome command run as the check runs it (live, and in a chat rebuilt from the file). */
export function checkObservation(
  command: string,
  output: string,
  completion: string | undefined,
  exitCode: number | null | undefined,
  files: readonly string[],
): string {
  const how =
    "This is the outcome check's own command: the host runs it as the check runs it, in a fresh shell from the workspace folder with the workflow's environment, not in your terminal (what you set there does not apply).";
  return `${how}\n${commandObservation(command, output, { completion: completion ?? 'exit', exitCode }, files)}`;
}

/** The outcome command, run as the check runs it (see ExecutorParts.check); the model is told how it ran. */
async function runAsCheck(
  check: NonNullable<ExecutorParts['check']>,
  command: string,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const before = snapshot(ctx.workspace);
  check.mirror?.start(command);
  const e = await check.run(ctx.signal);
  check.mirror?.end(e.output ?? '', e.exitCode ?? null);
  const after = before ? snapshot(ctx.workspace) : undefined;
  const files = before && after ? changedBetween(before, after) : [];
  const output = e.output ?? '';
  const result = {
    exitCode: e.exitCode,
    ...(e.completion ? { completion: e.completion } : {}),
    output,
    ...(e.durationMs !== undefined ? { durationMs: e.durationMs } : {}),
    ...(e.sandboxed !== undefined ? { sandboxed: e.sandboxed } : {}),
    ...(e.testsRan !== undefined ? { testsRan: e.testsRan } : {}),
    ranAsCheck: true,
    ...(files.length ? { filesChanged: files } : {}),
  };
  const status = e.completion === 'timeout' ? 'timeout' : ctx.signal?.aborted ? 'interrupted' : 'ok';
  return { status, result, observation: checkObservation(command, output, e.completion, e.exitCode, files) };
}

/** A run_command call's arguments, once checked. */
interface CommandArgs {
  command: string;
  cwd: string | undefined;
  timeoutMs: number | undefined;
}

/**
 * The loop runs only calls whose arguments fit the schema; the executor is also
 * called directly (tests, other hosts), so it checks again what it hands a shell.
 */
function commandArgs(args: Record<string, unknown>): CommandArgs | { error: string } {
  if (typeof args.command !== 'string' || args.command === '')
    return { error: 'run_command needs a non-empty string "command"' };
  // Shells drop a NUL and run the rest: `su\0do` would run sudo while the policy saw no `sudo`.
  if (args.command.includes('\0'))
    return {
      error: 'the command has a NUL character, which a shell would drop (what runs would differ from what was checked)',
    };
  if (args.cwd !== undefined && typeof args.cwd !== 'string')
    return { error: '"cwd" must be a workspace-relative folder' };
  if (args.timeoutMs !== undefined && !(Number.isSafeInteger(args.timeoutMs) && (args.timeoutMs as number) > 0))
    return { error: '"timeoutMs" must be a positive whole number of milliseconds' };
  return {
    command: args.command,
    cwd: args.cwd,
    timeoutMs: typeof args.timeoutMs === 'number' ? args.timeoutMs : undefined,
  };
}

/**
 * The folder a command runs in, confined to the workspace. `.` too: the shell's own folder is
 * wherever earlier commands left it, the workspace is where `.` is.
 */
async function commandFolder(
  fs: WorkspaceFs,
  cwd: string,
  workspace: string,
): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  const where = await fs.realPath(cwd);
  if (!where.ok) return { ok: false, error: where.error };
  if (!where.value.exists) return { ok: false, error: `the folder "${cwd}" does not exist` };
  const st = await fs.stat(cwd);
  if (!st.ok) return { ok: false, error: st.error };
  if (st.value.kind !== 'dir') return { ok: false, error: `"${cwd}" is not a folder` };
  // The folder as the system spells it (case and Unicode form on macOS), which is what the
  // shell's check compares with; confined again, as a link may have changed meanwhile.
  const real = canonical(where.value.absolute);
  const root = canonical(workspace);
  if (!real.ok) return { ok: false, error: `the folder "${cwd}" cannot be resolved: ${real.error}` };
  if (!root.ok || !isInside(root.path, real.path, process.platform === 'darwin' || process.platform === 'win32'))
    return { ok: false, error: `"${cwd}" leads out of the workspace` };
  return { ok: true, path: real.path };
}

/**
 * The tools the agent runs in the workspace: file tools through the confined
 * WorkspaceFs, commands through the terminal session. A command's changed
 * files are found by comparing the workspace before and after it, so the
 * verifier knows when tests ran after the last change.
 */
export function createToolExecutor(parts: ExecutorParts): ToolExecutor {
  return async (tool: ToolName, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> => {
    if (isFileTool(tool)) return runFileTool(parts.fs, tool, args, ctx);
    if (tool !== 'run_command')
      return {
        status: 'error',
        result: { error: `${tool} is not a workspace tool` },
        observation: `${tool} is not a workspace tool`,
      };
    const a = commandArgs(args);
    if ('error' in a) return notRun(a.error);
    if (parts.refuseCommands) return notRun(parts.refuseCommands);
    let cwd: string | undefined;
    if (a.cwd !== undefined) {
      const folder = await commandFolder(parts.fs, a.cwd, ctx.workspace);
      if (!folder.ok) return notRun(folder.error);
      // Handed to the terminal as a folder, never as text of the command: it quotes it.
      cwd = folder.path;
    }
    if (parts.check && cwd === undefined && normalizeSpaces(a.command) === normalizeSpaces(parts.check.command))
      return runAsCheck(parts.check, a.command, ctx);
    return runInTerminal(parts, a.command, cwd, a.timeoutMs, ctx);
  };
}

/** A command run in the agent's shell, watched by the sandbox's limits, with the files it changed. */
async function runInTerminal(
  parts: ExecutorParts,
  command: string,
  cwd: string | undefined,
  timeoutMs: number | undefined,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const before = snapshot(ctx.workspace);
  const watch = parts.limits?.watch(() => parts.terminal.shellPid);
  let killed: string | undefined;
  let r;
  try {
    r = await parts.terminal.run(command, {
      ...(cwd !== undefined ? { cwd } : {}),
      timeoutMs: timeoutMs ?? parts.commandTimeoutMs ?? 120_000,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } catch (e) {
    if (e instanceof ShellTextError) return notRun(e.message);
    throw e;
  } finally {
    killed = watch?.end();
  }
  const after = before ? snapshot(ctx.workspace) : undefined;
  // How many tests ran, when the output is a test runner's: the outcome command's own run in
  // a stage counts only when it ran tests (exit condition outcome_ran).
  const testsRan = r.binary ? undefined : testsRanFrom(r.output);
  const result = {
    ...toToolResult(r),
    sandboxed: parts.terminal.launched,
    ...(testsRan !== undefined ? { testsRan } : {}),
    ...(killed ? { killed } : {}),
  };
  const files = before && after ? changedBetween(before, after) : [];
  if (files.length) result.filesChanged = files;
  const status = r.cancelled ? 'interrupted' : r.completion === 'timeout' ? 'timeout' : 'ok';
  // Where the rest is, when the model saw only the head and tail (and can read it: inside the workspace).
  const saved = relative(ctx.workspace, r.outputPath);
  const full = r.truncated && !saved.startsWith('..') && !isAbsolute(saved) ? saved.split(sep).join('/') : undefined;
  return {
    status,
    result,
    observation: commandObservation(
      command,
      r.output,
      {
        completion: r.completion,
        exitCode: r.exitCode,
        waitingForInput: r.waitingForInput,
        shellRestarted: r.shellRestarted,
        ...(killed ? { killed } : {}),
      },
      files,
      full,
    ),
  };
}
