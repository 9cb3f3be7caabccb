/** lar/appendStep: a live run's steps as the agent writes them, so the gate sees each step before the file is reloaded. */
import { AppendStepMethod, AppendStepParams } from '../../core/protocol/lsp';
import { pathOf, readIfFile, type ServerState } from '../server-state';
import { dropped, publish, update } from './publish';

export function registerAppendStep(state: ServerState): void {
  const { connection } = state;
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
    if (line === 1 && state.options.problems === 'open') dropEarlierRuns(state, uri);
    const run = state.runFor(uri);
    const have = run.model.lineCount;
    if (line === have + 1) {
      run.version = undefined; // these diagnostics are ahead of the editor's copy
      const stats = run.model.append(text);
      publish(state, uri, run, stats.from);
      return;
    }
    if (line <= have && run.model.lines[line - 1]?.text === text) return; // already have it
    // Out of step (the server restarted, or a line was missed): catch up from the file on disk.
    const path = pathOf(uri);
    const onDisk = path ? readIfFile(path) : undefined;
    if (onDisk !== undefined) update(state, uri, onDisk, undefined);
    else
      connection.console.error(
        `lar: ${AppendStepMethod} line ${line} does not follow line ${have} of ${uri}, and the file cannot be read`,
      );
  });
}

/**
 * A new run begins: the runs before it leave the Problems panel unless their trajectory is open
 * (or every run's problems are asked for); the gate needs only the live run.
 */
function dropEarlierRuns(state: ServerState, uri: string): void {
  for (const other of [...state.runs.keys()]) {
    if (other === uri || state.documents.get(other)) continue;
    state.runs.delete(other);
    // A Lean re-check on its way would publish them again.
    clearTimeout(state.leanPending.get(other));
    state.leanPending.delete(other);
    dropped(state, other);
  }
}
