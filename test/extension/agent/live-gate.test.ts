// The chat's live gate against the real language server process: every line
// goes to lar/appendStep (header first), every call is decided by
// lar/checkToolCall, the per-tool approval setting is applied on top, and
// without a server the local verifier decides the same way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runAgent, type AgentModel } from '../../../core/agent/loop';
import type { ModelReply } from '../../../core/model/reply';
import { CheckToolCallResult, type AppendStepParams, type CheckToolCallParams } from '../../../core/protocol/lsp';
import { builtinWorkflow } from '../../../core/workflow/load';
import { createLiveGate, type GateServer } from '../../../extension/agent/live-gate';
import { LspClient } from '../../support/lsp-client';

let lsp: LspClient;
before(async () => {
  lsp = await LspClient.start();
});
after(async () => {
  await lsp.stop();
});

function scripted(calls: [string, unknown][][]): AgentModel {
  let turn = 0;
  return {
    complete(): Promise<ModelReply> {
      const these = calls[turn++] ?? [];
      return Promise.resolve({
        model: 'fake',
        text: '',
        reasoning: '',
        finishReason: 'tool_calls',
        attempts: 1,
        toolCalls: these.map(([name, args], i) => ({ id: `c${turn}_${i}`, name, args, via: 'native' as const })),
      });
    },
  };
}

const script: [string, unknown][][] = [
  [['write_file', { path: 'a.txt', content: 'x' }]], // blocked: not a tool of explore
  [['enter_stage', { stage: 'edit' }]],
  [['write_file', { path: 'a.txt', content: 'x' }]], // allowed, but the setting asks and the user rejects
  [['enter_stage', { stage: 'verify' }]],
  [['run_command', { command: 'npm test' }]],
  [['submit', {}]],
];

async function runWith(server: GateServer | undefined) {
  const ws = mkdtempSync(join(tmpdir(), 'lar-gate-'));
  const trajectoryPath = join(ws, '.lar', 'runs', 'r.lar.jsonl');
  const workflow = builtinWorkflow('default-coding');
  const live = createLiveGate({
    server,
    uri: pathToFileURL(trajectoryPath).toString(),
    trajectoryPath,
    workflow,
    approvals: { write_file: 'ask' },
  });
  const asked: string[] = [];
  const statuses: string[] = [];
  const stages: (string | undefined)[] = [];
  const result = await runAgent({
    task: 't',
    workflow,
    workflowRef: 'builtin:default-coding',
    model: scripted(script),
    modelInfo: { name: 'fake' },
    workspace: ws,
    trajectoryPath,
    execute: (tool) =>
      Promise.resolve({
        status: 'ok',
        result: tool === 'run_command' ? { exitCode: 0, completion: 'marker' } : {},
        observation: 'done',
      }),
    runOutcomeCheck: () =>
      Promise.resolve({
        type: 'outcome',
        command: 'npm test',
        exitCode: 0,
        completion: 'exit',
        output: '',
        durationMs: 1,
        at: new Date().toISOString(),
      }),
    approve: (req) => {
      asked.push(`${req.tool}: ${req.reason}`);
      return Promise.resolve(false);
    },
    gate: live.gate,
    onEvent: (e) => {
      live.observe(e);
      if (e.kind === 'step') statuses.push(`${e.event.tool}:${e.event.status}`);
      if (e.kind === 'step') stages.push(live.stage);
    },
  });
  await live.flushed();
  return { result, asked, statuses, stages, viaServer: live.viaServer };
}

