import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, AgentOptions, AgentResult } from '../../core/agent/loop';
import { runOutcomeCheck } from '../../core/outcome/check';
import { outcomeCommand } from '../../core/schema/workflow';
import { createToolExecutor } from '../../core/tools/executor';
import { ModelClient } from '../../core/model/client';
import type { ModelClientOptions } from '../../core/model/options';
import { redact } from '../../core/secrets/redact';
import { runWith } from '../../testkit/agent-run';
import { ScriptedModelServer, type ScriptedServerOptions } from '../../testkit/scripted-server';
import type { ScriptedTurn } from '../../testkit/scripted-turns';
import { TerminalSession } from '../../core/shell/session';
import { NodeWorkspaceFs } from '../../core/workspace/node-fs';
import { verifyTrajectoryText } from '../../core/verifier/verify';
import { defaultWorkflow } from '../../core/workflow/load';

/**
 * Inference-server faults, seen from the agent: the real ModelClient over
 * HTTP to the scripted server, the real loop, tools and trajectory writer in a
 * temporary workspace. Each test injects one fault and checks what the user
 * sees (the end reason and its detail) and what is kept (the trajectory on
 * disk, complete up to the last step, verifying without a malformed line).
 */

type StepEvent = Extract<AgentEvent, { kind: 'step' }>;
type ChatMessage = {
  role: string;
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
};

/** A guard, not a timing assertion: a run that hangs fails instead of blocking the suite. */
const NO_HANG = { timeout: 30_000 };

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lar-faults-'));
  writeFileSync(join(dir, 'sum.js'), 'module.exports = (a, b) => a - b;\n');
  writeFileSync(
    join(dir, 'test.js'),
    "const sum = require('./sum');\nif (sum(2, 3) !== 5) { console.error('FAIL'); process.exit(1); }\nconsole.log('PASS');\n",
  );
  return dir;
}

interface RunSetup {
  server?: Partial<ScriptedServerOptions>;
  client?: Partial<ModelClientOptions>;
  agent?: Partial<AgentOptions>;
  /** Talk to this endpoint instead of the scripted server's (a server that is down). */
  endpoint?: string;
}

async function run(script: ScriptedTurn[], setup: RunSetup = {}) {
  const ws = workspace();
  const server = new ScriptedModelServer({ script, ...setup.server });
  const started = await server.start();
  const endpoint = setup.endpoint ?? started;
  const terminal = new TerminalSession({ cwd: ws, env: { ...process.env }, outputDir: join(ws, '.lar', 'output') });
  const events: AgentEvent[] = [];
  const wf = defaultWorkflow();
  const workflow = { ...wf, outcome: { ...wf.outcome, command: 'node test.js' } };
  const clientOptions: ModelClientOptions = {
    endpoint,
    model: 'LAR-9B',
    retries: 0,
    backoffMs: 1,
    idleTimeoutMs: 5_000,
    ...setup.client,
  };
  try {
    const result = await runWith({
      task: 'Make node test.js pass',
      workflow,
      model: new ModelClient(clientOptions),
      modelInfo: { name: 'LAR-9B', endpoint },
      workspace: ws,
      execute: createToolExecutor({ fs: new NodeWorkspaceFs(ws), terminal }),
      runOutcomeCheck: (signal) => runOutcomeCheck(outcomeCommand(workflow)!, ws, signal),
      onEvent: (e) => events.push(e),
      redact: (t) => redact(t, clientOptions.apiKey),
      ...setup.agent,
    });
    const text = readFileSync(result.trajectoryPath, 'utf8');
    const chats = server.requests.filter((r) => r.path === '/v1/chat/completions');
    return { ws, result, events, server, text, chats, endpoint };
  } finally {
    terminal.dispose();
    await server.stop();
  }
}

type Run = Awaited<ReturnType<typeof run>>;

/**
 * What every faulty run must leave: the reason and a detail naming it, the
 * same in the result, the chat's end event and the last line on disk; the
 * file complete (each step the chat showed is on disk as shown) and valid.
 */
