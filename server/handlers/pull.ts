/**
 * Pull diagnostics (LSP 3.17) for trajectories: the client asks for each part of a run under its own
 * identifier and gets `unchanged` when that part did not move, and it holds one workspace request per
 * part open for runs that have no editor (a live run): each change goes out as a partial result.
 */
import {
  DocumentDiagnosticReportKind,
  DocumentDiagnosticRequest,
  type ClientCapabilities,
  type Diagnostic,
  type DocumentDiagnosticReport,
  type PreviousResultId,
  type WorkspaceDocumentDiagnosticReport,
} from 'vscode-languageserver';
import { rangeDiagnostics } from '../diagnostics';
import { LIVE, PARTITION_IDS, partitionOf, type PartitionIndex } from '../partitions';
import { pulled } from './rewards';
import type { DiagnosticsMode, Run, ServerState, WorkspaceWaiter } from '../server-state';
import { isWorkflow, workflowDocumentDiagnostics } from '../document-kinds';

/** The identifier a client that pulls without dynamic registration asks under: the whole document. */
export const WHOLE_ID = 'lar';

/** Trajectories only: workflow documents are small, and their diagnostics are pushed. */
const TRAJECTORIES = [{ language: 'lar-trajectory' }, { pattern: '**/*.lar.jsonl' }];

/**
 * Pull needs the client to refresh on request: a live run's steps and the Lean checker's verdicts change
 * diagnostics with no edit of the client's to pull after. Parts need registrations made at run time.
 */
export function diagnosticsMode(caps: ClientCapabilities): DiagnosticsMode {
  const pull = caps.textDocument?.diagnostic;
  if (!pull || caps.workspace?.diagnostics?.refreshSupport !== true) return 'push';
  return pull.dynamicRegistration === true ? 'partitioned' : 'pull';
}

/** The static capability of `pull` mode (partitioned mode registers its identifiers once initialized). */
export function staticDiagnosticProvider(mode: DiagnosticsMode) {
  return mode === 'pull'
    ? { diagnosticProvider: { identifier: WHOLE_ID, interFileDependencies: false, workspaceDiagnostics: false } }
    : {};
}

export function registerPullDiagnostics(state: ServerState): void {
  const { connection } = state;
  connection.onInitialized(() => {
    if (state.diagnosticsMode !== 'partitioned') return;
    for (const identifier of PARTITION_IDS)
      void connection.client
        .register(DocumentDiagnosticRequest.type, {
          documentSelector: TRAJECTORIES,
          identifier,
          interFileDependencies: false,
          workspaceDiagnostics: true,
        })
        .catch((e: Error) => connection.console.error(`lar: registering ${identifier} failed: ${e.message}`));
  });

  connection.languages.diagnostics.on((params): DocumentDiagnosticReport => {
    const { uri } = params.textDocument;
    const k = state.diagnosticsMode === 'partitioned' ? partitionOf(params.identifier) : undefined;
    const run = state.runs.get(uri);
    if (!run) return { kind: DocumentDiagnosticReportKind.Full, items: workflowPulled(state, uri) };
    if (state.diagnosticsMode === 'partitioned' && k === undefined)
      return { kind: DocumentDiagnosticReportKind.Full, items: [] }; // an identifier that is not ours
    clearPushed(state, uri);
    if (k === undefined || k === LIVE) pulled(state, uri);
    const resultId = run.partitions.resultId(k);
    if (params.previousResultId === resultId) return { kind: DocumentDiagnosticReportKind.Unchanged, resultId };
    return { kind: DocumentDiagnosticReportKind.Full, resultId, items: partDiagnostics(state, run, k) };
  });

  connection.languages.diagnostics.onWorkspace((params, token, _progress, resultProgress) => {
    const k = partitionOf(params.identifier ?? undefined);
    if (state.diagnosticsMode !== 'partitioned' || k === undefined) return { items: [] };
    const items = catchUp(state, k, params.previousResultIds);
    if (!resultProgress) return { items }; // no partial results: the client asks again later
    if (items.length) resultProgress.report({ items });
    return new Promise((resolve) => {
      const waiter: WorkspaceWaiter = {
        report: (reports) => resultProgress.report({ items: reports }),
        end: () => {
          if (state.waiters.get(k) === waiter) state.waiters.delete(k);
          resolve({ items: [] });
        },
      };
      // A newer request replaces an older one: the older ends, empty (its partial results stand).
      const older = state.waiters.get(k);
      state.waiters.set(k, waiter);
      older?.end();
      token.onCancellationRequested(() => waiter.end());
    });
  });
}

/**
 * The first answer of a workspace request: every run whose part differs from what the client holds, and
 * an empty report for a document it holds that has no run any more. Pushed diagnostics give way to it.
 */
function catchUp(
  state: ServerState,
  k: PartitionIndex,
  previous: PreviousResultId[],
): WorkspaceDocumentDiagnosticReport[] {
  const held = new Map(previous.map((p) => [p.uri, p.value]));
  const items: WorkspaceDocumentDiagnosticReport[] = [];
  for (const [uri, run] of state.runs) {
    clearPushed(state, uri);
    const resultId = run.partitions.resultId(k);
    if (held.get(uri) !== resultId) items.push(fullReport(state, uri, run, k));
  }
  for (const uri of held.keys())
    if (!state.runs.has(uri)) items.push({ kind: DocumentDiagnosticReportKind.Full, uri, version: null, items: [] });
  return items;
}

/** A part's diagnostics (the whole document for `undefined`): the run-wide ones ride with the last part. */
export function partDiagnostics(state: ServerState, run: Run, k: PartitionIndex | undefined): Diagnostic[] {
  const n = run.model.lineCount;
  const lines = k === undefined ? ([0, n] as const) : run.partitions.lines(k, n);
  return rangeDiagnostics(run.model, lines, k === undefined || k === LIVE, state.source());
}

function fullReport(state: ServerState, uri: string, run: Run, k: PartitionIndex): WorkspaceDocumentDiagnosticReport {
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
    // The client's own edit of an open document: it pulls that document itself. Anything else goes to the
    // workspace requests too (a tab closed before its document, a document opened with no tab).
    if (!(open && byClient)) for (const k of touched) state.waiters.get(k)?.report([fullReport(state, uri, run, k)]);
    return true;
  }
  return open;
}

/** A run left the server (its editor closed, or a newer run began): the client drops what it holds of it. */
export function pullDropped(state: ServerState, uri: string): void {
  if (state.diagnosticsMode !== 'partitioned') return;
  const empty = () => {
    if (state.runs.has(uri)) return; // back meanwhile
    for (const w of state.waiters.values())
      w.report([{ kind: DocumentDiagnosticReportKind.Full, uri, version: null, items: [] }]);
  };
  empty();
  // The client may still be taking the last document pull of a closing editor, and skips workspace reports
  // for a document it pulls itself: say it once more when that is surely done.
  setTimeout(empty, 500).unref?.();
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

function clearPushed(state: ServerState, uri: string): void {
  if (!state.pushed.delete(uri)) return;
  void state.connection.sendDiagnostics({ uri, diagnostics: [] });
}

/** A workflow document pulled under the whole-document identifier (`pull` mode: nothing is pushed for it). */
function workflowPulled(state: ServerState, uri: string): Diagnostic[] {
  const doc = state.documents.get(uri);
  return doc && state.diagnosticsMode === 'pull' && isWorkflow(doc.uri, doc.languageId)
    ? workflowDocumentDiagnostics(state, doc)
    : [];
}
