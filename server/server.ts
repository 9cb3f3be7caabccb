/** Starts the language server: the shared state, each concern's handlers from server/handlers/, and shutdown. */
import type { Connection } from 'vscode-languageserver';
import { registerAppendStep } from './handlers/append-step';
import { registerDocuments } from './handlers/documents';
import { registerEditorFeatures } from './handlers/editor-features';
import { registerInitialize } from './handlers/initialize';
import { registerLarRequests } from './handlers/lar-requests';
import { registerPullDiagnostics } from './handlers/pull';
import { publishAll } from './handlers/publish';
import { ServerState } from './server-state';

/**
 * The language server: thin glue between LSP and the core. Trajectories are
 * verified incrementally by a TrajectoryModel per document (or per live run
 * announced with lar/appendStep); workflows are checked for well-formedness.
 */
export function startServer(connection: Connection): void {
  const state = new ServerState(connection);
  registerInitialize(state);
  registerDocuments(state);
  registerAppendStep(state);
  registerLarRequests(state);
  registerEditorFeatures(state);
  registerPullDiagnostics(state, () => publishAll(state));
  connection.onShutdown(() => {
    state.lean?.dispose();
    for (const t of state.leanPending.values()) clearTimeout(t);
  });
  state.documents.listen(connection);
  connection.listen();
}
