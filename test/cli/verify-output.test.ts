/**
 * What `lar verify` prints, streamed: JSON Lines (`--json`), the whole report (`--format json`)
 * and the table, each against the whole report the verifier gives in process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { recordDigest } from '../../core/agent/run-digests';
import { splitLines } from '../../core/schema/jsonl';
import { verifyLines } from '../../core/verifier/stream';
import type { StageVisitResult, StepResult, TrajectorySummary } from '../../core/verifier/types';
import { verifyTrajectoryText, type TrajectoryReport } from '../../core/verifier/verify';
import { JsonLinesSink } from '../../core/verifier/verdict-json';
import { PLAIN, TableSink } from '../../cli/report-format';
import { loadCorpus, workflowResolver } from '../support/conformance';
import { lar } from '../support/lar-cli';
import { generateTrajectory } from '../../bench/generate';

const root = resolve(__dirname, '../../..');
const fixture = resolve(root, 'test-fixtures/trajectories/fix-failing-test.lar.jsonl');
const corpus = loadCorpus(resolve(root, 'test-fixtures/conformance'));
const tmp = () => mkdtempSync(join(tmpdir(), 'lar-verify-out-'));
/** A run long enough that its output outlasts a pipe's buffer. */
const bigFile = () => {
  const file = join(tmp(), 'big.lar.jsonl');
  writeFileSync(file, generateTrajectory(20_000));
  return file;
};

type Line =
  | { start: { backend: string; fatal?: string } }
  | { step: Omit<StepResult, 'verdicts' | 'stageVisit'> & { failed: StepResult['verdicts'] } }
  | { visit: Omit<StageVisitResult, 'verdicts'> & { failed: StageVisitResult['verdicts'] } }
  | { lineError: TrajectoryReport['lineErrors'][number] }
  | { userContext: unknown }
  | { summary?: Omit<TrajectorySummary, 'stages'>; lineErrors: number; fatal?: string; integrity: { state: string } };

const jsonLines = (out: string) =>
  out
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

/** The JSON Lines the whole report comes to: what `--json` must print for it. */
function expectedLines(report: TrajectoryReport): unknown[] {
  const failed = (vs: StepResult['verdicts']) => vs.filter((v) => !v.ok);
  const lines: { line: number; json: unknown }[] = [];
  const { backend, header, workflow, workflowSource, workflowProblems, fatal } = report;
  const start: unknown = JSON.parse(
    JSON.stringify({ start: { backend, workflowProblems, header, workflow, workflowSource, fatal } }),
  );
  for (const s of report.steps) {
    const { verdicts, stageVisit, ...rest } = s;
    lines.push({ line: s.line, json: { step: { ...rest, failed: failed(verdicts) } } });
    if (stageVisit) {
      const { verdicts: vv, ...visit } = stageVisit;
      lines.push({ line: s.line, json: { visit: { ...visit, failed: failed(vv) } } });
    }
  }
  for (const e of report.lineErrors) lines.push({ line: e.line - 0.5, json: { lineError: e } });
  for (const c of report.userContext ?? []) lines.push({ line: c.line - 0.25, json: { userContext: c } });
  lines.sort((a, b) => a.line - b.line);
  const open = (report.summary?.stages ?? []).filter((v) => v.endedBy === 'run_end');
  const end = open.map(({ verdicts, ...visit }) => ({ visit: { ...visit, failed: failed(verdicts) } }));
  const last: Record<string, unknown> = {};
  if (report.summary) {
    const { stages: _all, ...summary } = report.summary;
    last.summary = summary;
  }
  last.lineErrors = report.lineErrors.length;
  if (fatal !== undefined) last.fatal = fatal;
  last.integrity = { state: 'unrecorded' };
  return JSON.parse(JSON.stringify([start, ...lines.map((l) => l.json), ...end, last])) as unknown[];
}

test('--json (JSON Lines) says of every conformance case what the whole report says, in file order', () => {
  for (const c of corpus) {
    const opts = { resolve: workflowResolver(c.trajectoryPath) };
    let out = '';
    const sink = new JsonLinesSink((s) => (out += `${s}\n`));
    verifyLines(splitLines(c.text), { ...opts, reuse: true, keepVisits: false }, sink);
    sink.finish({ state: 'unrecorded' });
    assert.deepEqual(jsonLines(out), expectedLines(verifyTrajectoryText(c.text, opts)), c.name);
  }
});

test('lar verify --json streams JSON Lines: a start line, a line per step and visit, the summary last', async () => {
  const r = await lar(['verify', fixture, '--json']);
  assert.equal(r.code, 0, r.err);
  const lines = jsonLines(r.out);
  const report = verifyTrajectoryText(readFileSync(fixture, 'utf8'));
  assert.deepEqual(lines, expectedLines(report));
  assert.equal(lines.filter((l) => 'step' in l).length, 12);
  const last = lines.at(-1)!;
  assert.ok('summary' in last && last.summary!.outcome.reward === 1 && last.integrity.state === 'unrecorded');
  const blocked = lines.find((l) => 'step' in l && l.step.line === 6) as { step: { failed: { check: string }[] } };
  assert.deepEqual(
    blocked.step.failed.map((v) => v.check),
    ['tool.permitted', 'tool.succeeded'],
  );
});

