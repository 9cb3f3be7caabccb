/**
 * Pure (no `vscode`): how a live run talks to the language server. Every
 * line the loop writes is sent with `lar/appendStep` (the header, line 1,
 * before the first one), in order; the gate waits for those, then asks
 * `lar/checkToolCall`. When the server is not running or a request fails, a
 * verifier state kept from the same events decides instead (the same
 * definitions as the server's builtin backend), and the per-tool approval
 * setting is applied on top either way.
 */
import type { AgentEvent, AgentGate } from '../../core/agent/loop';
import type { AppendStepParams, CheckToolCallParams, CheckToolCallResult } from '../../core/protocol/lsp';
import type { Verdict } from '../../core/verifier/checks';
import { VerifierState } from '../../core/verifier/state';
import type { GateResult } from '../../core/verifier/types';
import type { Workflow } from '../../core/schema/workflow';
import { applyApprovalPolicy } from './approvals';

export interface GateServer {
  readonly running: boolean;
  /** Counts the server's starts: a new one after a crash has lost the run and catches up from the file. */
  readonly generation?: number;
  appendStep(p: AppendStepParams): Promise<void>;
  checkToolCall(p: CheckToolCallParams): Promise<CheckToolCallResult>;
}

export interface LiveGate {
  gate: AgentGate;
  /** Feed every loop event here (before showing it). */
  observe(e: AgentEvent): void;
  /** Resolves once every line so far was handed to the server. */
  flushed(): Promise<void>;
  /** Whether the server (not the local fallback) is still deciding. */
  readonly viaServer: boolean;
}

/** A server that is alive but does not answer must not hold the run: past this, the local verifier decides. */
const GATE_TIMEOUT_MS = 10_000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export function toGateResult(r: CheckToolCallResult): GateResult {
  return {
    decision: r.decision,
    verdicts: r.verdicts as Verdict[],
    reason: r.reason,
    toolReward: r.toolReward,
    ...(r.askPattern !== undefined ? { askPattern: r.askPattern } : {}),
  };
}

export function createLiveGate(opts: {
  server: GateServer | undefined;
  uri: string;
  trajectoryPath: string;
  workflow: Workflow;
  approvals: Record<string, unknown>;
  log?: (message: string) => void;
}): LiveGate {
  const shadow = new VerifierState(opts.workflow, 1);
  const server = opts.server;
  let serverOk = server?.running ?? false;
  let sent: Promise<void> = Promise.resolve();
  let last: { line: number; text: string } | undefined;
  const down = (what: string, e: unknown) => {
    if (serverOk)
      opts.log?.(
        `${what} failed (${e instanceof Error ? e.message : String(e)}): gating with the builtin verifier until the server is back`,
      );
    serverOk = false;
  };
  const send = (line: number, text: string) => {
    if (!server) return;
    sent = sent
      .then(() => (serverOk ? server.appendStep({ uri: opts.uri, text, line }) : undefined))
      .catch((e: unknown) => down('lar/appendStep', e));
  };
  /**
   * A restarted server knows nothing of the run: the latest line, which does
   * not follow anything it has, makes it catch up from the file on disk (each
   * line is flushed there before it is announced). Done once per server
   * generation, before anything else is asked of it.
   */
  let syncedGeneration = server?.generation;
  const recover = () => {
    if (!server?.running || server.generation === undefined || server.generation === syncedGeneration) return;
    syncedGeneration = server.generation;
    if (!serverOk) opts.log?.('the language server is back: it catches up from the trajectory file');
    serverOk = true;
    if (last) send(last.line, last.text);
  };
  const append = (line: number, text: string) => {
    recover();
    last = { line, text };
    if (serverOk) send(line, text);
  };
  const observe = (e: AgentEvent) => {
    if (!('line' in e)) return;
    if (e.kind === 'step' || e.kind === 'outcome') shadow.append(e.event, e.line);
    append(e.line, e.text);
  };
  const gate: AgentGate = async (call) => {
    let g: GateResult | undefined;
    recover();
    if (serverOk && server?.running) {
      try {
        await sent;
        if (serverOk) {
          const r = await withTimeout(
            server.checkToolCall({
              uri: opts.uri,
              call:
                call.argsError !== undefined
                  ? { tool: call.tool, args: call.args, argsError: call.argsError }
                  : { tool: call.tool, args: call.args },
            }),
            GATE_TIMEOUT_MS,
          );
          g = toGateResult(r);
        }
      } catch (e) {
        down('lar/checkToolCall', e);
      }
    }
    g ??= shadow.gate(call);
    return applyApprovalPolicy(g, call.tool, opts.approvals);
  };
  return {
    gate,
    observe,
    flushed: () => sent,
    get viaServer() {
      return serverOk;
    },
  };
}
