/**
 * The checks decidable before a call runs, as a pure function of (policy, stage, sandbox, call): the
 * gate and the verdict after the run share it, so they cannot disagree. Lean counterpart: lean/Lar/Checks.lean.
 */
import { ToolArgs, PATH_ARGS, isToolName, type ToolName } from '../schema/tools';
import { isMcpName, isMcpPattern } from '../schema/mcp';
import { globMatch } from '../policy/glob';
import { ALWAYS_READ_ONLY, readOnlyPathOf, transitionsFrom, type Stage, type Workflow } from '../schema/workflow';
import type { SandboxRecord } from '../schema/trajectory';
import { argsSurelyValid } from '../schema/fast-args';
import { CommandView, compilePatterns, firstMatch, type CompiledPatterns } from '../policy/command';
import { normalizeWorkspacePath, type PathVerdict } from '../policy/path';
import { fail, pass, type Verdict } from './checks';
import type { ProposedCall, VerdictCache, VerdictOut } from './types';

/** What the pre-checks read of a workflow, looked up and compiled once per run. */
export interface CallPolicy {
  readonly workflow: Workflow;
  readonly stageById: ReadonlyMap<string, Stage>;
  readonly terminal: ReadonlySet<string>;
  readonly deny: CompiledPatterns;
  readonly ask: CompiledPatterns;
  readonly paths: CompiledPatterns;
  /**
   * What the policy says of each command line and path seen (they repeat: `npm test`, the files
   * being edited), so the ~80 default patterns are matched once per distinct text, not per call.
   */
  readonly seen: PolicyMemo;
}

interface CommandPolicy {
  denied: string | undefined;
  ask: string | undefined;
}

interface PathPolicy {
  normal: PathVerdict;
  denied: string | undefined;
  readOnly: string | undefined;
}

/** Answers of the policy by text, bounded: a run of ever-new long commands must not grow it without end. */
class PolicyMemo {
  private readonly commands = new Map<string, CommandPolicy>();
  private readonly paths = new Map<string, PathPolicy>();

  command(policy: CallPolicy, line: string): CommandPolicy {
    let c = this.commands.get(line);
    if (c) return c;
    const view = new CommandView(line);
    const denied = firstMatch(policy.deny, view);
    c = { denied, ask: denied === undefined ? firstMatch(policy.ask, view) : undefined };
    remember(this.commands, line, c);
    return c;
  }

  path(policy: CallPolicy, p: string): PathPolicy {
    let r = this.paths.get(p);
    if (r) return r;
    const normal = normalizeWorkspacePath(p);
    const n = normal.ok ? normal.normalized : undefined;
    r = {
      normal,
      denied: n === undefined ? undefined : policy.paths.find(([, m]) => m(n))?.[0],
      readOnly: n === undefined ? undefined : readOnlyPathOf(policy.workflow, n),
    };
    remember(this.paths, p, r);
    return r;
  }
}

const MEMO_ENTRIES = 4096;
const MEMO_KEY_CHARS = 1024;

function remember<T>(map: Map<string, T>, key: string, value: T): void {
  if (key.length > MEMO_KEY_CHARS) return;
  if (map.size >= MEMO_ENTRIES) map.clear();
  map.set(key, value);
}

export interface PreChecked {
  verdicts: Verdict[];
  /** The `ask` pattern a command matches (only when no deny pattern does). */
  askPattern?: string;
}

/** The tools that change files: protected and always-read-only paths are refused to them. */
const WRITE_TOOLS: ReadonlySet<string> = new Set(['write_file', 'edit_file']);

export function compileCallPolicy(workflow: Workflow): CallPolicy {
  return {
    workflow,
    stageById: new Map(workflow.stages.map((s) => [s.id, s])),
    terminal: new Set(workflow.terminal),
    deny: compilePatterns(workflow.policy.commands.deny),
    ask: compilePatterns(workflow.policy.commands.ask),
    paths: compilePatterns(workflow.policy.paths.deny),
    seen: new PolicyMemo(),
  };
}

/**
 * The pre-run checks in the order of docs/rewards.md, made in `stage` (undefined once the run
 * has ended) for a run whose header records `sandbox`.
 */
