// History by conversation in the real VS Code (code-server + Chromium) at the default side-bar width: two chats
// are two rows, an older one opens back in the chat (and survives a reload), a follow-up continues it with its
// earlier context in the same thread, its trajectories stay one click away, and none opens during a run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { ScriptedModelServer } from '../testkit/scripted-server';
import { textOf } from '../testkit/text';
import { DEMO_MODEL } from '../devtools/demo-model';
import { Suite, eventually, missingPrerequisite } from './support/workbench';

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

const FIRST = 'What does src/sum.js do?';
const SECOND = 'Which file tests it?';
const OTHER = 'Is there a README in this folder?';
const FOLLOW_UP = 'Remind me: what did you say sum does?';

/** The run files of the workspace, oldest first (run ids sort by time). */
const runFiles = (ws: string) =>
  readdirSync(join(ws, '.lar', 'runs'))
    .filter((n) => n.endsWith('.lar.jsonl'))
    .sort();
const threadOf = (ws: string, file: string) =>
  (JSON.parse(readFileSync(join(ws, '.lar', 'runs', file), 'utf8').split('\n')[0]!) as { thread?: unknown }).thread;

/** Sends a message and waits until its answer has ended the run (one more "Answered" in the chat). */
async function ask(chat: FrameLocator, send: (c: FrameLocator, t: string) => Promise<void>, text: string) {
  const answered = await chat.locator('.answered').count();
  await send(chat, text);
  await chat.locator('.answered').nth(answered).waitFor({ timeout: 60_000 });
}

/** A message as a regular expression that matches it literally. */
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Nothing in the chat's History scrolls sideways at the side bar's width. */
async function assertNoSidewaysScroll(chat: FrameLocator): Promise<void> {
  const { scroll, client } = await chat
    .locator('#history')
    .evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
  assert.ok(scroll <= client, `History is ${scroll} px wide in a ${client} px view`);
}

