/** What the editor shows of a verified run besides diagnostics: hovers, code lenses and the outline's symbols. */
import { codeLenses, documentSymbols, hoverAt } from '../presentation';
import type { ServerState } from '../server-state';

export function registerEditorFeatures(state: ServerState): void {
  const { connection, runs } = state;
  connection.onHover(({ textDocument, position }) => {
    const run = runs.get(textDocument.uri);
    // Why the backend is what it is (a long note when Lean is missing) is said once, in the status bar's tooltip.
    return run ? (hoverAt(run.model, position.line, state.source()) ?? null) : null;
  });

  connection.onCodeLens(({ textDocument }) => {
    const run = runs.get(textDocument.uri);
    return run ? codeLenses(run.model, runFileName(textDocument.uri)) : [];
  });

  connection.onDocumentSymbol(({ textDocument }) => {
    const run = runs.get(textDocument.uri);
    return run ? documentSymbols(run.model) : [];
  });
}

/** The run's file name, only for a file of a workspace's .lar/runs (what a branch reads back by name). */
function runFileName(uri: string): string | undefined {
  const m = /\/\.lar\/runs\/([^/]+)$/.exec(uri);
  try {
    return m ? decodeURIComponent(m[1]!) : undefined;
  } catch {
    return undefined;
  }
}
