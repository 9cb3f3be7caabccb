import { normalizeWorkspacePath } from '../policy/path';
import { TOOL_NAMES, isToolName } from '../schema/tools';
import { isMcpName, isMcpPattern } from '../schema/mcp';
import {
  HOST_GATEWAY,
  externalJudge,
  outcomeCommand,
  parseHostEntry,
  transitionsFrom,
  type Workflow,
} from '../schema/workflow';
import type { JsonPath } from '../json/position';
import { unprotectedOutcomeInputs } from './outcome-inputs';

export type ProblemSeverity = 'error' | 'warning';

/** A well-formedness problem, located by its JSON path inside the workflow. */
export interface WorkflowProblem {
  code: string;
  severity: ProblemSeverity;
  message: string;
  path: JsonPath;
}

const REGEX_HINTS = /\.\*|\\[dwsb.]|^\^|\$$|\[[^\]]*\]|\(\?/;

type AddProblem = (code: string, severity: ProblemSeverity, message: string, path: JsonPath) => void;

/**
 * Checks a schema-valid workflow for what the schema alone cannot see. A
 * workflow with any error-level problem is not used for verification.
 */
export function checkWorkflow(wf: Workflow): WorkflowProblem[] {
  const problems: WorkflowProblem[] = [];
  const add: AddProblem = (code, severity, message, path) => {
    problems.push({ code, severity, message, path });
  };
  const ids = checkStageDefinitions(wf, add);
  const known = (id: string) => ids.has(id);
  checkStageReferences(wf, known, add);
  wf.policy.commands.deny.forEach((p, i) => checkPattern(p, ['policy', 'commands', 'deny', i], add));
  wf.policy.commands.ask.forEach((p, i) => checkPattern(p, ['policy', 'commands', 'ask', i], add));
  wf.policy.paths.deny.forEach((p, i) => checkPattern(p, ['policy', 'paths', 'deny', i], add));
  checkOutcomeInputs(wf, add);
  checkProtectedPaths(wf, add);
  checkWritablePaths(wf, add);
  checkBroadGrants(wf, add);
  checkNetwork(wf, add);
  checkStageTools(wf, ids, known, add);
  if (problems.some((p) => p.severity === 'error')) return problems;
  // Graph checks only make sense once every name resolves.
  checkGraph(wf, add);
  return problems;
}

const MCP_HINT = ", or an MCP tool mcp__SERVER__TOOL (in a stage's tools also a pattern: mcp__github__get_*)";

/** Duplicate stage ids, unknown tools, regex-looking exit patterns; returns each id's first index. */
function checkStageDefinitions(wf: Workflow, add: AddProblem): Map<string, number> {
  const ids = new Map<string, number>();
  wf.stages.forEach((s, i) => {
    if (ids.has(s.id))
      add('workflow.duplicate_stage', 'error', `stage "${s.id}" is defined twice (also stage ${ids.get(s.id)! + 1})`, [
        'stages',
        i,
        'id',
      ]);
    else ids.set(s.id, i);
    s.tools.forEach((t, j) => {
      if (!isToolName(t) && !isMcpPattern(t))
        add(
          'workflow.unknown_tool',
          'error',
          `"${t}" is not a tool; the tools are ${TOOL_NAMES.join(', ')}${MCP_HINT}`,
          ['stages', i, 'tools', j],
        );
    });
    s.exit.forEach((c, j) => {
      if (c.kind === 'tool_succeeded' && !isToolName(c.tool) && !isMcpName(c.tool)) {
        add(
          'workflow.unknown_tool',
          'error',
          `"${c.tool}" is not a tool; the tools are ${TOOL_NAMES.join(', ')}${MCP_HINT}`,
          ['stages', i, 'exit', j, 'tool'],
        );
      }
      if (c.kind === 'outcome_ran' && !outcomeCommand(wf))
        add(
          'workflow.outcome_ran_external',
          'error',
          `stage "${s.id}" exits when the outcome command ran, but the outcome is judged outside the run (${externalJudge(wf)}): nothing can meet it`,
          ['stages', i, 'exit', j, 'kind'],
        );
      if ('pattern' in c && c.pattern !== undefined) checkPattern(c.pattern, ['stages', i, 'exit', j, 'pattern'], add);
    });
  });
  return ids;
}

/** The start, terminal and transition stages must be defined. */
function checkStageReferences(wf: Workflow, known: (id: string) => boolean, add: AddProblem): void {
  if (!known(wf.start))
    add('workflow.unknown_stage', 'error', `the start stage "${wf.start}" is not defined`, ['start']);
  wf.terminal.forEach((t, i) => {
    if (!known(t)) add('workflow.unknown_stage', 'error', `the terminal stage "${t}" is not defined`, ['terminal', i]);
  });
  for (const [from, targets] of Object.entries(wf.transitions)) {
    if (!known(from))
      add('workflow.unknown_stage', 'error', `transitions from "${from}", which is not a defined stage`, [
        'transitions',
        from,
      ]);
    targets.forEach((to, i) => {
      if (!known(to))
        add('workflow.unknown_stage', 'error', `transition "${from}" → "${to}": "${to}" is not a defined stage`, [
          'transitions',
          from,
          i,
        ]);
    });
  }
}

/** The outcome check must not read what the run may change (it would decide its own outcome). */
function checkOutcomeInputs(wf: Workflow, add: AddProblem): void {
  const command = outcomeCommand(wf)?.command;
  for (const u of unprotectedOutcomeInputs(wf)) {
    add(
      'workflow.outcome_unprotected',
      'warning',
      `the outcome check "${command}" reads ${u.path} (${u.why}), which the run can change: protect it (sandbox.protected) or deny it to writes (policy.paths.deny)`,
      ['outcome', 'command'],
    );
  }
}

/** Protected paths are mounted read-only as they are named: each must be one normalized workspace path. */
function checkProtectedPaths(wf: Workflow, add: AddProblem): void {
  wf.sandbox.protected.forEach((p, i) => {
    const n = normalizeWorkspacePath(p);
    if (!n.ok)
      add('workflow.bad_protected_path', 'error', `protected path "${p}": ${n.reason}`, ['sandbox', 'protected', i]);
    else if (n.normalized === '.')
      add(
        'workflow.bad_protected_path',
        'error',
        'the whole workspace cannot be protected: the agent could change nothing',
        ['sandbox', 'protected', i],
      );
    else if (n.normalized !== p)
      add(
        'workflow.bad_protected_path',
        'error',
        `protected path "${p}" must be written in its normal form "${n.normalized}"`,
        ['sandbox', 'protected', i],
      );
    else if (/[*?]/.test(p))
      add(
        'workflow.bad_protected_path',
        'warning',
        `protected path "${p}" is a literal path, not a pattern: "*" and "?" match only themselves`,
        ['sandbox', 'protected', i],
      );
  });
}

/** Workspace-relative entries of writable grant what runs later (a hooks folder, .envrc …): normalized paths. */
function checkWritablePaths(wf: Workflow, add: AddProblem): void {
  wf.sandbox.writable.forEach((p, i) => {
    if (p.startsWith('/') || p === '~' || p.startsWith('~/')) return;
    const n = normalizeWorkspacePath(p);
    if (!n.ok || n.normalized === '.')
      add(
        'workflow.bad_protected_path',
        'error',
        `sandbox.writable "${p}": a grant inside the workspace must be a workspace path${n.ok ? ' below its top' : `: ${n.reason}`}`,
        ['sandbox', 'writable', i],
      );
    else if (n.normalized !== p)
      add(
        'workflow.bad_protected_path',
        'error',
        `sandbox.writable "${p}" must be written in its normal form "${n.normalized}"`,
        ['sandbox', 'writable', i],
      );
  });
}

/** A grant of the whole file system or home folder would undo the sandbox. */
function checkBroadGrants(wf: Workflow, add: AddProblem): void {
  (['writable', 'readable'] as const).forEach((key) =>
    wf.sandbox[key].forEach((p, i) => {
      const bare = p.replace(/\/+$/, '');
      if (
        bare === '' ||
        bare === '~' ||
        bare === '/home' ||
        bare === '/root' ||
        (key === 'writable' && ['/usr', '/etc', '/bin', '/lib', '/var', '/opt'].includes(bare))
      ) {
        add(
          'workflow.sandbox_undone',
          'error',
          `sandbox.${key} "${p}" would ${key === 'writable' ? 'let commands change' : 'show commands'} ${bare === '' ? 'the whole file system' : bare === '~' ? 'the whole home folder (keys and tokens included)' : bare}: grant narrower paths`,
          ['sandbox', key, i],
        );
      }
    }),
  );
}

/** The network: an allowlist names its hosts, and hosts under another mode would be ignored. */
function checkNetwork(wf: Workflow, add: AddProblem): void {
  const { network, hosts } = wf.sandbox;
  if (network === 'allowlist' && !hosts.length)
    add(
      'workflow.sandbox_network',
      'error',
      'sandbox.network "allowlist" with no sandbox.hosts would reach nothing: list the hosts commands may reach, or say "none"',
      ['sandbox', 'network'],
    );
  if (network !== 'allowlist' && hosts.length)
    add(
      'workflow.sandbox_network',
      'error',
      `sandbox.hosts is read only with sandbox.network "allowlist" (here "${network}", which ${network === 'host' ? 'reaches every host' : 'reaches none'})`,
      ['sandbox', 'hosts'],
    );
  hosts.forEach((h, i) => {
    const e = parseHostEntry(h);
    if (typeof e !== 'string' && (e.host === 'localhost' || /^127\./.test(e.host) || e.host === '::1')) {
      add(
        'workflow.sandbox_network',
        'warning',
        `sandbox.hosts "${h}": inside the sandbox this is its own loopback, which clients reach without the proxy (NO_PROXY); a service on the host's loopback is "${HOST_GATEWAY}${e.port ? `:${e.port}` : ''}"`,
        ['sandbox', 'hosts', i],
      );
    }
  });
}

/** Each stage permits the tools its transitions and terminality need (and submit only where it ends a run). */
function checkStageTools(
  wf: Workflow,
  ids: ReadonlyMap<string, number>,
  known: (id: string) => boolean,
  add: AddProblem,
): void {
  const terminal = new Set(wf.terminal);
  wf.stages.forEach((s, i) => {
    if (ids.get(s.id) !== i) return;
    const out = transitionsFrom(wf, s.id).filter(known);
    if (out.length && !s.tools.includes('enter_stage')) {
      add(
        'workflow.no_enter_stage',
        'error',
        `stage "${s.id}" has transitions out but does not permit enter_stage, so they can never be taken`,
        ['stages', i, 'tools'],
      );
    }
    if (terminal.has(s.id) && !s.tools.includes('submit')) {
      add(
        'workflow.terminal_without_submit',
        'error',
        `terminal stage "${s.id}" does not permit submit, so the run can never end there`,
        ['stages', i, 'tools'],
      );
    }
    if (!terminal.has(s.id) && s.tools.includes('submit')) {
      add(
        'workflow.submit_outside_terminal',
        'warning',
        `stage "${s.id}" permits submit but is not terminal: a submit there is always a violation`,
        ['stages', i, 'tools'],
      );
    }
  });
}

/** Every stage is reachable from the start, some terminal stage too, and every reachable stage can finish. */
function checkGraph(wf: Workflow, add: AddProblem): void {
  const edges = (id: string) => transitionsFrom(wf, id);
  const reachable = reach([wf.start], edges);
  wf.stages.forEach((s, i) => {
    if (!reachable.has(s.id))
      add(
        'workflow.unreachable_stage',
        'error',
        `stage "${s.id}" cannot be reached from the start stage "${wf.start}"`,
        ['stages', i, 'id'],
      );
  });
  if (!wf.terminal.some((t) => reachable.has(t))) {
    add(
      'workflow.no_reachable_terminal',
      'error',
      `no terminal stage can be reached from the start stage "${wf.start}"`,
      ['terminal'],
    );
    return;
  }
  const reverse = new Map<string, string[]>();
  for (const [from, targets] of Object.entries(wf.transitions))
    for (const to of targets) reverse.set(to, [...(reverse.get(to) ?? []), from]);
  const canFinish = reach(wf.terminal, (id) => reverse.get(id) ?? []);
  wf.stages.forEach((s, i) => {
    if (reachable.has(s.id) && !canFinish.has(s.id)) {
      add(
        'workflow.dead_end',
        'warning',
        `from stage "${s.id}" no terminal stage can be reached: a run that enters it cannot finish`,
        ['stages', i, 'id'],
      );
    }
  });
}

function reach(from: readonly string[], edges: (id: string) => readonly string[]): Set<string> {
  const seen = new Set(from);
  const todo = [...from];
  while (todo.length) {
    for (const next of edges(todo.pop()!)) {
      if (!seen.has(next)) {
        seen.add(next);
        todo.push(next);
      }
    }
  }
  return seen;
}

function checkPattern(pattern: string, path: JsonPath, add: AddProblem): void {
  if (REGEX_HINTS.test(pattern)) {
    add(
      'workflow.pattern_looks_like_regex',
      'warning',
      `"${pattern}" looks like a regular expression, but patterns are globs: "*" matches any text, "?" one character, everything else itself`,
      path,
    );
  }
}

export function hasErrors(problems: readonly WorkflowProblem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}