describe('History by conversation (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('two chats are two rows; the older one opens back in the chat, survives a reload, and a follow-up continues it', async () => {
    const server = new ScriptedModelServer({
      models: [DEMO_MODEL],
      script: [
        { content: 'It subtracts its arguments instead of adding them.' },
        { content: 'test/sum.test.js tests it.' },
        { content: 'No, there is no README here.' },
        { content: 'I said that sum subtracts instead of adding.' },
        // The model goes quiet: a run in progress, until Stop.
        { kind: 'stall', after: 'Thinking', ms: 120_000 },
      ],
    });
    const endpoint = await server.start();
    const ws = suite.workspace('history', {
      'lean4Agentic.endpoint': endpoint,
      'lean4Agentic.model': DEMO_MODEL,
      'lean4Agentic.workflow': 'demo.larflow.json',
    });
    const wb = await suite.open(ws);
    const send = (c: FrameLocator, t: string) => wb.send(c, t);
    try {
      let chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      // The first conversation has two messages; New; the second has one.
      await ask(chat, send, FIRST);
      await ask(chat, send, SECOND);
      await chat.locator('#new-chat').click();
      await chat.locator('.msg.user').first().waitFor({ state: 'detached', timeout: 10_000 });
      await ask(chat, send, OTHER);
      const [first, second, other] = runFiles(ws);
      assert.equal(runFiles(ws).length, 3);

      // History: two rows, not three; the newest first, each with its first message.
      await chat.locator('#show-history').click();
      const rows = chat.locator('#history .thread-item');
      await rows.first().waitFor({ timeout: 30_000 });
      assert.equal(await rows.count(), 2, 'one row per conversation');
      assert.match(
        await rows.nth(0).locator('.thread-row').innerText(),
        new RegExp(`^${literal(OTHER)}[\\s\\S]*1 turn · `),
      );
      const older = rows.nth(1);
      assert.match(
        await older.locator('.thread-row').innerText(),
        new RegExp(`^${literal(FIRST)}[\\s\\S]*2 turns · last turn answered`),
      );
      assert.match(await rows.nth(0).innerText(), /in the chat/, 'the chat shows the newest one');
      await assertNoSidewaysScroll(chat);
      // It takes the chat's whole height, not half of it beside an empty log.
      const tall = await chat.locator('#history').evaluate((el) => el.getBoundingClientRect().height);
      assert.ok(tall > 500, `History is ${tall} px tall`);
      await wb.screenshot('history-two-conversations');

      // Opening the older one brings its messages back in the chat, and only its.
      await older.locator('.thread-row').click();
      assert.equal(await chat.locator('#history').isHidden(), true, 'back to the chat');
      const users = chat.locator('.msg.user');
      await eventually('the older conversation in the chat', async () =>
        (await users.allInnerTexts()).join('|') === `${FIRST}|${SECOND}` ? true : undefined,
      );
      assert.match(await chat.locator('.msg.assistant').last().innerText(), /test\/sum\.test\.js tests it\./);
      assert.equal(await chat.locator('.msg', { hasText: OTHER }).count(), 0);
      await wb.screenshot('history-opened');

      // A reload brings back the conversation opened last, not the one before it.
      await wb.reload();
      chat = await wb.openChat();
      await chat.locator('.restored-note').waitFor({ timeout: 30_000 });
      assert.deepEqual(await chat.locator('.msg.user').allInnerTexts(), [FIRST, SECOND]);

      // The follow-up continues it: the model gets the earlier context, and the new run is in its thread.
      await ask(chat, send, FOLLOW_UP);
      assert.match(await chat.locator('.msg.assistant').last().innerText(), /I said that sum subtracts/);
      const asked = server.requests
        .filter((q) => q.path === '/v1/chat/completions')
        .map((q) =>
          (q.body as { messages: { role: string; content?: unknown }[] }).messages.map((m) => textOf(m.content)),
        );
      const last = asked.at(-1)!;
      // (A follow-up's message carries a note that a new run of the workflow starts.)
      const said = (m: string) => last.some((c) => c === m || c.startsWith(`${m}\n`));
      assert.ok(
        said(FIRST) && said(SECOND),
        `the earlier messages are in the request: ${JSON.stringify(last).slice(0, 3000)}`,
      );
      assert.ok(
        last.some((c) => c.includes('It subtracts its arguments')),
        'so is the earlier answer',
      );
      assert.ok(!said(OTHER), 'the other conversation is not');
      const files = runFiles(ws);
      assert.equal(files.length, 4, 'the follow-up is a new run');
      const next = files.find((f) => ![first, second, other].includes(f))!;
      const firstThread = threadOf(ws, first!) as { id: string };
      assert.deepEqual(threadOf(ws, next), { id: firstThread.id, turn: 3, previous: second });

      // History again: still two rows, the continued conversation first; its trajectories one click away.
      await chat.locator('#show-history').click();
      const top = chat.locator('#history .thread-item').first();
      await top.waitFor({ timeout: 30_000 });
      assert.equal(await chat.locator('#history .thread-item').count(), 2);
      assert.match(await top.locator('.thread-row').innerText(), new RegExp(`^${literal(FIRST)}[\\s\\S]*3 turns`));
      await top.locator('button.thread-trajectories').click();
      const trajectories = top.locator('button.run-row');
      assert.equal(await trajectories.count(), 3);
      assert.match(await trajectories.nth(2).innerText(), new RegExp(`3\\. ${literal(FOLLOW_UP)}`));
      await assertNoSidewaysScroll(chat);
      await wb.screenshot('history-trajectories');
      await trajectories.first().click();
      await wb.editor(first!).waitFor({ timeout: 30_000 });
      // The conversation the chat shows: its row just goes back to the chat.
      await top.locator('.thread-row').click();
      assert.equal(await chat.locator('#history').isHidden(), true);
      assert.equal(await chat.locator('.msg.user').count(), 3);
      await wb.screenshot('history-trajectory-open');

      // While a run is in progress, another conversation does not open: the chat says why and stays as it is.
      await wb.send(chat, 'One more thing.');
      await chat.locator('#stop').waitFor({ state: 'visible', timeout: 30_000 });
      await chat.locator('#show-history').click();
      await chat.locator('#history .thread-item', { hasText: OTHER }).locator('.thread-row').click();
      await chat.locator('#log .error', { hasText: 'A run is in progress' }).waitFor({ timeout: 10_000 });
      assert.equal(await chat.locator('.msg', { hasText: OTHER }).count(), 0, 'the chat still shows its conversation');
      await wb.screenshot('history-refused-during-run');
      await chat.locator('#stop').click();
      await chat.locator('#stop').waitFor({ state: 'hidden', timeout: 30_000 });
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });
});
