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
import type { GateResult, ProposedCall } from '../../core/verifier/types';
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
  /** The stage the run is in after the events observed so far; undefined once it ended. */
  readonly stage: string | undefined;
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

/**
 * The run's line to the language server: the lines sent so far, whether it still answers, and
 * catching a restarted server up.
 */
class ServerLink {
  /** Whether the server (not the local fallback) is deciding. */
  ok: boolean;
  /** Settles once every line so far was handed to the server. */
  sent: Promise<void> = Promise.resolve();
  private last: { line: number; text: string } | undefined;
  private syncedGeneration: number | undefined;
  private readonly server: GateServer | undefined;
  private readonly uri: string;
  private readonly log: ((message: string) => void) | undefined;

  constructor(server: GateServer | undefined, uri: string, log: ((message: string) => void) | undefined) {
    this.server = server;
    this.uri = uri;
    this.log = log;
    this.ok = server?.running ?? false;
    this.syncedGeneration = server?.generation;
  }

  append(line: number, text: string): void {
    this.recover();
    this.last = { line, text };
    if (this.ok) this.send(line, text);
  }

  /** The server's decision, or undefined when it is down, fails or does not answer in time. */
  async check(call: ProposedCall): Promise<GateResult | undefined> {
    this.recover();
    const server = this.server;
    if (!this.ok || !server?.running) return undefined;
    try {
      await this.sent;
      if (!this.ok) return undefined;
      const r = await withTimeout(
        server.checkToolCall({
          uri: this.uri,
          call:
            call.argsError !== undefined
              ? { tool: call.tool, args: call.args, argsError: call.argsError }
              : { tool: call.tool, args: call.args },
        }),
        GATE_TIMEOUT_MS,
      );
      return toGateResult(r);
    } catch (e) {
      this.down('lar/checkToolCall', e);
      return undefined;
    }
  }

  private down(what: string, e: unknown): void {
    if (this.ok)
      this.log?.(
        `${what} failed (${e instanceof Error ? e.message : String(e)}): gating with the builtin verifier until the server is back`,
      );
    this.ok = false;
  }

  private send(line: number, text: string): void {
    const server = this.server;
    if (!server) return;
    this.sent = this.sent
      .then(() => (this.ok ? server.appendStep({ uri: this.uri, text, line }) : undefined))
      .catch((e: unknown) => this.down('lar/appendStep', e));
  }

  /**
   * A restarted server knows nothing of the run: the latest line, which does
   * not follow anything it has, makes it catch up from the file on disk (each
   * line is flushed there before it is announced). Done once per server
   * generation, before anything else is asked of it.
   */
  private recover(): void {
    const server = this.server;
    if (!server?.running || server.generation === undefined || server.generation === this.syncedGeneration) return;
    this.syncedGeneration = server.generation;
    if (!this.ok) this.log?.('the language server is back: it catches up from the trajectory file');
    this.ok = true;
    if (this.last) this.send(this.last.line, this.last.text);
  }
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
  const link = new ServerLink(opts.server, opts.uri, opts.log);
  return {
    gate: async (call) => {
      const g = (await link.check(call)) ?? shadow.gate(call);
      return applyApprovalPolicy(g, call.tool, opts.approvals);
    },
    observe: (e) => {
      if (!('line' in e)) return;
      if (e.kind === 'step' || e.kind === 'outcome' || e.kind === 'mcp') shadow.append(e.event, e.line);
      link.append(e.line, e.text);
    },
    flushed: () => link.sent,
    get viaServer() {
      return link.ok;
    },
    get stage() {
      return shadow.currentStage;
    },
  };
}
