/**
 * Pull diagnostics as editors take them: VS Code's client (three identifiers, a held workspace request),
 * Neovim's newest, a client with the static provider only, and push for every client that cannot pull.
 * Each sees exactly the diagnostics push gives, through the channel it can take.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { generateTrajectory } from '../../bench/generate';
import { LIVE_MAX } from '../../server/partitions';
import { LspClient, root } from '../support/lsp-client';
import { CLIENTS, PullClient } from '../support/pull-client';
import { defaultWorkflowJson } from '../support/workflow-json';

const fixture = readFileSync(resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl'), 'utf8');
const fixtureLines = fixture.trimEnd().split('\n');
const key = (d: Diagnostic) => JSON.stringify([d.range.start, d.range.end, d.code, d.severity, d.source, d.message]);
const sorted = (ds: Diagnostic[]) => ds.map(key).sort();
const appendAt = (line: number, text: string) => [
  { range: { start: { line, character: 0 }, end: { line, character: 0 } }, text: text + '\n' },
];

const clients: { stop(): Promise<void> }[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.stop()));
});
async function pullClient(caps: keyof typeof CLIENTS): Promise<PullClient> {
  const c = await PullClient.start(CLIENTS[caps]);
  clients.push(c);
  return c;
}
let reference: LspClient | undefined;
/** What push gives for this text: the diagnostics every client must end up with. */
async function pushed(uri: string, text: string): Promise<string[]> {
  if (!reference) clients.push((reference = await LspClient.start()));
  const ref = `${uri}.ref-${reference.published(uri)}.lar.jsonl`;
  return sorted((await reference.open(ref, text)).diagnostics).map((k) => k.replaceAll(ref, uri));
}

for (const caps of Object.keys(CLIENTS) as (keyof typeof CLIENTS)[])
  test(`${caps}: an open trajectory, a live step appended, an edit: the same diagnostics as push, by its channel`, async () => {
    const c = await pullClient(caps);
    const u = `file:///tmp/pull-${caps}.lar.jsonl`;
    const start = fixtureLines.slice(0, 6).join('\n') + '\n';
    await c.didOpen(u, start);
    await c.settle();
    assert.deepEqual(sorted(c.diagnostics(u)), await pushed(u, start));
    // A step the agent wrote: the server hears it first (lar/appendStep), the editor has not reloaded yet.
    await c.connection.sendNotification('lar/appendStep', { uri: u, text: fixtureLines[6]!, line: 7 });
    await c.settle();
    const seven = fixtureLines.slice(0, 7).join('\n') + '\n';
    assert.deepEqual(sorted(c.diagnostics(u)), await pushed(u, seven), 'the appended step reached the client');
    // The editor reloads the file (same text), then the user edits the blocked call into a permitted one.
    await c.didChange(u, 2, [{ text: seven }]);
    const edited = seven.replace('"write_file"', '"read_file"');
    await c.didChange(u, 3, [{ text: edited }]);
    await c.settle();
    assert.deepEqual(sorted(c.diagnostics(u)), await pushed(u, edited), 'the edit reached the client');

    const pulls = c.providers.map((p) => p.identifier);
    if (caps === 'vscode' || caps === 'neovim')
      assert.deepEqual(pulls, ['lar.settled', 'lar.recent', 'lar.live'], 'three parts, registered at run time');
    else if (caps === 'staticPull') assert.deepEqual(pulls, ['lar'], 'the whole document under one identifier');
    else assert.deepEqual(pulls, [], 'no pull without refresh');
    if (pulls.length) assert.equal(c.pushed.get(u)?.length ?? 0, 0, 'nothing pushed for a pulled trajectory');
    else assert.ok(c.received.pushed > 0);
  });

test('vscode: a live append re-sends its part only; the rest answers unchanged, and a no-op reload changes nothing', async () => {
  const c = await pullClient('vscode');
  const u = 'file:///tmp/pull-append.lar.jsonl';
  const lines = generateTrajectory(3000).trimEnd().split('\n');
  const base = 2000;
  await c.didOpen(u, lines.slice(0, base).join('\n') + '\n');
  await c.settle();
  const total = c.diagnostics(u).length;
  assert.ok(total > 300, `${total} diagnostics`);
  const fulls = new Map<string, number>();
  let items = 0;
  c.onReport = (identifier, n, via) => {
    if (via === 'document') fulls.set(identifier ?? '', (fulls.get(identifier ?? '') ?? 0) + 1);
    items += n;
  };
  const appends = LIVE_MAX + 10;
  for (let i = base; i < base + appends; i++) {
    await c.didChange(u, i, appendAt(i, lines[i]!));
    await c.settle();
  }
  assert.equal(fulls.get('lar.settled') ?? 0, 0, 'the settled part was never re-sent');
  assert.equal(fulls.get('lar.recent'), 1, 'recent once, when live filled up');
  assert.equal(fulls.get('lar.live'), appends);
  // Push sends every diagnostic on every append: appends × total.
  assert.ok(items < (appends * total) / 10, `${items} diagnostics sent for ${appends} appends of a run with ${total}`);
  assert.deepEqual(sorted(c.diagnostics(u)), await pushed(u, lines.slice(0, base + appends).join('\n') + '\n'));

  const before = { ...c.received };
  const extra: string[] = [];
  c.onReport = (identifier, n, via) => extra.push(`${identifier} ${n} ${via}`);
  await c.didChange(u, 99_999, [{ text: lines.slice(0, base + appends).join('\n') + '\n' }]);
  await c.settle();
  assert.equal(c.received.full, before.full, `nothing re-sent: ${extra.join('; ')}`);
  assert.equal(
    c.received.unchanged,
    before.unchanged + 3,
    `every part answered unchanged: ${JSON.stringify([before, c.received])}`,
  );
});

