import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeEndpoints } from '../../../core/model/endpoints';
import {
  choiceFromHeader,
  choiceProblem,
  listEndpoints,
  resolveTarget,
  servedModelIds,
  type EndpointListing,
} from '../../../core/model/model-choice';
import { readFileSync } from 'node:fs';
import type { Header } from '../../../core/schema/trajectory';
import { outcomePasses, runWith } from '../../../testkit/agent-run';
import { ScriptedModelServer } from '../../../testkit/scripted-server';

async function withServers(
  run: (a: string, b: string, servers: ScriptedModelServer[]) => Promise<void>,
): Promise<void> {
  const a = new ScriptedModelServer({ models: ['LAR-9B'], script: [{ content: 'a' }] });
  const b = new ScriptedModelServer({
    models: ['LAR-27B', 'Qwen3-32B'],
    apiKey: 'b-secret',
    script: [{ content: 'b' }],
  });
  try {
    await run(await a.start(), await b.start(), [a, b]);
  } finally {
    await a.stop();
    await b.stop();
  }
}

test('the picker lists what each endpoint serves, over real HTTP, each with its own key', async () => {
  await withServers(async (a, b, [sa, sb]) => {
    const config = mergeEndpoints(a, [{ name: 'big', url: b }]);
    const keys: Record<string, string> = { big: 'b-secret' };
    const listings = await listEndpoints(
      config.endpoints,
      (e, signal) => servedModelIds(e.url, keys[e.name], signal),
      5000,
    );
    assert.deepEqual(listings, [
      { name: 'default', url: a, models: ['LAR-9B'] },
      { name: 'big', url: b, models: ['LAR-27B', 'Qwen3-32B'] },
    ]);
    // The key went only to its own endpoint.
    assert.notEqual(sa!.requests.at(-1)!.headers.authorization, 'Bearer b-secret');
    assert.equal(sb!.requests.at(-1)!.headers.authorization, 'Bearer b-secret');
  });
});

test('an endpoint that fails is listed with its error, beside those that answer', async () => {
  await withServers(async (a, b) => {
    const dead = new ScriptedModelServer({ models: ['x'], script: [] });
    const deadUrl = await dead.start();
    await dead.stop();
    const config = mergeEndpoints(a, [
      { name: 'big', url: b },
      { name: 'down', url: deadUrl },
    ]);
    // No key for "big": its server refuses the listing.
    const listings = await listEndpoints(
      config.endpoints,
      (e, signal) => servedModelIds(e.url, undefined, signal),
      5000,
    );
    assert.deepEqual(listings[0], { name: 'default', url: a, models: ['LAR-9B'] });
    assert.ok(
      'error' in listings[1]! && /refused the API key|401/.test(listings[1].error),
      JSON.stringify(listings[1]),
    );
    assert.ok('error' in listings[2]! && /cannot reach/.test(listings[2].error), JSON.stringify(listings[2]));
  });
});

test('an endpoint that does not answer in time is listed as such, and the others are not held up', async () => {
  const started = Date.now();
  const listings = await listEndpoints(
    [
      { name: 'default', url: 'http://127.0.0.1:1/v1' },
      { name: 'slow', url: 'http://127.0.0.1:2/v1' },
    ],
    (e, signal) =>
      e.name === 'default'
        ? Promise.resolve(['m'])
        : new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    200,
  );
  assert.ok(Date.now() - started < 2000);
  assert.deepEqual(listings[1], { name: 'slow', url: 'http://127.0.0.1:2/v1', error: 'no answer within 200 ms' });
});

test('an error naming a URL with a password is masked in the listing', async () => {
  const [l] = await listEndpoints(
    [{ name: 'default', url: 'http://u:pw@h/v1' }],
    () => Promise.reject(new Error('cannot reach http://u:pw@h/v1?api_key=k')),
    1000,
  );
  assert.deepEqual(l, { name: 'default', url: 'http://***@h/v1', error: 'cannot reach http://***@h/v1?api_key=***' });
});

const listings: EndpointListing[] = [
  { name: 'default', url: 'http://a/v1', models: ['LAR-9B'] },
  { name: 'big', url: 'http://b/v1', models: ['LAR-27B'] },
  { name: 'down', url: 'http://c/v1', error: 'cannot reach' },
];

test('only a model an endpoint listed can be picked', () => {
  assert.equal(choiceProblem(listings, { endpoint: 'big', model: 'LAR-27B' }), undefined);
  assert.match(choiceProblem(listings, { endpoint: 'big', model: 'LAR-9B' })!, /does not serve "LAR-9B"/);
  assert.match(choiceProblem(listings, { endpoint: 'evil', model: 'x' })!, /no endpoint named "evil"/);
  assert.match(choiceProblem(listings, { endpoint: 'down', model: 'x' })!, /did not answer: cannot reach/);
});

test("a chat without a pick runs the settings' endpoint and model; a pick runs its own", () => {
  const config = mergeEndpoints('http://a/v1', [{ name: 'big', url: 'http://b/v1' }]);
  assert.deepEqual(resolveTarget(config, 'LAR-9B', undefined), {
    endpoint: { name: 'default', url: 'http://a/v1' },
    model: 'LAR-9B',
    chosen: false,
  });
  assert.deepEqual(resolveTarget(config, '', { endpoint: 'big', model: 'LAR-27B' }), {
    endpoint: { name: 'big', url: 'http://b/v1' },
    model: 'LAR-27B',
    chosen: true,
  });
});

test('a pick whose endpoint left the settings is an error, never another server', () => {
  const config = mergeEndpoints('http://a/v1', []);
  const r = resolveTarget(config, 'LAR-9B', { endpoint: 'big', model: 'LAR-27B' });
  assert.ok('error' in r);
  assert.match(r.error, /"LAR-27B" on the endpoint "big", which is no longer in lean4Agentic\.endpoints/);
});

test("a chat read back takes its pick from the last run's header", () => {
  assert.deepEqual(choiceFromHeader({ name: 'LAR-27B', endpointName: 'big' }), { endpoint: 'big', model: 'LAR-27B' });
  assert.equal(choiceFromHeader({ name: 'LAR-9B' }), undefined, 'a header from before endpoints had names');
  assert.equal(choiceFromHeader(undefined), undefined);
});

test("a run's header records the picked model, the endpoint's name and its URL without credentials", async () => {
  const server = new ScriptedModelServer({ models: ['LAR-27B'], script: [{ content: 'Done.' }], whenDone: 'repeat' });
  const endpoint = await server.start();
  try {
    const { trajectoryPath } = await runWith({
      endpoint,
      modelInfo: { name: 'LAR-27B', endpoint: endpoint.replace('http://', 'http://u:pw@'), endpointName: 'big' },
      runOutcomeCheck: outcomePasses,
      limits: { maxIdleTurns: 1 },
    });
    const header = JSON.parse(readFileSync(trajectoryPath, 'utf8').split('\n')[0]!) as Header;
    assert.equal(header.model?.name, 'LAR-27B');
    assert.equal(header.model?.endpointName, 'big');
    assert.equal(header.model?.endpoint, endpoint.replace('http://', 'http://***@'));
    assert.deepEqual(choiceFromHeader(header.model), { endpoint: 'big', model: 'LAR-27B' });
  } finally {
    await server.stop();
  }
});
