// The model picker in the real VS Code at the side bar's default width: two scripted servers named in
// lean4Agentic.endpoints serve different models; the chat picks the second one's, and the run goes there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedModelServer } from '../testkit/scripted-server';
import { overflowOf, runHeaders } from './support/models';
import { Suite, missingPrerequisite } from './support/workbench';

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

const chats = (server: ScriptedModelServer) => server.requests.filter((q) => q.path === '/v1/chat/completions');

describe('the model picker (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('the picker lists every endpoint, the second model runs the chat and is recorded, and the footer fits', async () => {
    const first = new ScriptedModelServer({
      models: ['alpha-9b'],
      script: [{ content: 'Alpha here.' }],
      whenDone: 'repeat',
    });
    // The answer pauses mid-way, so the run lasts long enough to see the picker at rest during it.
    const second = new ScriptedModelServer({
      models: ['beta-27b-instruct-long-model-name'],
      script: [{ kind: 'stall', after: 'Beta here: the second endpoint answers.', ms: 4000 }],
      whenDone: 'repeat',
    });
    const down = new ScriptedModelServer({ models: ['x'], script: [] });
    const [a, b, gone] = [await first.start(), await second.start(), await down.start()];
    await down.stop();
    const ws = suite.workspace('models', {
      'lean4Agentic.endpoint': a,
      'lean4Agentic.endpoints': [
        { name: 'second', url: b },
        { name: 'offline', url: gone },
      ],
      'lean4Agentic.workflow': 'demo.larflow.json',
    });
    const wb = await suite.open(ws);
    try {
      let chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await chat.locator('#model-label', { hasText: 'alpha-9b' }).waitFor({ timeout: 30_000 });

      // Open: both servers' models, the one that is down greyed with its error.
      await chat.locator('#model-picker').click();
      const options = chat.locator('#model-menu [role="option"]');
      await options.nth(1).waitFor({ timeout: 30_000 });
      assert.deepEqual(await options.allInnerTexts(), ['alpha-9b', 'beta-27b-instruct-long-model-name']);
      const failed = chat.locator('#model-menu .model-group.failed');
      assert.match(await failed.innerText(), /^offline\s+cannot reach the inference server/);
      assert.deepEqual((await overflowOf(chat, ['#model-menu'])).cut, [], 'the menu fits the view');
      await wb.screenshot('models-1-menu');

      await options.nth(1).click();
      await chat.locator('#model-label', { hasText: 'beta-27b' }).waitFor({ timeout: 10_000 });
      // The connection line checks the pick's endpoint.
      await chat
        .locator('#connection.conn.connected', { hasText: 'beta-27b-instruct-long-model-name' })
        .waitFor({ timeout: 30_000 });
      assert.match(await chat.locator('#connection').innerText(), new RegExp(b.replace(/[.]/g, '\\.')));

      // The footer fits the default side bar: nothing scrolls sideways, the picker and Run are whole.
      const fit = await overflowOf(chat, ['#model-picker', '#run']);
      assert.ok(fit.width < 400, `the side bar is at its default width (${fit.width} px)`);
      assert.equal(fit.extra, 0, 'no horizontal overflow in the chat');
      assert.equal(fit.footerExtra, 0);
      assert.deepEqual(fit.cut, []);
      await wb.screenshot('models-2-picked');

      await wb.send(chat, 'Who answers?');
      await chat.locator('#model-picker[disabled]').waitFor({ timeout: 30_000 });
      await wb.screenshot('models-3-running');
      await chat.locator('.msg.assistant', { hasText: 'Beta here' }).waitFor({ timeout: 60_000 });
      await chat.locator('#model-picker:not([disabled])').waitFor({ timeout: 30_000 });
      assert.equal(chats(second).length >= 1, true, 'the second server got the request');
      assert.equal(chats(first).length, 0, 'the default server got none');
      assert.equal((chats(second)[0]!.body as { model: string }).model, 'beta-27b-instruct-long-model-name');
      const headers = runHeaders(ws);
      assert.equal(headers.length, 1);
      const header = headers[0];
      assert.equal(header!.model?.name, 'beta-27b-instruct-long-model-name');
      assert.equal(header!.model?.endpointName, 'second');
      assert.equal(header!.model?.endpoint, b);
      // The footer still fits after a run (the header's own width is issue 21's first point, not the picker's).
      const afterRun = await overflowOf(chat, ['#model-picker', '#run']);
      assert.equal(afterRun.footerExtra, 0, 'nothing in the footer scrolls sideways after the run');
      assert.deepEqual(afterRun.cut, []);

      // A reload brings the chat back with its pick.
      await wb.reload();
      chat = await wb.openChat();
      await chat.locator('#model-label', { hasText: 'beta-27b' }).waitFor({ timeout: 30_000 });
      await wb.screenshot('models-4-reloaded');
      // A new chat starts with the settings' model again.
      await chat.locator('#new-chat').click();
      await chat.locator('#model-label', { hasText: 'alpha-9b' }).waitFor({ timeout: 10_000 });
      assert.deepEqual(wb.pageErrors, []);
    } catch (e) {
      await wb.screenshot('models-failed').catch(() => {});
      throw e;
    } finally {
      await wb.close();
      await first.stop();
      await second.stop();
    }
  });
});