export function preChecks(
  policy: CallPolicy,
  stage: Stage | undefined,
  sandbox: SandboxRecord | undefined,
  call: ProposedCall,
  cache: VerdictCache,
  mcpTools: ReadonlyMap<string, string> = NO_MCP_TOOLS,
): PreChecked {
  const verdicts: Verdict[] = [];
  const askPattern = pushPreChecks(verdicts, policy, stage, sandbox, call, cache, mcpTools);
  return askPattern === undefined ? { verdicts } : { verdicts, askPattern };
}

/** The same, pushed onto `verdicts` (the verifier's hot path reuses one buffer); returns the `ask` pattern. */
export function pushPreChecks(
  verdicts: VerdictOut,
  policy: CallPolicy,
  stage: Stage | undefined,
  sandbox: SandboxRecord | undefined,
  call: ProposedCall,
  cache: VerdictCache,
  mcpTools: ReadonlyMap<string, string> = NO_MCP_TOOLS,
): string | undefined {
  const { tool, args } = call;

  verdicts.push(
    stage
      ? pass('tool.run_open')
      : fail('tool.run_open', `the run already ended with a submit; no ${tool} call can follow it`, ['tool']),
  );

  if (isMcpName(tool)) {
    mcpVerdicts(stage, call, mcpTools, verdicts);
    return undefined;
  }
  if (!isToolName(tool)) {
    verdicts.push(
      fail(
        'tool.known',
        `"${tool}" is not a tool; the tools are run_command, read_file, write_file, edit_file, list_files, search, enter_stage and submit`,
        ['tool'],
      ),
    );
    return undefined;
  }
  verdicts.push(pass('tool.known'));

  const argsVerdict = argsVerdictOf(tool, call);
  verdicts.push(argsVerdict);
  if (stage) verdicts.push(permittedVerdict(stage, tool));
  if (!argsVerdict.ok) return undefined;
  const a = args as Record<string, unknown>;

  if (tool === 'enter_stage' && stage) verdicts.push(transitionVerdict(policy, stage, a.stage as string, cache));
  if (tool === 'submit' && stage) verdicts.push(submitVerdict(policy, stage));
  let askPattern: string | undefined;
  if (tool === 'run_command') askPattern = pushCommandVerdict(policy, a.command as string, verdicts);
  if (PATH_ARGS[tool].length) verdicts.push(pathVerdict(policy, tool, a));
  // Decided from the header, so the gate and the verdict after the run agree: the run's
  // commands either were confined or were not.
  if (tool === 'run_command') verdicts.push(sandboxRequiredVerdict(policy.workflow, sandbox));
  return askPattern;
}

/** `tool.args`: the argument text was JSON and the arguments match the tool's schema. */
function argsVerdictOf(tool: ToolName, call: ProposedCall): Verdict {
  if (call.argsError !== undefined)
    return fail('tool.args', `the arguments are not valid JSON: ${call.argsError}`, ['args']);
  if (argsSurelyValid(tool, call.args)) return pass('tool.args');
  const r = ToolArgs[tool].safeParse(call.args);
  if (r.success) return pass('tool.args');
  const issue = r.error.issues[0]!;
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const where = path.length ? `"${path.join('.')}": ` : '';
  return fail('tool.args', `bad arguments for ${tool}: ${where}${issue.message}`, ['args', ...path]);
}

const NO_MCP_TOOLS: ReadonlyMap<string, string> = new Map();

/**
 * An MCP tool's call: known while its server's latest `mcp_tools` line lists it; its arguments a
 * JSON object (the server judges them against its own schema, and a refusal fails the call);
 * permitted by a stage entry that names it or a pattern that matches it. No path or command policy
 * applies: the server's process is confined by the sandbox instead.
 */
function mcpVerdicts(
  stage: Stage | undefined,
  call: ProposedCall,
  mcpTools: ReadonlyMap<string, string>,
  verdicts: VerdictOut,
): void {
  const { tool, args } = call;
  if (!mcpTools.has(tool)) {
    verdicts.push(fail('tool.known', `"${tool}" is not a tool any MCP server of this run offers now`, ['tool']));
    return;
  }
  verdicts.push(pass('tool.known'));
  verdicts.push(
    call.argsError !== undefined
      ? fail('tool.args', `the arguments are not valid JSON: ${call.argsError}`, ['args'])
      : args !== null && typeof args === 'object' && !Array.isArray(args)
        ? pass('tool.args')
        : fail('tool.args', `bad arguments for ${tool}: they must be a JSON object`, ['args']),
  );
  if (stage) verdicts.push(permittedVerdict(stage, tool));
}