function assertEndedCleanly(r: Run, reason: AgentResult['endReason'], detail: RegExp): void {
  assert.equal(r.result.endReason, reason, r.result.detail);
  assert.match(r.result.detail ?? '', detail);
  const end = r.events.at(-1);
  assert.ok(end?.kind === 'end', 'the chat is told the run ended');
  assert.equal(end.reason, reason);
  assert.equal(end.detail, r.result.detail, 'the chat shows the same detail');

  assert.ok(r.text.endsWith('\n'), 'no half-written line');
  const lines = r.text.trimEnd().split('\n');
  const last = JSON.parse(lines.at(-1)!) as { type: string; reason: string; detail?: string };
  assert.deepEqual(
    [last.type, last.reason, last.detail],
    ['end', reason, r.result.detail],
    'the file ends with the reason',
  );
  assert.equal(lines.filter((l) => l.includes('"type":"end"')).length, 1, 'one end line');
  for (const s of r.events.filter((e): e is StepEvent => e.kind === 'step'))
    assert.equal(lines[s.line - 1], s.text, `step on line ${s.line} is on disk as shown`);
  const report = verifyTrajectoryText(r.text);
  assert.deepEqual(report.lineErrors, []);
  assert.equal(report.summary!.steps, r.result.summary.steps);
  assert.equal(report.summary!.return, r.result.summary.return);
}

/** An event of the trajectory, as much of it as these tests read. */
type DiskEvent = {
  type: string;
  tool?: string;
  status?: string;
  role?: string;
  content?: string;
  args?: unknown;
  argsError?: string;
};

/** The trajectory's events after the header, parsed. */
function eventsOnDisk(r: Run): DiskEvent[] {
  return r.text
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as DiskEvent);
}

const messagesOf = (body: unknown): ChatMessage[] => (body as { messages: ChatMessage[] }).messages;

const readSum: ScriptedTurn = {
  content: 'Reading the code.',
  toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }],
};
const listFiles = (content: string): ScriptedTurn => ({ content, toolCalls: [{ name: 'list_files', arguments: {} }] });

/** Asserts the first step (reading sum.js) is kept on disk, as it ran. */
function assertFirstStepKept(r: Run): void {
  const disk = eventsOnDisk(r);
  assert.deepEqual(
    disk
      .filter((e) => e.type === 'tool_call')
      .slice(0, 1)
      .map((e) => [e.tool, e.status]),
    [['read_file', 'ok']],
  );
  assert.ok(
    disk.some((e) => e.type === 'message' && e.role === 'assistant' && e.content === 'Reading the code.'),
    'the earlier answer is kept',
  );
}

/** Retried and then answered: the run goes on, the answer is in the trajectory and the chat once. */
function assertContinuedAfterRetry(r: Run, answer: string, requests: number): void {
  assert.equal(r.chats.length, requests, 'the failed request was retried');
  assert.equal(r.result.endReason, 'limit', r.result.detail);
  assert.match(r.result.detail!, /step limit \(2\)/);
  const disk = eventsOnDisk(r);
  assert.deepEqual(
    disk.filter((e) => e.type === 'tool_call').map((e) => [e.tool, e.status]),
    [
      ['read_file', 'ok'],
      ['list_files', 'ok'],
    ],
  );
  assert.deepEqual(
    disk.filter((e) => e.role === 'assistant').map((e) => e.content),
    ['Reading the code.', answer],
    'no duplicated text',
  );
  const streamed = r.events
    .filter((e): e is Extract<AgentEvent, { kind: 'text' }> => e.kind === 'text')
    .map((e) => e.delta)
    .join('');
  assert.equal(streamed, `Reading the code.${answer}`, 'the chat streamed each answer once');
  // The retry asked the same question again.
  assert.deepEqual(messagesOf(r.chats.at(-1)!.body), messagesOf(r.chats.at(-2)!.body));
  assertEndedCleanly(r, 'limit', /step limit \(2\) was reached/);
}

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

