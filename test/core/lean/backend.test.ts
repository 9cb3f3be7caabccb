/**
 * The Lean backend (core/lean/): finding a toolchain, building and caching
 * lar-verify, and the process management (framing, multiplexing, timeouts,
 * restart with replay, giving up) against a real child process that speaks
 * the lar-verify protocol: test/support/fake-lar-verify.ts, which answers
 * with the builtin verifier, because this machine has no Lean toolchain. The
 * last test runs the real Lean checker when a toolchain is found and is
 * skipped, with the reason, otherwise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LeanBackend, LeanUnavailableError, detectLean, findLeanSources, LEAN_PATH_SETTING } from '../../../core/lean';
import { BuiltinBackend, type VerifierBackend } from '../../../core/verifier/backend';
import { verifyTrajectoryTextWith } from '../../../core/verifier/verify';
import { builtinWorkflow } from '../../../core/workflow/load';
import type { TrajectoryEvent } from '../../../core/schema/trajectory';
import type { Workflow } from '../../../core/schema/workflow';
import type { StepResult } from '../../../core/verifier/types';
import { compareCase, compareGates, gatesAfter, loadCorpus, workflowResolver } from '../../support/conformance';
import { FAKE, fakeToolchain } from '../../support/fake-toolchain';

const CORPUS = path.resolve(__dirname, '../../../../test-fixtures/conformance');
const posix = process.platform !== 'win32';

function tmpDir(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `lar-${name}-`));
}

function fakeBackend(opts: { flags?: string[]; timeoutMs?: number; maxCrashes?: number; env?: NodeJS.ProcessEnv } = {}): LeanBackend {
  return new LeanBackend({
    verifyCommand: [process.execPath, FAKE, '--serve', ...(opts.flags ?? [])],
    requestTimeoutMs: opts.timeoutMs ?? 5000,
    ...(opts.maxCrashes !== undefined ? { maxCrashes: opts.maxCrashes } : {}),
    ...(opts.env !== undefined ? { env: opts.env } : {}),
  });
}

const wf: Workflow = builtinWorkflow('default-coding');

/** A few calls: a read (ok), a denied write in explore (violation), a transition, an edit. */
const EVENTS: { event: TrajectoryEvent; line: number }[] = [
  { line: 2, event: { type: 'tool_call', tool: 'read_file', args: { path: 'src/a.ts' }, status: 'ok' } },
  { line: 3, event: { type: 'tool_call', tool: 'write_file', args: { path: 'src/a.ts', content: 'x' }, status: 'blocked' } },
  { line: 4, event: { type: 'message', role: 'assistant', content: 'moving on' } },
  { line: 5, event: { type: 'tool_call', tool: 'enter_stage', args: { stage: 'edit' }, status: 'ok' } },
  { line: 6, event: { type: 'tool_call', tool: 'edit_file', args: { path: 'src/a.ts', search: 'a', replace: 'b' }, status: 'ok' } },
  { line: 7, event: { type: 'tool_call', tool: 'run_command', args: { command: 'npm test' }, status: 'ok', result: { exitCode: 1, completion: 'marker' } } },
];

function call(line: number, tool = 'read_file'): { event: TrajectoryEvent; line: number } {
  return { line, event: { type: 'tool_call', tool, args: { path: `f${line}.ts` }, status: 'ok' } };
}

const message = (content: string): TrajectoryEvent => ({ type: 'message', role: 'user', content });

async function runAll(backend: VerifierBackend, events = EVENTS): Promise<{ steps: StepResult[]; summary: unknown }> {
  const s = await backend.open(wf, 1);
  const steps: StepResult[] = [];
  for (const { event, line } of events) steps.push(await s.append(event, line));
  const summary = await s.summary();
  s.close();
  return { steps, summary };
}

