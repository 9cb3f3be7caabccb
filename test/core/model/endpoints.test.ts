import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endpointNamed, endpointUrlProblem, MAX_ENDPOINTS, mergeEndpoints } from '../../../core/model/endpoints';

const DEFAULT = 'http://127.0.0.1:30000/v1';

test('the default endpoint comes first as "default", then each named endpoint in the settings order', () => {
  const c = mergeEndpoints(DEFAULT, [
    { name: 'vllm', url: 'http://127.0.0.1:8000/v1' },
    { name: ' gpu box ', url: ' https://gpu.example/v1 ' },
  ]);
  assert.deepEqual(c.problems, []);
  assert.deepEqual(c.endpoints, [
    { name: 'default', url: DEFAULT },
    { name: 'vllm', url: 'http://127.0.0.1:8000/v1' },
    { name: 'gpu box', url: 'https://gpu.example/v1' },
  ]);
});

test('no endpoints setting: only the default endpoint, and nothing to complain about', () => {
  assert.deepEqual(mergeEndpoints(DEFAULT, undefined), {
    endpoints: [{ name: 'default', url: DEFAULT }],
    problems: [],
  });
  assert.deepEqual(mergeEndpoints(DEFAULT, []).problems, []);
});

test('a bad entry is left out with a sentence naming it and what to fix; the good ones stay', () => {
  const c = mergeEndpoints(DEFAULT, [
    'http://x/v1',
    { url: 'http://127.0.0.1:1/v1' },
    { name: 'bad/name', url: 'http://127.0.0.1:1/v1' },
    { name: 'Default', url: 'http://127.0.0.1:1/v1' },
    { name: 'nourl' },
    { name: 'typo', url: 'htp//127.0.0.1:8000' },
    { name: 'ftp', url: 'ftp://127.0.0.1/v1' },
    { name: 'creds', url: 'http://user:hunter2@127.0.0.1:8000/v1' },
    { name: 'ok', url: 'http://127.0.0.1:8000/v1' },
  ]);
  assert.deepEqual(
    c.endpoints.map((e) => e.name),
    ['default', 'ok'],
  );
  assert.equal(c.problems.length, 8);
  assert.match(c.problems[0]!, /entry 1 is not an object like \{"name"/);
  assert.match(c.problems[1]!, /entry 2: "name" must be 1 to 40 letters/);
  assert.match(c.problems[2]!, /entry 3: "name" must be/);
  assert.match(c.problems[3]!, /entry 4: the name "default" is lean4Agentic\.endpoint's/);
  assert.match(c.problems[4]!, /entry 5 \("nourl"\): "url" is missing/);
  assert.match(c.problems[5]!, /entry 6 \("typo"\): "htp\/\/127\.0\.0\.1:8000" is not a URL/);
  assert.match(c.problems[6]!, /entry 7 \("ftp"\): .* is not an http or https URL/);
  assert.match(
    c.problems[7]!,
    /entry 8 \("creds"\): "http:\/\/\*\*\*@127\.0\.0\.1:8000\/v1" carries a user or a password/,
  );
  assert.doesNotMatch(c.problems.join('\n'), /hunter2/, 'a password in a URL is never repeated');
});

test('a name used twice (whatever its case) keeps the first entry and says so', () => {
  const c = mergeEndpoints(DEFAULT, [
    { name: 'vllm', url: 'http://127.0.0.1:8000/v1' },
    { name: 'VLLM', url: 'http://127.0.0.1:9000/v1' },
  ]);
  assert.deepEqual(c.endpoints[1], { name: 'vllm', url: 'http://127.0.0.1:8000/v1' });
  assert.equal(c.endpoints.length, 2);
  assert.deepEqual(c.problems, [
    'lean4Agentic.endpoints entry 2: the name "VLLM" is used twice; the first one is kept',
  ]);
  assert.equal(endpointNamed(c, 'Vllm')?.url, 'http://127.0.0.1:8000/v1');
});

test('a setting that is not a list, and endpoints past the limit, are refused with a reason', () => {
  assert.match(mergeEndpoints(DEFAULT, { name: 'x', url: 'http://a/v1' }).problems[0]!, /is not a list/);
  const many = Array.from({ length: MAX_ENDPOINTS + 2 }, (_, i) => ({
    name: `e${i}`,
    url: `http://127.0.0.1:${8000 + i}/v1`,
  }));
  const c = mergeEndpoints(DEFAULT, many);
  assert.equal(c.endpoints.length, MAX_ENDPOINTS + 1);
  assert.equal(c.problems.length, 2);
  assert.match(c.problems[0]!, /more than 20 endpoints/);
});

test('a URL is checked for what the client needs', () => {
  assert.equal(endpointUrlProblem('http://127.0.0.1:30000/v1'), undefined);
  assert.equal(endpointUrlProblem('https://api.example.com/v1?api-version=1'), undefined);
  assert.match(endpointUrlProblem('localhost:8000')!, /not an http or https URL|not a URL/);
  assert.match(endpointUrlProblem('https://k@host/v1')!, /carries a user/);
});
