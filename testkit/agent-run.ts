/** The options every scripted agent run in the tests repeats, given once, so a test states only what it is about. */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent } from '../core/agent/loop';
import type { AgentOptions, AgentResult } from '../core/agent/types';
import { ModelClient } from '../core/model/client';
import { defaultWorkflow } from '../core/workflow/load';

export type RunOverrides = Partial<AgentOptions> & {
  /** The scripted server's endpoint: the model is a `ModelClient` there with no retries, unless `model` is given. */
  endpoint?: string;
};

/**
 * `runAgent` with test defaults: task `t`, the default workflow (and, for a
 * workflow given, that workflow as its own reference), model `LAR-9B`, a new
 * temporary workspace with the trajectory in its `.lar/runs`, tools that
 * succeed with nothing to say and an outcome check that passes.
 */
export function runWith(overrides: RunOverrides): Promise<AgentResult> {
  const { endpoint, ...given } = overrides;
  const model = given.model ?? (endpoint === undefined ? undefined : new ModelClient({ endpoint, retries: 0 }));
  if (!model) throw new Error('runWith needs the endpoint of a model or the model');
  const workspace = given.workspace ?? mkdtempSync(join(tmpdir(), 'lar-run-'));
  const workflow = given.workflow ?? defaultWorkflow();
  return runAgent({
    task: 't',
    workflowRef: given.workflow ?? 'builtin:default-coding',
    modelInfo: { name: 'LAR-9B' },
    trajectoryPath: join(workspace, '.lar', 'runs', 'run.lar.jsonl'),
    execute: () => Promise.resolve({ status: 'ok', result: {}, observation: '' }),
    runOutcomeCheck: () => Promise.resolve({ type: 'outcome', command: 'true', exitCode: 0 }),
    ...given,
    model,
    workspace,
    workflow,
  });
}