test('detectLean with an empty PATH and a HOME without ~/.elan: not available, and says what was searched', async () => {
  const home = tmpDir('home');
  const r = await detectLean({ env: { PATH: '', HOME: home } });
  assert.equal(r.available, false);
  if (r.available) return;
  const elanBin = path.join(home, '.elan', 'bin');
  assert.match(r.reason, /PATH \(empty\)/);
  assert.ok(r.reason.includes(elanBin), r.reason);
  assert.match(r.reason, /does not exist/);
  assert.match(r.reason, /LAR_LEAN_PATH/);
  assert.ok(r.reason.includes(LEAN_PATH_SETTING), r.reason);
  assert.match(r.reason, /elan/);
});

test('detectLean with an explicit path that does not exist names it and does not search further', async () => {
  const missing = path.join(tmpDir('missing'), 'nowhere');
  const r = await detectLean({ leanPath: missing, env: { PATH: '', HOME: tmpDir('home') } });
  assert.equal(r.available, false);
  if (!r.available) {
    assert.ok(r.reason.includes(missing), r.reason);
    assert.ok(r.reason.includes(LEAN_PATH_SETTING), r.reason);
  }
  const viaEnv = await detectLean({ env: { PATH: '', HOME: tmpDir('home'), LAR_LEAN_PATH: missing } });
  assert.equal(viaEnv.available, false);
  if (!viaEnv.available) assert.match(viaEnv.reason, /\$LAR_LEAN_PATH/);
});

test('detectLean finds lake and lean at an explicit folder and reads the version', { skip: !posix && 'POSIX shell scripts' }, async () => {
  const { bin } = fakeToolchain();
  const r = await detectLean({ leanPath: path.dirname(bin), env: { PATH: '', HOME: tmpDir('home') } });
  assert.deepEqual(r, { available: true, lake: path.join(bin, 'lake'), lean: path.join(bin, 'lean'), version: '4.34.1' });
  const onPath = await detectLean({ env: { PATH: bin, HOME: tmpDir('home') } });
  assert.equal(onPath.available, true);
});

test('the build runs once per version of the sources and is reused from the cache', { skip: !posix && 'POSIX shell scripts' }, async () => {
  const { bin, buildCount } = fakeToolchain();
  const cacheDir = tmpDir('cache');
  const env = { PATH: '/usr/bin:/bin', HOME: tmpDir('home') };
  const first = new LeanBackend({ leanPath: bin, cacheDir, env, requestTimeoutMs: 5000 });
  const builtin = await runAll(new BuiltinBackend());
  try {
    assert.deepEqual(await runAll(first), builtin);
  } finally {
    first.dispose();
  }
  const dirs = fs.readdirSync(cacheDir);
  assert.equal(dirs.length, 1, `one package folder, no leftovers: ${dirs.join(', ')}`);
  assert.match(dirs[0]!, /^lean-[0-9a-f]{16}$/);
  const second = new LeanBackend({ leanPath: bin, cacheDir, env, requestTimeoutMs: 5000 });
  try {
    assert.deepEqual(await runAll(second), builtin);
  } finally {
    second.dispose();
  }
  assert.equal(fs.readFileSync(buildCount, 'utf8').trim().split('\n').length, 1, 'built once');
});

test('without a toolchain, opening a session rejects with the reason', async () => {
  const backend = new LeanBackend({ env: { PATH: '', HOME: tmpDir('home') }, cacheDir: tmpDir('cache') });
  await assert.rejects(backend.open(wf), (e: Error) => e instanceof LeanUnavailableError && /No Lean toolchain found/.test(e.message));
  backend.dispose();
});

test('results come back exactly as the builtin verifier computes them, across chunked responses and noise', async () => {
  const backend = fakeBackend({ flags: ['--chunked'] });
  try {
    assert.deepEqual(await runAll(backend), await runAll(new BuiltinBackend()));
    const s = await backend.open(wf);
    const gate = await s.gate({ tool: 'run_command', args: { command: 'rm -rf /' } });
    assert.equal(gate.decision, 'block');
    const big = 'ü✓'.repeat(100_000);
    const r = await s.append(message(big), 2);
    assert.equal(r.type, 'message');
    s.close();
  } finally {
    backend.dispose();
  }
});

