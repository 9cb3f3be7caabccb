import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { McpInput } from '../../../core/mcp/config';
import { forgetMcpInputs, McpInputs, secretKey, type InputStorage } from '../../../extension/mcp/inputs';

function storage(): InputStorage & { secretValues: Map<string, string>; state: Map<string, unknown> } {
  const secretValues = new Map<string, string>();
  const state = new Map<string, unknown>();
  return {
    secretValues,
    state,
    secrets: {
      get: (k) => Promise.resolve(secretValues.get(k)),
      store: (k, v) => Promise.resolve(void secretValues.set(k, v)),
      delete: (k) => Promise.resolve(void secretValues.delete(k)),
    },
    workspaceState: {
      get: <T>(k: string) => state.get(k) as T | undefined,
      update: (k, v) => Promise.resolve(void (v === undefined ? state.delete(k) : state.set(k, v))),
    },
  };
}

const token: McpInput = { id: 'token', type: 'promptString', password: true };
const FOLDER = 'file:///work/ws';

test('an input kept for one server is not handed to another that names the same id: that one is asked', async () => {
  const store = storage();
  const asked: string[] = [];
  const ask = (input: McpInput, server: string) => {
    asked.push(`${server}:${input.id}`);
    return Promise.resolve(`${server}-secret`);
  };
  assert.equal(await new McpInputs(store, FOLDER, ask).value(token, 'github'), 'github-secret');
  // The next run: kept for github, asked for the server added since.
  const next = new McpInputs(store, FOLDER, ask);
  assert.equal(await next.value(token, 'github'), 'github-secret');
  assert.equal(await next.value(token, 'planted'), 'planted-secret');
  assert.deepEqual(asked, ['github:token', 'planted:token']);
  assert.equal(store.secretValues.get(secretKey(FOLDER, 'github', 'token')), 'github-secret');
  // Names holding the separator cannot make one server's key another's.
  assert.notEqual(secretKey('f', 'a:b', 'c'), secretKey('f', 'a', 'b:c'));
  assert.notEqual(secretKey('f:a', 'b', 'c'), secretKey('f', 'a:b', 'c'));
});

test('a dismissed box is not shown again in the run for that server, and nothing is kept', async () => {
  const store = storage();
  let n = 0;
  const inputs = new McpInputs(store, FOLDER, () => {
    n++;
    return Promise.resolve(undefined);
  });
  assert.equal(await inputs.value(token, 'github'), undefined);
  assert.equal(await inputs.value(token, 'github'), undefined);
  assert.equal(n, 1);
  assert.equal(store.secretValues.size, 0);
});

test('Forget MCP Inputs clears every kept value, those of every server and those kept before values were per server', async () => {
  const store = storage();
  const ask = (_: McpInput, server: string) => Promise.resolve(`${server}-secret`);
  const inputs = new McpInputs(store, FOLDER, ask);
  await inputs.value(token, 'a');
  await inputs.value(token, 'b');
  await inputs.value({ ...token, id: 'other' }, 'a');
  // Kept by folder and id only, by the version before.
  store.secretValues.set(`lean4Agentic.mcpInput:${FOLDER}:token`, 'old');
  store.state.set('lean4Agentic.mcpInputIds', { [FOLDER]: ['token'] });
  assert.equal(await forgetMcpInputs(store), 4);
  assert.equal(store.secretValues.size, 0);
  assert.equal(store.state.size, 0);
  assert.equal(await forgetMcpInputs(store), 0);
});
