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
import { runAgent, type AgentModel } from '../core/agent/loop';
import type { ModelReply } from '../core/model/client';
import { CheckToolCallResult, type AppendStepParams, type CheckToolCallParams } from '../core/protocol/lsp';
import { builtinWorkflow } from '../core/workflow/load';
import { createLiveGate, type GateServer } from '../extension/agent/liveGate';
import { LspClient } from './support/lsp-client';

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
    async complete(): Promise<ModelReply> {
      const these = calls[turn++] ?? [];
      return { model: 'fake', text: '', reasoning: '', finishReason: 'tool_calls', attempts: 1, toolCalls: these.map(([name, args], i) => ({ id: `c${turn}_${i}`, name, args, via: 'native' as const })) };
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
  const live = createLiveGate({ server, uri: pathToFileURL(trajectoryPath).toString(), trajectoryPath, workflow, approvals: { write_file: 'ask' } });
  const asked: string[] = [];
  const statuses: string[] = [];
  const result = await runAgent({
    task: 't',
    workflow,
    workflowRef: 'builtin:default-coding',
    model: scripted(script),
    modelInfo: { name: 'fake' },
    workspace: ws,
    trajectoryPath,
    execute: async (tool) => ({ status: 'ok', result: tool === 'run_command' ? { exitCode: 0, completion: 'marker' } : {}, observation: 'done' }),
    runOutcomeCheck: async () => ({ type: 'outcome', command: 'npm test', exitCode: 0, completion: 'exit', output: '', durationMs: 1, at: new Date().toISOString() }),
    approve: async (req) => {
      asked.push(`${req.tool}: ${req.reason}`);
      return false;
    },
    gate: live.gate,
    onEvent: (e) => {
      live.observe(e);
      if (e.kind === 'step') statuses.push(`${e.event.tool}:${e.event.status}`);
    },
  });
  await live.flushed();
  return { result, asked, statuses, viaServer: live.viaServer };
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
  assert.deepEqual(r.statuses, ['write_file:blocked', 'enter_stage:ok', 'write_file:denied', 'enter_stage:ok', 'run_command:ok', 'submit:ok']);
  assert.equal(r.asked.length, 1);
  assert.match(r.asked[0]!, /lean4Agentic\.approvals/);
  assert.equal(r.result.endReason, 'submitted');
  assert.deepEqual(seen.append, seen.append.map((_, i) => i + 1), 'every line, header first, in order');
});

test('without a server (or when it fails) the local verifier decides the same way', async () => {
  const none = await runWith(undefined);
  assert.deepEqual(none.statuses, ['write_file:blocked', 'enter_stage:ok', 'write_file:denied', 'enter_stage:ok', 'run_command:ok', 'submit:ok']);
  const failing = await runWith({
    running: true,
    appendStep: async () => {},
    checkToolCall: async () => {
      throw new Error('the language server stopped');
    },
  });
  assert.equal(failing.viaServer, false);
  assert.deepEqual(failing.statuses, none.statuses);
  assert.equal(failing.result.summary.return, none.result.summary.return);
});
