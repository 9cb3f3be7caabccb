/**
 * The model a chat runs with, picked among what the named endpoints serve: the listing of every endpoint at
 * once (each under a time limit, a failure shown beside the others), and the choice checked against it.
 */
import { ModelClient } from './client';
import { DEFAULT_ENDPOINT_NAME, endpointNamed, type EndpointsConfig, type NamedEndpoint } from './endpoints';
import { maskEndpoint, maskUrlsIn } from '../secrets/endpoint';

/** A chat's pick: a model of a named endpoint. Absent: the settings' endpoint and model. */
export interface ModelChoice {
  endpoint: string;
  model: string;
}

/** What one endpoint answered at /v1/models: its model ids, or why it did not. */
export type EndpointListing =
  { name: string; url: string; models: string[] } | { name: string; url: string; error: string };

/** Where a run goes: the endpoint and the model to ask ('' for the first the server lists). */
export interface ModelTarget {
  endpoint: NamedEndpoint;
  model: string;
  /** Picked in the chat, not the settings' default. */
  chosen: boolean;
}

/** Lists each endpoint's models, all at once, each within `timeoutMs`; a failure is that endpoint's entry. */
export async function listEndpoints(
  endpoints: readonly NamedEndpoint[],
  list: (endpoint: NamedEndpoint, signal: AbortSignal) => Promise<string[]>,
  timeoutMs: number,
): Promise<EndpointListing[]> {
  return Promise.all(
    endpoints.map(async (e): Promise<EndpointListing> => {
      const url = maskEndpoint(e.url);
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), timeoutMs);
      try {
        return { name: e.name, url, models: await list(e, ac.signal) };
      } catch (err) {
        const why = ac.signal.aborted
          ? `no answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`
          : maskUrlsIn(err instanceof Error ? err.message : String(err));
        return { name: e.name, url, error: why };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

/** The model ids an endpoint serves, through the real client (the key only to its own endpoint). */
export async function servedModelIds(url: string, apiKey: string | undefined, signal: AbortSignal): Promise<string[]> {
  const client = new ModelClient({ endpoint: url, ...(apiKey ? { apiKey } : {}), retries: 0 });
  return (await client.servedModels(signal)).map((m) => m.id);
}

/** Why a pick cannot be taken (the chat sends names; only what an endpoint listed is accepted). */
export function choiceProblem(listings: readonly EndpointListing[], choice: ModelChoice): string | undefined {
  const listing = listings.find((l) => l.name === choice.endpoint);
  if (!listing) return `there is no endpoint named "${choice.endpoint}" (the list may be out of date: open it again)`;
  if ('error' in listing) return `the endpoint "${listing.name}" did not answer: ${listing.error}`;
  if (!listing.models.includes(choice.model))
    return `the endpoint "${listing.name}" does not serve "${choice.model}" (open the list again)`;
  return undefined;
}

/**
 * Where a chat's next run goes: its pick, else the default endpoint with the model setting. A pick whose
 * endpoint left the settings is an error, not a silent switch to another server.
 */
export function resolveTarget(
  config: EndpointsConfig,
  defaultModel: string,
  choice: ModelChoice | undefined,
): ModelTarget | { error: string } {
  if (!choice) {
    const endpoint = endpointNamed(config, DEFAULT_ENDPOINT_NAME)!;
    return { endpoint, model: defaultModel, chosen: false };
  }
  const endpoint = endpointNamed(config, choice.endpoint);
  if (!endpoint)
    return {
      error: `This chat runs "${choice.model}" on the endpoint "${choice.endpoint}", which is no longer in lean4Agentic.endpoints: pick another model next to Run.`,
    };
  return { endpoint, model: choice.model, chosen: true };
}

/** The pick a run's header records (`model.name`, `model.endpointName`), for a chat read back from it. */
export function choiceFromHeader(model: { name: string; endpointName?: string } | undefined): ModelChoice | undefined {
  if (!model?.name || !model.endpointName) return undefined;
  return { endpoint: model.endpointName, model: model.name };
}
