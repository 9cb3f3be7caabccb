/**
 * One run's set-up and tear-down, shared by `lar run` and the editor: the
 * `.lar` paths, the sandbox, the terminal inside it, the rule files, the
 * redaction of secrets, the tool executor and the outcome check; and at the
 * end, every process stopped before the protected paths are put back, with
 * what that did worded once (endNotes). Applications add only how they show
 * a run (a printer, a chat) and how they ask the user.
 */
import { mkdirSync } from 'node:fs';
import { readRules, type Rules } from './rules';
import { newRunId } from './run-id';
import type { AgentOptions } from './loop';
import { RunSandbox, type EndReport } from '../sandbox/run';
import type { RunSandboxOptions } from '../sandbox/run-start';
import type { SandboxSetting } from '../sandbox/plan';
import { describeTallies } from '../sandbox/proxy';
import { describeLaterChanges } from '../sandbox/later-changes';
import { TerminalSession } from '../shell/session';
import type { TerminalOptions } from '../shell/types';
import { pickShell } from '../shell/kinds';
import { createToolExecutor, type CheckMirror } from '../tools/executor';
import type { ToolExecutor } from '../tools/types';
import type { WorkspaceFs } from '../workspace/fs';
import { NodeWorkspaceFs } from '../workspace/node-fs';
import { ensureLarDir, outputDir as outputDirOf, trajectoryFile } from '../workspace/lar-layout';
import { combineRedactors, redact, secretRedactor, valuesRedactor } from '../secrets/redact';
import { outcomeCommand, type Workflow } from '../schema/workflow';
import { McpHub } from '../mcp/hub';
import { sandboxLauncher } from '../mcp/launch';
import { workflowMayUse } from '../mcp/usable';
import type { McpServerConfig } from '../mcp/config';

/** The terminal a run's commands go to: the core's session, or the editor's mirror of it. */
export interface RunTerminal {
  readonly session: TerminalSession;
  /** Ends the shell and everything it started; false when some were still alive after they were killed. */
  end(): Promise<boolean>;
  /** Shows the outcome command run as the check runs it, which does not go through the shell (the editor's terminal). */
  readonly checkMirror?: CheckMirror;
  dispose(): void;
  /** Ends the shell alone: what it started in the background goes on (a run inside its own container). */
  release?(): void;
}

export interface RunSetupOptions<T extends RunTerminal = RunTerminal> {
  workspace: string;
  workflow: Workflow;
  sandbox: SandboxSetting;
  /** Make multiply-linked files their own copies (the user's leave: `--break-hard-links`, lean4Agentic.breakHardLinks). */
  breakHardLinks?: boolean;
  hostEnv: NodeJS.ProcessEnv;
  /** The model server's key: masked wherever it could show. */
  apiKey?: string;
  /** Rule files for the system prompt, workspace-relative; or the rules already read (the editor reads them before, for a rebuilt chat). */
  rules: readonly string[] | Rules;
  runId?: string;
  /** Default `.lar/runs/<runId>.lar.jsonl`. */
  trajectoryPath?: string;
  /** Default `.lar/output/<runId>`. */
  outputDir?: string;
  /** Host folders the sandbox must not see (a rollout's original workspace and group). */
  hidden?: string[];
  /** How files are written (the editor's goes through WorkspaceEdit); default the node file system. */
  makeFs?: (readOnlyPaths: readonly string[]) => WorkspaceFs;
  /** The terminal (the editor's mirrors it); default a plain session. */
  makeTerminal?: (options: TerminalOptions, sandbox: RunSandbox) => T;
  /** Test seams of the sandbox. */
  sandboxOptions?: Partial<RunSandboxOptions>;
  /**
   * MCP servers to start for the run, their variables resolved (core/mcp/config.ts), with the values
   * to mask wherever they could show (env values, headers, secret inputs).
   */
  mcp?: { servers: readonly McpServerConfig[]; secrets: readonly string[] };
}

/** A run ready to start: what runAgent needs of it, and its end. */
export interface OpenRun<T extends RunTerminal = RunTerminal> {
  runId: string;
  trajectoryPath: string;
  outputDir: string;
  sandbox: RunSandbox;
  /** The terminal `makeTerminal` made (its own type: the editor's mirror has more than a RunTerminal). */
  terminal: T;
  rules: Rules;
  /** Masks the key and the host's secret-looking values. */
  redact: (text: string) => string;
  /** The parts of runAgent's options that come from the set-up. */
  agentOptions: Pick<
    AgentOptions,
    'workspace' | 'trajectoryPath' | 'execute' | 'runOutcomeCheck' | 'sandbox' | 'rules' | 'redact' | 'runId' | 'mcp'
  >;
  /** Stops every process of the run, then puts back what it must not have changed; safe to call twice. */
  close(): Promise<EndReport>;
}

