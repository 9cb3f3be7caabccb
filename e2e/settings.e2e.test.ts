// Settings reachable where VS Code lists them: in code-server (a remote window) the endpoint is a
// machine setting, listed on the Remote tab; the walkthrough's button and the chat's must land on it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_MODEL } from '../devtools/demo-model';
import { Suite, missingPrerequisite, type Workbench } from './support/workbench';

const skip = missingPrerequisite();

/** The Settings editor shows the endpoint setting itself, not "No Settings Found". */
async function endpointSettingShown(wb: Workbench): Promise<void> {
  const editor = wb.page.locator('.settings-editor');
  await editor.waitFor({ timeout: 30_000 });
  const row = editor.locator('.setting-item-contents', {
    hasText: 'Base URL of the OpenAI-compatible inference server',
  });
  await row.first().waitFor({ timeout: 30_000 });
  assert.equal(await editor.locator('.no-results-message:visible').count(), 0);
  // The value in force (the default) is the one shown for editing.
  assert.equal(await row.first().locator('input').inputValue(), 'http://127.0.0.1:30000/v1');
}

describe('settings in code-server (a remote window)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test("the walkthrough's first button opens the endpoint setting on the tab that lists it", async () => {
    // No value set anywhere: the default is in force, and the Remote tab is where a user sets it.
    const ws = suite.workspace('settings', { 'lean4Agentic.model': DEMO_MODEL });
    const wb = await suite.open(ws);
    try {
      await wb.runCommand('Welcome: Open Walkthrough...');
      await wb.page
        .locator('.quick-input-list .monaco-list-row', { hasText: 'Get started with Lean4 Agentic' })
        .click();
      const button = wb.page.locator('.gettingStartedContainer').getByText('Open Endpoint Setting', { exact: true });
      await button.first().click({ timeout: 30_000 });
      await endpointSettingShown(wb);
      await wb.screenshot('settings-walkthrough');

      // The chat's own button, from the connection line of a server that is not there.
      await wb.runCommand('View: Close All Editors');
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.failed').waitFor({ timeout: 60_000 });
      await chat.locator('#connection button', { hasText: 'Open Endpoint Setting' }).click();
      await endpointSettingShown(wb);
      await wb.screenshot('settings-chat');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
    }
  });
});