test('vscode: a run with no editor arrives as partial results; the next run clears it; a closed editor clears its own', async () => {
  const c = await pullClient('vscode');
  const first = 'file:///tmp/pull-live-first.lar.jsonl';
  const second = 'file:///tmp/pull-live-second.lar.jsonl';
  for (let i = 0; i < fixtureLines.length; i++)
    await c.connection.sendNotification('lar/appendStep', { uri: first, text: fixtureLines[i]!, line: i + 1 });
  await c.settle();
  assert.ok(c.received.partial >= fixtureLines.length, 'one partial result (or more) per step');
  assert.deepEqual(sorted(c.diagnostics(first)), await pushed(first, fixture));
  assert.equal(c.received.pushed, 0, 'nothing pushed');
  await c.connection.sendNotification('lar/appendStep', { uri: second, text: fixtureLines[0]!, line: 1 });
  await c.until(() => c.diagnostics(first).length === 0, 'the earlier run cleared');

  const open = 'file:///tmp/pull-closed.lar.jsonl';
  await c.didOpen(open, fixture);
  await c.settle();
  assert.ok(c.diagnostics(open).length > 0);
  await c.didClose(open);
  await c.until(() => c.diagnostics(open).length === 0, 'the closed trajectory cleared', 3000);
});

test('workflow documents: pushed to a client that pulls trajectories by part, pulled by a static-provider client', async () => {
  const wf = defaultWorkflowJson();
  wf.stages[0]!.tools.push('teleport');
  const text = JSON.stringify(wf, null, 2);
  for (const caps of ['vscode', 'staticPull'] as const) {
    const c = await pullClient(caps);
    const u = `file:///tmp/pull-${caps}.larflow.json`;
    await c.didOpen(u, text, 'lar-workflow');
    await c.settle();
    await c.until(() => c.diagnostics(u).length > 0, 'workflow diagnostics');
    assert.deepEqual(
      c.diagnostics(u).map((d) => d.code),
      ['workflow.unknown_tool'],
    );
    assert.equal(c.pushed.has(u), caps === 'vscode', `${caps}: ${c.pushed.has(u) ? 'pushed' : 'pulled'}`);
  }
});

test("vscode: an opened trajectory's whole rewards follow its pulled diagnostics, and come unpulled too", async () => {
  const c = await pullClient('vscode');
  const u = 'file:///tmp/pull-rewards.lar.jsonl';
  let answered = 0;
  c.onReport = (_id, _n, via, at) => {
    if (via === 'document' && at === u) answered++;
  };
  const rewards = c.nextRewards().then((r) => ({ r, answered }));
  await c.didOpen(u, fixture);
  const got = await rewards;
  assert.equal((got.r as { uri: string; full: boolean }).uri, u);
  assert.equal((got.r as { full: boolean }).full, true);
  assert.equal(got.answered, 3, 'the three parts were answered before the rewards came');
  // Opened with no pull after it (an editor the client does not show): the rewards come all the same.
  const quiet = 'file:///tmp/pull-rewards-quiet.lar.jsonl';
  const late = c.nextRewards();
  await c.connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri: quiet, languageId: 'lar-trajectory', version: 1, text: fixture },
  });
  assert.equal(((await late) as { uri: string }).uri, quiet);
});

test('vscode: an open trajectory the editor does not show is kept current through the workspace requests', async () => {
  const c = await pullClient('vscode');
  const u = 'file:///tmp/pull-hidden.lar.jsonl';
  const six = fixtureLines.slice(0, 6).join('\n') + '\n';
  await c.didOpen(u, six, 'lar-trajectory', 1, false);
  const want6 = await pushed(u, six);
  await c.until(
    () => JSON.stringify(sorted(c.diagnostics(u))) === JSON.stringify(want6),
    'the hidden document reported',
  );
  // The file changes on disk and the editor reloads the hidden document: no pull follows, the workspace hears.
  await c.didChange(u, 2, [{ text: fixture }]);
  const want = await pushed(u, fixture);
  await c.until(() => JSON.stringify(sorted(c.diagnostics(u))) === JSON.stringify(want), 'the change reported', 3000);
});

test("a client that refuses the parts' registration gets every diagnostic pushed instead", async () => {
  const c = await PullClient.start(CLIENTS.vscode, undefined, undefined, true);
  clients.push(c);
  const u = 'file:///tmp/pull-refused.lar.jsonl';
  await c.didOpen(u, fixture);
  await c.until(() => (c.pushed.get(u)?.length ?? 0) > 0, 'pushed diagnostics');
  await c.settle();
  assert.deepEqual(sorted(c.diagnostics(u)), await pushed(u, fixture));
});

test('vscode: a workspace request without partial results is answered empty and leaves the held ones be', async () => {
  const c = await pullClient('vscode');
  const live = 'file:///tmp/pull-no-partials.lar.jsonl';
  const answer = await c.connection.sendRequest<{ items: unknown[] }>('workspace/diagnostic', {
    identifier: 'lar.live',
    previousResultIds: [],
  });
  assert.deepEqual(answer.items, []);
  for (let i = 0; i < fixtureLines.length; i++)
    await c.connection.sendNotification('lar/appendStep', { uri: live, text: fixtureLines[i]!, line: i + 1 });
  await c.settle();
  assert.deepEqual(sorted(c.diagnostics(live)), await pushed(live, fixture));
});
