/**
 * What a terminal session is given and what a run returns: the options, the
 * result and its trajectory form, apart from the session that produces them.
 */
import type { Completion, ToolResult } from '../schema/trajectory';
import type { CapOptions } from './output';
import type { ShellMode } from './process';

export interface TerminalOptions {
  /** The workspace folder: the shell starts here. */
  cwd: string;
  /** The shell's environment, as given by the caller. TERM, PAGER and GIT_PAGER get defaults when absent. */
  env: Record<string, string | undefined>;
  /** Folder for the command files and the full raw output of each command. */
  outputDir: string;
  /** Default: $SHELL from `env`, else /bin/bash, else /bin/sh. */
  shell?: string;
  /** Arguments for the shell (non-login). Default none. */
  shellArgs?: string[];
  cols?: number;
  rows?: number;
  /** How the model's text is capped. */
  cap?: CapOptions;
  /** Default per-command timeout. Default 120 000 ms. */
  timeoutMs?: number;
  /** No output for this long while the command reads the terminal: it waits for input. Default 3000 ms. */
  inputIdleMs?: number;
  /** How long each step of stopping a command (Ctrl-C, end-of-file, killing its job) waits for the shell to come back before the next; after the last, the shell is killed. Default 1500 ms. */
  graceMs?: number;
  /** How long the shell may take to start (rc files included). Default 10 000 ms. */
  startTimeoutMs?: number;
  /** `auto` (default): node-pty when it loads, else pipes; `pty` or `pipe` to insist (tests). */
  mode?: ShellMode | 'auto';
  /**
   * Start the shell through this program (the sandbox: bwrap and its
   * arguments, ending in `--`): `file args... shell shellArgs...`. The shell
   * is then a descendant of the process node-pty started, found after start.
   */
  launcher?: { file: string; args: string[] };
  /**
   * With a launcher: run a copy of the shell made execute-only in this folder
   * (one the sandbox can see). A process that executes a program it cannot
   * read is not dumpable, so the programs the shell runs cannot read its
   * memory, environment or file descriptors in /proc (where the end marker's
   * nonce is), nor ptrace it.
   */
  shellCopyDir?: string;
  /**
   * Where the command files go (default: outputDir). A private folder on a
   * tmpfs (/dev/shm) makes each command's file cost microseconds instead of a
   * file creation on disk; the shell must be able to read it (in the sandbox:
   * mounted read-only).
   */
  scriptDir?: string;
}

export interface RunOptions {
  /**
   * An absolute folder to run this one command in; the shell's own folder is
   * the same afterwards. Passed as a quoted word (see quote.ts), so any
   * name is only a name.
   */
  cwd?: string;
  timeoutMs?: number;
  inputIdleMs?: number;
  signal?: AbortSignal;
}

export interface RunResult {
  exitCode: number | null;
  /**
   * `marker` (the end marker with the child's status was seen), `exit` (the
   * shell itself exited during the command: its status was not observed),
   * `timeout` (interrupted after timeoutMs), or `unobserved` (waiting for
   * input, cancelled, or the shell had to be killed). Only `marker` carries an
   * exit code; the others have exitCode null.
   */
  completion: Completion;
  /** Stripped of escape sequences, binary summarized, capped with head and tail. */
  output: string;
  truncated: boolean;
  /** The full raw output (escape sequences included). */
  outputPath: string;
  durationMs: number;
  /** Bytes of raw output the command produced. */
  outputBytes: number;
  /** The command was reading the terminal with no output for inputIdleMs; it was interrupted. */
  waitingForInput?: boolean;
  /** The caller's AbortSignal stopped it. */
  cancelled?: boolean;
  /** The output looked binary and was summarized. */
  binary?: boolean;
  /** The shell had to be killed; the next run starts a fresh one. */
  shellRestarted?: boolean;
}

export class TerminalBusyError extends Error {
  constructor(running: string) {
    super(
      `the terminal is already running a command (${JSON.stringify(running.slice(0, 80))}); commands run one at a time`,
    );
    this.name = 'TerminalBusyError';
  }
}

/** The trajectory's ToolResult for a run. */
export function toToolResult(r: RunResult): ToolResult {
  return {
    exitCode: r.exitCode,
    completion: r.completion,
    output: r.output,
    outputTruncated: r.truncated,
    outputPath: r.outputPath,
    durationMs: r.durationMs,
    ...(r.shellRestarted ? { shellRestarted: true } : {}),
    ...(r.waitingForInput ? { waitingForInput: true } : {}),
  };
}

/** setTimeout takes at most 2^31 − 1 ms; anything longer fires at once. Every delay given from outside goes through this. */
const MAX_TIMER_MS = 2 ** 31 - 1;
export const timerMs = (ms: number): number => Math.min(Math.max(0, ms), MAX_TIMER_MS);