const isRules = (r: readonly string[] | Rules): r is Rules => !Array.isArray(r);

const plainTerminal = (options: TerminalOptions): RunTerminal => {
  const session = new TerminalSession(options);
  return {
    session,
    end: () => session.close(),
    dispose: () => session.dispose(),
    release: () => session.dispose(true),
  };
};

export function openRun(o: RunSetupOptions & { makeTerminal?: undefined }): Promise<OpenRun>;
export function openRun<T extends RunTerminal>(
  o: RunSetupOptions<T> & Required<Pick<RunSetupOptions<T>, 'makeTerminal'>>,
): Promise<OpenRun<T>>;
export async function openRun(o: RunSetupOptions): Promise<OpenRun> {
  ensureLarDir(o.workspace);
  const runId = o.runId ?? newRunId();
  const trajectoryPath = o.trajectoryPath ?? trajectoryFile(o.workspace, runId);
  const outputDir = o.outputDir ?? outputDirOf(o.workspace, runId);
  mkdirSync(outputDir, { recursive: true });
  const shell = pickShell(o.hostEnv);
  const sandbox = await RunSandbox.open({
    workspace: o.workspace,
    workflow: o.workflow,
    setting: o.sandbox,
    breakHardLinks: o.breakHardLinks === true,
    hostEnv: o.hostEnv,
    shell,
    outputDir,
    ...(o.hidden ? { hidden: o.hidden } : {}),
    ...o.sandboxOptions,
  });
  let terminal: RunTerminal;
  try {
    terminal = (o.makeTerminal ?? plainTerminal)(
      { cwd: o.workspace, outputDir, shell, ...sandbox.terminal() },
      sandbox,
    );
  } catch (e) {
    throw await failed(e, () => sandbox.dispose());
  }
  const servers = mcpServers(o, sandbox);
  const close = closer(terminal, sandbox, () => servers.end());
  try {
    const rules = isRules(o.rules) ? o.rules : readRules(o.workspace, o.rules);
    // Commands inherit the environment: tokens they print are masked before the trajectory and the model see
    // them; a sandboxed command does not have the host's secrets, but a file it reads may hold one.
    const key = o.apiKey;
    const mask = combineRedactors(
      (t) => redact(t, key),
      secretRedactor(o.hostEnv),
      // Known credentials: from 4 characters, and as they read inside a JSON string too.
      valuesRedactor(o.mcp?.secrets ?? []),
    );
    const hub = await servers.start(mask);
    const fs = (o.makeFs ?? ((ro) => new NodeWorkspaceFs(o.workspace, ro)))(sandbox.readOnlyPaths);
    // An outcome judged outside the run has no command a call could run as the check.
    const check = outcomeCommand(o.workflow);
    const execute = createToolExecutor({
      fs,
      terminal: terminal.session,
      limits: sandbox.limits,
      ...(check && {
        check: {
          command: check.command,
          run: (s: AbortSignal | undefined) => sandbox.checkNow(s),
          ...(terminal.checkMirror ? { mirror: terminal.checkMirror } : {}),
        },
      }),
      ...(sandbox.refusal ? { refuseCommands: sandbox.refusal } : {}),
    });
    return ready({
      runId,
      trajectoryPath,
      outputDir,
      sandbox,
      terminal,
      rules,
      redact: mask,
      execute,
      close,
      workspace: o.workspace,
      endServers: () => servers.end(),
      ...(hub ? { mcp: hub } : {}),
    });
  } catch (e) {
    throw await failed(e, close);
  }
}

/** The run's MCP servers: started once the sandbox is open, ended first (one still running could change the workspace while it is put back). */
function mcpServers(
  o: RunSetupOptions,
  sandbox: RunSandbox,
): { start(mask: (t: string) => string): Promise<McpHub | undefined>; end(): Promise<void> } {
  let hub: McpHub | undefined;
  const servers = sandboxLauncher(sandbox, o.workspace, o.hostEnv);
  return {
    start: async (mask) => {
      if (!o.mcp?.servers.length) return undefined;
      hub = await McpHub.start({
        servers: o.mcp.servers,
        workspace: o.workspace,
        launcher: servers.launcher,
        networkGrants: o.workflow.mcp?.network ?? [],
        usable: (name) => workflowMayUse(o.workflow, name),
        mask,
      });
      return hub;
    },
    end: async () => {
      await hub?.close();
      await servers.dispose();
    },
  };
}

