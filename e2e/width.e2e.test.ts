// The chat at the widths people give it: the default side bar (about 300 px), a narrow one (250 px) and a
// wide one (800 px). Nothing scrolls sideways, every button is whole, in view and not covered, with long
// commands, paths, tables and code in the log; the empty chat says what to do. Screenshots: width-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ScriptedTurn } from '../testkit/scripted-turns';
import { DEMO_MODEL, startDemoModel } from '../devtools/demo-model';
import { Suite, missingPrerequisite, settingsFor, type Workbench } from './support/workbench';
import { layoutProblems, setSideBarWidth, sideBarWidth } from './support/width';

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

const longName = `generated_${'abcdefghij'.repeat(12)}`;
const longPath = `src/deeply/nested/folder/${longName}.json`;
const longCommand = `echo ${'0123456789'.repeat(20)} && ls src/deeply/nested/folder/${longName}`;
const wideTable = [
  '| column_one_identifier | column_two_identifier | column_three_identifier | column_four_identifier |',
  '|--|--|--|--|',
  ...Array.from({ length: 4 }, (_, i) => `| value_${i}_aaaaaaaaaaaa | value_${i}_bbbbbbbbbbbb | ${longName} | ok |`),
].join('\n');
const longAnswer = [
  `The path is \`${longPath}\`, documented at https://example.com/${'segment-'.repeat(20)}end.`,
  '',
  wideTable,
  '',
  '```js',
  `const ${longName} = require('./${longName}.json'); // ${'x'.repeat(150)}`,
  '```',
].join('\n');

/** Layout problems of the chat now, with the width they were seen at. */
async function assertFits(wb: Workbench, chat: FrameLocator, what: string): Promise<void> {
  const problems = await layoutProblems(chat);
  assert.deepEqual(problems, [], `${what} at a ${await sideBarWidth(wb.page)} px side bar`);
}

/** Drags the side bar to `px` wide and checks it got there. */
async function resize(wb: Workbench, px: number): Promise<void> {
  const width = await setSideBarWidth(wb.page, px);
  assert.ok(Math.abs(width - px) <= 4, `the side bar is ${width} px, not ${px}`);
}

