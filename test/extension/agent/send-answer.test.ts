// The extension's answer to each message the user sends (extension/agent/send-answer.ts): one, and only one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToWebview } from '../../../core/protocol/chat';
import { ToWebview as ToWebviewSchema } from '../../../core/protocol/chat';
import { SendAnswer, droppedQueue, failureOf } from '../../../extension/agent/send-answer';

function answer(id: string | undefined = 'm1', task = 'fix the test') {
  const posted: ToWebview[] = [];
  return { a: new SendAnswer(id, task, (m) => posted.push(m)), posted };
}

test('a message refused before its run starts fails with the reason, the buttons and its text', () => {
  const { a, posted } = answer();
  assert.equal(a.fail('Could not reach the model server', ['openEndpointSetting', 'testConnection']), true);
  assert.deepEqual(posted, [
    {
      type: 'sendFailed',
      id: 'm1',
      task: 'fix the test',
      reason: 'Could not reach the model server',
      actions: ['openEndpointSetting', 'testConnection'],
    },
  ]);
  assert.ok(ToWebviewSchema.safeParse(posted[0]).success);
});

test('only the first answer counts: a second failure or a late settle posts nothing more', () => {
  const { a, posted } = answer();
  a.fail('first');
  assert.equal(a.fail('second'), false);
  a.settle();
  assert.equal(posted.length, 1);
});

test('once the run started, its failures are the run’s own errors, not the message’s', () => {
  const { a, posted } = answer();
  assert.deepEqual(a.started(), { id: 'm1' });
  assert.deepEqual(a.started(), {}, 'the id is given once');
  assert.equal(a.fail('the model failed mid-run'), false);
  a.settle();
  assert.deepEqual(posted, []);
});

test('a message stopped before its run started is said to be not sent', () => {
  const { a, posted } = answer();
  a.settle();
  assert.equal(posted[0]?.type, 'sendFailed');
  assert.match((posted[0] as { reason: string }).reason, /not sent/);
});

test('a run the chat starts itself (no id) answers nothing: its failures are errors', () => {
  const posted: ToWebview[] = [];
  const a = new SendAnswer(undefined, 'resume', (m) => posted.push(m));
  assert.equal(a.fail('down'), false);
  a.settle();
  assert.deepEqual(a.queued(), {});
  assert.deepEqual(posted, []);
});

test('a connection failure before the run goes on the bubble and has the connection checked again', () => {
  const { a, posted } = answer();
  const errors: string[] = [];
  let checks = 0;
  const fail = failureOf({ fail: (m) => errors.push(m), checkConnection: () => checks++ }, a);
  fail('Could not reach the server', ['openEndpointSetting', 'testConnection']);
  assert.equal(posted[0]?.type, 'sendFailed');
  assert.deepEqual(errors, []);
  assert.equal(checks, 1);
  // Once the run started, its model errors go to the log, and they too have the connection checked.
  fail('the model failed', ['testConnection']);
  assert.deepEqual(errors, ['the model failed']);
  assert.equal(checks, 2);
  // A workflow setting at fault says nothing of the connection.
  fail('bad workflow', ['openWorkflowSetting']);
  fail('a set key', ['setApiKey']);
  assert.equal(checks, 3);
});

test('a run whose model never answered the message marks it failed after its start', () => {
  const { a, posted } = answer();
  a.started();
  assert.equal(a.unanswered('Could not reach the server', ['testConnection']), true);
  assert.equal(posted[0]?.type, 'sendFailed');
  const posted2: ToWebview[] = [];
  assert.equal(new SendAnswer(undefined, 'queued one', (m) => posted2.push(m)).unanswered('down', []), false);
  assert.deepEqual(posted2, []);
});

test('the messages a stopped run drops from its queue are each marked not sent, by their id', () => {
  const out = droppedQueue([
    { text: 'and add a test', id: 'm1' },
    { text: 'no id (typed before ids)' },
    { text: 'x', id: 'm2' },
  ]);
  assert.deepEqual(
    out.map((m) => (m.type === 'sendFailed' ? [m.id, m.task] : m.type)),
    [
      ['m1', 'and add a test'],
      ['m2', 'x'],
    ],
  );
  assert.ok(out.every((m) => ToWebviewSchema.safeParse(m).success));
});
