// An approval the user cannot miss, in the real VS Code: with the chat hidden, a notification asks and the
// activity bar and the status bar say that the agent waits; with the chat in view, only the badge and the status bar.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ScriptedTurn } from '../testkit/scripted-turns';
import { DEMO_MODEL } from '../devtools/demo-model';
import { activityBadge, activityItem, approvalToast, waitingStatus } from './support/approvals';
import type { FrameLocator } from 'playwright-core';
import { Suite, eventually, missingPrerequisite, type Workbench } from './support/workbench';

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

/** A command that waits until the test has put the workbench as it wants it (the file `go` in the workspace). */
const WAIT_FOR_GO = 'for i in $(seq 1 600); do [ -f go ] && break; sleep 0.1; done; echo ready';

/** Waits for the test, then a command the demo workflow asks about (`rm -r*`), then a last word. */
function script(): ScriptedTurn[] {
  return [
    { content: 'Getting ready.', toolCalls: [{ name: 'run_command', arguments: { command: WAIT_FOR_GO } }] },
    {
      content: 'Cleaning the build folder.',
      toolCalls: [{ name: 'run_command', arguments: { command: 'rm -rf build' } }],
    },
    { content: 'The build folder is gone.' },
  ];
}

async function startModel(): Promise<{ server: ScriptedModelServer; settings: Record<string, unknown> }> {
  const server = new ScriptedModelServer({ script: script(), models: [DEMO_MODEL], whenDone: 'repeat' });
  const endpoint = await server.start();
  const settings = {
    'lean4Agentic.endpoint': endpoint,
    'lean4Agentic.model': DEMO_MODEL,
    'lean4Agentic.workflow': 'demo.larflow.json',
  };
  return { server, settings };
}

/** The tool results the model was told, as the server received them. */
function toolResults(server: ScriptedModelServer): string[] {
  return server.requests
    .flatMap((r) => (r.body as { messages?: { role: string; content?: unknown }[] } | null)?.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content));
}

/** Nothing says it waits any more: no badge, no "waiting for you", the status bar back to the run. */
async function assertNothingWaits(wb: Workbench): Promise<void> {
  await eventually('the badge to go', async () => ((await activityBadge(wb.page)) === undefined ? true : undefined));
  await waitingStatus(wb.page).waitFor({ state: 'detached', timeout: 30_000 });
  await wb.page
    .locator('.statusbar-item', { hasText: /lar builtin/ })
    .first()
    .waitFor({ timeout: 30_000 });
}

/** Starts the run from the chat, then hides the chat behind the Explorer, then lets the run ask (the file `go`). */
async function startHidden(wb: Workbench, ws: string): Promise<FrameLocator> {
  const chat = await wb.openChat();
  await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
  await wb.send(chat, 'Clean the build folder.');
  await chat.locator('.card', { hasText: 'seq 1 600' }).first().waitFor({ timeout: 60_000 });
  // The user goes on with something else: the side bar shows the Explorer, the chat is out of sight.
  await wb.press('Control+Shift+E');
  await wb.page.locator('.explorer-folders-view').waitFor({ timeout: 30_000 });
  assert.equal(await chat.locator('#task').isVisible(), false, 'the chat is hidden');
  writeFileSync(join(ws, 'go'), '');
  return chat;
}

/** The status bar's tooltip: a few short lines, no PATH listing. */
async function assertShortTooltip(wb: Workbench): Promise<void> {
  await wb.page
    .locator('.statusbar-item', { hasText: /lar builtin/ })
    .first()
    .hover();
  const hover = wb.page.locator('.workbench-hover, .monaco-hover', { hasText: 'Latest run' }).first();
  await hover.waitFor({ timeout: 15_000 });
  const text = await hover.innerText();
  assert.match(text, /Backend: builtin — /);
  assert.match(text, /Latest run .*\.lar\.jsonl: answered, 2 steps/);
  assert.match(text, /Agent commands: sandboxed/);
  assert.doesNotMatch(text, /PATH|\/usr\/bin|Searched/);
  assert.ok(text.split('\n').filter((l) => l.trim()).length <= 6, text);
}