describe('the chat at the side bar widths people use (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  /**
   * Opens the chat on a copy of the demo repository with this model server, runs `scenario`, and puts the
   * side bar back to the width it had (the browser keeps it for the next scenario), whatever happened.
   */
  async function inChat(
    name: string,
    model: { server: ScriptedModelServer; endpoint: string },
    scenario: (wb: Workbench, chat: FrameLocator, ws: string, defaultWidth: number) => Promise<void>,
  ): Promise<void> {
    const ws = suite.workspace(name, settingsFor(model.endpoint));
    const wb = await suite.open(ws);
    let defaultWidth = 0;
    try {
      const chat = await wb.openChat();
      defaultWidth = await sideBarWidth(wb.page);
      await scenario(wb, chat, ws, defaultWidth);
    } finally {
      if (defaultWidth) await setSideBarWidth(wb.page, defaultWidth).catch(() => {});
      await wb.close();
      await model.server.stop();
    }
  }

  test('the empty chat says what to do; long commands, paths, tables and code fit at 300, 250 and 800 px', async () => {
    const script: ScriptedTurn[] = [
      {
        content: 'Reading the generated file first.',
        toolCalls: [{ name: 'read_file', arguments: { path: longPath } }],
      },
      { content: 'Printing it.', toolCalls: [{ name: 'run_command', arguments: { command: longCommand } }] },
      {
        content: 'Cleaning its build folder.',
        toolCalls: [{ name: 'run_command', arguments: { command: `rm -rf build/${longName}/objects` } }],
      },
      { content: longAnswer },
    ];
    const server = new ScriptedModelServer({ script, models: [DEMO_MODEL] });
    await inChat('width-long', { server, endpoint: await server.start() }, async (wb, chat, _ws, defaultWidth) => {
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      assert.ok(defaultWidth >= 250 && defaultWidth <= 320, `the default side bar is ${defaultWidth} px`);
      const frameWidth = await chat.locator('body').evaluate(() => document.documentElement.clientWidth);
      assert.ok(frameWidth >= 240 && frameWidth <= defaultWidth, `the chat is ${frameWidth} px wide`);

      // The empty chat: what the agent does, that each step is checked, tasks to start from.
      const welcome = chat.locator('#welcome');
      await welcome.waitFor();
      assert.match(await welcome.innerText(), /checked against the workflow/);
      await assertFits(wb, chat, 'the empty chat');
      await wb.screenshot('width-empty');
      const example = welcome.locator('button.example').first();
      const exampleText = await example.innerText();
      await example.click();
      assert.equal(await chat.locator('#task').inputValue(), exampleText, 'the example is in the input');
      assert.equal(await welcome.isVisible(), true, 'still there until something is sent');
      await chat.locator('#task').press('Enter');
      await chat.locator('.msg.user', { hasText: exampleText }).waitFor({ timeout: 30_000 });
      assert.equal(await welcome.isVisible(), false, 'gone once the chat has content');

      // An approval with a long command: its buttons in reach.
      const approval = chat.locator('.approval');
      await approval.waitFor({ timeout: 60_000 });
      await assertFits(wb, chat, 'the approval of a long command');
      await approval.getByRole('button', { name: 'Reject' }).click();
      await chat.locator('.answered').waitFor({ timeout: 60_000 });
      assert.ok((await chat.locator('.card', { hasText: longName.slice(0, 40) }).count()) >= 2);
      // The wide table scrolls in its own box, not the chat.
      const table = await chat.locator('.md table').evaluate((t) => ({ scroll: t.scrollWidth, client: t.clientWidth }));
      assert.ok(table.scroll > table.client, `the table is wider than the chat (${JSON.stringify(table)})`);
      assert.equal(await chat.locator('#open-trajectory').isVisible(), true);
      assert.equal(await chat.locator('#context').isVisible(), true);
      await assertFits(wb, chat, 'a finished run with long content');
      await wb.screenshot('width-300');

      await resize(wb, 250);
      await assertFits(wb, chat, 'a finished run with long content');
      await wb.screenshot('width-250');
      await chat.locator('#show-history').click();
      await chat.locator('#history button.thread-row').first().waitFor({ timeout: 30_000 });
      // A conversation's row and, opened under it, its trajectories.
      await chat.locator('#history button.thread-trajectories').first().click();
      await chat.locator('#history button.run-row').first().waitFor({ timeout: 30_000 });
      await assertFits(wb, chat, 'the history list');
      await wb.screenshot('width-250-history');
      await chat.locator('#show-history').click();

      await resize(wb, 800);
      await assertFits(wb, chat, 'a finished run with long content');
      // Wide enough for the header on one line.
      const header = await chat.locator('header').evaluate((h) => h.getBoundingClientRect().height);
      const button = await chat.locator('#new-chat').evaluate((b) => b.getBoundingClientRect().height);
      assert.ok(header < button * 2, `the header is one line at 800 px (${header} px high)`);
      await wb.screenshot('width-800');

      // The check can fail: something wider than the chat is caught.
      await chat.locator('#log-inner').evaluate((inner) => {
        const wide = document.createElement('div');
        wide.style.width = '3000px';
        wide.textContent = 'too wide';
        inner.appendChild(wide);
      });
      const planted = await layoutProblems(chat);
      assert.ok(
        planted.some((p) => p.startsWith('main#log') && p.includes('scrolls sideways')),
        planted.join('\n'),
      );

      // New: the welcome is back.
      await chat.locator('#new-chat').click();
      await welcome.waitFor({ timeout: 30_000 });
      assert.equal(await chat.locator('#log-inner > *').count(), 0);
      assert.deepEqual(wb.pageErrors, []);
    });
  });

  test('a normal run of the demo model fits the default and a narrow side bar', async () => {
    await inChat('width-demo', await startDemoModel(), async (wb, chat, ws) => {
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.send(chat, 'Make npm test pass.');
      await chat.locator('.end').waitFor({ timeout: 120_000 });
      assert.match(readFileSync(join(ws, 'src', 'sum.js'), 'utf8'), /return a \+ b;/);
      assert.ok((await chat.locator('.card button', { hasText: 'Restore to here' }).count()) >= 1);
      await assertFits(wb, chat, 'a demo run');
      await wb.screenshot('width-demo-300');
      await resize(wb, 250);
      await assertFits(wb, chat, 'a demo run');
      await wb.screenshot('width-demo-250');
    });
  });

  test('an interrupted run: Resume is whole and clear of the scrollbar and ↓ Latest at a narrow width', async () => {
    const script: ScriptedTurn[] = [
      { content: 'Reading first.', toolCalls: [{ name: 'read_file', arguments: { path: longPath } }] },
      // The model goes quiet: the run is in flight when the window reloads.
      { kind: 'stall', after: 'Thinking', ms: 120_000 },
    ];
    const server = new ScriptedModelServer({ script, models: [DEMO_MODEL] });
    await inChat('width-resume', { server, endpoint: await server.start() }, async (wb, chat) => {
      await wb.send(chat, `Look around ${longPath}.`);
      await chat.locator('.card', { hasText: 'read_file' }).waitFor({ timeout: 60_000 });
      await wb.reload();
      const chat2 = await wb.openChat();
      await chat2.locator('.interrupted button', { hasText: 'Resume' }).waitFor({ timeout: 60_000 });
      await resize(wb, 250);
      await assertFits(wb, chat2, 'the interrupted run');
      await wb.screenshot('width-resume-250');
    });
  });
});
