import { MAX_TRAJECTORY_BYTES, readBoundedText } from '../core/workspace/bounded-read';
import { fileURLToPath } from 'node:url';
import {
  TextDocuments,
  TextDocumentSyncKind,
  type Connection,
  type Diagnostic,
  type InitializeParams,
  type InitializeResult,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  AppendStepMethod,
  AppendStepParams,
  BackendMethod,
  CheckToolCallMethod,
  CheckToolCallParams,
  RewardsMethod,
  ServerOptions,
  VerifyMethod,
  VerifyParams,
  type BackendLabel,
  type CheckToolCallResult,
  type VerifyResult,
} from '../core/protocol/lsp';
import { LeanBackend } from '../core/lean';
import { detectLean } from '../core/lean/detect';
import { verifyTrajectoryTextWith } from '../core/verifier/verify';
import { fileResolver } from '../core/workflow/resolve';
import { loadWorkflowText } from '../core/workflow/load';
import { lineDiagnostics, runDiagnostics, workflowDiagnostics, type DiagnosticSource } from './diagnostics';
import { codeLenses, documentSymbols, hoverAt, rewardsParams } from './presentation';
import { TrajectoryModel } from './trajectory-model';

interface Run {
  model: TrajectoryModel;
  /** Every line's diagnostics, in line order; rebuilt from the first changed line on. */
  lineDiags: Diagnostic[];
  /** lineStart[i]: where line i's diagnostics begin in lineDiags. */
  lineStart: number[];
  version: number | undefined;
}

const isTrajectory = (uri: string, languageId?: string) =>
  languageId === 'lar-trajectory' || uri.endsWith('.lar.jsonl');
const isWorkflow = (uri: string, languageId?: string) => languageId === 'lar-workflow' || uri.endsWith('.larflow.json');

