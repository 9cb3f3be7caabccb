/** The custom requests an agent or the extension asks of the server: lar/checkToolCall (the gate) and lar/verify. */
import {
  CheckToolCallMethod,
  CheckToolCallParams,
  VerifyMethod,
  VerifyParams,
  type CheckToolCallResult,
  type VerifyResult,
} from '../../core/protocol/lsp';
import { pathOf, readIfFile, type ServerState } from '../server-state';
import { update } from './publish';

export function registerLarRequests(state: ServerState): void {
  const { connection, runs } = state;
  connection.onRequest(CheckToolCallMethod, (raw: unknown): CheckToolCallResult => {
    const { uri, call } = CheckToolCallParams.parse(raw);
    const run = runs.get(uri);
    const live = run?.model.liveState;
    if (!live)
      throw new Error(
        `no verified run for ${uri}${run?.model.context.fatal ? `: ${run.model.context.fatal}` : ' (open it or send lar/appendStep first)'}`,
      );
    const gate = live.gate(call);
    const result: CheckToolCallResult = {
      decision: gate.decision,
      reason: gate.reason,
      toolReward: gate.toolReward,
      verdicts: gate.verdicts,
      // The gate answers from the live state in this process: the builtin verifier decides it.
      backend:
        state.label.backend === 'lean'
          ? {
              backend: 'builtin',
              reason:
                'the gate runs on the live state (builtin) so the agent never waits on the Lean process; the Lean checker re-judges each step after it runs',
            }
          : state.label,
    };
    if (gate.askPattern !== undefined) result.askPattern = gate.askPattern;
    if (live.currentStage !== undefined) result.stage = live.currentStage;
    return result;
  });

  connection.onRequest(VerifyMethod, (raw: unknown): VerifyResult => {
    const { uri } = VerifyParams.parse(raw);
    const doc = state.documents.get(uri);
    const path = pathOf(uri);
    const text = doc?.getText() ?? (path ? readIfFile(path) : undefined);
    if (text === undefined) throw new Error(`cannot read ${uri}`);
    runs.delete(uri);
    update(state, uri, text, doc?.version);
    const s = runs.get(uri)!.model.summary();
    return {
      backend: state.label,
      summary: s ? { return: s.return, outcome: s.outcome.reward, steps: s.steps } : null,
      fatal: runs.get(uri)!.model.context.fatal ?? null,
    };
  });
}
