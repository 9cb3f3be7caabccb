/**
 * What of a changed or departed run reaches a pulling client, and when: the held workspace requests' partial
 * results, a refresh for the documents it shows, and the clearing of what was pushed before pull took over.
 */
import {
  DocumentDiagnosticReportKind,
  type Diagnostic,
  type WorkspaceDocumentDiagnosticReport,
} from 'vscode-languageserver';
import { rangeDiagnostics } from '../diagnostics';
import { LIVE, type PartitionIndex } from '../partitions';
import type { Run, ServerState } from '../server-state';

/** How long a client's own edit of an open document waits for the client to pull it before the workspace is told. */
const WAIT_FOR_PULL_MS = 200;
/** When a departed run's empty report is said again (the client skips it while it still pulls that document). */
const DROPPED_AGAIN_MS = [500, 3000];

/** A part's diagnostics (the whole document for `undefined`): the run-wide ones ride with the last part. */
export function partDiagnostics(state: ServerState, run: Run, k: PartitionIndex | undefined): Diagnostic[] {
  const n = run.model.lineCount;
  const lines = k === undefined ? ([0, n] as const) : run.partitions.lines(k, n);
  return rangeDiagnostics(run.model, lines, k === undefined || k === LIVE, state.source());
}

export function fullReport(
  state: ServerState,
  uri: string,
  run: Run,
  k: PartitionIndex,
): WorkspaceDocumentDiagnosticReport {
  return {
    kind: DocumentDiagnosticReportKind.Full,
    uri,
    version: state.documents.get(uri) ? (run.version ?? null) : null,
    resultId: run.partitions.resultId(k),
    items: partDiagnostics(state, run, k),
  };
}

/**
 * A run changed in parts `touched`. Returns true when pull carries it: an open document is pulled (after a
 * refresh when the change was not the client's own edit), a run with a held workspace request is reported.
 */
export function pullChanged(
  state: ServerState,
  uri: string,
  run: Run,
  touched: readonly PartitionIndex[],
  byClient: boolean,
): boolean {
  if (state.diagnosticsMode === 'push') return false;
  const open = state.documents.get(uri) !== undefined;
  if (open && !byClient) scheduleRefresh(state);
  if (state.diagnosticsMode === 'partitioned' && state.waiters.size > 0) {
    // The client's own edit of an open document: it pulls that document itself if it shows it. One it does
    // not show (opened with no tab, or its tab closed) is told through the workspace requests after a wait.
    if (open && byClient) reportUnlessPulled(state, uri, touched);
    else for (const k of touched) state.waiters.get(k)?.report([fullReport(state, uri, run, k)]);
    return true;
  }
  return open;
}

/** A run left the server (its editor closed, or a newer run began): the client drops what it holds of it. */
export function pullDropped(state: ServerState, uri: string): void {
  documentPulled(state, uri);
  if (state.diagnosticsMode !== 'partitioned') return;
  const empty = () => {
    if (state.runs.has(uri)) return; // back meanwhile
    for (const w of state.waiters.values())
      w.report([{ kind: DocumentDiagnosticReportKind.Full, uri, version: null, items: [] }]);
  };
  empty();
  // The client may still be taking the last document pull of a closing editor, and skips workspace reports
  // for a document it pulls itself: say it again once that is surely done, and once more for a busy client.
  for (const ms of DROPPED_AGAIN_MS) setTimeout(empty, ms).unref?.();
}

/** Collects the parts a client's own edit changed; the workspace hears of them unless the document is pulled. */
function reportUnlessPulled(state: ServerState, uri: string, touched: readonly PartitionIndex[]): void {
  let waiting = state.unpulled.get(uri);
  if (!waiting) {
    const timer = setTimeout(() => {
      state.unpulled.delete(uri);
      const run = state.runs.get(uri);
      if (run) for (const k of waiting!.parts) state.waiters.get(k)?.report([fullReport(state, uri, run, k)]);
    }, WAIT_FOR_PULL_MS);
    timer.unref?.();
    waiting = { parts: new Set(), timer };
    state.unpulled.set(uri, waiting);
  }
  for (const k of touched) waiting.parts.add(k);
}

/** The client pulled the document (its last part): it shows it, and needs no workspace report of its edits. */
export function documentPulled(state: ServerState, uri: string): void {
  const waiting = state.unpulled.get(uri);
  if (!waiting) return;
  clearTimeout(waiting.timer);
  state.unpulled.delete(uri);
}

/** Many changes in one turn of the event loop make one refresh. */
function scheduleRefresh(state: ServerState): void {
  if (state.refreshQueued) return;
  state.refreshQueued = true;
  setImmediate(() => {
    state.refreshQueued = false;
    state.connection.languages.diagnostics.refresh().catch(() => {});
  });
}

export function clearPushed(state: ServerState, uri: string): void {
  if (!state.pushed.delete(uri)) return;
  void state.connection.sendDiagnostics({ uri, diagnostics: [] });
}
