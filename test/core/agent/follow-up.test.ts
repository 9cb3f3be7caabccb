import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Conversation } from '../../../core/agent/conversation';
import { discardUnanswered, prepareFollowUp } from '../../../core/agent/follow-up';

const NOTE =
  '\n\n[Lean4 Agentic: this message starts a new run of the workflow; its verifier starts again in stage "edit".]';

function answered(): Conversation {
  const c = new Conversation('system', 'fix the test', []);
  c.push({ kind: 'assistant', text: 'done', calls: [] });
  return c;
}

test('a message to an answered chat continues its conversation as it is', () => {
  const c = answered();
  const f = prepareFollowUp(c, 'now the docs');
  assert.equal(f.task, 'now the docs');
  assert.equal(f.conversation, c);
  assert.equal(f.reasked, false);
  f.takeUnanswered();
  assert.equal(c.turns.length, 3);
});

test('messages the model never answered are asked again with the new one, and leave the conversation at the start', () => {
  const c = answered();
  c.push({ kind: 'user', text: `also the lint${NOTE}` }, { kind: 'user', text: 'and the types' });
  const f = prepareFollowUp(c, 'now the docs');
  assert.equal(f.task, 'also the lint\n\nand the types\n\nnow the docs');
  assert.equal(f.conversation, c);
  assert.equal(f.reasked, false);
  assert.equal(c.turns.length, 5, 'nothing is taken before the run starts');
  f.takeUnanswered();
  assert.deepEqual(
    c.turns.map((t) => t.kind),
    ['system', 'task', 'assistant'],
  );
});

test('a resume asks again only what was unanswered, which the chat already shows', () => {
  const c = answered();
  c.push({ kind: 'user', text: 'also the lint' });
  const f = prepareFollowUp(c, 'Continue the task.', { resume: true });
  assert.equal(f.task, 'also the lint');
  assert.equal(f.reasked, true);
});

test('a chat the model never answered starts afresh with everything that was asked', () => {
  const c = new Conversation('system', `fix the test${NOTE}`, []);
  c.push({ kind: 'user', text: 'please' });
  const f = prepareFollowUp(c, 'hello?');
  assert.equal(f.task, 'fix the test\n\nplease\n\nhello?');
  assert.equal(f.conversation, undefined);
  assert.equal(f.reasked, false);
  const r = prepareFollowUp(c, 'Continue the task.', { resume: true });
  assert.equal(r.task, 'fix the test\n\nplease');
  assert.equal(r.reasked, true);
});

test('a message sent again after the model failed to answer it is asked once', () => {
  const c = answered();
  c.push({ kind: 'user', text: 'also the lint' });
  assert.equal(prepareFollowUp(c, 'also the lint').task, 'also the lint');
  const fresh = new Conversation('system', `fix the test${NOTE}`, []);
  assert.equal(prepareFollowUp(fresh, 'fix the test').task, 'fix the test');
  assert.equal(prepareFollowUp(fresh, 'fix the test, please').task, 'fix the test\n\nfix the test, please');
});

test('a first message has no conversation to continue', () => {
  const f = prepareFollowUp(undefined, 'fix the test', { resume: true });
  assert.deepEqual(
    { task: f.task, conversation: f.conversation, reasked: f.reasked },
    {
      task: 'fix the test',
      conversation: undefined,
      reasked: false,
    },
  );
});

test('a failed message the user took back (Edit) is not asked again with the next one', () => {
  const c = answered();
  c.push({ kind: 'user', text: `deploy with token sk-live-123${NOTE}` }, { kind: 'user', text: 'and the types' });
  assert.equal(discardUnanswered(c, 'deploy with token sk-live-123'), c);
  const f = prepareFollowUp(c, 'deploy with the token from the env');
  assert.equal(f.task, 'and the types\n\ndeploy with the token from the env');
  assert.doesNotMatch(f.task, /sk-live-123/);
  // A text that is not among the unanswered changes nothing.
  assert.equal(discardUnanswered(c, 'never sent'), c);
  assert.equal(c.unanswered().length, 1);
});

test("a chat's first message taken back, never answered, leaves no conversation to continue", () => {
  const c = new Conversation('system', 'fix with password hunter2', []);
  assert.equal(discardUnanswered(c, 'fix with password hunter2'), undefined);
  const f = prepareFollowUp(undefined, 'fix it');
  assert.equal(f.task, 'fix it');
  // Once the model answered it, the first message is history, not taken back.
  const a = answered();
  assert.equal(discardUnanswered(a, 'fix the test'), a);
  assert.equal(a.turns.length, 3);
});

test('a message with attachments is matched as the model received it: Edit forgets it, Retry asks it once', async () => {
  const { renderUserMessage } = await import('../../../core/schema/user-message.js');
  const rendered = renderUserMessage('why does this fail', [
    { type: 'attachment', kind: 'file', label: '@.env', source: '.env', content: 'TOKEN=sk-live-123' },
  ]);
  const c = answered();
  c.push({ kind: 'user', text: `${rendered}${NOTE}` });
  const retry = prepareFollowUp(c, 'why does this fail');
  assert.equal(retry.repeated, true, 'a Retry: the run adds neither the message nor its attachments again');
  assert.equal(retry.task.split('Attached by the user').length, 2, 'the attachment once');
  assert.equal(discardUnanswered(c, 'why does this fail'), c);
  const next = prepareFollowUp(c, 'never mind');
  assert.equal(next.task, 'never mind');
  assert.equal(next.repeated, false);
});
