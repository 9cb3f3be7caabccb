/**
 * Workflows named by path (on the command line, in a trajectory header),
 * read from disk. The CLI and the language server share this; the verifier
 * itself never touches the file system.
 */
import { dirname, resolve } from 'node:path';
import { MAX_WORKFLOW_BYTES, readBoundedText } from '../workspace/bounded-read';
import type { Workflow } from '../schema/workflow';
import { builtinWorkflow, lineColumn, loadWorkflowText, type LocatedProblem } from './load';

/** Resolves a workflow named by path in a header; the CLI and the server read files, the core does not. */
export type WorkflowResolver = (
  ref: string,
) => { workflow: Workflow; source: string } | { error: string; problems?: LocatedProblem[] };

/** Formats a workflow problem as FILE:LINE:COL: message [code]. */
export function formatProblem(file: string, text: string | undefined, p: LocatedProblem): string {
  const at = text !== undefined && p.start !== undefined ? lineColumn(text, p.start) : undefined;
  return `${file}${at ? `:${at.line}:${at.column}` : ''}: ${p.severity}: ${p.message} [${p.code}]`;
}

/** Loads a workflow named on the command line or in a header: `builtin:ID` or a path. */
export function loadWorkflowRef(
  ref: string,
  baseDir: string,
): { workflow: Workflow; source: string } | { error: string; problems: LocatedProblem[] } {
  if (ref.startsWith('builtin:')) {
    try {
      return { workflow: builtinWorkflow(ref.slice('builtin:'.length)), source: ref };
    } catch (e) {
      return { error: (e as Error).message, problems: [] };
    }
  }
  const file = resolve(baseDir, ref);
  let text: string;
  try {
    text = readBoundedText(file, MAX_WORKFLOW_BYTES, 'the workflow');
  } catch (e) {
    return {
      error: `cannot read the workflow ${ref}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
      problems: [],
    };
  }
  const load = loadWorkflowText(text);
  if (!load.ok) {
    return {
      error: `the workflow ${ref} is not well-formed:\n${load.problems.map((p) => `  ${formatProblem(ref, text, p)}`).join('\n')}`,
      problems: [],
    };
  }
  return { workflow: load.workflow, source: ref };
}

/** A resolver for header workflow paths, relative to the trajectory file. */
export function fileResolver(trajectoryFile: string): WorkflowResolver {
  return (ref) => loadWorkflowRef(ref, dirname(trajectoryFile));
}
