import { test } from 'node:test';
import assert from 'node:assert/strict';
import { columnFor } from '../../../extension/trajectory/editor-column';

const RUN = 'file:///ws/.lar/runs/run-1.lar.jsonl';

test('a trajectory opens in the active group when no group shows it, not in a new one beside', () => {
  assert.equal(columnFor(RUN, [], 1), 1);
  assert.equal(
    columnFor(
      RUN,
      [
        { column: 1, uris: ['file:///ws/a.ts'] },
        { column: 2, uris: [] },
      ],
      2,
    ),
    2,
  );
});

test('a trajectory already open is shown where it is, the active group first', () => {
  const groups = [
    { column: 1, uris: ['file:///ws/a.ts'] },
    { column: 2, uris: [RUN] },
    { column: 3, uris: [RUN] },
  ];
  assert.equal(columnFor(RUN, groups, 1), 2);
  assert.equal(columnFor(RUN, groups, 3), 3);
});
