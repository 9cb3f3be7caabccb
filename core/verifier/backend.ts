import type { SandboxRecord, TrajectoryEvent } from '../schema/trajectory';
import type { Workflow } from '../schema/workflow';
import { VerifierState } from './state';
import type { GateResult, ProposedCall, StepResult, TrajectorySummary } from './types';

/** Which verifier answered: the TypeScript one in this process, or the Lean checker. */
export type BackendName = 'builtin' | 'lean';

/**
 * One run being verified, event by event. The builtin backend answers at once;
 * the Lean backend answers from a warm `lar-verify` process, hence promises.
 */
export interface VerifierSession {
  append(event: TrajectoryEvent, line: number): Promise<StepResult>;
  gate(call: ProposedCall): Promise<GateResult>;
  summary(): Promise<TrajectorySummary>;
  close(): void;
}

export interface VerifierBackend {
  readonly name: BackendName;
  /** Opens a session for a run under a (well-formed) workflow; `headerLine` is where the first visit begins. */
  open(workflow: Workflow, headerLine?: number, sandbox?: SandboxRecord): Promise<VerifierSession>;
  dispose(): void;
}

/** `f()` run now, as a promise: what it throws becomes a rejection, as in an async function. */
const answer = <T>(f: () => T): Promise<T> => new Promise((resolve) => resolve(f()));

/** The TypeScript implementation of docs/rewards.md, always available. */
export class BuiltinBackend implements VerifierBackend {
  readonly name = 'builtin' as const;

  open(workflow: Workflow, headerLine = 1, sandbox?: SandboxRecord): Promise<VerifierSession> {
    return answer<VerifierSession>(() => {
      const state = new VerifierState(workflow, headerLine, sandbox);
      return {
        append: (event, line) => answer(() => state.append(event, line)),
        gate: (call) => answer(() => state.gate(call)),
        summary: () => answer(() => state.summary()),
        close: () => {},
      };
    });
  }

  dispose(): void {}
}
