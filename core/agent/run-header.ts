/** The run's limits with their defaults, and line 1 of its trajectory: apart from the loop, which is long enough. */
import type { WireFormat } from '../model/formats';
import type { ContextWindow } from '../model/server-info';
import type { Header } from '../schema/trajectory';
import { partsOf } from '../schema/user-message';
import { maskEndpoint } from '../secrets/endpoint';
import type { AgentOptions } from './types';

/** The run's limits, defaults filled in. */
export function limitsOf(opts: AgentOptions) {
  return {
    maxSteps: 200,
    maxTimeMs: 3_600_000,
    maxTokens: Infinity,
    maxIdleTurns: 3,
    maxRepeatedFailures: 3,
    ...opts.limits,
  };
}

/** Line 1 of the trajectory: what the run was asked and sized for. */
export function headerOf(opts: AgentOptions, format: WireFormat, window: ContextWindow, maxRepeats: number): Header {
  const parts = partsOf({ text: opts.task, ...(opts.attachments ? { attachments: opts.attachments } : {}) });
  return {
    lar: 1,
    type: 'header',
    task: opts.task,
    ...(parts ? { parts } : {}),
    workflow: opts.workflowRef,
    model: {
      name: opts.modelInfo.name,
      ...(opts.modelInfo.endpoint ? { endpoint: maskEndpoint(opts.modelInfo.endpoint) } : {}),
      ...(opts.modelInfo.endpointName ? { endpointName: opts.modelInfo.endpointName } : {}),
      ...(opts.modelInfo.temperature !== undefined ? { temperature: opts.modelInfo.temperature } : {}),
      ...(opts.modelInfo.seed !== undefined ? { seed: opts.modelInfo.seed } : {}),
      ...(opts.modelInfo.tokens ? { tokens: opts.modelInfo.tokens } : {}),
      toolFormat: format,
      contextWindow: window.tokens,
      contextWindowSource: window.source,
    },
    started: new Date().toISOString(),
    ...(opts.runId ? { id: opts.runId } : {}),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    ...(opts.rules?.files.length ? { rules: opts.rules.files.map((f) => f.path) } : {}),
    ...(opts.thread ? { thread: opts.thread } : {}),
    limits: { maxRepeatedFailures: maxRepeats },
    ...(opts.mcp?.servers.length ? { mcp: { servers: opts.mcp.servers } } : {}),
  };
}
