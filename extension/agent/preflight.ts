/**
 * The checks before a run from the chat: a usable workflow setting and a server that serves the model. A
 * run that could never start says why once, with the button that fixes it, and leaves no trajectory.
 */
import type * as vscode from 'vscode';
import { redact } from '../../core/secrets/redact';
import type { ErrorAction } from '../../core/protocol/chat';
import type { Workflow } from '../../core/schema/workflow';
import { loadWorkflowRef } from '../../core/workflow/resolve';
import type { ModelChoice } from '../../core/model/model-choice';
import type { AgentConfig } from '../config';
import { modelClientFor } from './connection';
import { readApiKey } from './endpoint-keys';
import { actionsFor } from './connection-probe';
import { chatConfig } from './model-picker';

/** What the checks before a run found: the settings, the workflow and the model to run with. */
export interface Preflight {
  config: AgentConfig;
  workflow: Workflow;
  model: ReturnType<typeof modelClientFor>;
  modelName: string;
  /** The endpoint's name among the named ones (its key is that endpoint's). */
  endpointName: string;
}

export interface PreflightHost {
  readonly secrets: vscode.SecretStorage;
  /** The workspace folder the run works in. */
  readonly ws: string;
  readonly signal: AbortSignal;
  /** The chat's model pick (undefined: the settings' endpoint and model). */
  readonly choice: ModelChoice | undefined;
  /** The key was read: from now on it is masked. */
  onKey(apiKey: string | undefined): void;
  fail(message: string, actions?: ErrorAction[]): void;
}

/** The settings, the key, the workflow and the model: undefined when the run cannot start (said already). */
export async function preflight(host: PreflightHost): Promise<Preflight | undefined> {
  const chat = chatConfig(host.choice);
  if ('error' in chat) {
    host.fail(chat.error, ['openSettings']);
    return undefined;
  }
  const { config, endpointName } = chat;
  const apiKey = await readApiKey(host.secrets, endpointName);
  host.onKey(apiKey);
  const wf = loadWorkflowRef(config.workflow, host.ws);
  if ('error' in wf) {
    host.fail(`The workflow setting (${config.workflow}) is not usable: ${wf.error}`, ['openWorkflowSetting']);
    return undefined;
  }
  const model = modelClientFor(config, apiKey);
  const modelName = await resolveModel(host, config, model, apiKey, chat.chosen);
  return modelName === undefined ? undefined : { config, workflow: wf.workflow, model, modelName, endpointName };
}

async function resolveModel(
  host: PreflightHost,
  config: AgentConfig,
  model: Preflight['model'],
  apiKey: string | undefined,
  chosen: boolean,
): Promise<string | undefined> {
  try {
    // The server is asked first even when the model is named: a run it could never answer is
    // said once and leaves no trajectory (a listing it refuses for another reason does not stop the run).
    const served = await model.servedModels(host.signal).catch((e: unknown) => {
      const err = model.classify(e);
      if (err.kind === 'unreachable' || err.kind === 'unauthorized' || err.kind === 'cancelled') throw err;
      return undefined;
    });
    if (served?.length && config.model && !served.some((m) => m.id === config.model)) {
      host.fail(
        `The server does not serve the model "${config.model}" (it serves: ${served.map((m) => m.id).join(', ')}). ${chosen ? 'Pick another model next to Run.' : 'Change the model setting or leave it empty.'}`,
        chosen ? [] : ['openModelSetting'],
      );
      return undefined;
    }
    return await model.resolveModel(host.signal, served);
  } catch (e) {
    const err = model.classify(e);
    if (err.kind !== 'cancelled') host.fail(redact(err.message, apiKey), actionsFor(err));
    return undefined;
  }
}