test(
  'server down at the start: retried, then the run ends with an error naming the endpoint and what to check; the task is kept',
  NO_HANG,
  async () => {
    const port = await closedPort();
    const endpoint = `http://127.0.0.1:${port}/v1`;
    // No model configured: the client first asks the (absent) server which models it serves.
    const r = await run([readSum], { endpoint, client: { model: undefined, retries: 2 } });
    assertEndedCleanly(
      r,
      'error',
      new RegExp(
        `^after 3 attempts: cannot reach the inference server at ${esc(endpoint)}: .*ECONNREFUSED.*\\. Is the server running \\(e\\.g\\. SGLang: python -m sglang\\.launch_server .*\\)\\? Check the endpoint setting\\.$`,
      ),
    );
    const disk = eventsOnDisk(r);
    assert.deepEqual(
      disk.map((e) => e.type),
      ['message', 'end'],
      'the task, then why it ended',
    );
    assert.equal(disk[0]!.content, 'Make node test.js pass');
    assert.equal(r.result.summary.steps, 0);
  },
);

test(
  '401 mid-run: the run ends saying the key was refused and how to set it, without the key; earlier steps are kept',
  NO_HANG,
  async () => {
    const key = 'sk-wrong-key-456789';
    const r = await run(
      [
        readSum,
        {
          kind: 'http_error',
          status: 401,
          body: { object: 'error', message: `Invalid API key: ${key}`, type: 'AuthenticationError', code: 401 },
        },
      ],
      {
        client: { apiKey: key, retries: 3 },
      },
    );
    assertEndedCleanly(
      r,
      'error',
      /^the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 refused the API key \(401\): Invalid API key: \*\*\*\. Set the key with the "Set API Key" command \(lar run: the LAR_API_KEY environment variable\)\.$/,
    );
    assert.equal(r.chats.length, 2, 'a refused key is not retried');
    assert.ok(
      !r.text.includes(key) && !r.result.detail!.includes(key),
      'the key is not in the trajectory nor in the message',
    );
    assertFirstStepKept(r);
  },
);

test(
  '404: a model the server does not serve ends the run naming the model and what to change; earlier steps are kept',
  NO_HANG,
  async () => {
    const r = await run(
      [
        readSum,
        {
          kind: 'http_error',
          status: 404,
          body: { object: 'error', message: 'The model `LAR-9B` does not exist.', type: 'NotFoundError', code: 404 },
        },
      ],
      {
        client: { retries: 3 },
      },
    );
    assertEndedCleanly(
      r,
      'error',
      /^the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 does not serve "LAR-9B" \(404\): The model `LAR-9B` does not exist\. Pick one of the served models in the model setting \(lar run: --model\), or leave it empty for the first one\.$/,
    );
    assert.equal(r.chats.length, 2, 'not retried');
    assertFirstStepKept(r);

    // From the start: the configured model is not among the served ones.
    const first = await run([readSum], { client: { model: 'LAR-1T' }, server: { models: ['LAR-9B'] } });
    assertEndedCleanly(
      first,
      'error',
      /does not serve "LAR-1T" \(404\): The model `LAR-1T` does not exist\. Pick one of the served models/,
    );
    assert.deepEqual(
      eventsOnDisk(first).map((e) => e.type),
      ['message', 'end'],
    );
  },
);

const busy: ScriptedTurn = {
  kind: 'http_error',
  status: 429,
  body: { object: 'error', message: 'Too many requests', type: 'RateLimitError', code: 429 },
};
const oom: ScriptedTurn = {
  kind: 'http_error',
  status: 500,
  body: { error: { message: 'CUDA out of memory', type: 'InternalServerError', code: 500 } },
};

