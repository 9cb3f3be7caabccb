/**
 * Whatever happens to a trajectory (steps appended live, lines edited, inserted or deleted in an editor, a
 * reload that changes nothing), a pulling client ends up showing exactly what push would have shown.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { generateTrajectory } from '../../bench/generate';
import { fc } from '../support/fc';
import { LspClient } from '../support/lsp-client';
import { CLIENTS, PullClient } from '../support/pull-client';

const pool = generateTrajectory(600).trimEnd().split('\n');
const key = (d: Diagnostic) => JSON.stringify([d.range.start, d.range.end, d.code, d.severity, d.message]);
const sorted = (ds: Diagnostic[]) => ds.map(key).sort();

type Op =
  | { kind: 'live'; count: number }
  | { kind: 'append'; count: number }
  | { kind: 'replace'; at: number; with: number; malformed: boolean }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'reload' };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('live' as const), count: fc.integer({ min: 1, max: 160 }) }),
  fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 160 }) }),
  fc.record({
    kind: fc.constant('replace' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }).map((x) => x),
    with: fc.nat(pool.length - 1),
    malformed: fc.boolean(),
  }) as fc.Arbitrary<Op>,
  fc.record({
    kind: fc.constant('delete' as const),
    at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
    count: fc.integer({ min: 1, max: 40 }),
  }) as fc.Arbitrary<Op>,
  fc.constant({ kind: 'reload' as const }),
);

const clients: { stop(): Promise<void> }[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.stop()));
});

let round = 0;
async function check(caps: 'vscode' | 'staticPull', ops: Op[]): Promise<void> {
  const pull = await PullClient.start(CLIENTS[caps]);
  const push = await LspClient.start();
  clients.push(pull, push);
  try {
    const r = ++round;
    const live = `file:///tmp/eq-${r}-live.lar.jsonl`;
    const doc = `file:///tmp/eq-${r}-doc.lar.jsonl`;
    let liveLines = 0;
    let lines = pool.slice(0, 40);
    let version = 1;
    const text = () => lines.join('\n') + '\n';
    await pull.didOpen(doc, text());
    await push.open(doc, text());
    for (const o of ops) {
      if (o.kind === 'live') {
        for (const line of pool.slice(liveLines, liveLines + o.count)) {
          liveLines++;
          const params = { uri: live, text: line, line: liveLines };
          await pull.connection.sendNotification('lar/appendStep', params);
          await push.next(live, () => push.connection.sendNotification('lar/appendStep', params));
        }
      } else {
        if (o.kind === 'append') lines = lines.concat(pool.slice(lines.length, lines.length + o.count));
        else if (o.kind === 'replace') {
          const at = 1 + Math.floor(o.at * (lines.length - 1));
          lines = lines.slice();
          lines[at] = o.malformed ? pool[o.with]!.slice(0, 20) : pool[o.with]!;
        } else if (o.kind === 'delete') {
          const at = 1 + Math.floor(o.at * (lines.length - 1));
          lines = lines.slice(0, at).concat(lines.slice(at + o.count));
        }
        version++;
        await pull.didChange(doc, version, [{ text: text() }]);
        await push.next(doc, () =>
          push.connection.sendNotification('textDocument/didChange', {
            textDocument: { uri: doc, version },
            contentChanges: [{ text: text() }],
          }),
        );
      }
      await pull.settle();
      for (const u of [doc, live]) {
        const want = push.published(u) ? (await push.nthDiagnostics(u, push.published(u))).diagnostics : [];
        assert.deepEqual(sorted(pull.diagnostics(u)), sorted(want), `${caps}: ${u} after ${JSON.stringify(o)}`);
      }
    }
  } finally {
    await pull.stop();
    await push.stop();
  }
}

for (const caps of ['vscode', 'staticPull'] as const)
  test(`${caps}: after any sequence of live steps, appends, edits, deletions and reloads, pull shows what push shows`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), (ops) => check(caps, ops)),
      { numRuns: 6 },
    );
  });
