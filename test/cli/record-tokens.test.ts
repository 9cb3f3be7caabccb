import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fullTurns } from '../../core/export/token-turns';
import type { TokensEvent } from '../../core/schema/trajectory';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../testkit/scripted-server';
import type { ScriptedToolCall, ScriptedTurn } from '../../testkit/scripted-turns';
import { lar } from '../support/lar-cli';
import { checkRllmEpisode, checkSkyrlOutput, episodesOf } from '../support/trainer-shapes';

const cmd = (command: string): ScriptedToolCall => ({ name: 'run_command', arguments: { command } });
const stage = (to: string): ScriptedToolCall => ({ name: 'enter_stage', arguments: { stage: to } });

/** Explore, work, verify, submit under builtin:terminal-task, with words on some turns. */
const SCRIPT: ScriptedTurn[] = [
  { content: 'Looking around first.', toolCalls: [cmd('ls')] },
  { toolCalls: [stage('work')] },
  { content: 'Writing the file.', toolCalls: [cmd('echo done > out.txt')] },
  { toolCalls: [stage('verify')] },
  { toolCalls: [cmd('cat out.txt')] },
  { content: 'Done.', toolCalls: [{ name: 'submit', arguments: {} }] },
];

interface Lines {
  header: { model: { tokens?: { engine: string; streamed: boolean } } };
  events: { line: number; event: { type: string } & Record<string, unknown> }[];
}

function readRun(file: string): Lines {
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  return {
    header: JSON.parse(lines[0]!) as Lines['header'],
    events: lines.slice(1).map((l, i) => ({ line: i + 2, event: JSON.parse(l) as Lines['events'][0]['event'] })),
  };
}

async function recorded(
  opts: Partial<ScriptedServerOptions>,
  extra: string[] = [],
): Promise<{ code: number | null; out: string; err: string; file: string; server: ScriptedModelServer }> {
  const ws = mkdtempSync(join(tmpdir(), 'lar-tokens-'));
  writeFileSync(join(ws, 'README'), 'a task\n');
  const file = join(ws, 'run.lar.jsonl');
  const server = new ScriptedModelServer({ script: SCRIPT, ...opts });
  const endpoint = await server.start();
  try {
    const r = await lar(
      [
        ...['run', '--task', 'write out.txt', '--endpoint', endpoint, '--workspace', ws, '--out', file],
        ...['--workflow', 'builtin:terminal-task', '--sandbox', 'off', '--record-tokens', ...extra],
      ],
      {},
    );
    return { ...r, file, server };
  } finally {
    await server.stop();
  }
}

function tokenLines(run: Lines): { line: number; event: TokensEvent }[] {
  return run.events.filter((e) => e.event.type === 'tokens') as unknown as { line: number; event: TokensEvent }[];
}

for (const flavor of ['vllm', 'sglang'] as const)
  test(`--record-tokens against ${flavor}: every turn's ids and logprobs are recorded exactly as the server sent them`, async () => {
    const r = await recorded({ flavor });
    assert.equal(r.code, 0, r.err + r.out);
    const run = readRun(r.file);
    const streamed = flavor === 'vllm';
    assert.deepEqual(run.header.model.tokens, { engine: flavor, streamed });
    assert.match(
      r.err,
      new RegExp(
        `recording each turn's token ids and logprobs \\(${flavor}, ${streamed ? 'streamed' : 'one unstreamed request per turn'}\\)`,
      ),
    );
    const chats = r.server.requests.filter((q) => q.path.endsWith('/chat/completions'));
    // vLLM streams them; SGLang refuses ids on a stream, so each turn is one unstreamed request.
    assert.ok(chats.every((q) => ((q.body as { stream?: boolean }).stream === true) === streamed));
    const lines = tokenLines(run);
    assert.equal(lines.length, SCRIPT.length);
    assert.deepEqual(
      lines.map((l) => l.event.turn),
      SCRIPT.map((_, i) => i + 1),
    );
    const turns = fullTurns(lines);
    assert.deepEqual(
      turns.map((t) => ({ promptIds: t.promptIds, completionIds: t.completionIds, logprobs: t.logprobs })),
      r.server.sentTokens,
    );
    // Later prompts repeat the turn before: those ids are not written again.
    assert.ok(lines.slice(1).every((l) => (l.event.promptShared ?? 0) > 0));
    // Each tokens line comes just before its turn's message or first call.
    for (const l of lines) {
      const next = run.events.find((e) => e.line === l.line + 1)!.event;
      assert.ok(
        next.type === 'tool_call' || (next.type === 'message' && next.role === 'assistant'),
        JSON.stringify(next),
      );
    }
    // The verifier reads them and scores nothing more; the run is whole.
    const v = await lar(['verify', r.file, '--format', 'json']);
    assert.equal(v.code, 0, v.err + v.out);
    const report = JSON.parse(v.out) as {
      lineErrors: unknown[];
      steps: { line: number; type: string; verdicts: unknown[]; toolReward?: number; step?: number }[];
    };
    assert.deepEqual(report.lineErrors, []);
    const onTokens = report.steps.filter((s) => s.type === 'tokens');
    assert.equal(onTokens.length, lines.length);
    assert.ok(onTokens.every((s) => s.verdicts.length === 0 && s.toolReward === undefined && s.step === undefined));
  });

