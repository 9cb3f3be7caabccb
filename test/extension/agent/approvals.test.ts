import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyApprovalPolicy, needsApproval, toolMode } from '../../../extension/agent/approvals';
import type { GateResult } from '../../../core/verifier/types';

const allow = (askPattern?: string): GateResult => ({
  decision: askPattern ? 'ask' : 'allow',
  verdicts: [],
  reason: askPattern ? `matches the ask pattern ${askPattern}` : 'allowed',
  toolReward: 1,
  ...(askPattern ? { askPattern } : {}),
});

test('tool setting × ask pattern: the pattern always asks, otherwise the setting decides', () => {
  assert.equal(needsApproval('auto', undefined), false);
  assert.equal(needsApproval('ask', undefined), true);
  assert.equal(needsApproval('auto', 'rm -rf *'), true);
  assert.equal(needsApproval('ask', 'rm -rf *'), true);
});

test('unknown or malformed settings are auto; only "ask" asks', () => {
  assert.equal(toolMode({}, 'run_command'), 'auto');
  assert.equal(toolMode({ run_command: 'ask' }, 'run_command'), 'ask');
  assert.equal(toolMode({ run_command: 'ASK' }, 'run_command'), 'auto');
  assert.equal(toolMode({ run_command: true }, 'run_command'), 'auto');
  assert.equal(toolMode({}, 'toString'), 'auto');
});

test('the policy turns an allowed call into ask, keeps ask and block', () => {
  const asked = applyApprovalPolicy(allow(), 'write_file', { write_file: 'ask' });
  assert.equal(asked.decision, 'ask');
  assert.match(asked.reason, /lean4Agentic\.approvals/);
  assert.equal(applyApprovalPolicy(allow(), 'write_file', { write_file: 'auto' }).decision, 'allow');
  const pattern = allow('rm -rf *');
  assert.equal(applyApprovalPolicy(pattern, 'run_command', { run_command: 'auto' }), pattern);
  const blocked: GateResult = { decision: 'block', verdicts: [], reason: 'not in this stage', toolReward: -1 };
  assert.equal(applyApprovalPolicy(blocked, 'write_file', { write_file: 'ask' }).decision, 'block');
  assert.equal(applyApprovalPolicy(blocked, 'write_file', {}), blocked);
});

test('a blocked call keeps its block, and carries the per-tool approval for enforcement warn', () => {
  const blocked = {
    decision: 'block' as const,
    verdicts: [],
    reason: 'write_file is not permitted in stage "explore"',
    toolReward: -1 as const,
  };
  const r = applyApprovalPolicy(blocked, 'write_file', { write_file: 'ask' });
  assert.equal(r.decision, 'block');
  assert.match(r.askReason ?? '', /lean4Agentic\.approvals asks before write_file/);
  assert.equal(applyApprovalPolicy(blocked, 'write_file', {}).askReason, undefined);
});
