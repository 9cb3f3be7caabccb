/** The options every scripted agent run in the tests repeats, given once, so a test states only what it is about. */

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent } from '../core/agent/loop';
import type { AgentOptions, AgentResult } from '../core/agent/types';
import { ModelClient } from '../core/model/client';
import { defaultWorkflow } from '../core/workflow/load';

/** An outcome check that passes: a test that leans on it says so, so no test gets a passing outcome unasked. */
export const outcomePasses: AgentOptions['runOutcomeCheck'] = () =>
  Promise.resolve({ type: 'outcome', command: 'true', exitCode: 0 });

export type RunOverrides = Partial<AgentOptions> &
  Pick<AgentOptions, 'runOutcomeCheck'> & {
    /** The scripted server's endpoint: the model is a `ModelClient` there with no retries, unless `model` is given. */
    endpoint?: string;
  };

/**
 * `runAgent` with test defaults: task `t`, the default workflow (and, for a
 * workflow given, that workflow as its own reference), model `LAR-9B`, a new
 * temporary workspace with the trajectory in its `.lar/runs`, tools that
 * succeed with nothing to say. The outcome check is always the test's own.
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
    ...given,
    model,
    workspace,
    workflow,
  });
}
