import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentOptions } from '../../core/agent/loop';
import { newRunNote } from '../../core/agent/prompts';
import { ModelClient } from '../../core/model/client';
import { outcomePasses, runWith } from '../../testkit/agent-run';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import type { ChatRequestBody } from '../../testkit/scripted-turns';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { defaultWorkflow } from '../../core/workflow/load';

/** A chat: a question answered without tools ends the run `answered`; a follow-up continues the conversation. */

async function chat(
  turns: { content?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] }[],
  messages: string[],
) {
  const ws = mkdtempSync(join(tmpdir(), 'lar-chat-'));
  const server = new ScriptedModelServer({ contextLength: 32768, script: turns });
  const endpoint = await server.start();
  const model = new ModelClient({ endpoint, retries: 0 });
  const results = [];
  try {
    let previous: { conversation: AgentOptions['conversation']; file: string } | undefined;
    for (const [i, task] of messages.entries()) {
      const trajectoryPath = join(ws, `run-${i + 1}.lar.jsonl`);
      const r = await runWith({
        task,
        model,
        workspace: ws,
        trajectoryPath,
        execute: () => Promise.resolve({ status: 'ok', result: {}, observation: 'contents' }),
        runOutcomeCheck: () => Promise.resolve({ type: 'outcome', command: 'npm test', exitCode: 0 }),
        onIdle: 'end',
        thread: { id: 'chat-1', turn: i + 1, ...(previous ? { previous: previous.file } : {}) },
        ...(previous ? { conversation: previous.conversation } : {}),
      });
      results.push({ r, text: readFileSync(trajectoryPath, 'utf8') });
      previous = { conversation: r.conversation, file: `run-${i + 1}.lar.jsonl` };
    }
    return {
      results,
      requests: server.requests.filter((q) => q.path === '/v1/chat/completions').map((q) => q.body as ChatRequestBody),
    };
  } finally {
    await server.stop();
  }
}

test('a question answered without tools ends the run "answered", not an error, and nudges nobody', async () => {
  const { results, requests } = await chat([{ content: 'sum subtracts: it returns a - b.' }], ['What does sum.js do?']);
  assert.equal(results[0]!.r.endReason, 'answered');
  assert.equal(requests.length, 1, 'no "continue by calling a tool" nudge');
  const lines = results[0]!.text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; reason?: string });
  assert.deepEqual(lines.at(-1), { ...lines.at(-1), type: 'end', reason: 'answered' });
  const report = verifyTrajectoryText(results[0]!.text);
  assert.deepEqual([report.lineErrors.length, report.summary!.outcome.reward, report.summary!.steps], [0, 0, 0]);
});

test('a follow-up continues the conversation: the model sees the first exchange, each run its own trajectory, linked', async () => {
  const { results, requests } = await chat(
    [
      { content: 'sum subtracts.' },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
      { content: 'It handles negative numbers already.' },
    ],
    ['What does sum.js do?', 'Now check that it handles negative numbers.'],
  );
  assert.deepEqual(
    results.map((x) => x.r.endReason),
    ['answered', 'answered'],
  );
  const second = requests[1]!.messages!.map((m) => [m.role, typeof m.content === 'string' ? m.content : null]);
  assert.deepEqual(second.slice(1), [
    ['user', 'What does sum.js do?'],
    ['assistant', 'sum subtracts.'],
    ['user', `Now check that it handles negative numbers.\n\n${newRunNote(defaultWorkflow())}`],
  ]);
  assert.match(
    newRunNote(defaultWorkflow()),
    /starts again in stage "explore"/,
    'the model is told the verifier starts over',
  );
  const header2 = JSON.parse(results[1]!.text.split('\n')[0]!) as { task: string; thread: unknown };
  assert.equal(header2.task, 'Now check that it handles negative numbers.');
  assert.deepEqual(header2.thread, { id: 'chat-1', turn: 2, previous: 'run-1.lar.jsonl' });
  assert.equal(verifyTrajectoryText(results[1]!.text).summary!.steps, 1, 'the second run is scored on its own');
});

test("a message typed during a run reaches the model at its next turn and is recorded as the user's", async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-chat-queue-'));
  const server = new ScriptedModelServer({
    contextLength: 32768,
    script: [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }] },
      { content: 'Noted: I will not touch b.' },
    ],
  });
  const endpoint = await server.start();
  const queue = ['Also, leave b alone.'];
  try {
    const r = await runWith({
      endpoint,
      task: 'Look at a.',
      runOutcomeCheck: outcomePasses,
      workspace: ws,
      execute: () => Promise.resolve({ status: 'ok', result: {}, observation: 'A' }),
      onIdle: 'end',
      // Typed while the first call ran: given at the next boundary only.
      nextUserMessage: () =>
        server.requests.some((q) => q.path === '/v1/chat/completions') ? queue.shift() : undefined,
    });
    assert.equal(r.endReason, 'answered');
    const second = (server.requests.filter((q) => q.path === '/v1/chat/completions')[1]!.body as ChatRequestBody)
      .messages!;
    assert.deepEqual([second.at(-1)!.role, second.at(-1)!.content], ['user', 'Also, leave b alone.']);
    const users = readFileSync(r.trajectoryPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; role?: string; content?: string })
      .filter((e) => e.type === 'message' && e.role === 'user');
    assert.deepEqual(
      users.map((u) => u.content),
      ['Look at a.', 'Also, leave b alone.'],
    );
  } finally {
    await server.stop();
  }
});
