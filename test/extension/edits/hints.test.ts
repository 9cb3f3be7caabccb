import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyStep,
  changedLineRanges,
  hintHover,
  hintLabel,
  hintsForFile,
  labelLines,
  shiftHints,
  type ContentChange,
  type EditHint,
  type StepRef,
} from '../../../extension/edits/hints';

const edit = (search: string, replace: string, status = 'ok') => ({
  tool: 'edit_file',
  args: { path: 'src/a.js', search, replace },
  status,
});
const write = (content: string) => ({ tool: 'write_file', args: { path: 'src/a.js', content }, status: 'ok' });

const FILE = ['const a = 1;', 'function sum(a, b) {', '  return a + b;', '}', 'module.exports = sum;', ''].join('\n');

test('edit_file: the line holding the replacement, found once', () => {
  assert.deepEqual(changedLineRanges(edit('a - b', 'a + b'), FILE), { kind: 'lines', ranges: [{ start: 2, end: 2 }] });
});

test('edit_file: a multi-line replacement marks each of its lines; line breaks at its edges mark no extra line', () => {
  const replace = 'function sum(a, b) {\n  return a + b;\n}';
  assert.deepEqual(changedLineRanges(edit('x', replace), FILE), { kind: 'lines', ranges: [{ start: 1, end: 3 }] });
  assert.deepEqual(changedLineRanges(edit('x', `\n${replace}\n`), FILE), {
    kind: 'lines',
    ranges: [{ start: 1, end: 3 }],
  });
});

test('edit_file: a CRLF file matches a LF replacement at the same lines', () => {
  const crlf = FILE.replace(/\n/g, '\r\n');
  assert.deepEqual(changedLineRanges(edit('x', 'return a + b;\n}'), crlf), {
    kind: 'lines',
    ranges: [{ start: 2, end: 3 }],
  });
});

test('edit_file: not found (changed since), found twice, or a deletion: the lines are unknown, with the reason', () => {
  const gone = changedLineRanges(edit('x', 'return a * b;'), FILE);
  assert.equal(gone.kind, 'unknown');
  assert.match((gone as { reason: string }).reason, /no longer in the file/);
  const twice = changedLineRanges(edit('x', 'a'), FILE);
  assert.equal(twice.kind, 'unknown');
  assert.match((twice as { reason: string }).reason, /more than once/);
  const removed = changedLineRanges(edit('const a = 1;\n', ''), FILE);
  assert.equal(removed.kind, 'unknown');
  assert.match((removed as { reason: string }).reason, /removed text/);
});

test('edit_file that did not run (blocked, denied) changed nothing', () => {
  assert.deepEqual(changedLineRanges(edit('a - b', 'a + b', 'blocked'), FILE), { kind: 'none' });
  assert.deepEqual(changedLineRanges(edit('a - b', 'a + b', 'denied'), FILE), { kind: 'none' });
});

test('write_file: every line of the file, with or without a final line break; an empty file has no line to mark', () => {
  assert.deepEqual(changedLineRanges(write(FILE), FILE), { kind: 'lines', ranges: [{ start: 0, end: 4 }] });
  assert.deepEqual(changedLineRanges(write('x'), 'one\ntwo'), { kind: 'lines', ranges: [{ start: 0, end: 1 }] });
  assert.equal(changedLineRanges(write(''), '').kind, 'unknown');
});

test('a command that changed the file: unknown lines', () => {
  const r = changedLineRanges({ tool: 'run_command', args: { command: 'npx prettier -w src' }, status: 'ok' }, FILE);
  assert.equal(r.kind, 'unknown');
  assert.match((r as { reason: string }).reason, /run_command changed the file/);
});

const ref = (step: number, event: StepRef['event'], reward: StepRef['reward'] = 1): StepRef => ({
  trajectory: 'file:///ws/runs/r1.lar.jsonl',
  trajectoryLine: step + 1,
  step,
  tool: event.tool,
  reward,
  event,
});

test('hints of a file: a later step takes over the lines it changed; the earlier step keeps the rest', () => {
  const hints = hintsForFile([ref(3, write(FILE)), ref(6, edit('a - b', 'a + b'), 0)], FILE);
  assert.deepEqual(
    hints.map((h) => [h.line, h.ref.step, h.ref.reward]),
    [
      [0, 3, 1],
      [1, 3, 1],
      [2, 6, 0],
      [3, 3, 1],
      [4, 3, 1],
    ],
  );
  assert.deepEqual([...labelLines(hints)], [0, 2, 3]);
});

