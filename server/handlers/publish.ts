/**
 * Diagnostics and rewards publication, incremental from the first changed line, and the Lean checker's
 * re-judging after a pause: every handler that changes a run ends here.
 */
import { RewardsMethod } from '../../core/protocol/lsp';
import { verifyTrajectoryTextWith } from '../../core/verifier/verify';
import { fileResolver } from '../../core/workflow/resolve';
import { allDiagnostics, lineDiagnostics, type DiagnosticSource } from '../diagnostics';
import { rewardsParams } from '../presentation';
import { pathOf, type Run, type ServerState } from '../server-state';

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

/** Publishes diagnostics and rewards after an update that changed lines from `from` on. */
export function publish(state: ServerState, uri: string, run: Run, from: number): void {
  const { connection } = state;
  const { model } = run;
  const src = state.source();
  rebuildLineDiagnostics(run, from, src);
  const diagnostics = allDiagnostics(run.lineDiags, model, src);
  // The smaller message first, so neither waits behind the other: a live
  // append's rewards are one line, a full document's rewards outweigh its diagnostics.
  const rewards = () =>
    void connection.sendNotification(RewardsMethod, rewardsParams(model, uri, state.label, run.version, from));
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
  if (state.lean) scheduleLean(state, uri, run);
}

/** Publishes every run again from its first line: the backend changed. */
export function publishAll(state: ServerState): void {
  for (const [uri, run] of state.runs) publish(state, uri, run, 0);
}

export function update(state: ServerState, uri: string, text: string, version: number | undefined): void {
  const run = state.runFor(uri);
  run.version = version;
  const stats = run.model.setText(text);
  publish(state, uri, run, stats.from);
}

/** With the Lean backend, the Lean checker re-judges the document after a pause and its verdicts replace the builtin ones. */
function scheduleLean(state: ServerState, uri: string, run: Run): void {
  const { connection, leanPending } = state;
  clearTimeout(leanPending.get(uri));
  leanPending.set(
    uri,
    setTimeout(() => {
      leanPending.delete(uri);
      const text = run.model.lines.map((l) => l.text).join('\n');
      const path = pathOf(uri);
      verifyTrajectoryTextWith(state.lean!, text, path ? { resolve: fileResolver(path) } : {})
        .then((report) => {
          if (state.runs.get(uri) !== run) return; // dropped meanwhile (an earlier run left the Problems panel)
          if (run.model.lines.map((l) => l.text).join('\n') !== text) return; // stale
          run.model.adopt(report);
          const src = state.source();
          rebuildLineDiagnostics(run, 0, src);
          void connection.sendNotification(RewardsMethod, rewardsParams(run.model, uri, state.label, run.version, 0));
          void connection.sendDiagnostics({ uri, diagnostics: allDiagnostics(run.lineDiags, run.model, src) });
        })
        .catch((e: Error) => {
          state.lean?.dispose();
          state.lean = undefined;
          state.setLabel({
            backend: 'builtin',
            reason: `the Lean checker failed (${e.message}); the builtin verifier decides`,
          });
          publishAll(state);
        });
    }, 200),
  );
}