describe('Approvals outside the chat (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('chat hidden: a notification asks, the badge and the status bar say it waits; Approve there lets the run end', async () => {
    const { server, settings } = await startModel();
    const ws = suite.workspace('approval-hidden', settings);
    const wb = await suite.open(ws);
    try {
      const chat = await startHidden(wb, ws);
      const toast = approvalToast(wb.page);
      await toast.waitFor({ timeout: 60_000 });
      assert.match(await toast.innerText(), /run_command "rm -rf build"/);
      for (const name of ['Approve', 'Reject', 'Show in Chat'])
        assert.ok(await toast.getByRole('button', { name }).isVisible(), `the notification has ${name}`);
      await waitingStatus(wb.page).waitFor({ timeout: 10_000 });
      assert.equal(await eventually('the badge on our activity-bar item', () => activityBadge(wb.page), 10_000), '1');
      assert.equal(await chat.locator('#task').isVisible(), false, 'the approval did not take the side bar');
      await wb.screenshot('approvals-1-hidden-asked');
      const item = await activityItem(wb.page).innerHTML();
      assert.match(item, /badge/, item);

      await toast.getByRole('button', { name: 'Approve' }).click();
      await toast.waitFor({ state: 'detached', timeout: 10_000 });
      await assertNothingWaits(wb);
      // The command ran (the model was told its result, not a rejection) and the run went on to its answer.
      await wb.openChat();
      await chat.locator('.answered').waitFor({ timeout: 60_000 });
      const told = toolResults(server);
      assert.ok(!told.some((t) => /rejected this call/.test(t)), told.join('\n'));
      assert.equal(await chat.locator('.approval .why.ok').innerText(), 'Approved.');
      await wb.screenshot('approvals-2-hidden-approved');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('chat in view: no notification, but the badge and the status bar say it waits until the chat answers', async () => {
    const { server, settings } = await startModel();
    const ws = suite.workspace('approval-visible', settings);
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      writeFileSync(join(ws, 'go'), '');
      await wb.send(chat, 'Clean the build folder.');
      const approval = chat.locator('.approval');
      await approval.waitFor({ timeout: 60_000 });
      await waitingStatus(wb.page).waitFor({ timeout: 10_000 });
      assert.equal(await eventually('the badge on our activity-bar item', () => activityBadge(wb.page), 10_000), '1');
      // A notification would have come with the badge: give it time to show, then check it did not.
      await new Promise((r) => setTimeout(r, 2000));
      assert.equal(await approvalToast(wb.page).count(), 0, 'no notification while the chat is in view');
      await wb.screenshot('approvals-3-visible-asked');

      await approval.getByRole('button', { name: 'Approve' }).click();
      await chat.locator('.approval .why.ok').waitFor({ timeout: 10_000 });
      await assertNothingWaits(wb);
      await chat.locator('.answered').waitFor({ timeout: 60_000 });
      await wb.screenshot('approvals-4-visible-approved');
      await assertShortTooltip(wb);
      await wb.screenshot('approvals-5-status-tooltip');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test("the status bar shows the chat at the approval; answered there, the notification's late Approve only says so", async () => {
    const { server, settings } = await startModel();
    const ws = suite.workspace('approval-stale', settings);
    const wb = await suite.open(ws);
    try {
      const chat = await startHidden(wb, ws);
      const toast = approvalToast(wb.page);
      await toast.waitFor({ timeout: 60_000 });
      await waitingStatus(wb.page).click();
      const approval = chat.locator('.approval');
      await approval.waitFor({ timeout: 30_000 });
      assert.ok(await approval.isVisible(), 'the click shows the chat with the approval in view');
      await wb.screenshot('approvals-6-status-click');
      await approval.getByRole('button', { name: 'Reject' }).click();
      await chat.locator('.approval .why.no').waitFor({ timeout: 10_000 });
      await assertNothingWaits(wb);

      // The notification was still up: its Approve comes too late, changes nothing and says why.
      await toast.getByRole('button', { name: 'Approve' }).click();
      await wb.page
        .locator('.notifications-toasts .notification-toast', { hasText: 'that approval no longer waits' })
        .waitFor({ timeout: 10_000 });
      await wb.screenshot('approvals-7-late-approve');
      assert.equal(await chat.locator('.approval .why').innerText(), 'Rejected.');
      await chat.locator('.answered').waitFor({ timeout: 60_000 });
      const told = toolResults(server);
      assert.ok(
        told.some((t) => /rejected this call/.test(t)),
        told.join('\n'),
      );
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });
});
