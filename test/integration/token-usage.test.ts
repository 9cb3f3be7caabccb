/**
 * The server's token counts through a real run: on each model turn of the trajectory, never
 * invented, and in the ATIF export as Harbor's metrics (which Harbor's own validator accepts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportAtif } from '../../core/export/atif';
import { parseTrajectory } from '../../core/schema/jsonl';
import type { TurnUsage } from '../../core/schema/trajectory';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { harborStatus } from '../../devtools/paths';
import { outcomePasses, runWith } from '../../testkit/agent-run';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../testkit/scripted-server';
import { python } from '../support/harbor-job';

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

const harbor = harborStatus();

test("the export of a run with token counts has them as ATIF metrics, and Harbor's validator accepts it", async (t) => {
  const { text } = await runAgainst({ script, promptCache: true });
  const doc = exportAtif(parseTrajectory(text), verifyTrajectoryText(text), { agentVersion: '0', fallbackId: 'r' });
  const metrics = doc.steps.flatMap((s) => (s.metrics ? [s.metrics] : []));
  assert.equal(metrics.length, 3);
  assert.deepEqual(doc.final_metrics, {
    total_prompt_tokens: metrics.reduce((n, m) => n + m.prompt_tokens!, 0),
    total_completion_tokens: metrics.reduce((n, m) => n + m.completion_tokens!, 0),
    total_cached_tokens: metrics.reduce((n, m) => n + m.cached_tokens!, 0),
    total_steps: doc.steps.length,
  });
  if ('skip' in harbor) return t.skip(harbor.skip);
  const file = join(process.env.TMPDIR ?? '/tmp', 'usage-trajectory.json');
  writeFileSync(file, JSON.stringify(doc));
  const v = await python(
    harbor.venv,
    'import runpy, sys; sys.argv = ["validator", sys.argv[1]]; runpy.run_module("harbor.utils.trajectory_validator", run_name="__main__")',
    [file],
  );
  assert.equal(v.code, 0, v.out);
});
