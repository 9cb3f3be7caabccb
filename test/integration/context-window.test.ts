import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import { countPromptTokens } from '../../testkit/prompt-tokens';
import type { ChatRequestBody, ServerFlavor } from '../../testkit/scripted-turns';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { isSummaryRequest, logWorkspace, longTaskModel, promptReadingModel } from '../../testkit/models';
import { lar } from '../support/lar-cli';

/**
 * The model's window, end to end: `lar run` (a separate process, the real
 * `openai` client) against the scripted server enforcing a window the way
 * vLLM and SGLang do, refusing oversize requests with their exact bodies.
 */

function trajectoryOf(ws: string): { text: string; lines: Record<string, unknown>[] } {
  const dir = join(ws, '.lar', 'runs');
  const [file] = readdirSync(dir);
  const text = readFileSync(join(dir, file!), 'utf8');
  return {
    text,
    lines: text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

async function longRun(window: number, flavor: ServerFlavor, reads: number) {
  const { ws, workflow } = logWorkspace(`lar-window-${window}-`);
  const model = longTaskModel(reads);
  const seen: { tokens: number; max: number | undefined; summary: boolean }[] = [];
  const server = new ScriptedModelServer({
    flavor,
    contextLength: window,
    enforceWindow: true,
    script: [],
    respond: (body: ChatRequestBody) => {
      seen.push({ tokens: countPromptTokens(body), max: body.max_tokens, summary: isSummaryRequest(body) });
      return model.respond(body);
    },
  });
  const endpoint = await server.start();
  try {
    const r = await lar([
      'run',
      '--task',
      'make node test.js pass; the build log may help',
      '--endpoint',
      endpoint,
      '--workspace',
      ws,
      '--workflow',
      workflow,
      '--max-steps',
      '100',
    ]);
    return { r, ws, model, seen, requests: server.requests };
  } finally {
    await server.stop();
  }
}

for (const [window, flavor] of [
  [32_768, 'vllm'],
  [8_192, 'sglang'],
] as const) {
  test(`a long task on a ${window / 1024}k window (${flavor}) completes; its compactions are in the trajectory and it verifies`, async () => {
    const { r, ws, model, seen, requests } = await longRun(window, flavor, window > 10_000 ? 14 : 9);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.err, new RegExp(`context window ${window} tokens \\(from the server\\)`));
    assert.match(r.out, /context compacted/);
    assert.match(r.out, /outcome check: node test\.js → exit 0/);
    const { text, lines } = trajectoryOf(ws);
    const header = lines[0] as { model: { contextWindow: number; contextWindowSource: string; toolFormat: string } };
    assert.deepEqual(
      [header.model.contextWindow, header.model.contextWindowSource, header.model.toolFormat],
      [window, 'server', 'native'],
    );
    const compactions = lines.filter((l) => l.type === 'compaction') as {
      window: number;
      tokensBefore: number;
      tokensAfter: number;
      summary?: string;
    }[];
    assert.ok(compactions.length >= 1, 'the window filled and the run compacted');
    for (const c of compactions) assert.ok(c.window === window && c.tokensAfter < c.tokensBefore, JSON.stringify(c));
    // Every request that was answered fit: prompt + max_tokens inside the window (the server would have refused it).
    for (const s of seen)
      assert.ok(s.max !== undefined && s.tokens + s.max <= window, `${s.tokens} + ${s.max} > ${window}`);
    const refused = requests.filter((q) => q.path === '/v1/chat/completions').length - seen.length;
    assert.ok(refused <= 2, `the estimate seldom misses (${refused} refusals)`);
    if (model.stats.summaries)
      assert.ok(
        compactions.some((c) => c.summary?.includes('## What was tried')),
        'the model note is kept',
      );
    const report = verifyTrajectoryText(text);
    assert.equal(report.summary!.outcome.reward, 1, 'the trajectory verifies, compactions and all');
    const scored = report.steps.filter((x) => x.type === 'compaction');
    assert.equal(scored.length, compactions.length);
    assert.ok(
      scored.every((x) => x.verdicts.length === 0 && x.toolReward === undefined && x.stageVisit === undefined),
      'a compaction is never scored',
    );
  });
}

test('a server that counts more tokens than the estimate refuses a request: the run compacts, retries and goes on', async () => {
  const { ws, workflow } = logWorkspace('lar-refused-');
  const model = longTaskModel(8);
  // A window the server reports larger than it enforces: every estimate is wrong until a refusal says the truth.
  const server = new ScriptedModelServer({
    flavor: 'vllm',
    contextLength: 16_384,
    enforceWindow: true,
    script: [],
    respond: (b) => model.respond(b),
  });
  const endpoint = await server.start();
  try {
    const r = await lar([
      'run',
      '--task',
      'make node test.js pass',
      '--endpoint',
      endpoint,
      '--workspace',
      ws,
      '--workflow',
      workflow,
      '--context-length',
      '65536',
    ]);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.err, /context window 65536 tokens \(--context-length\)/);
    const { lines } = trajectoryOf(ws);
    const refusals = lines.filter((l) => l.type === 'compaction' && l.reason === 'context_error');
    assert.ok(refusals.length >= 1, 'the refusal was answered by compacting');
    assert.equal(lines.at(-1)!.reason, 'submitted');
  } finally {
    await server.stop();
  }
});

