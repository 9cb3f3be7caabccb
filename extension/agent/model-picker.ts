/**
 * The chat's model picker on the extension's side: what every configured endpoint serves, the model this
 * chat runs with (kept over a reload, dropped by New), and the settings a run or a check uses with it.
 */
import * as vscode from 'vscode';
import { DEFAULT_ENDPOINT_NAME } from '../../core/model/endpoints';
import {
  choiceProblem,
  listEndpoints,
  resolveTarget,
  servedModelIds,
  type EndpointListing,
  type ModelChoice,
} from '../../core/model/model-choice';
import { clip, type ToWebview } from '../../core/protocol/chat';
import { maskEndpoint } from '../../core/secrets/endpoint';
import { redact } from '../../core/secrets/redact';
import { readAgentConfig, type AgentConfig } from '../config';
import { readApiKey } from './endpoint-keys';

/** This chat's pick (workspace state): a reload keeps it, New forgets it. */
const CHOICE_KEY = 'lean4Agentic.chat.model';
/** How long the picker waits for an endpoint's /v1/models. */
const LIST_TIMEOUT_MS = 8000;

/** The settings with a chat's pick in force: its endpoint and model, and the endpoint's name (for its key). */
export type ChatConfig = { config: AgentConfig; endpointName: string; chosen: boolean } | { error: string };

/** The settings as a run of this chat uses them: `choice` replaces the endpoint and the model. */
export function chatConfig(choice: ModelChoice | undefined, base: AgentConfig = readAgentConfig()): ChatConfig {
  const target = resolveTarget(base.endpoints, base.model, choice);
  if ('error' in target) return target;
  return {
    config: { ...base, endpoint: target.endpoint.url, model: target.model },
    endpointName: target.endpoint.name,
    chosen: target.chosen,
  };
}

function isChoice(v: unknown): v is ModelChoice {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as ModelChoice).endpoint === 'string' &&
    typeof (v as ModelChoice).model === 'string'
  );
}

export class ModelPicker {
  private choice: ModelChoice | undefined;
  private listings: EndpointListing[] = [];
  private seq = 0;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly post: (msg: ToWebview) => void,
    private readonly output: vscode.LogOutputChannel,
  ) {
    const saved = context.workspaceState.get<unknown>(CHOICE_KEY);
    this.choice = isChoice(saved) ? saved : undefined;
  }

  /** This chat's pick; undefined: the settings' endpoint and model. */
  get current(): ModelChoice | undefined {
    return this.choice;
  }

  /** Asks every endpoint for its models at once and shows the list; only the latest listing is shown. */
  async list(): Promise<void> {
    const seq = ++this.seq;
    const { endpoints } = readAgentConfig();
    const keys = new Map<string, string | undefined>();
    for (const e of endpoints.endpoints) keys.set(e.name, await readApiKey(this.context.secrets, e.name));
    const listings = await listEndpoints(
      endpoints.endpoints,
      async (e, signal) => {
        try {
          return await servedModelIds(e.url, keys.get(e.name), signal);
        } catch (err) {
          throw new Error(redact(err instanceof Error ? err.message : String(err), keys.get(e.name)));
        }
      },
      LIST_TIMEOUT_MS,
    );
    if (seq !== this.seq) return;
    this.listings = listings;
    this.post({
      type: 'models',
      endpoints: listings.slice(0, 21).map((l) => ({
        name: clip(l.name, 40),
        url: clip(l.url, 1000),
        ...('error' in l
          ? { error: clip(l.error, 2000) }
          : { models: l.models.slice(0, 500).map((m) => clip(m, 300)) }),
      })),
      problems: endpoints.problems.slice(0, 40).map((p) => clip(p, 1000)),
    });
    this.postChoice();
  }

  /** The chat picked a model: only one its endpoint listed is taken, and never during a run. */
  choose(choice: ModelChoice, running: boolean): string | undefined {
    if (running) return 'The model can be changed between runs: wait for this one to end (or stop it).';
    const problem = choiceProblem(this.listings, choice);
    if (problem) return `That model cannot be picked: ${problem}.`;
    this.set(choice);
    this.output.info(`this chat now runs ${choice.model} on the endpoint "${choice.endpoint}"`);
    return undefined;
  }

  /** New chat: the settings' default again. */
  reset(): void {
    this.set(undefined);
  }

  /**
   * A chat read back: the pick its last run recorded, unless one was made since. A run on the settings'
   * endpoint and model was no pick: the chat goes on following the settings.
   */
  restore(fromHeader: ModelChoice | undefined): void {
    if (this.choice || !fromHeader) return;
    const { model } = readAgentConfig();
    if (fromHeader.endpoint === DEFAULT_ENDPOINT_NAME && (model === '' || model === fromHeader.model)) return;
    this.set(fromHeader);
  }

  private set(choice: ModelChoice | undefined): void {
    this.choice = choice;
    void this.context.workspaceState.update(CHOICE_KEY, choice);
    this.postChoice();
  }

  /** What the picker's button shows: the pick, else the default model (the first served when the setting is empty). */
  postChoice(): void {
    const resolved = chatConfig(this.choice);
    if ('error' in resolved) {
      const c = this.choice!;
      this.post({
        type: 'modelChoice',
        model: clip(c.model, 300),
        endpoint: clip(c.endpoint, 40),
        url: '',
        chosen: true,
        problem: clip(resolved.error, 2000),
      });
      return;
    }
    const listing = this.listings.find((l) => l.name === DEFAULT_ENDPOINT_NAME);
    const first = listing && 'models' in listing ? (listing.models[0] ?? '') : '';
    this.post({
      type: 'modelChoice',
      model: clip(resolved.config.model || first, 300),
      endpoint: clip(resolved.endpointName, 40),
      url: clip(maskEndpoint(resolved.config.endpoint), 1000),
      chosen: resolved.chosen,
    });
  }
}
