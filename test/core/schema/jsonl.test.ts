import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from '../../support/fc';
import { findJsonSyntaxError, locateJsonValue } from '../../../core/json/position';
import { parseLine, parseTrajectory, formatLineError } from '../../../core/schema/jsonl';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

test('a JSON syntax error names the column and what was expected', () => {
  const cases: [string, number, RegExp][] = [
    ['{"a":1,}', 7, /expected a member name/],
    ['{"a" 1}', 5, /expected ':' after the member name "a"/],
    ['{"a":1 "b":2}', 7, /expected ',' or '}' after the value of "a"/],
    ['{"a":[1 2]}', 8, /expected ',' or ']'/],
    ['{"a":"x', 7, /unterminated string/],
    ['{"a":tru}', 5, /expected a JSON value/],
    ['{"a":1} x', 8, /after the JSON value/],
    ['', 0, /unexpected end of line/],
  ];
  for (const [text, offset, message] of cases) {
    const e = findJsonSyntaxError(text);
    assert.ok(e, text);
    assert.equal(e.offset, offset, text);
    assert.match(e.message, message, text);
  }
  assert.equal(findJsonSyntaxError('{"a":[1,{"b":null}],"c":"\\u00e9"}'), undefined);
});

test('the scanner agrees with JSON.parse on what is JSON and never throws', () => {
  fc.assert(
    fc.property(fc.oneof(fc.json(), fc.string()), (text) => {
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      assert.equal(findJsonSyntaxError(text) === undefined, valid, text);
    }),
    { numRuns: 500 },
  );
});

test('a value is located by its path; a missing member points at its object', () => {
  const text = '{"tool": "read_file", "args": {"path": "../x", "n": [1, {"k": true}]}}';
  const at = (p: (string | number)[]) => {
    const s = locateJsonValue(text, p)!;
    return text.slice(s.start, s.end);
  };
  assert.equal(at(['tool']), '"read_file"');
  assert.equal(at(['args', 'path']), '"../x"');
  assert.equal(at(['args', 'n', 1, 'k']), 'true');
  assert.equal(at(['args', 'missing']), '{"path": "../x", "n": [1, {"k": true}]}');
  assert.equal(at([]), text);
});

test('malformed lines: position and expectation, and the next line is still parsed', () => {
  const header = JSON.stringify({
    lar: 1,
    type: 'header',
    task: 't',
    workflow: 'builtin:default-coding',
    started: 'now',
  });
  const text = [
    header,
    '{"type":"tool_call","tool":"read_file","args":{},"status":"done"}',
    '{"type":"teleport"}',
    '{"type":"tool_call", "tool": 7}',
    header,
    '[1,2]',
    '',
    '{"type":"message","role":"assistant","content":"hi"}',
  ].join('\r\n');
  const parsed = parseTrajectory(text);
  assert.equal(parsed.header?.task, 't');
  const bad = parsed.lines.filter((l) => l.kind === 'malformed');
  assert.deepEqual(
    bad.map((l) => l.line),
    [2, 3, 4, 5, 6],
  );
  const errs = bad.map((l) => (l.kind === 'malformed' ? l.error : undefined)!);
  assert.match(errs[0]!.message, /"status": Invalid option: expected one of/);
  assert.equal(errs[0]!.column, '{"type":"tool_call","tool":"read_file","args":{},"status":'.length + 1);
  assert.match(
    errs[1]!.message,
    /"type": expected one of "tool_call", "message", "outcome", "compaction", "restore", "tokens", "mcp_tools", "end"/,
  );
  assert.equal(errs[1]!.column, 9);
  assert.match(errs[2]!.message, /"tool"/);
  assert.match(errs[3]!.message, /header is only allowed on the first line/);
  assert.match(errs[4]!.message, /expected a JSON object/);
  assert.equal(parsed.lines[7]!.kind, 'event');
  assert.match(formatLineError(errs[1]!, 'run.lar.jsonl'), /^run\.lar\.jsonl:3:9: /);
});

test('parseLine never throws, whatever the line', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.json(),
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
      fc.boolean(),
      (text, first) => {
        const p = parseLine(text, 1, first);
        if (p.kind === 'malformed') {
          assert.ok(p.error.column >= 1);
          assert.ok(p.error.message.length > 0);
        }
      },
    ),
    { numRuns: 500 },
  );
});

test("a header's informational fields (the endpoint's name) never make a trajectory unverifiable, however long", async () => {
  const { verifyTrajectoryText } = await import('../../../core/verifier/verify.js');
  const { REPO_ROOT } = await import('../../../devtools/paths.js');
  const text = readFileSync(join(REPO_ROOT, 'test-fixtures', 'trajectories', 'fix-failing-test.lar.jsonl'), 'utf8');
  const long = text.replace(
    '"endpoint":"http://127.0.0.1:30000/v1"',
    `"endpoint":"x","endpointName":"${'n'.repeat(5000)}"`,
  );
  assert.notEqual(long, text);
  const report = verifyTrajectoryText(long);
  assert.equal(report.fatal, undefined);
  assert.equal(report.summary?.outcome.reward, 1);
});