test('text format: a model that can know the argument names only from its prompt fixes the bug', async () => {
  const { ws, workflow } = logWorkspace('lar-text-mode-');
  const model = promptReadingModel();
  const server = new ScriptedModelServer({
    flavor: 'vllm',
    noToolParser: true,
    contextLength: 32_768,
    script: [],
    respond: (b) => model.respond(b),
  });
  const endpoint = await server.start();
  try {
    const r = await lar([
      'run',
      '--task',
      'make node test.js pass',
      '--endpoint',
      endpoint,
      '--workspace',
      ws,
      '--workflow',
      workflow,
      '--tool-format',
      'qwen3_5',
    ]);
    assert.equal(r.code, 0, r.err + r.out);
    assert.deepEqual(model.found.edit_file, ['path', 'search', 'replace'], 'the names came from the prompt');
    assert.equal(readFileSync(join(ws, 'sum.js'), 'utf8'), 'module.exports = (a, b) => a + b;\n');
    const chats = server.requests
      .filter((q) => q.path === '/v1/chat/completions')
      .map((q) => q.body as ChatRequestBody);
    assert.ok(
      chats.every((b) => b.tools === undefined),
      'a text format sends no tools array',
    );
    // The model's earlier calls stay in its history in its own form, and the results as <tool_response>.
    const last = chats.at(-1)!.messages!;
    assert.match(
      String(last.find((m) => m.role === 'assistant')!.content),
      /^Step 1\.\n\n<tool_call>\n<function=read_file>\n<parameter=path>\nsum\.js\n<\/parameter>\n<\/function>\n<\/tool_call>$/,
    );
    assert.match(String(last[3]!.content), /^<tool_response>\n/);
    // Consecutive requests share their whole prefix: each is the one before plus the new turns.
    for (let i = 1; i < chats.length; i++) {
      const before = JSON.stringify(chats[i - 1]!.messages);
      assert.ok(
        JSON.stringify(chats[i]!.messages).startsWith(before.slice(0, -1)),
        `request ${i} extends request ${i - 1}`,
      );
    }
    const { text, lines } = trajectoryOf(ws);
    assert.ok(lines.filter((l) => l.type === 'tool_call').every((l) => l.via === 'text'));
    assert.equal(verifyTrajectoryText(text).summary!.outcome.reward, 1);
  } finally {
    await server.stop();
  }
});

test('auto on a vLLM without a tool parser: the run switches to the family text format by itself and completes', async () => {
  const { ws, workflow } = logWorkspace('lar-auto-switch-');
  const model = promptReadingModel();
  const server = new ScriptedModelServer({
    flavor: 'vllm',
    models: ['Qwen/Qwen3.5-27B'],
    noToolParser: true,
    contextLength: 32_768,
    script: [],
    respond: (b) => model.respond(b),
  });
  const endpoint = await server.start();
  try {
    const r = await lar([
      'run',
      '--task',
      'make node test.js pass',
      '--endpoint',
      endpoint,
      '--workspace',
      ws,
      '--workflow',
      workflow,
    ]);
    assert.equal(r.code, 0, r.err + r.out);
    const { lines } = trajectoryOf(ws);
    assert.ok(
      lines.some((l) => l.type === 'message' && l.role === 'system' && /qwen3_5 format/.test(String(l.content))),
      'the switch is on record',
    );
    assert.equal(lines.at(-1)!.reason, 'submitted');
  } finally {
    await server.stop();
  }
});

test('a 4k window: the run completes; compaction elides rather than asking the model for a note every step', async () => {
  const { r, ws, model, seen } = await longRun(4096, 'vllm', 6);
  assert.equal(r.code, 0, r.err + r.out);
  for (const s of seen)
    assert.ok(s.max !== undefined && s.max >= 256 && s.tokens + s.max <= 4096, `${s.tokens} + ${s.max}`);
  assert.ok(model.stats.summaries <= 2, `${model.stats.summaries} note requests for ${model.stats.requests} steps`);
  assert.equal(trajectoryOf(ws).lines.at(-1)!.reason, 'submitted');
});

test('a refusal that names no window (a proxy rewording it) still shrinks the window, compacts and goes on', async () => {
  const { ws, workflow } = logWorkspace('lar-reworded-');
  const model = longTaskModel(8);
  const server = new ScriptedModelServer({
    flavor: 'vllm',
    contextLength: 16_384,
    enforceWindow: true,
    refusalMessage: 'context_length_exceeded: the request is too long for this deployment',
    script: [],
    respond: (b) => model.respond(b),
  });
  const endpoint = await server.start();
  try {
    const r = await lar([
      'run',
      '--task',
      'make node test.js pass',
      '--endpoint',
      endpoint,
      '--workspace',
      ws,
      '--workflow',
      workflow,
      '--context-length',
      '131072',
    ]);
    assert.equal(r.code, 0, r.err + r.out);
    const { lines } = trajectoryOf(ws);
    assert.ok(lines.some((l) => l.type === 'compaction' && l.reason === 'context_error'));
    assert.equal(lines.at(-1)!.reason, 'submitted');
  } finally {
    await server.stop();
  }
});

test('a window that cannot hold the system prompt and the tools is refused with what to do, before any request', async () => {
  const { ws, workflow } = logWorkspace('lar-tiny-');
  const server = new ScriptedModelServer({
    contextLength: 1024,
    script: [{ toolCalls: [{ name: 'submit', arguments: {} }] }],
  });
  const endpoint = await server.start();
  try {
    const r = await lar(['run', '--task', 'x', '--endpoint', endpoint, '--workspace', ws, '--workflow', workflow]);
    assert.equal(r.code, 3, 'the exit a harness reads as a context-length error');
    assert.match(r.out, /cannot hold the system prompt and the tool descriptions.*--max-model-len/);
    assert.equal(server.requests.filter((q) => q.path === '/v1/chat/completions').length, 0);
  } finally {
    await server.stop();
  }
});