test('the server decides every call; the approval setting asks on top; lines arrive in order', async () => {
  const seen = { append: [] as number[], checks: 0 };
  const server: GateServer = {
    running: true,
    async appendStep(p: AppendStepParams) {
      seen.append.push(p.line);
      await lsp.connection.sendNotification('lar/appendStep', p);
    },
    async checkToolCall(p: CheckToolCallParams) {
      seen.checks++;
      return CheckToolCallResult.parse(await lsp.connection.sendRequest('lar/checkToolCall', p));
    },
  };
  const r = await runWith(server);
  assert.equal(r.viaServer, true);
  assert.equal(seen.checks, script.length);
  assert.deepEqual(r.statuses, [
    'write_file:blocked',
    'enter_stage:ok',
    'write_file:denied',
    'enter_stage:ok',
    'run_command:ok',
    'submit:ok',
  ]);
  assert.equal(r.asked.length, 1);
  assert.match(r.asked[0]!, /lean4Agentic\.approvals/);
  assert.equal(r.result.endReason, 'submitted');
  assert.deepEqual(
    seen.append,
    seen.append.map((_, i) => i + 1),
    'every line, header first, in order',
  );
});

test('without a server (or when it fails) the local verifier decides the same way', async () => {
  const none = await runWith(undefined);
  assert.deepEqual(none.statuses, [
    'write_file:blocked',
    'enter_stage:ok',
    'write_file:denied',
    'enter_stage:ok',
    'run_command:ok',
    'submit:ok',
  ]);
  // The stage each step left the run in (the chat's MCP list follows it): none once the run submitted.
  assert.deepEqual(none.stages, ['explore', 'edit', 'edit', 'verify', 'verify', undefined]);
  const failing = await runWith({
    running: true,
    appendStep: async () => {},
    checkToolCall: () => Promise.reject(new Error('the language server stopped')),
  });
  assert.equal(failing.viaServer, false);
  assert.deepEqual(failing.statuses, none.statuses);
  assert.equal(failing.result.summary.return, none.result.summary.return);
});

test('the server killed mid-run: the local verifier gates meanwhile; a restarted server catches up from the file and decides again', async () => {
  let current: LspClient | undefined = await LspClient.start();
  let generation = 1;
  const decidedBy: string[] = [];
  const server: GateServer = {
    get running() {
      return current !== undefined;
    },
    get generation() {
      return generation;
    },
    async appendStep(p: AppendStepParams) {
      if (!current) throw new Error('the language server is not running');
      await current.connection.sendNotification('lar/appendStep', p);
    },
    async checkToolCall(p: CheckToolCallParams) {
      if (!current) throw new Error('the language server is not running');
      const r = CheckToolCallResult.parse(await current.connection.sendRequest('lar/checkToolCall', p));
      decidedBy.push(`${p.call.tool}@${generation}`);
      return r;
    },
  };
  const ws = mkdtempSync(join(tmpdir(), 'lar-gate-restart-'));
  const trajectoryPath = join(ws, '.lar', 'runs', 'r.lar.jsonl');
  const uri = pathToFileURL(trajectoryPath).toString();
  const workflow = builtinWorkflow('default-coding');
  const logs: string[] = [];
  const live = createLiveGate({ server, uri, trajectoryPath, workflow, approvals: {}, log: (m) => logs.push(m) });
  const turns: [string, unknown][][] = [
    [['read_file', { path: 'a.txt' }]],
    [['enter_stage', { stage: 'edit' }]],
    [['write_file', { path: 'a.txt', content: 'x' }]],
    [['enter_stage', { stage: 'verify' }]],
    [['run_command', { command: 'npm test' }]],
    [['submit', {}]],
  ];
  let turn = 0;
  const model: AgentModel = {
    async complete(): Promise<ModelReply> {
      // The server dies before the 3rd call and comes back (a new process, knowing nothing) before the 5th.
      if (turn === 2 && current) {
        const dying = current;
        current = undefined;
        const exited = new Promise((r) => dying.child.once('exit', r));
        dying.child.kill('SIGKILL');
        await exited;
        dying.connection.dispose();
      }
      if (turn === 4 && !current) {
        current = await LspClient.start();
        generation++;
      }
      const these = turns[turn++] ?? [];
      return {
        model: 'fake',
        text: '',
        reasoning: '',
        finishReason: 'tool_calls',
        attempts: 1,
        toolCalls: these.map(([name, args], i) => ({ id: `c${turn}_${i}`, name, args, via: 'native' as const })),
      };
    },
  };
  try {
    const result = await runAgent({
      task: 't',
      workflow,
      workflowRef: 'builtin:default-coding',
      model,
      modelInfo: { name: 'fake' },
      workspace: ws,
      trajectoryPath,
      execute: (tool) =>
        Promise.resolve({
          status: 'ok',
          result:
            tool === 'run_command'
              ? { exitCode: 0, completion: 'marker' }
              : tool === 'write_file'
                ? { filesChanged: ['a.txt'] }
                : {},
          observation: 'done',
        }),
      runOutcomeCheck: () =>
        Promise.resolve({
          type: 'outcome',
          command: 'npm test',
          exitCode: 0,
          completion: 'exit',
          output: '',
          durationMs: 1,
          at: new Date().toISOString(),
        }),
      gate: live.gate,
      onEvent: (e) => live.observe(e),
    });
    await live.flushed();
    assert.equal(result.endReason, 'submitted', 'the run went on while the server was down');
    assert.deepEqual(
      decidedBy,
      ['read_file@1', 'enter_stage@1', 'run_command@2', 'submit@2'],
      'the local verifier decided while the server was down, the new server after',
    );
    assert.equal(live.viaServer, true);
    assert.ok(
      logs.some((l) => /gating with the builtin verifier until the server is back/.test(l)),
      logs.join('\n'),
    );
    assert.ok(
      logs.some((l) => /the language server is back/.test(l)),
      logs.join('\n'),
    );
    // The new server has the whole run, caught up from the file: a call now is one after the submit.
    const after = CheckToolCallResult.parse(
      await current.connection.sendRequest('lar/checkToolCall', {
        uri,
        call: { tool: 'read_file', args: { path: 'a.txt' } },
      }),
    );
    assert.equal(after.decision, 'block');
    assert.ok(
      after.verdicts.some((v) => v.check === 'tool.run_open' && !v.ok),
      JSON.stringify(after.verdicts),
    );
    assert.equal(result.summary.outcome.reward, 1);
  } finally {
    await current?.stop();
  }
});

