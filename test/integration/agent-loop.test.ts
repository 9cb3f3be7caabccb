import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, AgentOptions } from '../../core/agent/loop';
import { runOutcomeCheck } from '../../core/outcome/check';
import { outcomeCommand } from '../../core/schema/workflow';
import { createToolExecutor } from '../../core/tools/executor';
import { runWith } from '../../testkit/agent-run';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import type { ScriptedTurn } from '../../testkit/scripted-turns';
import { TerminalSession } from '../../core/shell/session';
import { NodeWorkspaceFs } from '../../core/workspace/node-fs';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { defaultWorkflow } from '../../core/workflow/load';

/** A workspace with a failing test: sum() subtracts. */
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lar-agent-'));
  writeFileSync(join(dir, 'sum.js'), 'module.exports = (a, b) => a - b;\n');
  writeFileSync(
    join(dir, 'test.js'),
    "const sum = require('./sum');\nif (sum(2, 3) !== 5) { console.error('FAIL: sum(2, 3) = ' + sum(2, 3)); process.exit(1); }\nconsole.log('PASS');\n",
  );
  return dir;
}

const workflow = () => {
  const wf = defaultWorkflow();
  return { ...wf, outcome: { ...wf.outcome, command: 'node test.js' } };
};

/** The trajectory of the latest run() (known before the run starts). */
let lastTrajectory: string | undefined;

async function run(script: ScriptedTurn[], extra: Partial<AgentOptions> = {}) {
  const ws = workspace();
  lastTrajectory = join(ws, '.lar', 'runs', 'run.lar.jsonl');
  const server = new ScriptedModelServer({ script });
  const endpoint = await server.start();
  const terminal = new TerminalSession({ cwd: ws, env: { ...process.env }, outputDir: join(ws, '.lar', 'output') });
  const events: AgentEvent[] = [];
  const wf = workflow();
  try {
    const result = await runWith({
      endpoint,
      task: 'Make node test.js pass',
      workflow: wf,
      modelInfo: { name: 'LAR-9B', endpoint },
      workspace: ws,
      execute: createToolExecutor({ fs: new NodeWorkspaceFs(ws), terminal }),
      runOutcomeCheck: (signal) => runOutcomeCheck(outcomeCommand(wf)!, ws, signal),
      onEvent: (e) => events.push(e),
      ...extra,
    });
    return { ws, result, events, server };
  } finally {
    terminal.dispose();
    await server.stop();
  }
}

