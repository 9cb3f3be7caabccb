/** Documents the editor opens, edits and closes: trajectories are verified, workflows checked for well-formedness. */
import { isTrajectory, isWorkflow, workflowDocumentDiagnostics } from '../document-kinds';
import type { ServerState } from '../server-state';
import { dropped, update } from './publish';

export function registerDocuments(state: ServerState): void {
  const { connection, documents } = state;
  documents.onDidChangeContent(({ document: doc }) => {
    if (isTrajectory(doc.uri, doc.languageId)) update(state, doc.uri, doc.getText(), doc.version, true);
    // A client that pulls under one identifier pulls workflows too: nothing is pushed for them.
    else if (isWorkflow(doc.uri, doc.languageId) && state.diagnosticsMode !== 'pull')
      void connection.sendDiagnostics({
        uri: doc.uri,
        version: doc.version,
        diagnostics: workflowDocumentDiagnostics(state, doc),
      });
  });

  documents.onDidClose(({ document: doc }) => {
    state.runs.delete(doc.uri);
    dropped(state, doc.uri);
  });
}
