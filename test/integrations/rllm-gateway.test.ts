/**
 * `lar run` through a trainer's gateway: the real rLLM model gateway
 * (`rllm-model-gateway`, pinned in setup's Harbor venv) in front of the
 * scripted vLLM server. lar's endpoint is the gateway's per-session path and
 * its key the session's; the token ids lar records with --record-tokens and
 * the ones the gateway captured for the session are the same, and both are
 * what the server sent. docs/gateways.md says what this proves.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fullTurns } from '../../core/export/token-turns';
import type { TokensEvent } from '../../core/schema/trajectory';
import { harborStatus } from '../../devtools/paths';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import type { ScriptedToolCall, ScriptedTurn } from '../../testkit/scripted-turns';
import { lar } from '../support/lar-cli';

const status = harborStatus();
const venv = 'venv' in status ? status.venv : '';
const python = join(venv, 'bin', 'python');

/** Why the test cannot run here: no venv, or one set up before the gateway was pinned. */
function skipReason(): string | false {
  if ('skip' in status) return status.skip;
  const r = spawnSync(python, ['-c', 'import rllm_model_gateway'], { encoding: 'utf8' });
  return r.status === 0
    ? false
    : `the Harbor venv ${venv} has no rllm_model_gateway (set up before it was pinned): run npm run setup again`;
}
const skip = skipReason();

const cmd = (command: string): ScriptedToolCall => ({ name: 'run_command', arguments: { command } });
const stage = (to: string): ScriptedToolCall => ({ name: 'enter_stage', arguments: { stage: to } });

/** A rollout a trainer would send: read, write, check, submit, through builtin:terminal-task's stages. */
const SCRIPT: ScriptedTurn[] = [
  { content: 'Reading the task.', toolCalls: [cmd('cat README')] },
  { toolCalls: [stage('work')] },
  { toolCalls: [cmd('printf "done\\n" > out.txt')] },
  { content: 'Checking it.', toolCalls: [stage('verify')] },
  { toolCalls: [cmd('test -s out.txt && cat out.txt')] },
  { content: 'Submitting.', toolCalls: [{ name: 'submit', arguments: {} }] },
];

/** How long the gateway may take to answer /health after it starts (it imports FastAPI, uvicorn, pydantic). */
const GATEWAY_START_MS = 60_000;

/** A port nothing listens on now: the one the system gives a listener on port 0, closed again. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Gateway {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `python -m rllm_model_gateway` in front of `worker` (a base URL ending in /v1) with an
 * in-memory trace store and `config` as its YAML file; resolves once /health answers.
 */