test('the verified loop fixes a failing test: the blocked write does not run, each step is on disk, the outcome check passes', async () => {
  const { ws, result, events, server } = await run([
    {
      content: 'Let me look at the code.',
      toolCalls: [
        { name: 'list_files', arguments: {} },
        { name: 'read_file', arguments: { path: 'sum.js' } },
      ],
    },
    {
      toolCalls: [
        { name: 'write_file', arguments: { path: 'sum.js', content: 'module.exports = (a, b) => a + b;\n' } },
      ],
    },
    { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit', reason: 'found it' } }] },
    { toolCalls: [{ name: 'edit_file', arguments: { path: 'sum.js', search: 'a - b', replace: 'a + b' } }] },
    { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
    { toolCalls: [{ name: 'run_command', arguments: { command: 'node test.js' } }] },
    { content: 'Tests pass.', toolCalls: [{ name: 'submit', arguments: { summary: 'sum adds now' } }] },
  ]);
  assert.equal(result.endReason, 'submitted');
  assert.equal(result.summary.outcome.reward, 1);
  assert.deepEqual(
    result.summary.stages.map((s) => [s.stage, s.reward]),
    [
      ['explore', 1],
      ['edit', 1],
      ['verify', 1],
    ],
  );
  assert.equal(readFileSync(join(ws, 'sum.js'), 'utf8'), 'module.exports = (a, b) => a + b;\n');

  const steps = events.filter((e): e is Extract<AgentEvent, { kind: 'step' }> => e.kind === 'step');
  const blocked = steps.find((s) => s.event.tool === 'write_file')!;
  assert.equal(blocked.event.status, 'blocked');
  assert.equal(blocked.result.toolReward, -1);
  const command = steps.find((s) => s.event.tool === 'run_command')!;
  assert.equal(command.event.result?.exitCode, 0);
  assert.equal(command.event.result?.completion, 'marker');
  // The model was told why its write was blocked.
  const told = JSON.stringify(server.requests.map((r) => r.body));
  assert.match(told, /Blocked by the workflow verifier, not run: write_file is not permitted in stage \\"explore\\"/);

  // The file on disk is the whole run and verifies to the same rewards.
  const text = readFileSync(result.trajectoryPath, 'utf8');
  const report = verifyTrajectoryText(text);
  assert.deepEqual(report.lineErrors, []);
  assert.equal(report.summary!.return, result.summary.return);
  assert.match(text.trimEnd().split('\n').at(-1)!, /"type":"end","reason":"submitted"/);
  // Every step event carried the exact line that was written.
  for (const s of steps) assert.equal(text.split('\n')[s.line - 1], s.text);
});

test('approval: a command that needs it runs only when approved, and a rejection is told to the model', async () => {
  const script: ScriptedTurn[] = [
    { toolCalls: [{ name: 'run_command', arguments: { command: 'git push origin main' } }] },
    { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
  ];
  const asked: string[] = [];
  const { events, result, server } = await run(script, {
    approve: (req) => {
      asked.push(`${req.tool}: ${req.pattern}`);
      return Promise.resolve(false);
    },
    limits: { maxSteps: 2 },
  });
  assert.deepEqual(asked, ['run_command: git push*']);
  const denied = events.find((e) => e.kind === 'step' && e.event.tool === 'run_command') as Extract<
    AgentEvent,
    { kind: 'step' }
  >;
  assert.equal(denied.event.status, 'denied');
  assert.equal(denied.result.toolReward, 0);
  assert.match(JSON.stringify(server.requests.at(-1)!.body), /rejected this call at the approval prompt/);
  assert.equal(result.endReason, 'limit');
});

test('a model failure ends the run cleanly: the trajectory says why and verifies', async () => {
  const { result } = await run([
    { kind: 'http_error', status: 401, body: { object: 'error', message: 'bad key', code: 401 } },
  ]);
  assert.equal(result.endReason, 'error');
  assert.match(result.detail!, /refused the API key/);
  const text = readFileSync(result.trajectoryPath, 'utf8');
  assert.match(text, /"type":"end","reason":"error"/);
  assert.deepEqual(verifyTrajectoryText(text).lineErrors, []);
});

test('the token cap ends the run with the reason, after the turn that crossed it', async () => {
  const { result, events } = await run(
    [
      {
        content: 'Reading a lot of things carefully.',
        toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }],
      },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'test.js' } }] },
    ],
    { limits: { maxTokens: 5 } },
  );
  assert.equal(result.endReason, 'limit');
  assert.match(result.detail!, /token limit \(5\)/);
  assert.equal(events.filter((e) => e.kind === 'step').length, 1, 'no model turn after the cap');
});

test('enforcement warn runs a call the workflow forbids in this stage, but never a command the deny policy forbids', async () => {
  const wf = workflow();
  const guarded = {
    ...wf,
    policy: { ...wf.policy, commands: { ...wf.policy.commands, deny: [...wf.policy.commands.deny, 'touch *canary*'] } },
  };
  const script: ScriptedTurn[] = [
    // Writing in explore breaks the workflow's structure: with warn it runs (and scores −1).
    { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'x' } }] },
    // The deny policy is safety, not structure: blocked even with warn.
    { toolCalls: [{ name: 'run_command', arguments: { command: 'touch canary.txt' } }] },
    { toolCalls: [{ name: 'run_command', arguments: { command: 'echo ok && touch canary2.txt' } }] },
  ];
  const { ws, events, server } = await run(script, {
    enforcement: 'warn',
    workflow: guarded,
    workflowRef: guarded,
    limits: { maxSteps: 3 },
  });
  const steps = events.filter((e): e is Extract<AgentEvent, { kind: 'step' }> => e.kind === 'step');
  assert.deepEqual(
    steps.map((s) => s.event.status),
    ['ok', 'blocked', 'blocked'],
  );
  assert.equal(steps[0]!.result.toolReward, -1);
  assert.equal(readFileSync(join(ws, 'notes.txt'), 'utf8'), 'x');
  assert.throws(() => readFileSync(join(ws, 'canary.txt')), 'the denied command did not run');
  assert.throws(() => readFileSync(join(ws, 'canary2.txt')), 'nor did the denied part of a compound command');
  assert.match(
    JSON.stringify(server.requests.at(-1)!.body),
    /Blocked by the workflow verifier, not run: the command matches the deny pattern/,
    'the model is told why',
  );
});

