/**
 * Diagnostics and rewards publication, incremental from the first changed line, and the Lean checker's
 * re-judging after a pause: every handler that changes a run ends here.
 */
import { verifyTrajectoryTextWith } from '../../core/verifier/verify';
import { fileResolver } from '../../core/workflow/resolve';
import { allDiagnostics, lineDiagnostics, type DiagnosticSource } from '../diagnostics';
import { pullChanged, pullDropped } from './pull-reports';
import { rewardsAfterPull, sendRewards } from './rewards';
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

/**
 * Publishes diagnostics and rewards after an update that changed lines from `from` on. `byClient`: the
 * client's own edit (a pulling client asks after it by itself); `all`: every diagnostic may have changed;
 * `rejudge`: the Lean checker judges it again after a pause (not when its own verdicts are being published);
 * `same`: the text did not change.
 */
export function publish(
  state: ServerState,
  uri: string,
  run: Run,
  from: number,
  {
    byClient = false,
    all = false,
    rejudge = true,
    same = false,
  }: { byClient?: boolean; all?: boolean; rejudge?: boolean; same?: boolean } = {},
): void {
  const { model } = run;
  const passed = model.summary()?.outcome.reward === 1;
  // `same`: the text did not change (an editor reloading what a live run already appended): every part stays.
  const touched = same ? [] : run.partitions.changed(from, model.lineCount, all || passed !== run.passed);
  run.passed = passed;
  // The smaller message first, so neither waits behind the other: a live
  // append's rewards are one line, a full document's rewards outweigh its diagnostics.
  if (from > 0) sendRewards(state, uri, run, from);
  const pulls = pullChanged(state, uri, run, touched, byClient);
  if (pulls) forgetLineDiagnostics(run, from);
  else push(state, uri, run, from);
  // A client about to pull this document (its own edit of an open one) gets the whole rewards after that.
  if (from === 0 && pulls && byClient && state.documents.get(uri)) rewardsAfterPull(state, uri);
  else if (from === 0) sendRewards(state, uri, run, 0);
  if (state.lean && rejudge) scheduleLean(state, uri, run);
}

function push(state: ServerState, uri: string, run: Run, from: number): void {
  const src = state.source();
  rebuildLineDiagnostics(run, from, src);
  state.pushed.add(uri);
  void state.connection.sendDiagnostics({
    uri,
    diagnostics: allDiagnostics(run.lineDiags, run.model, src),
    ...(run.version !== undefined ? { version: run.version } : {}),
  });
}

/** Pull carried a change: the push cache no longer holds lines from `from` on. */
function forgetLineDiagnostics(run: Run, from: number): void {
  if (from >= run.lineStart.length) return;
  run.lineDiags.length = run.lineStart[from]!;
  run.lineStart.length = from;
}

/** A run left the server (its editor closed, or a newer run began): the client drops its diagnostics. */
export function dropped(state: ServerState, uri: string): void {
  state.pushed.delete(uri);
  void state.connection.sendDiagnostics({ uri, diagnostics: [] });
  pullDropped(state, uri);
}

/** Publishes every run again from its first line: the backend changed. */
export function publishAll(state: ServerState): void {
  for (const [uri, run] of state.runs) publish(state, uri, run, 0, { all: true });
}

export function update(
  state: ServerState,
  uri: string,
  text: string,
  version: number | undefined,
  byClient = false,
): void {
  const run = state.runFor(uri);
  run.version = version;
  const stats = run.model.setText(text);
  publish(state, uri, run, stats.from, { byClient, same: stats.same === true });
}

/** With the Lean backend, the Lean checker re-judges the document after a pause and its verdicts replace the builtin ones. */
function scheduleLean(state: ServerState, uri: string, run: Run): void {
  const { leanPending } = state;
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
          forgetLineDiagnostics(run, 0);
          publish(state, uri, run, 0, { all: true, rejudge: false });
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
