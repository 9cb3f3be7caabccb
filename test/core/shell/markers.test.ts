/**
 * The framing of a command's output, without a shell: the terminal's stream
 * cut at any point gives the same output and status.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandReader, ReadyMarker, SyncMarker, type CommandEvent } from '../../../core/shell/markers';

const BEGIN = '0123456789abcdef';
const END = 'fedcba9876543210';

/** Everything the reader makes of `chunks`: the output as text, whether it began, and the status. */
function readAll(chunks: string[], stopping = false): { begun: boolean; output: string; status?: number } {
  const reader = new CommandReader(BEGIN, END);
  const events: CommandEvent[] = chunks.flatMap((c) => reader.read(c, stopping));
  const end = events.find((e) => e.type === 'end');
  return {
    begun: events.some((e) => e.type === 'begin'),
    output: events.map((e) => (e.type === 'output' ? e.bytes.toString('latin1') : '')).join(''),
    ...(end ? { status: end.status } : {}),
  };
}

const stream = `echo hi\r\n__LAR_B_${BEGIN}__\r\nhi\r\nthere\r\n__LAR_E_${END}_7__\r\n$ `;

test('the output between the markers is the command output, and the end marker gives its status', () => {
  assert.deepEqual(readAll([stream]), { begun: true, output: 'hi\r\nthere', status: 7 });
});

test('markers cut anywhere between two chunks are still found, and nothing of them reaches the output', () => {
  for (let i = 0; i <= stream.length; i++) {
    const got = readAll([stream.slice(0, i), stream.slice(i)]);
    assert.deepEqual(got, { begun: true, output: 'hi\r\nthere', status: 7 }, `cut at ${i}`);
  }
});

test('the stream cut at any two points, or with empty chunks between, gives the same output and status', () => {
  for (let i = 0; i <= stream.length; i++) {
    for (let j = i; j <= stream.length; j++) {
      const got = readAll([stream.slice(0, i), '', stream.slice(i, j), '', stream.slice(j)]);
      assert.deepEqual(got, { begun: true, output: 'hi\r\nthere', status: 7 }, `cut at ${i} and ${j}`);
    }
  }
});

test('a command printing a marker with another nonce does not end its run', () => {
  const fake = `__LAR_B_${BEGIN}__\r\n__LAR_E_0000000000000000_0__\r\n__LAR_E_${END}_1__`;
  assert.deepEqual(readAll([fake]), { begun: true, output: '__LAR_E_0000000000000000_0__', status: 1 });
});

test('output before the begin marker is not the command output', () => {
  assert.deepEqual(readAll([`stale output __LAR_B_${BEGIN}`]), { begun: false, output: '' });
});

test('an end marker on a terminal left without carriage returns still ends the run', () => {
  assert.deepEqual(readAll([`__LAR_B_${BEGIN}__\nraw\n__LAR_E_${END}_0__`]), { begun: true, output: 'raw', status: 0 });
});

test('sync markers and their line ends are left out of the output only while the command is being stopped', () => {
  const text = `__LAR_B_${BEGIN}__\r\nx\r\n__LAR_S_${END}__\r\ny\r\n__LAR_E_${END}_130__`;
  assert.equal(readAll([text], true).output, 'xy');
  assert.equal(readAll([text], false).output, `x\r\n__LAR_S_${END}__\r\ny`);
});

test('output held back as a possible marker is given up when the shell exits', () => {
  const reader = new CommandReader(BEGIN, END);
  reader.read(`__LAR_B_${BEGIN}__\r\nlast\r\n__LAR_E_`);
  assert.equal(reader.flush()?.toString('latin1'), '\r\n__LAR_E_');
  assert.equal(reader.flush(), undefined);
});

test('the ready and sync markers are seen when cut across chunks, with their nonce only', () => {
  const ready = new ReadyMarker();
  ready.expect(BEGIN);
  assert.equal(ready.seen(`__LAR_R_${END}__`), false);
  assert.equal(ready.seen(`__LAR_R_${BEGIN.slice(0, 5)}`), false);
  assert.equal(ready.seen(`${BEGIN.slice(5)}__`), true);
  const sync = new SyncMarker();
  sync.expect(END);
  assert.equal(sync.seen(`__LAR_S_${END.slice(0, 9)}`), false);
  assert.equal(sync.seen(`${END.slice(9)}__\r\n`), true);
});

test('a sync marker early in a chunk of any size is seen', () => {
  const sync = new SyncMarker();
  sync.expect(END);
  assert.equal(sync.seen(`__LAR_S_${END}__\r\n${'x'.repeat(100_000)}`), true);
  sync.expect(END);
  assert.equal(sync.seen(`${'y'.repeat(10_000)}__LAR_S_${END.slice(0, 5)}`), false);
  assert.equal(sync.seen(`${END.slice(5)}__`), true);
});