test('lar export --format atif puts each turn’s ids and logprobs in its agent step’s metrics', async () => {
  const r = await recorded({ flavor: 'vllm' });
  assert.equal(r.code, 0, r.err + r.out);
  const e = await lar(['export', '--format', 'atif', r.file]);
  assert.equal(e.code, 0, e.err);
  const doc = JSON.parse(e.out) as {
    steps: {
      source: string;
      metrics?: { prompt_token_ids?: number[]; completion_token_ids?: number[]; logprobs?: number[] };
    }[];
  };
  const withIds = doc.steps.filter((s) => s.metrics?.prompt_token_ids);
  assert.equal(withIds.length, SCRIPT.length);
  assert.ok(withIds.every((s) => s.source === 'agent'));
  assert.deepEqual(
    withIds.map((s) => ({
      promptIds: s.metrics!.prompt_token_ids,
      completionIds: s.metrics!.completion_token_ids,
      logprobs: s.metrics!.logprobs,
    })),
    r.server.sentTokens,
  );
});

test('a server that returns no ids: the run says so once, records why on each turn, and goes on to submit', async () => {
  const r = await recorded({ flavor: 'sglang', tokenIds: 'ignore' });
  assert.equal(r.code, 0, r.err + r.out);
  assert.equal(
    (r.err.match(/has no token ids \(the server returned no token ids\); the run goes on/g) ?? []).length,
    1,
    r.err,
  );
  const lines = tokenLines(readRun(r.file));
  assert.equal(lines.length, SCRIPT.length);
  assert.ok(lines.every((l) => l.event.missing === 'the server returned no token ids' && !l.event.promptIds));
});

test('while ids are recorded the conversation is never compacted: a run that fills the window ends with exit 3 and says why', async () => {
  // A window that holds the first turns but not the whole run: without --record-tokens this run would compact.
  const long = 'x'.repeat(3000);
  const script: ScriptedTurn[] = Array.from({ length: 30 }, (_, i) => ({ toolCalls: [cmd(`echo ${i} ${long}`)] }));
  const r = await recorded({ flavor: 'vllm', script, contextLength: 12_000, enforceWindow: true });
  assert.equal(r.code, 3, r.err + r.out);
  const run = readRun(r.file);
  assert.ok(!run.events.some((e) => e.event.type === 'compaction'));
  const end = run.events[run.events.length - 1]!.event;
  assert.equal(end.type, 'end');
  assert.match(String(end.detail), /not compacted while token ids are recorded \(--record-tokens\)/);
  // What was recorded is one segment: every later prompt begins with ids of the turn before.
  const lines = tokenLines(run);
  assert.ok(lines.length >= 2);
  assert.ok(lines.slice(1).every((l) => (l.event.promptShared ?? 0) > 0));
});

test('lar run --rollouts 4 --concurrency 2 --record-tokens gives a group whose rLLM and SkyRL exports have every turn', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-tokens-group-'));
  writeFileSync(join(ws, 'README'), 'a task\n');
  // Each request answered from its own conversation's length: rollouts at the same time keep their scripts.
  const server = new ScriptedModelServer({
    flavor: 'vllm',
    script: [],
    respond: (body) =>
      SCRIPT[Math.min((body.messages ?? []).filter((m) => m.role === 'assistant').length, SCRIPT.length - 1)]!,
  });
  const endpoint = await server.start();
  try {
    const out = join(ws, 'group');
    const r = await lar(
      [
        ...['run', '--task', 'write out.txt', '--endpoint', endpoint, '--workspace', ws, '--out', out],
        ...['--workflow', 'builtin:terminal-task', '--sandbox', 'off', '--record-tokens'],
        ...['--rollouts', '4', '--concurrency', '2', '--seed', '7'],
      ],
      {},
    );
    assert.equal(r.code, 0, r.err + r.out);
    const rllm = await lar(['export', '--format', 'rllm', out]);
    assert.equal(rllm.code, 0, rllm.err);
    const episodes = episodesOf(rllm.out);
    assert.equal(episodes.length, 4);
    for (const e of episodes) {
      checkRllmEpisode(e);
      const steps = e.trajectories[0]!.steps;
      assert.equal(steps.length, SCRIPT.length);
      assert.ok(steps.every((s) => (s.response_ids as unknown[]).length > 0 && (s.prompt_ids as unknown[]).length > 0));
    }
    // The scripted server's stand-in template does not render earlier turns unchanged: one row per turn.
    const skyrl = await lar(['export', '--format', 'skyrl', '--skyrl-rows', 'step', out]);
    assert.equal(skyrl.code, 0, skyrl.err);
    checkSkyrlOutput(JSON.parse(skyrl.out) as Record<string, unknown[] | null>, 4, true);
  } finally {
    await server.stop();
  }
});