/** A stage permits a built-in tool by its name, an MCP tool by its name or a pattern (`mcp__github__get_*`). */
export function stagePermits(stage: Stage, tool: string): boolean {
  if (stage.tools.includes(tool)) return true;
  return isMcpName(tool) && stage.tools.some((p) => isMcpPattern(p) && globMatch(p, tool));
}

function permittedVerdict(stage: Stage, tool: string): Verdict {
  return stagePermits(stage, tool)
    ? pass('tool.permitted')
    : fail(
        'tool.permitted',
        `${tool} is not permitted in stage "${stage.id}" (permitted: ${stage.tools.join(', ') || 'none'})`,
        ['tool'],
      );
}

function transitionVerdict(policy: CallPolicy, stage: Stage, target: string, cache: VerdictCache): Verdict {
  const wf = policy.workflow;
  const legal = transitionsFrom(wf, stage.id);
  if (!policy.stageById.has(target))
    return fail('tool.transition', `there is no stage "${target}" (stages: ${wf.stages.map((s) => s.id).join(', ')})`, [
      'args',
      'stage',
    ]);
  if (!legal.includes(target))
    return fail(
      'tool.transition',
      `"${stage.id}" → "${target}" is not a legal transition (from "${stage.id}": ${legal.join(', ') || 'none'})`,
      ['args', 'stage'],
    );
  return cache.pass('tool.transition', stage, legalTransitionReason, target);
}

const legalTransitionReason = (stage: Stage, target: string) => `"${stage.id}" → "${target}" is a legal transition`;

function submitVerdict(policy: CallPolicy, stage: Stage): Verdict {
  return policy.terminal.has(stage.id)
    ? pass('tool.submit_terminal')
    : fail(
        'tool.submit_terminal',
        `submit from "${stage.id}", which is not a terminal stage (terminal: ${policy.workflow.terminal.join(', ')})`,
        ['tool'],
      );
}

/** Pushes `tool.command_policy`; returns the `ask` pattern the command matches if no deny pattern does. */
function pushCommandVerdict(policy: CallPolicy, commandLine: string, verdicts: VerdictOut): string | undefined {
  const { denied, ask } = policy.seen.command(policy, commandLine);
  verdicts.push(
    denied === undefined
      ? pass('tool.command_policy')
      : fail('tool.command_policy', `the command matches the deny pattern "${denied}"`, ['args', 'command']),
  );
  return ask;
}

/** `tool.path_policy`: the first path argument that leaves the workspace, is denied, or is read-only. */
function pathVerdict(policy: CallPolicy, tool: ToolName, a: Record<string, unknown>): Verdict {
  for (const key of PATH_ARGS[tool]) {
    const p = a[key];
    if (typeof p !== 'string') continue;
    const { normal: n, denied, readOnly: ro } = policy.seen.path(policy, p);
    if (!n.ok) return fail('tool.path_policy', n.reason, ['args', key]);
    if (denied !== undefined)
      return fail('tool.path_policy', `"${n.normalized}" matches the path deny pattern "${denied}"`, ['args', key]);
    const readOnly = WRITE_TOOLS.has(tool) ? ro : undefined;
    if (readOnly !== undefined)
      return fail(
        'tool.path_policy',
        `"${n.normalized}" is read-only for the agent ("${readOnly}" is ${ALWAYS_READ_ONLY.includes(readOnly) ? 'always read-only' : "protected by the workflow's sandbox section"}): it can be read, not changed`,
        ['args', key],
      );
  }
  return pass('tool.path_policy');
}

function sandboxRequiredVerdict(wf: Workflow, sandbox: SandboxRecord | undefined): Verdict {
  // A container that is the run's sandbox (`--sandbox container`) is one the user vouched for.
  return !(wf.sandbox.required || sandbox?.required === true) ||
    sandbox?.confined === true ||
    sandbox?.container === true
    ? pass('tool.sandbox_required')
    : fail(
        'tool.sandbox_required',
        `the sandbox is required and this run's commands are not confined (${sandbox ? (sandbox.reason ?? 'no sandbox') : 'the trajectory does not record a sandbox'})`,
        ['tool'],
      );
}
