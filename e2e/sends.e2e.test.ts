// Nothing typed is lost, in the real VS Code (code-server + Chromium): a message sent while the model server
// is down stays in the log marked failed, with Retry and Edit and ↑ recall, and the header follows the server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_MODEL, startDemoModel } from '../devtools/demo-model';
import { Suite, missingPrerequisite } from './support/workbench';

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

const TASK = 'Make npm test pass.';

describe('Nothing typed is lost (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('a message sent while the server is down stays, marked failed, and Retry sends it once it is back', async () => {
    const started = await startDemoModel();
    let server = started.server;
    const endpoint = started.endpoint;
    const port = Number(new URL(endpoint).port);
    const ws = suite.workspace('sends', {
      'lean4Agentic.endpoint': endpoint,
      'lean4Agentic.model': DEMO_MODEL,
      'lean4Agentic.workflow': 'demo.larflow.json',
    });
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.screenshot('sends-1-connected');

      // The server goes away; the header still says connected until someone asks.
      await server.stop();
      const input = chat.locator('#task');
      const sentAt = Date.now();
      await wb.send(chat, TASK);
      const failed = chat.locator('#log .msg.user.send-failed');
      await failed.waitFor({ timeout: 30_000 });
      assert.match(
        await failed.innerText(),
        /Make npm test pass\.[\s\S]*✕ Not sent: .*cannot reach the inference server/i,
      );
      const retry = failed.getByRole('button', { name: 'Retry' });
      const edit = failed.getByRole('button', { name: 'Edit' });
      assert.ok((await retry.isVisible()) && (await edit.isVisible()), 'Retry and Edit under the message');
      assert.equal(await input.inputValue(), '', 'the input is free for the next message');
      // The failed send has the connection checked at once: the header says so within seconds.
      await chat.locator('#connection.conn.failed').waitFor({ timeout: 10_000 });
      assert.ok(Date.now() - sentAt < 15_000, 'the header followed within seconds');
      assert.match(await chat.locator('#connection').innerText(), /Not connected to/);
      await wb.screenshot('sends-2-failed');

      // ↑ in the empty input brings the message back; Escape leaves it empty again.
      await input.focus();
      await input.press('ArrowUp');
      assert.equal(await input.inputValue(), TASK);
      await wb.screenshot('sends-3-recalled');
      await input.press('Escape');
      assert.equal(await input.inputValue(), '');

      // Edit takes it back into the input; sent again while the server is still down, it fails again.
      await edit.click();
      assert.equal(await input.inputValue(), TASK);
      assert.equal(await chat.locator('#log .msg.user').count(), 0, 'the failed bubble went with Edit');
      await wb.screenshot('sends-4-edit');
      await input.press('Enter');
      await failed.waitFor({ timeout: 30_000 });

      // The server is back on the same port: Retry sends the same message, and the run goes through.
      ({ server } = await startDemoModel(port));
      await failed.getByRole('button', { name: 'Retry' }).click();
      await chat.locator('.end').waitFor({ timeout: 120_000 });
      assert.equal(await chat.locator('#log .msg.user.send-failed').count(), 0, 'no longer failed');
      assert.deepEqual(await chat.locator('#log .msg.user').allInnerTexts(), [TASK], 'one bubble, the same message');
      assert.match(await chat.locator('.end').innerText(), /outcome 1/);
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      const asked = server.requests.filter((q) => q.path === '/v1/chat/completions');
      assert.ok(asked.length > 0);
      const first = (asked[0]!.body as { messages: { role: string; content?: unknown }[] }).messages;
      assert.equal(
        first.filter((m) => m.role === 'user' && String(JSON.stringify(m.content)).includes(TASK)).length,
        1,
        'the model is asked the message once',
      );
      await chat.locator('#log .msg.user').scrollIntoViewIfNeeded();
      await wb.screenshot('sends-5-retried');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });
});
