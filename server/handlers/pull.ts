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
import { LIVE, PARTITION_IDS, partitionOf, type PartitionIndex } from '../partitions';
import { pulled } from './rewards';
import { clearPushed, documentPulled, fullReport, partDiagnostics } from './pull-reports';
import type { DiagnosticsMode, ServerState, WorkspaceWaiter } from '../server-state';
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

/** `pushInstead`: the client refused a registration; every run is published again, pushed. */
export function registerPullDiagnostics(state: ServerState, pushInstead: () => void): void {
  const { connection } = state;
  connection.onInitialized(() => {
    if (state.diagnosticsMode === 'partitioned') void registerParts(state, pushInstead);
  });

  connection.languages.diagnostics.on((params): DocumentDiagnosticReport => {
    const { uri } = params.textDocument;
    const k = state.diagnosticsMode === 'partitioned' ? partitionOf(params.identifier) : undefined;
    const run = state.runs.get(uri);
    if (!run) return { kind: DocumentDiagnosticReportKind.Full, items: workflowPulled(state, uri) };
    if (state.diagnosticsMode === 'partitioned' && k === undefined)
      return { kind: DocumentDiagnosticReportKind.Full, items: [] }; // an identifier that is not ours
    clearPushed(state, uri);
    if (k === undefined || k === LIVE) {
      pulled(state, uri);
      documentPulled(state, uri);
    }
    const resultId = run.partitions.resultId(k);
    if (params.previousResultId === resultId) return { kind: DocumentDiagnosticReportKind.Unchanged, resultId };
    return { kind: DocumentDiagnosticReportKind.Full, resultId, items: partDiagnostics(state, run, k) };
  });

  connection.languages.diagnostics.onWorkspace((params, token, _progress, resultProgress) => {
    const k = partitionOf(params.identifier ?? undefined);
    if (state.diagnosticsMode !== 'partitioned' || k === undefined) return { items: [] };
    // Without partial results there is no way to tell the client of a later change: runs without an editor
    // stay pushed, and the request gets nothing (taking them over now would leave its copy to go stale).
    if (!resultProgress) return { items: [] };
    const items = catchUp(state, k, params.previousResultIds);
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

/** The three parts' providers; if the client refuses one, the others are withdrawn and diagnostics pushed. */
async function registerParts(state: ServerState, pushInstead: () => void): Promise<void> {
  const { connection } = state;
  const made = await Promise.allSettled(
    PARTITION_IDS.map((identifier) =>
      connection.client.register(DocumentDiagnosticRequest.type, {
        documentSelector: TRAJECTORIES,
        identifier,
        interFileDependencies: false,
        workspaceDiagnostics: true,
      }),
    ),
  );
  const refused = made.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!refused) return;
  for (const r of made) if (r.status === 'fulfilled') r.value.dispose();
  connection.console.error(`lar: the client refused pull diagnostics (${String(refused.reason)}): they are pushed`);
  state.diagnosticsMode = 'push';
  pushInstead();
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

/** A workflow document pulled under the whole-document identifier (`pull` mode: nothing is pushed for it). */
function workflowPulled(state: ServerState, uri: string): Diagnostic[] {
  const doc = state.documents.get(uri);
  return doc && state.diagnosticsMode === 'pull' && isWorkflow(doc.uri, doc.languageId)
    ? workflowDocumentDiagnostics(state, doc)
    : [];
}
