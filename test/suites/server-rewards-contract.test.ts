// The extension's side of lar/rewards against the real server process: what
// the server sends is accepted by the client's schema, the gutter mapping turns
// it into the marks a user expects, and merging partial notifications gives
// what a full verification of the same text gives.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RewardsParams } from '../../core/protocol/lsp';
import { decorationsFor } from '../../extension/trajectory/decorations';
import { changedLineRanges } from '../../extension/edits/hints';
import { ToolCallEvent } from '../../core/schema/trajectory';
import { mergeRewards } from '../../extension/trajectory/runs';
import { LspClient, root } from '../support/lsp-client';

const fixture = readFileSync(resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl'), 'utf8');
const uri = (name: string) => pathToFileURL(resolve(root, 'test-fixtures/trajectories', name)).toString();

let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client.stop();
});

/** The last lar/rewards for `uri`, validated as the extension validates it. */
function lastRewards(u: string): RewardsParams {
  const raw = client.notifications
    .filter((n) => n.method === 'lar/rewards' && (n.params as { uri: string }).uri === u)
    .at(-1);
  assert.ok(raw, `no lar/rewards for ${u}`);
  const parsed = RewardsParams.safeParse(raw.params);
  assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
  return parsed.data;
}

const marks = (p: RewardsParams) =>
  Object.fromEntries([...decorationsFor(p)].filter(([, v]) => v.length).map(([k, v]) => [k, v.map((d) => d.line)]));

test("the recorded demo run: the server's rewards draw as the CLI reports them", async () => {
  const u = uri('contract-demo.lar.jsonl');
  await client.open(u, fixture);
  const p = lastRewards(u);
  assert.equal(p.version, 1);
  assert.deepEqual(marks(p), { stepPass: [2, 3, 4, 7, 9], stepFail: [5], stagePass: [6, 8, 10], outcomePass: [11] });
  // The edit_file step names its file, and its replacement is found on the line it changed.
  const edit = p.lines.find((l) => l.tool === 'edit_file');
  assert.deepEqual(edit?.filesChanged, ['src/sum.js']);
  const event = ToolCallEvent.parse(JSON.parse(fixture.split('\n')[edit.line]!));
  assert.deepEqual(changedLineRanges(event, 'module.exports = (a, b) => a + b;\n'), {
    kind: 'lines',
    ranges: [{ start: 0, end: 0 }],
  });
});

test('a live append: the merged partial notification equals a fresh full verification', async () => {
  const lines = fixture.trimEnd().split('\n');
  const head = lines.slice(0, 9).join('\n') + '\n';
  const u = uri('contract-live.lar.jsonl');
  await client.open(u, head);
  let known = lastRewards(u);
  let version = 1;
  let text = head;
  for (const extra of lines.slice(9)) {
    // Appended at the end of the document, as the agent appends to the file.
    const end = text.split('\n').length - 1;
    text += `${extra}\n`;
    const count = client.notifications.length;
    await client.next(u, () =>
      client.connection.sendNotification('textDocument/didChange', {
        textDocument: { uri: u, version: ++version },
        contentChanges: [
          { range: { start: { line: end, character: 0 }, end: { line: end, character: 0 } }, text: `${extra}\n` },
        ],
      }),
    );
    assert.equal(lastRewards(u).full, false, 'an append is a partial notification');
    assert.ok(client.notifications.length > count);
    known = mergeRewards(known, lastRewards(u));
  }
  const fresh = uri('contract-fresh.lar.jsonl');
  await client.open(fresh, lines.join('\n') + '\n');
  assert.deepEqual(marks(known), marks(lastRewards(fresh)));
  assert.deepEqual(known.lines, lastRewards(fresh).lines);
  assert.deepEqual(known.stages, lastRewards(fresh).stages);
});

test("an edit that takes a line's reward away (a step turned into a message) clears its mark", async () => {
  const u = uri('contract-message.lar.jsonl');
  await client.open(u, fixture);
  let known = lastRewards(u);
  const line = 3;
  const old = fixture.split('\n')[line]!;
  await client.next(u, () =>
    client.connection.sendNotification('textDocument/didChange', {
      textDocument: { uri: u, version: 2 },
      contentChanges: [
        {
          range: { start: { line, character: 0 }, end: { line, character: old.length } },
          text: '{"type":"message","role":"assistant","content":"thinking"}',
        },
      ],
    }),
  );
  const partial = lastRewards(u);
  assert.equal(partial.full, false);
  known = mergeRewards(known, partial);
  assert.ok(!known.lines.some((l) => l.line === line), 'the message line has no reward');
  assert.deepEqual(marks(known).stepPass, [2, 4, 7, 9]);
});