test('sessions are multiplexed over one process: concurrent requests of two sessions stay apart', async () => {
  const backend = fakeBackend();
  try {
    const [a, b] = await Promise.all([backend.open(wf, 1), backend.open(wf, 10)]);
    const pid = backend.stats().pid;
    const pa = EVENTS.map(({ event, line }) => a.append(event, line));
    const pb = [call(11), call(12), call(13)].map(({ event, line }) => b.append(event, line));
    const [ra, rb] = await Promise.all([Promise.all(pa), Promise.all(pb)]);
    assert.deepEqual(ra, (await runAll(new BuiltinBackend())).steps);
    assert.deepEqual(rb.map((r) => r.step), [1, 2, 3]);
    assert.deepEqual(rb.map((r) => r.line), [11, 12, 13]);
    assert.equal((await b.summary()).steps, 3);
    assert.equal((await a.summary()).steps, 5);
    assert.equal(backend.stats().pid, pid, 'one process for both');
    assert.equal(backend.stats().sessions, 2);
    a.close();
    assert.equal(backend.stats().sessions, 1);
    b.close();
  } finally {
    backend.dispose();
  }
});

test('a request the process rejects fails alone; the process keeps running', async () => {
  const backend = fakeBackend();
  try {
    const s = await backend.open(wf);
    const pid = backend.stats().pid;
    await assert.rejects(backend.open({ ...wf, stages: 'nope' } as unknown as Workflow), /lar-verify rejected "load"/);
    assert.equal((await s.append(call(2).event, 2)).step, 1);
    assert.equal(backend.stats().pid, pid);
    assert.equal(backend.stats().restarts, 0);
  } finally {
    backend.dispose();
  }
});

test('a request that is not answered in time is rejected; the next one restarts the process and replays', async () => {
  // Long enough for a process to start on a loaded 2-core machine (the replay's
  // "load" must answer in time), short enough to keep the test quick.
  const backend = fakeBackend({ timeoutMs: 2000 });
  try {
    const s = await backend.open(wf);
    await s.append(call(2).event, 2);
    await s.append(call(3).event, 3);
    const pid = backend.stats().pid;
    await assert.rejects(s.append(message('__hang__'), 4), /did not answer "append" \(request \d+\) within 2000 ms/);
    const r = await s.append(call(5).event, 5);
    assert.equal(r.step, 3, 'the two confirmed calls were replayed into the new process');
    assert.notEqual(backend.stats().pid, pid);
    assert.equal(backend.stats().restarts, 1);
  } finally {
    backend.dispose();
  }
});

test('after a crash the process is restarted on the next request and every open session is replayed', async () => {
  const backend = fakeBackend();
  try {
    const a = await backend.open(wf);
    const b = await backend.open(wf, 20);
    for (const { event, line } of EVENTS) await a.append(event, line);
    await b.append(call(21).event, 21);
    const pid = backend.stats().pid;
    await assert.rejects(a.append(message('__crash__'), 8), /exited with code 3 before answering "append"/);
    assert.equal(backend.stats().pid, undefined);
    const rb = await b.append(call(22).event, 22);
    assert.equal(rb.step, 2);
    assert.notEqual(backend.stats().pid, pid);
    assert.deepEqual(await a.summary(), (await runAll(new BuiltinBackend())).summary);
    assert.equal(backend.stats().restarts, 1);
    assert.equal(backend.stats().recentCrashes, 1);
  } finally {
    backend.dispose();
  }
});

