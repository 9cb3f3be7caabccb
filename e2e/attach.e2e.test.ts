// `@` attachments in the real VS Code: a selection and a file picked in the chat reach the model inside the
// user's message, are recorded as the message's parts, and show as chips in the user's bubble.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { firstUserMessage, withAnsweringModel } from './support/attach';
import { Suite, eventually, missingPrerequisite } from './support/workbench';

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

describe('@ attachments in VS Code (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('a selection and a file picked with @ reach the model, the trajectory and the bubble', async () => {
    await withAnsweringModel(suite, 'attach', 'I read both.', async (wb, ws, server) => {
      // Lines 2-3 of src/sum.js selected in the editor.
      await wb.openFile('sum.js', 'src/sum.js');
      await wb.editor('src/sum.js').locator('.view-lines').click();
      await wb.page.keyboard.press('Control+Home');
      await wb.page.keyboard.press('ArrowDown');
      await wb.page.keyboard.press('Shift+ArrowDown');
      await wb.page.keyboard.press('Shift+End');
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      const input = chat.locator('#task');
      await input.click();
      await input.pressSequentially('Why does this fail? @');
      const picker = chat.locator('#attach-picker');
      const selection = picker.locator('[role="option"]', { hasText: 'Selection' });
      await selection.waitFor({ timeout: 20_000 });
      assert.match(await selection.innerText(), /src\/sum\.js:2-3/);
      assert.equal(await input.getAttribute('aria-expanded'), 'true');
      await wb.screenshot('attach-1-picker');
      // The keyboard: File… is first, Selection second.
      await input.press('ArrowDown');
      await input.press('Enter');
      assert.equal(await picker.isHidden(), true);
      // The mouse: File…, then the file that matches what is typed.
      await input.pressSequentially('and @');
      await picker.locator('[role="option"]', { hasText: 'File…' }).click();
      await input.pressSequentially('sum.test');
      const file = picker.locator('[role="option"]', { hasText: 'test/sum.test.js' });
      await file.waitFor({ timeout: 20_000 }).catch(async (e: unknown) => {
        await wb.screenshot('attach-failed');
        throw e;
      });
      await wb.screenshot('attach-2-files');
      await file.click();
      const chips = chat.locator('footer .chip .chip-label');
      assert.deepEqual(await chips.allInnerTexts(), ['@selection', '@sum.test.js']);
      assert.equal(await input.inputValue(), 'Why does this fail? @selection and @sum.test.js ');
      // The side bar at its default width: nothing in the chat scrolls sideways.
      const overflow = await chat
        .locator('body')
        .evaluate((b) => b.ownerDocument.documentElement.scrollWidth - b.ownerDocument.documentElement.clientWidth);
      assert.ok(overflow <= 0, `the chat overflows by ${overflow} px`);
      await wb.screenshot('attach-3-chips');
      await input.press('Enter');

      const bubble = chat.locator('.msg.user').last();
      await chat.locator('.msg', { hasText: 'I read both.' }).waitFor({ timeout: 60_000 });
      assert.deepEqual(await bubble.locator('.chips.sent .chip-label').allInnerTexts(), ['@selection', '@sum.test.js']);
      assert.equal(await chat.locator('footer .chip').count(), 0);
      await wb.screenshot('attach-4-sent');

      // The model got both attachments' content in the user's message.
      const user = firstUserMessage(server);
      assert.match(user, /^Why does this fail\? @selection and @sum\.test\.js/);
      assert.match(
        user,
        /Attached by the user, selection src\/sum\.js:2-3:\n```\nfunction sum\(a, b\) \{\n {2}return a - b;\n```/,
      );
      const testFile = readFileSync(join(ws, 'test', 'sum.test.js'), 'utf8');
      assert.ok(user.includes(`Attached by the user, file test/sum.test.js:\n\`\`\`\n${testFile}`), user);

      // The trajectory records them as the user's message parts.
      const runs = join(ws, '.lar', 'runs');
      const fileName = await eventually('the trajectory', () =>
        readdirSync(runs).find((f) => f.endsWith('.lar.jsonl')),
      );
      const lines = readFileSync(join(runs, fileName), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; role?: string; parts?: { type: string; kind?: string }[] });
      const message = lines.find((l) => l.type === 'message' && l.role === 'user')!;
      assert.deepEqual(
        message.parts?.map((p) => p.kind ?? p.type),
        ['text', 'selection', 'file'],
      );
      assert.deepEqual(lines[0]!.parts, message.parts);
      assert.deepEqual(wb.pageErrors, []);
    });
  });

  test("the user's terminal's last command is offered and attached, named for its terminal", async () => {
    await withAnsweringModel(suite, 'attach-terminal', 'Seen the output.', async (wb, _ws, server) => {
      // The extension reads a terminal's commands from when it is active (the chat opened).
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.runCommand('Terminal: Create New Terminal');
      const rows = wb.page.locator('.terminal-wrapper.active .xterm-rows');
      await rows.waitFor({ timeout: 30_000 });
      // Typed once the prompt is there: shell integration reports a command's output only once it is ready.
      await eventually('the prompt', async () =>
        /[#$] *$/.test((await rows.innerText()).trimEnd()) ? true : undefined,
      );
      await wb.page.waitForTimeout(1000);
      // The output comes a moment after the command starts: VS Code's shell integration may report a command's
      // start to an extension after the first output of a fast one, which is then lost (the chat says so).
      await wb.page.keyboard.type('sleep 1; echo attach-marker-$((6*7))');
      await wb.page.keyboard.press('Enter');
      await eventually('the command output', async () =>
        (await rows.innerText()).includes('attach-marker-42') ? true : undefined,
      );
      const input = chat.locator('#task');
      await input.click();
      await input.pressSequentially('What did it print? @term');
      const option = chat.locator('#attach-picker [role="option"]', { hasText: 'sleep 1; echo attach-marker' });
      await option.waitFor({ timeout: 20_000 }).catch(async (e: unknown) => {
        await wb.screenshot('attach-terminal-failed');
        throw e;
      });
      assert.match(await option.innerText(), /Terminal ".+": \$ sleep 1; echo attach-marker-\$\(\(6\*7\)\)/);
      await wb.screenshot('attach-5-terminal');
      await option.click();
      await input.press('Enter');
      await chat.locator('.msg', { hasText: 'Seen the output.' }).waitFor({ timeout: 60_000 });
      const user = firstUserMessage(server);
      assert.match(
        user,
        /Attached by the user, terminal output terminal ".+": \$ sleep 1; echo attach-marker-\$\(\(6\*7\)\)/,
      );
      assert.match(user, /\nattach-marker-42\n/);
    });
  });
});
