import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FromWebview, ToWebview, clip } from '../../../core/protocol/chat';
import { shortArgs, toStepCard } from '../../../extension/chat/cards';

test('messages from the webview: good ones pass, bad ones are rejected', () => {
  assert.ok(FromWebview.safeParse({ type: 'start', id: 'mk2x1a', task: 'fix the failing test' }).success);
  assert.ok(FromWebview.safeParse({ type: 'discardFailed', id: 'mk2x1a' }).success);
  assert.ok(FromWebview.safeParse({ type: 'approve', id: 'a1', approved: true }).success);
  assert.ok(FromWebview.safeParse({ type: 'action', action: 'testConnection' }).success);
  for (const bad of [
    null,
    'start',
    {},
    { type: 'start' },
    { type: 'start', task: '   ' },
    { type: 'start', task: 'x'.repeat(20_001) },
    { type: 'start', id: 'm1', task: 'ok', extra: 1 },
    { type: 'start', task: 'no id' },
    { type: 'start', id: '../m1', task: 'ok' },
    { type: 'start', id: 'x'.repeat(65), task: 'ok' },
    { type: 'discardFailed', id: '' },
    { type: 'approve', id: 'a1', approved: 'yes' },
    { type: 'approve', id: '../../etc', approved: true },
    { type: 'action', action: 'runShell' },
    { type: 'eval', code: 'alert(1)' },
  ]) {
    assert.equal(FromWebview.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

test('messages to the webview are checked too', () => {
  assert.ok(
    ToWebview.safeParse({
      type: 'step',
      card: { line: 3, tool: 'read_file', args: 'a.js', status: 'ok', toolReward: 1, failed: [] },
    }).success,
  );
  assert.equal(
    ToWebview.safeParse({
      type: 'step',
      card: { line: 3, tool: 'read_file', args: 'a.js', status: 'ok', toolReward: 2, failed: [] },
    }).success,
    false,
  );
  assert.equal(ToWebview.safeParse({ type: 'error', message: 'down', actions: ['rm -rf'] }).success, false);
  assert.equal(ToWebview.safeParse({ type: 'text' }).success, false);
  assert.equal(clip('abcdef', 4), 'abc…');
});

test('step cards: short args, failed checks, stage change', () => {
  assert.equal(shortArgs('run_command', { command: 'npm test' }), 'npm test');
  assert.equal(shortArgs('edit_file', { path: 'src/a.js', search: 'x', replace: 'y' }), 'src/a.js');
  assert.equal(shortArgs('search', { pattern: 'foo' }), '{"pattern":"foo"}');
  const card = toStepCard(
    5,
    {
      type: 'tool_call',
      tool: 'write_file',
      args: { path: 'a.js', content: '' },
      status: 'blocked',
      result: {},
      at: '2026-01-01T00:00:00Z',
    },
    {
      line: 5,
      type: 'tool_call',
      step: 3,
      tool: 'write_file',
      stage: 'explore',
      verdicts: [
        { check: 'tool.allowed_in_stage', ok: false, reason: 'write_file is not allowed in explore' },
      ] as never,
      toolReward: -1,
      runningReturn: 0,
      stageVisit: { stage: 'explore', reward: 0.5 } as never,
    },
    { decision: 'block', verdicts: [], reason: 'x', toolReward: -1 },
  );
  assert.equal(ToWebview.safeParse({ type: 'step', card }).success, true);
  assert.equal(card.blocked, true);
  assert.deepEqual(card.failed, [{ check: 'tool.allowed_in_stage', reason: 'write_file is not allowed in explore' }]);
  assert.deepEqual(card.stageVisit, { stage: 'explore', reward: 0.5 });
});

test('an MCP call reads as its server and tool, marked MCP: the tool the server named once it ran, the parts of the name when blocked', () => {
  const step = (line: number, status: string, toolReward: -1 | 1) => ({
    line,
    type: 'tool_call' as const,
    step: line,
    stage: 'look',
    verdicts: [],
    toolReward,
    runningReturn: 0,
  });
  const ran = toStepCard(
    4,
    {
      type: 'tool_call',
      tool: 'mcp__fs__read_text',
      args: { path: 'a.md' },
      status: 'ok',
      result: { output: 'hello' },
      mcp: { server: 'fs', tool: 'read.text', digest: 'a'.repeat(64) },
      at: '2026-01-01T00:00:00Z',
    },
    step(4, 'ok', 1),
    { decision: 'allow', verdicts: [], reason: '', toolReward: 1 },
  );
  assert.deepEqual(
    [ran.tool, ran.mcp, ran.args, ran.excerpt],
    ['mcp__fs__read_text', { server: 'fs', tool: 'read.text' }, '{"path":"a.md"}', 'hello'],
  );
  const blocked = toStepCard(
    5,
    {
      type: 'tool_call',
      tool: 'mcp__everything__get-sum',
      args: { a: 1 },
      status: 'blocked',
      result: {},
      at: '2026-01-01T00:00:00Z',
    },
    step(5, 'blocked', -1),
    { decision: 'block', verdicts: [], reason: 'not permitted', toolReward: -1 },
  );
  assert.deepEqual(blocked.mcp, { server: 'everything', tool: 'get-sum' });
  assert.equal(blocked.blocked, true);
  for (const card of [ran, blocked]) assert.equal(ToWebview.safeParse({ type: 'step', card }).success, true);
  assert.equal(
    toStepCard(6, { ...blocked, tool: 'read_file' } as never, step(6, 'ok', 1), {
      decision: 'allow',
      verdicts: [],
      reason: '',
      toolReward: 1,
    }).mcp,
    undefined,
  );
});

test('Resume tells the model which command the interruption cut off, when the end line says so', async () => {
  const { resumeMessage } = await import('../../../extension/chat/transcript.js');
  assert.equal(
    resumeMessage(
      'the editor closed or reloaded during the run, while the command `npm test` was running (its result is lost)',
    ),
    'The editor closed during your last run, which was interrupted while the command `npm test` was running. Continue the task from where you stopped.',
  );
  assert.equal(
    resumeMessage('the editor closed or reloaded during the run'),
    'The editor closed during your last run, which was interrupted. Continue the task from where you stopped.',
  );
  assert.equal(resumeMessage(undefined), resumeMessage(''));
});

test('the sandbox under a task names each protected path and why, and nothing for an unconfined run', async () => {
  const { sandboxForChat } = await import('../../../extension/chat/sandbox-view.js');
  const summary = {
    confined: true,
    network: 'none' as const,
    protected: ['test'],
    protections: [
      { path: 'test', why: 'workflow' as const },
      { path: '.husky/pre-commit', why: 'runs_later' as const, note: 'named by package.json' },
    ],
  };
  assert.deepEqual(sandboxForChat(true, summary, undefined).protections, [
    { path: 'test', why: 'protected by the workflow' },
    { path: '.husky/pre-commit', why: 'your tools run it later, outside the sandbox: named by package.json' },
  ]);
  assert.equal(sandboxForChat(false, { confined: false, reason: 'no bwrap' }, undefined).protections, undefined);
});
