import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fc } from '../support/fc';
import { LIVE, LIVE_MAX, Partitions, RECENT, RECENT_MAX, SETTLED, type PartitionIndex } from '../../server/partitions';

const PARTS: PartitionIndex[] = [SETTLED, RECENT, LIVE];

/** A change: lines from `from` on were replaced, leaving `lines` lines. */
const change = (maxLines: number) =>
  fc
    .record({ keep: fc.double({ min: 0, max: 1, noNaN: true }), added: fc.nat(maxLines), all: fc.boolean() })
    .map(({ keep, added, all }) => ({ keep, added, all: all && added % 7 === 0 }));

test('the three parts always cover the document, in order, and a part whose lines changed gets a new result id', () => {
  fc.assert(
    fc.property(fc.array(change(600), { maxLength: 60 }), (changes) => {
      const p = new Partitions();
      // Each line's content as the client last saw it, per part: a stand-in for its diagnostics.
      let content: number[] = [];
      let serial = 0;
      let lines = 0;
      const seen = new Map<PartitionIndex, { id: string; view: string }>();
      for (const c of changes) {
        const from = Math.floor(c.keep * lines);
        content = content.slice(0, from);
        for (let i = 0; i < c.added; i++) content.push(++serial);
        lines = content.length;
        const touched = p.changed(from, lines, c.all);
        const ranges = PARTS.map((k) => p.lines(k, lines));
        assert.equal(ranges[0]![0], 0);
        assert.equal(ranges[1]![0], ranges[0]![1]);
        assert.equal(ranges[2]![0], ranges[1]![1]);
        assert.equal(ranges[2]![1], lines);
        assert.ok(ranges[2]![1] - ranges[2]![0] <= LIVE_MAX, 'live stays small');
        assert.ok(ranges[1]![1] - ranges[1]![0] <= RECENT_MAX, 'recent stays bounded');
        assert.ok(touched.includes(LIVE), 'the run-wide diagnostics ride with live: it always changes');
        for (const k of PARTS) {
          const [a, b] = ranges[k]!;
          const view = `${a}:${content.slice(a, b).join(',')}`;
          const id = p.resultId(k);
          const before = seen.get(k);
          if (before && before.view !== view) assert.notEqual(id, before.id, `part ${k} changed but kept its id`);
          if (before && before.id !== id)
            assert.ok(touched.includes(k), `part ${k} got a new id without being touched`);
          seen.set(k, { id, view });
        }
      }
    }),
  );
});

test('appends touch only the live part until it is full; then recent takes it, and settled only past RECENT_MAX', () => {
  const p = new Partitions();
  let lines = 10_000;
  assert.deepEqual(p.changed(0, lines), [SETTLED, RECENT, LIVE]);
  const touches = { settled: 0, recent: 0 };
  for (let i = 0; i < 5000; i++) {
    const t = p.changed(lines, ++lines);
    if (t.includes(SETTLED)) touches.settled++;
    if (t.includes(RECENT)) touches.recent++;
  }
  assert.equal(touches.recent, Math.floor(5000 / (LIVE_MAX + 1)));
  assert.equal(touches.settled, 1, 'recent moved into settled once past RECENT_MAX');
  assert.notEqual(new Partitions().resultId(LIVE), p.resultId(LIVE), 'ids never repeat across runs');
});
