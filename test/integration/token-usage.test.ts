/**
 * The server's token counts through a real run: on each model turn of the trajectory, never
 * invented.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TurnUsage } from '../../core/schema/trajectory';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { outcomePasses, runWith } from '../../testkit/agent-run';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../testkit/scripted-server';

interface Line {
  type?: string;
  role?: string;
  tool?: string;
  content?: string;
  usage?: TurnUsage;
}

async function runAgainst(opts: ScriptedServerOptions): Promise<{ text: string; lines: Line[]; chats: number }> {
  const server = new ScriptedModelServer(opts);
  const endpoint = await server.start();
  try {
    const result = await runWith({ endpoint, runOutcomeCheck: outcomePasses });
    const text = readFileSync(result.trajectoryPath, 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
    return { text, lines, chats: server.requests.filter((r) => r.path === '/v1/chat/completions').length };
  } finally {
    await server.stop();
  }
}

const script: ScriptedServerOptions['script'] = [
  { toolCalls: [{ name: 'list_files', arguments: {} }] },
  { content: 'Reading it.', toolCalls: [{ name: 'read_file', arguments: { path: 'a.js' } }] },
  {},
];

test("every model turn records the server's token counts: on its message, or on its first call when it had no words", async () => {
  const { text, lines, chats } = await runAgainst({ script, promptCache: true });
  const carriers = lines.filter((l) => l.usage);
  // One per answered request: the tool-only reply, the reply with words, the empty reply.
  assert.equal(chats, 4, 'the fourth request finds the script done');
  assert.deepEqual(
    carriers.map((l) => [l.type, l.tool ?? l.role, l.content]),
    [
      ['tool_call', 'list_files', undefined],
      ['message', 'assistant', 'Reading it.'],
      ['message', 'assistant', ''],
    ],
  );
  const [u1, u2, u3] = carriers.map((l) => l.usage!);
  assert.ok(u1!.prompt > 0 && u1!.completion > 0);
  // Each request extends the one before, so the prefix cache held the previous prompt.
  assert.deepEqual([u1!.cached, u2!.cached, u3!.cached], [0, u1!.prompt, u2!.prompt]);
  assert.ok(u2!.prompt > u1!.prompt);
  assert.equal(lines.find((l) => l.tool === 'read_file')?.usage, undefined, "a reply's counts are recorded once");
  assert.deepEqual(verifyTrajectoryText(text).lineErrors, []);
});

test('a server that reports no usage leaves no token counts in the trajectory', async () => {
  const chunk = (delta: object, finish: string | null) => ({
    id: 'x',
    object: 'chat.completion.chunk',
    model: 'LAR-9B',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const { lines } = await runAgainst({
    script: [
      {
        kind: 'raw',
        chunks: [
          chunk({ role: 'assistant', content: 'Looking.' }, null),
          chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } }] }, null),
          chunk({}, 'tool_calls'),
        ],
      },
    ],
  }); // prettier-ignore
  assert.ok(lines.some((l) => l.role === 'assistant' && l.content === 'Looking.'));
  assert.ok(lines.some((l) => l.tool === 'list_files'));
  assert.equal(
    lines.find((l) => l.usage),
    undefined,
  );
});