test(
  '429: retried with backoff and the run goes on; when it persists, the run ends saying the server is busy and to retry later',
  NO_HANG,
  async () => {
    const ok = await run([readSum, busy, busy, listFiles('Now the files.')], {
      client: { retries: 2 },
      agent: { limits: { maxSteps: 2 } },
    });
    assertContinuedAfterRetry(ok, 'Now the files.', 4);

    const gaveUp = await run([readSum, busy, busy], { client: { retries: 1 } });
    assertEndedCleanly(
      gaveUp,
      'error',
      /^after 2 attempts: the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 is busy \(429\): Too many requests\. Wait a moment, then send the task again\.$/,
    );
    assert.equal(gaveUp.chats.length, 3);
    assertFirstStepKept(gaveUp);
  },
);

test(
  '500: retried and the run goes on; when it persists, the run ends with the server error and to check its log',
  NO_HANG,
  async () => {
    const ok = await run([readSum, oom, listFiles('Listing.')], {
      client: { retries: 1 },
      agent: { limits: { maxSteps: 2 } },
    });
    assertContinuedAfterRetry(ok, 'Listing.', 3);

    const gaveUp = await run([readSum, oom, oom], { client: { retries: 1 } });
    assertEndedCleanly(
      gaveUp,
      'error',
      /^after 2 attempts: the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 failed \(500\): CUDA out of memory\. Check the inference server's log, then send the task again\.$/,
    );
    assertFirstStepKept(gaveUp);
  },
);

test(
  'the connection drops mid-stream: before any text it is retried and the run goes on; after text the run ends and the partial answer is not taken',
  NO_HANG,
  async () => {
    const ok = await run([readSum, { kind: 'truncate', after: '' }, listFiles('Listing now.')], {
      client: { retries: 1 },
      agent: { limits: { maxSteps: 2 } },
    });
    assertContinuedAfterRetry(ok, 'Listing now.', 3);

    // Text already reached the chat: a retry would make the model say it twice.
    const cut = await run([readSum, { kind: 'truncate', after: 'I will now edit sum' }, listFiles('never asked')], {
      client: { retries: 3 },
    });
    assertEndedCleanly(
      cut,
      'error',
      /^the connection to the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 dropped mid-answer \(.+\); the partial answer was discarded\. Check the inference server's log, then send the task again\.$/,
    );
    assert.equal(cut.chats.length, 2, 'not retried once text streamed');
    assert.ok(
      cut.events.some((e) => e.kind === 'text' && e.delta.includes('I will now')),
      'the user saw the partial text stream',
    );
    assert.ok(!cut.text.includes('I will now edit sum'), 'the partial answer is not recorded as an answer');
    assertFirstStepKept(cut);
  },
);

test(
  'a truncated stream (it ends without a finish reason) is not taken for an answer: the run ends saying it was cut short, or it is retried before any text',
  NO_HANG,
  async () => {
    const r = await run(
      [readSum, { kind: 'truncate', after: 'Half an answ', graceful: true }, listFiles('never asked')],
      { client: { retries: 3 } },
    );
    assertEndedCleanly(
      r,
      'error',
      /^the answer from the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 ended without a finish reason: the stream was cut short and the partial answer was discarded\. Check the inference server's log, then send the task again\.$/,
    );
    assert.equal(r.chats.length, 2);
    assert.ok(!r.text.includes('Half an answ'));
    assertFirstStepKept(r);

    // Cut before any text: asked again, like a dropped connection.
    const retried = await run([readSum, { kind: 'truncate', after: '', graceful: true }, listFiles('Whole answer.')], {
      client: { retries: 1 },
      agent: { limits: { maxSteps: 2 } },
    });
    assertContinuedAfterRetry(retried, 'Whole answer.', 3);
  },
);

test(
  'malformed SSE: the run ends saying the stream was malformed (after text), or the request is retried (before any text)',
  NO_HANG,
  async () => {
    const bad = await run([readSum, { kind: 'malformed_sse', after: 'Looking' }, listFiles('never asked')], {
      client: { retries: 3 },
    });
    assertEndedCleanly(
      bad,
      'error',
      /^the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 sent a malformed stream \(an event that is not JSON\); the answer was discarded\. The server, or a proxy in front of it, garbles its events\. Check the inference server's log, then send the task again\.$/,
    );
    assert.equal(bad.chats.length, 2);
    assertFirstStepKept(bad);

    const retried = await run([readSum, { kind: 'malformed_sse' }, listFiles('Fine now.')], {
      client: { retries: 1 },
      agent: { limits: { maxSteps: 2 } },
    });
    assertContinuedAfterRetry(retried, 'Fine now.', 3);
  },
);

