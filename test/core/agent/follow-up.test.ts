import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Conversation } from '../../../core/agent/conversation';
import { prepareFollowUp } from '../../../core/agent/follow-up';

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