test('a long command output: the model sees head and tail and where the full output is, and can read it', async () => {
  const ws = workspace();
  const terminal = new TerminalSession({
    cwd: ws,
    env: { ...process.env },
    outputDir: join(ws, '.lar', 'output', 'run-1'),
  });
  try {
    const execute = createToolExecutor({ fs: new NodeWorkspaceFs(ws), terminal });
    const r = await execute('run_command', { command: 'seq 1 100000' }, { workspace: ws });
    assert.match(r.observation, /^\$ seq 1 100000\n1\n2\n/);
    assert.match(r.observation, /omitted/);
    const m = /full output: (\.lar\/output\/run-1\/\S+) \(read_file it/.exec(r.observation);
    assert.ok(m, r.observation.slice(-300));
    const read = await execute('read_file', { path: m[1]!, startLine: 99990 }, { workspace: ws });
    assert.equal(read.status, 'ok', read.observation);
    assert.match(read.observation, /100000/);
    const small = await execute('run_command', { command: 'echo short' }, { workspace: ws });
    assert.doesNotMatch(small.observation, /full output/);
  } finally {
    terminal.dispose();
  }
});

test('a host going away mid-run ends the trajectory at once, marked interrupted, complete up to the last step', async () => {
  let interrupt: ((detail: string) => void) | undefined;
  const script: ScriptedTurn[] = [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
    { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
  ];
  let steps = 0;
  const failure = await run(script, {
    onStart: (h) => (interrupt = h.interrupt),
    onEvent: (e) => {
      // The editor reloads right after the first step is on disk.
      if (e.kind === 'step' && ++steps === 1) interrupt!('the editor closed or reloaded during the run');
    },
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failure instanceof Error, 'the loop stops: it cannot write any more');
  const ws = /trajectory (\S+) is closed/.exec(failure.message)?.[1];
  assert.ok(ws, failure.message);
  const text = readFileSync(ws, 'utf8');
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; reason?: string; detail?: string; tool?: string });
  assert.deepEqual(
    lines.map((l) => l.type),
    ['header', 'message', 'tool_call', 'end'],
  );
  assert.equal(lines.at(-1)!.reason, 'interrupted');
  assert.match(lines.at(-1)!.detail!, /reloaded during the run/);
  assert.deepEqual(verifyTrajectoryText(text).lineErrors, []);
});

test('two writers: a line someone else appends to the trajectory mid-run stops the run, and the file says why', async () => {
  const script: ScriptedTurn[] = [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
    { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
  ];
  const forged = '{"type":"tool_call","id":"forged","tool":"submit","args":{},"status":"ok"}';
  const failure = await run(script, {
    onEvent: (e) => {
      if (e.kind === 'step' && e.event.tool === 'read_file') appendFileSync(lastTrajectory!, `${forged}\n`);
    },
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failure instanceof Error && failure.name === 'TrajectoryConflictError', String(failure));
  assert.match(failure.message, /changed by another writer/);
  const file = lastTrajectory!;
  const lines = readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .filter((l) => l !== '');
  assert.equal(lines.at(-2), forged, 'the foreign line is kept where it was written, not overwritten');
  const end = JSON.parse(lines.at(-1)!) as { type: string; reason: string; detail: string };
  assert.deepEqual([end.type, end.reason], ['end', 'error']);
  assert.match(end.detail, /changed by another writer/);
});

test('enforcement warn never skips an approval: a blocked call that matches an ask pattern is asked before it runs anyway', async () => {
  const wf = workflow();
  // explore without run_command: the push is blocked by the stage, and it matches "git push*".
  const noCommands = {
    ...wf,
    stages: wf.stages.map((s) =>
      s.id === 'explore' ? { ...s, tools: s.tools.filter((t) => t !== 'run_command') } : s,
    ),
  };
  const asked: string[] = [];
  const { events } = await run(
    [{ toolCalls: [{ name: 'run_command', arguments: { command: 'git push origin main' } }] }],
    {
      enforcement: 'warn',
      workflow: noCommands,
      workflowRef: noCommands,
      limits: { maxSteps: 1 },
      approve: (req) => {
        asked.push(`${req.tool}: ${req.pattern}`);
        return Promise.resolve(false);
      },
    },
  );
  assert.deepEqual(asked, ['run_command: git push*']);
  const step = events.find((e): e is Extract<AgentEvent, { kind: 'step' }> => e.kind === 'step')!;
  assert.equal(step.event.status, 'denied', 'rejected, so it did not run');
});

test('a run the host interrupts mid-command names the command in flight in its end line', async () => {
  const server = new ScriptedModelServer({
    script: [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 30 # sk-live-SECRET' } }] },
    ],
    whenDone: 'error',
  });
  const endpoint = await server.start();
  const ws = mkdtempSync(join(tmpdir(), 'lar-inflight-'));
  const ac = new AbortController();
  let interrupt: ((detail: string) => void) | undefined;
  const path = join(ws, '.lar', 'runs', 'run.lar.jsonl');
  try {
    await runWith({
      endpoint,
      workspace: ws,
      trajectoryPath: path,
      signal: ac.signal,
      runOutcomeCheck: () => Promise.reject(new Error('not reached')),
      redact: (t) => t.replaceAll('sk-live-SECRET', '***'),
      onStart: (h) => (interrupt = h.interrupt),
      onEvent: (e) => {
        // The editor goes away while the command runs: the file is ended there and then, as dispose() does.
        if (e.kind === 'toolStart' && e.tool === 'run_command') {
          interrupt?.('the editor closed or reloaded during the run');
          ac.abort();
        }
      },
      execute: (tool, _args, ctx) =>
        tool === 'run_command'
          ? new Promise((resolve) => {
              const stopped = () => resolve({ status: 'error', result: {}, observation: 'stopped' });
              if (ctx.signal?.aborted) stopped();
              else ctx.signal?.addEventListener('abort', stopped);
            })
          : Promise.resolve({ status: 'ok', result: {}, observation: 'x' }),
    }).catch(() => undefined);
    const end = JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').at(-1)!) as {
      reason: string;
      detail: string;
    };
    assert.equal(end.reason, 'interrupted');
    assert.equal(
      end.detail,
      'the editor closed or reloaded during the run, while the command `sleep 30 # ***` was running (its result is lost)',
    );
  } finally {
    await server.stop();
  }
});

test('submit in a workflow judged outside ends the run: nothing runs, no outcome is written, the outcome is pending', async () => {
  const base = defaultWorkflow();
  const judged = {
    ...base,
    stages: base.stages.map((s) =>
      s.id === 'verify' ? { ...s, exit: [{ kind: 'command_ran' as const, pattern: '*', afterLastChange: true }] } : s,
    ),
    outcome: { external: "Harbor's verifier" },
  };
  const { result, events, server } = await run(
    [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
      { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'sum.js', search: 'a - b', replace: 'a + b' } }] },
      { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'node test.js' } }] },
      { toolCalls: [{ name: 'submit', arguments: { summary: 'sum adds' } }] },
    ],
    { workflow: judged, runOutcomeCheck: () => Promise.reject(new Error('an outside judge runs no check here')) },
  );
  assert.equal(result.endReason, 'submitted');
  assert.equal(result.summary.outcome.pending, true);
  assert.equal(result.summary.outcome.reward, 0);
  // The running return: S = [1, 1, 1]; T: six calls, the command unconfined here (tool.sandboxed, 0).
  assert.equal(result.summary.return, 0.5 + 0.25 * (5 / 6));
  assert.ok(!events.some((e) => e.kind === 'outcome'));
  const text = readFileSync(result.trajectoryPath, 'utf8');
  assert.doesNotMatch(text, /"type":"outcome"/);
  assert.match(text.trimEnd().split('\n').at(-1)!, /"type":"end","reason":"submitted"/);
  assert.equal(verifyTrajectoryText(text).summary!.outcome.pending, true);
  // The model was told who judges, and that the run ends at submit.
  const told = JSON.stringify(server.requests.map((r) => r.body));
  assert.match(told, /Harbor's verifier judges the outcome/);
});
