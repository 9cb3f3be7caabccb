import { Workflow } from '../schema/workflow';
import { findJsonSyntaxError, locateJsonValue } from '../json/position';
import { checkWorkflow, hasErrors, type WorkflowProblem } from './wellformed';
import defaultCoding from './default-coding.larflow.json';
import terminalTask from './terminal-task.larflow.json';

export interface LocatedProblem extends WorkflowProblem {
  /** 0-based offsets into the workflow text, when it came from text. */
  start?: number;
  end?: number;
}

export type WorkflowLoad =
  { ok: true; workflow: Workflow; problems: LocatedProblem[] } | { ok: false; problems: LocatedProblem[] };

/** Validates a workflow value: schema first, then well-formedness. */
export function loadWorkflow(value: unknown): WorkflowLoad {
  const r = Workflow.safeParse(value);
  if (!r.success) {
    return {
      ok: false,
      problems: r.error.issues.map((issue) => {
        const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
        return {
          code: 'workflow.schema',
          severity: 'error' as const,
          message: `${path.length ? `"${path.join('.')}": ` : ''}${issue.message}`,
          path,
        };
      }),
    };
  }
  const problems = checkWorkflow(r.data);
  return hasErrors(problems) ? { ok: false, problems } : { ok: true, workflow: r.data, problems };
}

/** Parses and validates workflow text (a `*.larflow.json` file), locating every problem in it. */
export function loadWorkflowText(text: string): WorkflowLoad {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const err = findJsonSyntaxError(text) ?? { offset: 0, message: 'not valid JSON' };
    return {
      ok: false,
      problems: [
        {
          code: 'workflow.json',
          severity: 'error',
          message: `invalid JSON: ${err.message}`,
          path: [],
          start: err.offset,
          end: err.offset + 1,
        },
      ],
    };
  }
  const load = loadWorkflow(value);
  const locate = (p: LocatedProblem): LocatedProblem => {
    const span = locateJsonValue(text, p.path);
    return span ? { ...p, start: span.start, end: span.end } : p;
  };
  return load.ok
    ? { ...load, problems: load.problems.map(locate) }
    : { ok: false, problems: load.problems.map(locate) };
}

/** Workflows that ship with the project, addressed as `builtin:ID`. */
export const BUILTIN_WORKFLOWS: Record<string, unknown> = {
  'default-coding': defaultCoding,
  /** Terminal-Bench through Harbor: no outcome command (Harbor's verifier judges after the run). */
  'terminal-task': terminalTask,
};

/** A builtin workflow's JSON value; the id is user text, so the lookup must not reach Object.prototype. */
export function builtinWorkflowValue(id: string): unknown {
  if (!Object.hasOwn(BUILTIN_WORKFLOWS, id))
    throw new Error(`there is no builtin workflow "${id}" (builtin: ${Object.keys(BUILTIN_WORKFLOWS).join(', ')})`);
  return BUILTIN_WORKFLOWS[id];
}

export function builtinWorkflow(id: string): Workflow {
  const value = builtinWorkflowValue(id);
  const load = loadWorkflow(value);
  if (!load.ok)
    throw new Error(`builtin workflow "${id}" is not well-formed: ${load.problems.map((p) => p.message).join('; ')}`);
  return load.workflow;
}

export function defaultWorkflow(): Workflow {
  return builtinWorkflow('default-coding');
}

/** Offset → 1-based line and column, for messages about multi-line text. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