test('after repeated crashes the backend gives up with a clear error', async () => {
  const backend = fakeBackend({ maxCrashes: 3 });
  try {
    const s = await backend.open(wf);
    for (let i = 0; i < 3; i++) await assert.rejects(s.append(message('__crash__'), 2 + i), /exited with code 3/);
    assert.equal(backend.stats().gaveUp, true);
    await assert.rejects(s.append(call(9).event, 9), /stopped unexpectedly 3 times within 60 s, so the Lean backend gave up/);
    await assert.rejects(backend.open(wf), /gave up/);
  } finally {
    backend.dispose();
  }
  const dead = fakeBackend({ flags: ['--exit-at-start'], maxCrashes: 2 });
  try {
    await assert.rejects(dead.open(wf), /exited with code 4/);
    await assert.rejects(dead.open(wf), /exited with code 4/);
    await assert.rejects(dead.open(wf), /gave up/);
  } finally {
    dead.dispose();
  }
});

test('the conformance corpus through the process gives the builtin verdicts', async () => {
  const backend = fakeBackend({ flags: ['--chunked'] });
  try {
    const failures: string[] = [];
    for (const c of loadCorpus(CORPUS)) {
      if (c.expected.disputed !== undefined) continue;
      const report = await verifyTrajectoryTextWith(backend, c.text, { resolve: workflowResolver(c.trajectoryPath) });
      const diffs = report.fatal ? [`nothing was verified: ${report.fatal}`] : [...compareCase(c.expected, report), ...compareGates(c.expected.gates ?? [], await gatesAfter(backend, c))];
      if (diffs.length) failures.push(`${c.name}: ${diffs.join('; ')}`);
    }
    assert.deepEqual(failures, []);
    assert.equal(backend.stats().sessions, 0, 'every session was closed');
    assert.equal(backend.stats().restarts, 0);
  } finally {
    backend.dispose();
  }
});

/** Verdicts without their reasons (wording may differ between the backends). */
function decisions(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(decisions);
  if (x && typeof x === 'object') {
    return Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'reason').map(([k, v]) => [k, decisions(v)]));
  }
  return x;
}

test('the real Lean checker (lake build lar-verify) agrees with the builtin verifier', { timeout: 45 * 60_000 }, async (t) => {
  const sourceDir = findLeanSources();
  const found = await detectLean(sourceDir ? { cwd: sourceDir } : {});
  if (!found.available) {
    t.skip(`no Lean toolchain: ${found.reason}`);
    return;
  }
  t.diagnostic(`Lean ${found.version} at ${found.lake}`);
  const backend = new LeanBackend({ log: (m) => t.diagnostic(m), requestTimeoutMs: 60_000 });
  try {
    const [exe] = await backend.prepare();
    assert.ok(exe);
    // Malformed lines get an error response and do not stop the process.
    const child = spawn(exe, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    const out: string[] = [];
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      out.push(...lines);
    });
    child.stdin.write('not json\n{"id":2,"op":"summary","session":"none"}\n{"id":3,"op":"hello"}\n');
    const deadline = Date.now() + 30_000;
    while (out.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const replies = out.map((l) => JSON.parse(l) as { id: unknown; ok: boolean });
    assert.deepEqual(replies.map((r) => [r.id, r.ok]), [[null, false], [2, false], [3, true]]);

    assert.deepEqual(decisions(await runAll(backend)), decisions(await runAll(new BuiltinBackend())));
    const failures: string[] = [];
    for (const c of loadCorpus(CORPUS)) {
      if (c.expected.disputed !== undefined) continue;
      const report = await verifyTrajectoryTextWith(backend, c.text, { resolve: workflowResolver(c.trajectoryPath) });
      const diffs = report.fatal ? [`nothing was verified: ${report.fatal}`] : [...compareCase(c.expected, report), ...compareGates(c.expected.gates ?? [], await gatesAfter(backend, c))];
      if (diffs.length) failures.push(`${c.name}: ${diffs.join('; ')}`);
    }
    assert.deepEqual(failures, []);
  } finally {
    backend.dispose();
  }
});