test(
  'a stalled stream is stopped by the idle timeout: the run ends saying for how long the server was silent; earlier steps are kept',
  NO_HANG,
  async () => {
    const r = await run([readSum, { kind: 'stall', after: 'Thinking', ms: 2_000 }, listFiles('never asked')], {
      client: { idleTimeoutMs: 300, retries: 3 },
    });
    assertEndedCleanly(
      r,
      'error',
      /^the inference server at http:\/\/127\.0\.0\.1:\d+\/v1 sent nothing for 0\.3 s in the middle of an answer; it was stopped\. The server may be overloaded or stuck: check its log, then send the task again \(a slow but healthy server needs a longer request timeout setting\)\.$/,
    );
    assert.equal(r.chats.length, 2, 'a stalled server is not asked again');
    assertFirstStepKept(r);
  },
);

test(
  'invalid tool-call JSON becomes a blocked step with the verdict, the model reads why on its next turn, and the run goes on',
  NO_HANG,
  async () => {
    const r = await run(
      [
        { toolCalls: [{ name: 'read_file', arguments: '{"path": sum.js}', id: 'call_bad' }] },
        { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
      ],
      { agent: { limits: { maxSteps: 2 } } },
    );
    const steps = r.events.filter((e): e is StepEvent => e.kind === 'step');
    assert.equal(steps.length, 2, 'the run went on');
    const bad = steps[0]!;
    assert.equal(bad.event.status, 'blocked');
    assert.equal(bad.event.args, null);
    assert.match(bad.event.argsError!, /JSON/);
    assert.equal(bad.result.toolReward, -1);
    assert.match(
      bad.result.verdicts.find((v) => v.check === 'tool.args' && !v.ok)!.reason,
      /^the arguments are not valid JSON: .* in "\{\\"path\\": sum\.js\}"$/,
    );
    assert.equal(steps[1]!.event.status, 'ok');

    // The next request carries the call (with arguments the server can parse) and why it did not run.
    const next = messagesOf(r.chats[1]!.body);
    const assistant = next.find((m) => m.role === 'assistant')!;
    assert.deepEqual(
      assistant.tool_calls!.map((c) => [c.id, c.function.name, c.function.arguments]),
      [['call_bad', 'read_file', '{}']],
    );
    const told = next.find((m) => m.role === 'tool' && m.tool_call_id === 'call_bad')!;
    assert.match(told.content!, /^Blocked by the workflow verifier, not run: the arguments are not valid JSON: /);
    assert.match(told.content!, /Verifier: tool\.args \(error\)/);
    assertEndedCleanly(r, 'limit', /step limit \(2\)/);
    assert.equal(eventsOnDisk(r)[1]!.argsError, bad.event.argsError, 'the parse error is kept on disk');
  },
);

test(
  'a call to a tool that does not exist becomes a blocked step, the model is told the real tools, and the run goes on',
  NO_HANG,
  async () => {
    const r = await run(
      [
        { toolCalls: [{ name: 'open_file', arguments: { path: 'sum.js' }, id: 'call_open' }] },
        { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
      ],
      { agent: { limits: { maxSteps: 2 } } },
    );
    const steps = r.events.filter((e): e is StepEvent => e.kind === 'step');
    assert.deepEqual(
      steps.map((s) => [s.event.tool, s.event.status]),
      [
        ['open_file', 'blocked'],
        ['read_file', 'ok'],
      ],
    );
    assert.equal(steps[0]!.result.toolReward, -1);
    assert.equal(steps[0]!.result.verdicts.find((v) => !v.ok)!.check, 'tool.known');
    const told = messagesOf(r.chats[1]!.body).find((m) => m.role === 'tool' && m.tool_call_id === 'call_open')!;
    assert.match(
      told.content!,
      /^Blocked by the workflow verifier, not run: "open_file" is not a tool; the tools are run_command, read_file, write_file, edit_file, list_files, search, enter_stage and submit/,
    );
    assertEndedCleanly(r, 'limit', /step limit \(2\)/);
  },
);

test(
  'a model looping on the same failing call is warned, then stopped before it burns the step budget',
  NO_HANG,
  async () => {
    const missing: ScriptedTurn = { toolCalls: [{ name: 'read_file', arguments: { path: 'missing.js' } }] };
    const r = await run([missing], { server: { whenDone: 'repeat' }, agent: { limits: { maxSteps: 50 } } });
    assertEndedCleanly(
      r,
      'limit',
      /^the model repeated the same failing call \(read_file \{"path":"missing\.js"\}\) 3 times with no file changed in between; the last time: the tool failed: "missing\.js" does not exist$/,
    );
    assert.equal(r.result.summary.steps, 3, 'three calls, not fifty');
    assert.equal(r.chats.length, 3, 'the model is not asked again after the third');
    const toolMessages = (i: number) =>
      messagesOf(r.chats[i]!.body)
        .filter((m) => m.role === 'tool')
        .map((m) => m.content!);
    assert.doesNotMatch(toolMessages(1).at(-1)!, /looping/, 'one failure is not a loop');
    // On the second failure the model reads that it is looping and what happens next.
    const warned = toolMessages(2).at(-1)!;
    assert.match(
      warned,
      /^Error: "missing\.js" does not exist\nVerifier: tool\.not_repeated \(warning\): the same call failed before and no file has changed since: this is a loop\n/,
    );
    assert.match(
      warned,
      /This exact call has now failed 2 times with no file changed in between: you are looping\. Making it again unchanged ends the run; change something first, or do something else\.$/,
    );
    assert.deepEqual(
      eventsOnDisk(r)
        .filter((e) => e.type === 'tool_call')
        .map((e) => e.status),
      ['error', 'error', 'error'],
    );
  },
);

test(
  'the loop breaker counts from the last file change, stops an edit whose search text is never found, and its limit is an option',
  NO_HANG,
  async () => {
    const badEdit: ScriptedTurn = {
      toolCalls: [{ name: 'edit_file', arguments: { path: 'sum.js', search: 'a * b', replace: 'a + b' } }],
    };
    const r = await run(
      [
        { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit' } }] },
        badEdit,
        badEdit,
        // A change in between: the same edit failing again is not yet a loop.
        {
          toolCalls: [
            {
              name: 'write_file',
              arguments: { path: 'sum.js', content: 'module.exports = (a, b) => a - b; // same\n' },
            },
          ],
        },
        badEdit,
        badEdit,
        badEdit,
        badEdit,
      ],
      { agent: { limits: { maxSteps: 50, maxRepeatedFailures: 4 } } },
    );
    assertEndedCleanly(
      r,
      'limit',
      /^the model repeated the same failing call \(edit_file \{"path":"sum\.js","search":"a \* b","replace":"a \+ b"\}\) 4 times with no file changed in between; the last time: the tool failed: the search text was not found in "sum\.js"/,
    );
    assert.deepEqual(
      eventsOnDisk(r)
        .filter((e) => e.type === 'tool_call')
        .map((e) => `${e.tool}:${e.status}`),
      [
        'enter_stage:ok',
        'edit_file:error',
        'edit_file:error',
        'write_file:ok',
        'edit_file:error',
        'edit_file:error',
        'edit_file:error',
        'edit_file:error',
      ],
    );
    const last = messagesOf(r.chats.at(-1)!.body)
      .filter((m) => m.role === 'tool')
      .at(-1)!.content!;
    assert.match(last, /This exact call has now failed 3 times with no file changed in between: you are looping/);
  },
);