/** The run's end, once however often it is asked for: its processes stopped, then what it must not have changed put back. */
function closer(terminal: RunTerminal, sandbox: RunSandbox, endServers: () => Promise<void>): () => Promise<EndReport> {
  let closing: Promise<EndReport> | undefined;
  return () => {
    closing ??= (async () => {
      await endServers().catch(() => undefined);
      if (sandbox.summary.container && terminal.release) {
        // In its own container, a server the agent started is part of its work: the task's tests, run
        // after the agent in the same container, may need it. Nothing is put back that it could race.
        terminal.release();
      } else {
        // Every process gone before anything is put back (one still dying could race the restore).
        await terminal.end().catch(() => false);
        terminal.dispose();
      }
      return sandbox.dispose().catch(endFailed);
    })();
    return closing;
  };
}

/** The report of an end that itself failed: nothing known put back, and why. */
function endFailed(e: unknown): EndReport {
  return { restored: [], quarantinedRepositories: [], error: e instanceof Error ? e.message : String(e) };
}

/** A set-up that failed after the sandbox opened: everything stopped and put back first, and what that did said with the error. */
async function failed(e: unknown, end: () => Promise<EndReport>): Promise<Error> {
  const report = await end().catch(endFailed);
  const notes = endNotes(report).map((n) => n.text);
  const message = e instanceof Error ? e.message : String(e);
  return new Error(notes.length ? `${message} (${notes.join('; ')})` : message, { cause: e });
}

/** The open run, with the parts of runAgent's options that come from it. */
function ready(
  r: Omit<OpenRun, 'agentOptions'> & {
    execute: ToolExecutor;
    workspace: string;
    endServers: () => Promise<void>;
    mcp?: McpHub;
  },
): OpenRun {
  const { execute, workspace, endServers, mcp, ...open } = r;
  const { sandbox, terminal } = open;
  return {
    ...open,
    agentOptions: {
      workspace,
      trajectoryPath: open.trajectoryPath,
      execute,
      // A process of the run still alive after it was killed could change the workspace under the check: then it does not run.
      runOutcomeCheck: (s) =>
        sandbox.outcome(async () => {
          await endServers().catch(() => undefined);
          return terminal.end();
        }, s),
      sandbox: sandbox.summary,
      rules: open.rules,
      redact: open.redact,
      runId: open.runId,
      ...(mcp ? { mcp } : {}),
    },
  };
}

/** What a run's end did, worded once for every application: each is a line to show at its level. */
export interface EndNote {
  level: 'info' | 'warn' | 'error';
  kind: 'restored' | 'quarantined' | 'network' | 'error' | 'later';
  text: string;
  /** Below the line: the diffs of the changed files that run later. */
  detail?: string;
}

export const LATER_TITLE = 'changed files that run later';
export const LATER_WHY = '(your tools may execute them outside the sandbox: read the diffs before you commit)';

export function endNotes(end: EndReport): EndNote[] {
  const notes: EndNote[] = [];
  if (end.restored.length)
    notes.push({
      level: 'warn',
      kind: 'restored',
      text: `put back what the run changed in protected paths: ${end.restored.join(', ')}`,
    });
  if (end.quarantinedRepositories.length) {
    notes.push({
      level: 'warn',
      kind: 'quarantined',
      text: `moved the git repositories the run created to .lar/quarantine (their config would run outside the sandbox; move one back if you trust it): ${end.quarantinedRepositories.join(', ')}`,
    });
  }
  if (end.network?.length)
    notes.push({
      level: 'info',
      kind: 'network',
      text: `network through the allowlist: ${describeTallies(end.network)}`,
    });
  if (end.error)
    notes.push({ level: 'error', kind: 'error', text: `the protected paths could not all be put back: ${end.error}` });
  if (end.later?.length) {
    notes.push({
      level: 'warn',
      kind: 'later',
      text: `${LATER_TITLE} ${LATER_WHY}:`,
      detail: describeLaterChanges(end.later),
    });
  }
  return notes;
}