function pathOf(uri: string): string | undefined {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps the diagnostics of lines before `from` and recomputes the rest: an append costs one line. */
function rebuildLineDiagnostics(run: Run, from: number, source: DiagnosticSource): void {
  const keep = Math.min(from, run.lineStart.length);
  run.lineDiags.length = keep < run.lineStart.length ? run.lineStart[keep]! : run.lineDiags.length;
  run.lineStart.length = keep;
  const lines = run.model.lines;
  for (let i = keep; i < lines.length; i++) {
    run.lineStart.push(run.lineDiags.length);
    for (const d of lineDiagnostics(lines[i]!, i, source)) run.lineDiags.push(d);
  }
}

/**
 * The language server: thin glue between LSP and the core. Trajectories are
 * verified incrementally by a TrajectoryModel per document (or per live run
 * announced with lar/appendStep); workflows are checked for well-formedness.
 */
export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const runs = new Map<string, Run>();
  let label: BackendLabel = { backend: 'builtin', reason: 'starting' };
  let lean: LeanBackend | undefined;
  const leanPending = new Map<string, NodeJS.Timeout>();

  const source = (): DiagnosticSource => `lar (${label.backend})`;

  function runFor(uri: string): Run {
    let run = runs.get(uri);
    if (!run) {
      const path = pathOf(uri);
      run = {
        model: new TrajectoryModel(path ? { resolve: fileResolver(path) } : {}),
        lineDiags: [],
        lineStart: [],
        version: undefined,
      };
      runs.set(uri, run);
    }
    return run;
  }

  /** Publishes diagnostics and rewards after an update that changed lines from `from` on. */
  function publish(uri: string, run: Run, from: number): void {
    const { model } = run;
    const src = source();
    rebuildLineDiagnostics(run, from, src);
    const diagnostics = run.lineDiags.concat(runDiagnostics(model, src));
    // The smaller message first, so neither waits behind the other: a live
    // append's rewards are one line, a full document's rewards outweigh its diagnostics.
    const rewards = () =>
      void connection.sendNotification(RewardsMethod, rewardsParams(model, uri, label, run.version, from));
    const diags = () =>
      void connection.sendDiagnostics({
        uri,
        diagnostics,
        ...(run.version !== undefined ? { version: run.version } : {}),
      });
    if (from > 0) {
      rewards();
      diags();
    } else {
      diags();
      rewards();
    }
    if (lean) scheduleLean(uri, run);
  }

  function update(uri: string, text: string, version: number | undefined): void {
    const run = runFor(uri);
    run.version = version;
    const stats = run.model.setText(text);
    publish(uri, run, stats.from);
  }

  /** With the Lean backend, the Lean checker re-judges the document after a pause and its verdicts replace the builtin ones. */
  function scheduleLean(uri: string, run: Run): void {
    clearTimeout(leanPending.get(uri));
    leanPending.set(
      uri,
      setTimeout(() => {
        leanPending.delete(uri);
        const text = run.model.lines.map((l) => l.text).join('\n');
        const path = pathOf(uri);
        verifyTrajectoryTextWith(lean!, text, path ? { resolve: fileResolver(path) } : {})
          .then((report) => {
            if (runs.get(uri) !== run) return; // dropped meanwhile (an earlier run left the Problems panel)
            if (run.model.lines.map((l) => l.text).join('\n') !== text) return; // stale
            run.model.adopt(report);
            const src = source();
            rebuildLineDiagnostics(run, 0, src);
            void connection.sendNotification(RewardsMethod, rewardsParams(run.model, uri, label, run.version, 0));
            void connection.sendDiagnostics({ uri, diagnostics: run.lineDiags.concat(runDiagnostics(run.model, src)) });
          })
          .catch((e: Error) => {
            lean?.dispose();
            lean = undefined;
            setLabel({
              backend: 'builtin',
              reason: `the Lean checker failed (${e.message}); the builtin verifier decides`,
            });
            for (const [u, r] of runs) publish(u, r, 0);
          });
      }, 200),
    );
  }

  function checkWorkflowDocument(doc: TextDocument): void {
    const text = doc.getText();
    const load = loadWorkflowText(text);
    const problems = options.workflowSchemaByClient
      ? load.problems.filter((p) => p.code !== 'workflow.schema')
      : load.problems;
    void connection.sendDiagnostics({
      uri: doc.uri,
      version: doc.version,
      diagnostics: workflowDiagnostics(text, problems, 'lar (builtin)'),
    });
  }

  let options = ServerOptions.parse({});

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    const given = ServerOptions.safeParse(params.initializationOptions ?? {});
    if (!given.success)
      connection.console.error(`lar: ignoring bad initialization options: ${given.error.issues[0]?.message}`);
    options = given.success ? given.data : options;
    // An empty path is no path (settings default to "").
    if (options.leanPath !== undefined && options.leanPath.trim() === '') delete options.leanPath;
    void chooseBackend(options);
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        codeLensProvider: { resolveProvider: false },
        documentSymbolProvider: true,
      },
      serverInfo: { name: 'lar', version: '0.1.0' },
    };
  });

  function setLabel(next: BackendLabel): void {
    label = next;
    connection.console.info(`lar: backend ${label.backend}: ${label.reason}`);
    void connection.sendNotification(BackendMethod, label);
  }

  async function chooseBackend(opts: ServerOptions): Promise<void> {
    const want = opts.backend ?? 'auto';
    if (want === 'builtin') {
      setLabel({ backend: 'builtin', reason: 'the builtin backend was chosen in the settings' });
    } else {
      const found = await detectLean(opts.leanPath !== undefined ? { leanPath: opts.leanPath } : {});
      if (found.available) {
        lean = new LeanBackend(opts.leanPath !== undefined ? { leanPath: opts.leanPath } : {});
        setLabel({ backend: 'lean', reason: `Lean ${found.version} at ${found.lake}` });
      } else {
        setLabel({ backend: 'builtin', reason: found.reason });
      }
    }
    for (const [uri, run] of runs) publish(uri, run, 0);
  }

  documents.onDidChangeContent(({ document: doc }) => {
    if (isTrajectory(doc.uri, doc.languageId)) update(doc.uri, doc.getText(), doc.version);
    else if (isWorkflow(doc.uri, doc.languageId)) checkWorkflowDocument(doc);
  });

  documents.onDidClose(({ document: doc }) => {
    runs.delete(doc.uri);
    void connection.sendDiagnostics({ uri: doc.uri, diagnostics: [] });
  });

  connection.onNotification(AppendStepMethod, (raw: unknown) => {
    const parsed = AppendStepParams.safeParse(raw);
    if (!parsed.success) {
      connection.console.error(`lar: bad ${AppendStepMethod} params: ${parsed.error.issues[0]?.message}`);
      return;
    }
    const { uri, text, line } = parsed.data;
    // Taken even while the file is open in an editor: the gate must see the
    // step now, not when the editor reloads the file. That reload then changes
    // nothing (the model already has the line); an unsaved edit in the editor
    // wins at its next change.
    // A new run begins: the runs before it leave the Problems panel unless their trajectory is open
    // (or every run's problems are asked for); the gate needs only the live run.
    if (line === 1 && options.problems === 'open') {
      for (const other of [...runs.keys()]) {
        if (other === uri || documents.get(other)) continue;
        runs.delete(other);
        // A Lean re-check on its way would publish them again.
        clearTimeout(leanPending.get(other));
        leanPending.delete(other);
        void connection.sendDiagnostics({ uri: other, diagnostics: [] });
      }
    }
    const run = runFor(uri);
    const have = run.model.lineCount;
    if (line === have + 1) {
      run.version = undefined; // these diagnostics are ahead of the editor's copy
      const stats = run.model.append(text);
      publish(uri, run, stats.from);
      return;
    }
    if (line <= have && run.model.lines[line - 1]?.text === text) return; // already have it
    // Out of step (the server restarted, or a line was missed): catch up from the file on disk.
    const path = pathOf(uri);
    const onDisk = path ? readIfFile(path) : undefined;
    if (onDisk !== undefined) update(uri, onDisk, undefined);
    else
      connection.console.error(
        `lar: ${AppendStepMethod} line ${line} does not follow line ${have} of ${uri}, and the file cannot be read`,
      );
  });

  connection.onRequest(CheckToolCallMethod, (raw: unknown): CheckToolCallResult => {
    const { uri, call } = CheckToolCallParams.parse(raw);
    const run = runs.get(uri);
    const state = run?.model.liveState;
    if (!state)
      throw new Error(
        `no verified run for ${uri}${run?.model.context.fatal ? `: ${run.model.context.fatal}` : ' (open it or send lar/appendStep first)'}`,
      );
    const gate = state.gate(call);
    const result: CheckToolCallResult = {
      decision: gate.decision,
      reason: gate.reason,
      toolReward: gate.toolReward,
      verdicts: gate.verdicts,
      // The gate answers from the live state in this process: the builtin verifier decides it.
      backend:
        label.backend === 'lean'
          ? {
              backend: 'builtin',
              reason:
                'the gate runs on the live state (builtin) so the agent never waits on the Lean process; the Lean checker re-judges each step after it runs',
            }
          : label,
    };
    if (gate.askPattern !== undefined) result.askPattern = gate.askPattern;
    if (state.currentStage !== undefined) result.stage = state.currentStage;
    return result;
  });

  connection.onRequest(VerifyMethod, (raw: unknown): VerifyResult => {
    const { uri } = VerifyParams.parse(raw);
    const doc = documents.get(uri);
    const path = pathOf(uri);
    const text = doc?.getText() ?? (path ? readIfFile(path) : undefined);
    if (text === undefined) throw new Error(`cannot read ${uri}`);
    runs.delete(uri);
    update(uri, text, doc?.version);
    const s = runs.get(uri)!.model.summary();
    return {
      backend: label,
      summary: s ? { return: s.return, outcome: s.outcome.reward, steps: s.steps } : null,
      fatal: runs.get(uri)!.model.context.fatal ?? null,
    };
  });

  connection.onHover(({ textDocument, position }) => {
    const run = runs.get(textDocument.uri);
    // Why the backend is what it is (a long note when Lean is missing) is said once, in the status bar's tooltip.
    return run ? (hoverAt(run.model, position.line, source()) ?? null) : null;
  });

  connection.onCodeLens(({ textDocument }) => {
    const run = runs.get(textDocument.uri);
    // The run's file name, only for a file of a workspace's .lar/runs (what a branch reads back by name).
    const m = /\/\.lar\/runs\/([^/]+)$/.exec(textDocument.uri);
    let name: string | undefined;
    try {
      name = m ? decodeURIComponent(m[1]!) : undefined;
    } catch {
      name = undefined;
    }
    return run ? codeLenses(run.model, name) : [];
  });

  connection.onDocumentSymbol(({ textDocument }) => {
    const run = runs.get(textDocument.uri);
    return run ? documentSymbols(run.model) : [];
  });

  connection.onShutdown(() => {
    lean?.dispose();
    for (const t of leanPending.values()) clearTimeout(t);
  });

  documents.listen(connection);
  connection.listen();
}

/** A trajectory on disk, or undefined when it is missing or not a bounded regular file (a device, a FIFO). */
function readIfFile(path: string): string | undefined {
  try {
    return readBoundedText(path, MAX_TRAJECTORY_BYTES, 'the trajectory');
  } catch {
    return undefined;
  }
}
