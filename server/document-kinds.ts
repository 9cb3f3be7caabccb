/** Which documents the server verifies (trajectories) or checks (workflows), and a workflow document's diagnostics. */
import type { Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { loadWorkflowText } from '../core/workflow/load';
import { workflowDiagnostics } from './diagnostics';
import type { ServerState } from './server-state';

export const isTrajectory = (uri: string, languageId?: string) =>
  languageId === 'lar-trajectory' || uri.endsWith('.lar.jsonl');
export const isWorkflow = (uri: string, languageId?: string) =>
  languageId === 'lar-workflow' || uri.endsWith('.larflow.json');

/** A workflow document's well-formedness problems, less schema errors the client validates itself. */
export function workflowDocumentDiagnostics(state: ServerState, doc: TextDocument): Diagnostic[] {
  const text = doc.getText();
  const load = loadWorkflowText(text);
  const problems = state.options.workflowSchemaByClient
    ? load.problems.filter((p) => p.code !== 'workflow.schema')
    : load.problems;
  return workflowDiagnostics(text, problems, 'lar (builtin)');
}