test('lar verify --json: a malformed line is a lineError line where it stands, the rest is verified, exit 1', async () => {
  const dir = tmp();
  const file = join(dir, 'bad.lar.jsonl');
  const lines = readFileSync(fixture, 'utf8').trimEnd().split('\n');
  lines[3] = '{"type":"tool_call","tool":"read_file" "args":{}}';
  writeFileSync(file, lines.join('\n'));
  const r = await lar(['verify', file, '--json']);
  assert.equal(r.code, 1);
  const out = jsonLines(r.out);
  const at = out.findIndex((l) => 'lineError' in l);
  assert.deepEqual((out[at] as { lineError: unknown }).lineError, {
    line: 4,
    column: 40,
    endColumn: 41,
    message: `invalid JSON: unexpected '"': expected ',' or '}' after the value of "tool"`,
  });
  assert.equal((out[at - 1] as { step: { line: number } }).step.line, 3);
  assert.equal((out[at + 1] as { step: { line: number } }).step.line, 5);
  assert.equal((out.at(-1) as { lineErrors: number }).lineErrors, 1);
});

test('lar verify --format json prints the whole report, every verdict, as one document', async () => {
  const r = await lar(['verify', fixture, '--format', 'json']);
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(r.out) as TrajectoryReport & { integrity: { state: string } };
  const { integrity, ...rest } = report;
  assert.equal(integrity.state, 'unrecorded');
  assert.deepEqual(rest, JSON.parse(JSON.stringify(verifyTrajectoryText(readFileSync(fixture, 'utf8')))));
});

test('lar verify: --format must be table, jsonl or json, and --json is not the table', async () => {
  const bad = await lar(['verify', fixture, '--format', 'xml']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--format must be table, jsonl or json, not "xml"/);
  assert.equal((await lar(['verify', fixture, '--json', '--format', 'table'])).code, 2);
  const jsonl = await lar(['verify', fixture, '--format', 'jsonl']);
  assert.equal(jsonl.out, (await lar(['verify', fixture, '--json'])).out);
});

test('the table has a row per tool call and per failed event, the stage visits, outcome and return', () => {
  for (const c of corpus) {
    const opts = { resolve: workflowResolver(c.trajectoryPath) };
    let out = '';
    verifyLines(
      splitLines(c.text),
      { ...opts, reuse: true, keepVisits: false },
      new TableSink('x.lar.jsonl', PLAIN, (s) => (out += `${s}\n`)),
    );
    const report = verifyTrajectoryText(c.text, opts);
    if (report.fatal !== undefined) {
      assert.match(out, /cannot verify: /, c.name);
      continue;
    }
    const rows = report.steps.filter((s) => s.type === 'tool_call' || s.verdicts.some((v) => !v.ok));
    for (const s of rows) {
      const failed = s.verdicts.filter((v) => !v.ok);
      const head = new RegExp(
        `\\n\\s*${s.line}  \\s*${s.step ?? ''}  ${(s.stage ?? '(ended)').replace(/\W/g, '\\$&')}\\s`,
      );
      assert.match(out, head, `${c.name} line ${s.line}`);
      for (const v of failed) assert.ok(out.includes(`${v.check}: ${v.reason}`), `${c.name} line ${s.line} ${v.check}`);
    }
    for (const e of report.lineErrors) assert.ok(out.includes(`x.lar.jsonl:${e.line}:${e.column}: `), c.name);
    const visits = out
      .slice(out.indexOf('\nstages\n'))
      .split('\n')
      .filter((l) => /^ {2}\S.* steps /.test(l));
    assert.equal(visits.length, report.summary!.stages.length, c.name);
    assert.match(out, new RegExp(`\\(${report.summary!.steps} steps, ${report.summary!.stages.length} stage visits`));
  }
});

test('lar verify --json names a file changed after its run ended in its summary line, and fails', async () => {
  const dir = tmp();
  const state = join(dir, 'state');
  const file = join(dir, 'run.lar.jsonl');
  const text = readFileSync(fixture);
  writeFileSync(file, text);
  recordDigest(file, createHash('sha256').update(text).digest('hex'), { LAR_STATE_DIR: state });
  const clean = await lar(['verify', file, '--json'], { LAR_STATE_DIR: state });
  assert.equal(clean.code, 0, clean.err);
  assert.equal((jsonLines(clean.out).at(-1) as { integrity: { state: string } }).integrity.state, 'unchanged');
  writeFileSync(file, Buffer.concat([text, Buffer.from('\n')]));
  const changed = await lar(['verify', file, '--json'], { LAR_STATE_DIR: state });
  assert.equal(changed.code, 1);
  assert.equal((jsonLines(changed.out).at(-1) as { integrity: { state: string } }).integrity.state, 'changed');
  assert.match(changed.err, /changed after its run ended/);
});

test('lar verify --json | head: the reader leaving early ends lar quietly, with exit 0', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [resolve(root, 'dist/lar.js'), 'verify', bigFile(), '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((r) => child.once('close', r));
  assert.equal(err, '');
  assert.equal(code, 0);
});

test(
  'lar verify --json to a full disk fails: only a reader that left ends it quietly',
  { skip: !existsSync('/dev/full') },
  async () => {
    const { spawn } = await import('node:child_process');
    const full = openSync('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, [resolve(root, 'dist/lar.js'), 'verify', fixture, '--json'], {
        stdio: ['ignore', full, 'ignore'],
      });
      const code = await new Promise<number | null>((r) => child.once('close', r));
      assert.notEqual(code, 0);
    } finally {
      closeSync(full);
    }
  },
);