async function startGateway(worker: string, config: Record<string, unknown>): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'lar-rllm-gw-'));
  const cfg = join(dir, 'gateway.yaml');
  writeFileSync(cfg, JSON.stringify(config)); // JSON is YAML
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    python,
    [
      ...['-m', 'rllm_model_gateway', '--host', '127.0.0.1', '--port', String(port)],
      ...['--worker', worker, '--store', 'memory', '--config', cfg, '--log-level', 'warning'],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  let exited: string | undefined;
  const closed = new Promise<void>((resolve) =>
    child.on('close', (code, signal) => {
      exited = `exit ${code ?? signal}`;
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (exited === undefined) child.kill('SIGTERM');
    await closed;
  };
  const deadline = Date.now() + GATEWAY_START_MS;
  for (;;) {
    if (exited !== undefined)
      throw new Error(`the gateway ended (${exited}) before answering /health:\n${output.slice(-3000)}`);
    try {
      const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return { url, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `the gateway did not answer ${url}/health within ${GATEWAY_START_MS / 1000} s:\n${output.slice(-3000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What the gateway's memory store holds of one call (models.py TraceRecord). */
interface TraceRecord {
  session_id: string;
  messages: unknown[];
  prompt_token_ids: number[];
  completion_token_ids: number[];
  logprobs: number[] | null;
  raw_request: { messages?: unknown } | null;
}

interface Traced {
  code: number | null;
  err: string;
  out: string;
  file: string;
  server: ScriptedModelServer;
  key: string;
  traces: TraceRecord[];
}

/** `lar run --record-tokens` through a fresh gateway session with its own key; the session's traces after. */
async function throughGateway(config: Record<string, unknown>): Promise<Traced> {
  const key = `sk-session-${randomUUID()}`;
  const sid = `lar-${randomUUID()}`;
  // The server answers only requests with the session's key: the gateway must pass lar's header on.
  const server = new ScriptedModelServer({ flavor: 'vllm', script: SCRIPT, apiKey: key });
  const worker = await server.start();
  try {
    // The server has no /health: the gateway's first check would come an hour on, after the test.
    const gateway = await startGateway(worker, { health_check_interval: 3600, ...config });
    try {
      const ws = mkdtempSync(join(tmpdir(), 'lar-gw-run-'));
      writeFileSync(join(ws, 'README'), 'a task\n');
      const file = join(ws, 'run.lar.jsonl');
      const endpoint = `${gateway.url}/sessions/${sid}/v1`;
      const r = await lar(
        [
          ...['run', '--task', 'write out.txt', '--endpoint', endpoint, '--workspace', ws, '--out', file],
          ...['--workflow', 'builtin:terminal-task', '--sandbox', 'off', '--record-tokens'],
        ],
        { LAR_API_KEY: key },
      );
      const res = await fetch(`${gateway.url}/sessions/${sid}/traces`);
      assert.equal(res.status, 200, await res.clone().text());
      const traces = (await res.json()) as TraceRecord[];
      return { ...r, file, server, key, traces };
    } finally {
      await gateway.stop();
    }
  } finally {
    await server.stop();
  }
}

function tokenLines(file: string): { line: number; event: TokensEvent }[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l, i) => ({ line: i + 2, event: JSON.parse(l) as TokensEvent }))
    .filter((e) => e.event.type === 'tokens');
}

/** The gateway's records of chat calls (it records every proxied call, the model listing too). */
function chatTraces(traces: readonly TraceRecord[]): TraceRecord[] {
  return traces.filter((t) => Array.isArray(t.raw_request?.messages));
}

const idsOf = (t: TraceRecord): { promptIds: number[]; completionIds: number[]; logprobs: number[] | null } => ({
  promptIds: t.prompt_token_ids,
  completionIds: t.completion_token_ids,
  logprobs: t.logprobs,
});

describe("lar run through rLLM's model gateway", { skip }, () => {
  test('with strip_vllm_fields off, the ids lar records are the ones the gateway captured and the server sent', async () => {
    const r = await throughGateway({ strip_vllm_fields: false });
    assert.equal(r.code, 0, r.err + r.out);
    // The engine came from /v1/models' owned_by, asked through the gateway.
    assert.match(r.err, /recording each turn's token ids and logprobs \(vllm, streamed\)/);
    assert.doesNotMatch(r.err, /has no token ids/);

    const chats = r.server.requests.filter((q) => q.path === '/v1/chat/completions');
    assert.equal(chats.length, SCRIPT.length);
    // Every request reached the server with lar's session key, and chats with the gateway's injected fields.
    assert.ok(r.server.requests.length > chats.length, 'the model listing went through the gateway too');
    for (const q of r.server.requests) assert.equal(q.headers.authorization, `Bearer ${r.key}`, q.path);
    for (const q of chats)
      assert.deepEqual((q.body as { extra_body?: unknown }).extra_body, { return_token_ids: true });

    const recorded = fullTurns(tokenLines(r.file));
    const captured = chatTraces(r.traces);
    assert.equal(recorded.length, SCRIPT.length);
    assert.equal(captured.length, SCRIPT.length);
    const fromLar = recorded.map((t) => ({
      promptIds: t.promptIds,
      completionIds: t.completionIds,
      logprobs: t.logprobs,
    }));
    assert.deepEqual(fromLar, captured.map(idsOf));
    assert.deepEqual(fromLar, r.server.sentTokens);
    // Its other records are lar's model listings (it records every proxied call), with no ids.
    const listings = r.server.requests.filter((q) => q.path === '/v1/models');
    assert.equal(r.traces.length - captured.length, listings.length);
    assert.ok(
      r.traces.every((t) => captured.includes(t) || (!t.prompt_token_ids.length && !t.completion_token_ids.length)),
    );
    // Each trace is the request lar sent: the same conversation, growing turn by turn.
    assert.deepEqual(
      captured.map((t) => t.messages.length),
      chats.map((q) => (q.body as { messages: unknown[] }).messages.length),
    );
  });

  test('with the default config the gateway strips the ids from its answers: lar says so and goes on; the gateway still has them', async () => {
    const r = await throughGateway({});
    assert.equal(r.code, 0, r.err + r.out);
    assert.equal(
      (r.err.match(/has no token ids \(the server returned no token ids\); the run goes on/g) ?? []).length,
      1,
      r.err,
    );
    const lines = tokenLines(r.file);
    assert.equal(lines.length, SCRIPT.length);
    assert.ok(lines.every((l) => l.event.missing === 'the server returned no token ids' && !l.event.promptIds));
    const captured = chatTraces(r.traces);
    assert.equal(captured.length, SCRIPT.length);
    assert.deepEqual(captured.map(idsOf), r.server.sentTokens);
  });
});