test('a step whose lines are unknown puts one imprecise hint on the first line, saying why', () => {
  const hints = applyStep([], ref(8, { tool: 'run_command', args: {}, status: 'ok' }), {
    kind: 'unknown',
    reason: 'run_command changed the file; which lines is not recorded',
  });
  assert.equal(hints.length, 1);
  assert.equal(hints[0]!.line, 0);
  assert.equal(hints[0]!.precise, false);
  assert.equal(hintLabel(hints[0]!), 'step 8 · run_command · +1 · lines unknown');
  assert.match(
    hintHover(hints[0]!, 'r1.lar.jsonl', 'command:x'),
    /Which lines is unknown: run\\_command changed the file/,
  );
});

const hint = (line: number, step = 6): EditHint => ({
  line,
  ref: { trajectory: 'file:///ws/runs/r1.lar.jsonl', trajectoryLine: 7, step, tool: 'edit_file', reward: 1 },
  precise: true,
});
const change = (sl: number, sc: number, el: number, ec: number, text: string): ContentChange => ({
  range: { start: { line: sl, character: sc }, end: { line: el, character: ec } },
  text,
});
const lines = (hs: EditHint[]) => hs.map((h) => h.line);

test('user edit above the hints: they move with their lines', () => {
  const hs = [hint(5), hint(6), hint(7)];
  assert.deepEqual(lines(shiftHints(hs, change(1, 3, 1, 3, 'x\ny\n'))), [7, 8, 9], 'two lines inserted above');
  assert.deepEqual(lines(shiftHints(hs, change(1, 0, 2, 0, ''))), [4, 5, 6], 'one line deleted above');
  assert.deepEqual(lines(shiftHints(hs, change(2, 4, 2, 9, 'abc'))), [5, 6, 7], 'typing on a line above');
});

test('user edit inside: the edited line loses its hint, the other lines of the hunk keep theirs', () => {
  const hs = [hint(5), hint(6), hint(7)];
  assert.deepEqual(lines(shiftHints(hs, change(6, 2, 6, 2, 'z'))), [5, 7]);
  // Replacing lines 5–6 by one line: both lose their hint, line 7 moves up.
  assert.deepEqual(lines(shiftHints(hs, change(5, 0, 6, 10, 'one line'))), [6]);
  // Joining line 6 onto line 5 (deleting the line break): both edited.
  assert.deepEqual(lines(shiftHints(hs, change(5, 12, 6, 0, ''))), [6]);
});

test('user edit below the hints changes nothing', () => {
  const hs = [hint(5), hint(6)];
  assert.deepEqual(shiftHints(hs, change(9, 0, 12, 3, 'new\ntext')), hs);
});

test('a line moved whole keeps its hint: Enter at its start, deleting whole lines above it, Enter at its end', () => {
  assert.deepEqual(lines(shiftHints([hint(5)], change(5, 0, 5, 0, '\n'))), [6]);
  assert.deepEqual(lines(shiftHints([hint(5)], change(3, 0, 5, 0, ''))), [3]);
  // Enter at the end of line 5 (auto-indented): line 5 is unchanged, the new line 6 is the user's.
  const lengthAfter = (line: number) => (line === 6 ? 2 : 40);
  assert.deepEqual(lines(shiftHints([hint(5), hint(6)], change(5, 40, 5, 40, '\n  '), lengthAfter)), [5, 7]);
  // Enter in the middle of line 5: the text after the cursor moved, so both halves are edits.
  const split = (line: number) => (line === 6 ? 12 : 28);
  assert.deepEqual(lines(shiftHints([hint(5)], change(5, 28, 5, 28, '\n  '), split)), []);
});

test('the label names the step, tool and reward; the hover links back to the trajectory line', () => {
  const h = { ...hint(2), ref: { ...hint(2).ref, reward: -1 as const } };
  assert.equal(hintLabel(h), 'step 6 · edit_file · −1');
  const hover = hintHover(h, 'r1.lar.jsonl', 'command:lean4Agentic.revealTrajectoryLine?%5B%5D');
  assert.match(hover, /\*\*Changed by the agent\*\*: step 6 \(`edit_file`\), tool reward \*\*−1\*\*/);
  assert.match(hover, /\[Open r1\\\.lar\\\.jsonl at line 8\]\(command:lean4Agentic\.revealTrajectoryLine\?%5B%5D\)/);
});