test('a server restarted between two calls, with no line in between, is re-synced before it is asked', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-gate-resync-'));
  const trajectoryPath = join(ws, '.lar', 'runs', 'r.lar.jsonl');
  const uri = pathToFileURL(trajectoryPath).toString();
  let generation = 1;
  const knows = new Map<number, number>(); // generation → lines the server has
  const server: GateServer = {
    running: true,
    get generation() {
      return generation;
    },
    appendStep(p: AppendStepParams) {
      // A new server catches up from the file: whatever line it gets first, it then has them all.
      knows.set(generation, Math.max(knows.get(generation) ?? 0, p.line));
      return Promise.resolve();
    },
    checkToolCall(): Promise<CheckToolCallResult> {
      if (!knows.get(generation)) return Promise.reject(new Error(`no verified run for ${uri}`));
      return Promise.resolve({
        decision: 'allow',
        reason: 'every check passed',
        toolReward: 1,
        verdicts: [],
        backend: { backend: 'builtin', reason: 'test' },
      });
    },
  };
  const workflow = builtinWorkflow('default-coding');
  const logs: string[] = [];
  const live = createLiveGate({ server, uri, trajectoryPath, workflow, approvals: {}, log: (m) => logs.push(m) });
  live.observe({ kind: 'header', line: 1, text: '{"lar":1}' });
  await live.flushed();
  assert.equal((await live.gate({ tool: 'read_file', args: { path: 'a' } })).decision, 'allow');
  generation = 2; // crashed and restarted while the model was thinking; no line since
  assert.equal((await live.gate({ tool: 'read_file', args: { path: 'b' } })).decision, 'allow');
  assert.equal(live.viaServer, true, 'still the server deciding');
  assert.equal(knows.get(2), 1, 'the new server was sent the latest line first');
  assert.deepEqual(logs, [], 'no fallback happened');
});
