/** Documents the editor opens, edits and closes: trajectories are verified, workflows checked for well-formedness. */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { loadWorkflowText } from '../../core/workflow/load';
import { workflowDiagnostics } from '../diagnostics';
import type { ServerState } from '../server-state';
import { update } from './publish';

const isTrajectory = (uri: string, languageId?: string) =>
  languageId === 'lar-trajectory' || uri.endsWith('.lar.jsonl');
const isWorkflow = (uri: string, languageId?: string) => languageId === 'lar-workflow' || uri.endsWith('.larflow.json');

export function registerDocuments(state: ServerState): void {
  const { connection, documents } = state;
  documents.onDidChangeContent(({ document: doc }) => {
    if (isTrajectory(doc.uri, doc.languageId)) update(state, doc.uri, doc.getText(), doc.version);
    else if (isWorkflow(doc.uri, doc.languageId)) checkWorkflowDocument(state, doc);
  });

  documents.onDidClose(({ document: doc }) => {
    state.runs.delete(doc.uri);
    void connection.sendDiagnostics({ uri: doc.uri, diagnostics: [] });
  });
}

function checkWorkflowDocument(state: ServerState, doc: TextDocument): void {
  const text = doc.getText();
  const load = loadWorkflowText(text);
  const problems = state.options.workflowSchemaByClient
    ? load.problems.filter((p) => p.code !== 'workflow.schema')
    : load.problems;
  void state.connection.sendDiagnostics({
    uri: doc.uri,
    version: doc.version,
    diagnostics: workflowDiagnostics(text, problems, 'lar (builtin)'),
  });
}
