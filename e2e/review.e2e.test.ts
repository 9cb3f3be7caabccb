// The review of what a run changed, in the real VS Code (code-server + Chromium) at the side bar's default width:
// the Changes card at a run's end, its Diff, Undo of one file (the others untouched), Keep, the confirmation
// when the user edited a file after the run, Undo all on a second run, and the card's state after a reload.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_MODEL } from '../devtools/demo-model';
import { ScriptedModelServer } from '../testkit/scripted-server';
import { changesCard, fileRow, listedPaths, sidewaysOverflow } from './support/review';
import { Suite, eventually, missingPrerequisite } from './support/workbench';

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

describe('Review what a run changed (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('the Changes card: Diff, Undo one file, Keep, a confirmation for a file edited since, Undo all, a reload', async () => {
    const server = new ScriptedModelServer({
      models: [DEMO_MODEL],
      script: [
        call('read_file', { path: 'src/sum.js' }),
        call('enter_stage', { stage: 'edit' }),
        call('edit_file', { path: 'src/sum.js', search: 'a - b', replace: 'a + b' }),
        call('write_file', { path: 'src/notes.md', content: '# Notes\n\nsum adds.\n' }),
        call('enter_stage', { stage: 'verify' }),
        // A command makes a file too, one that runs later.
        call('run_command', { command: "printf 'echo built\\n' > build.sh && npm test" }),
        call('submit', { summary: 'sum adds' }),
        // The second run (a follow-up): two new files, then an answer.
        call('read_file', { path: 'src/sum.js' }),
        call('enter_stage', { stage: 'edit' }),
        call('write_file', { path: 'src/a.js', content: 'a\n' }),
        call('write_file', { path: 'src/b.js', content: 'b\n' }),
        { content: 'Wrote two files.' },
      ],
    });
    const endpoint = await server.start();
    const ws = suite.workspace('review', {
      'lean4Agentic.endpoint': endpoint,
      'lean4Agentic.model': DEMO_MODEL,
      'lean4Agentic.workflow': 'demo.larflow.json',
    });
    const file = (p: string) => (existsSync(join(ws, p)) ? readFileSync(join(ws, p), 'utf8') : undefined);
    const wb = await suite.open(ws);
    try {
      let chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.send(chat, 'Fix sum and take notes.');
      await chat.locator('.end').waitFor({ timeout: 120_000 });
      let card = changesCard(chat);
      await card.waitFor({ timeout: 60_000 });

      // One list: the file the command made (it runs later, so first and marked), the written and the edited one.
      assert.deepEqual(await listedPaths(card), ['build.sh', 'src/notes.md', 'src/sum.js']);
      assert.match(await card.locator('.title').innerText(), /^3 files changed: 3 to review$/);
      assert.match(await card.locator('.review-warning').innerText(), /^1 changed file that runs later/);
      assert.equal(await fileRow(card, 'build.sh').locator('.runs-later').count(), 1);
      assert.equal(await fileRow(card, 'src/sum.js').locator('.runs-later').count(), 0);
      assert.match(await fileRow(card, 'src/sum.js').innerText(), /\+1 −1/);
      assert.match(await fileRow(card, 'src/notes.md').innerText(), /new, \+3/);
      assert.equal(await chat.locator('.later-changes').count(), 0, 'no second list of the files that run later');
      assert.equal(await sidewaysOverflow(card), 0, 'the card fits the side bar');
      await card.scrollIntoViewIfNeeded();
      await wb.screenshot('review-1-card');

      // Diff: the file before the run beside the file now.
      await fileRow(card, 'src/sum.js').getByRole('button', { name: 'Diff' }).click();
      const diff = wb.page.locator('.monaco-diff-editor').first();
      await diff.waitFor({ timeout: 30_000 });
      let diffText = '';
      await eventually(
        'both sides of the diff',
        async () => {
          diffText = (await diff.innerText()).replace(/\u00a0/g, ' ');
          return /a - b/.test(diffText) && /a \+ b/.test(diffText) ? true : undefined;
        },
        30_000,
        () => JSON.stringify(diffText.slice(0, 600)),
      );
      assert.match(await wb.page.locator('.tab.active').first().innerText(), /sum\.js \(before the run ↔ now\)/);
      await wb.screenshot('review-2-diff');

      // Undo one file: it is back as before the run; the other files stay as the run left them.
      await fileRow(card, 'src/sum.js').getByRole('button', { name: 'Undo' }).click();
      await eventually('src/sum.js back', () => (/return a - b;/.test(file('src/sum.js') ?? '') ? true : undefined));
      await fileRow(card, 'src/sum.js').locator('.review-state', { hasText: 'Undone' }).waitFor({ timeout: 30_000 });
      assert.equal(file('src/notes.md'), '# Notes\n\nsum adds.\n');
      assert.equal(file('build.sh'), 'echo built\n');
      // Keep the notes: marked reviewed, left as they are.
      await fileRow(card, 'src/notes.md').getByRole('button', { name: 'Keep' }).click();
      await fileRow(card, 'src/notes.md').locator('.review-state', { hasText: 'Kept' }).waitFor({ timeout: 30_000 });
      assert.equal(file('src/notes.md'), '# Notes\n\nsum adds.\n');

      // A file the user changed after the run: Undo asks first, saying so.
      writeFileSync(join(ws, 'build.sh'), 'echo mine\n');
      await fileRow(card, 'build.sh').getByRole('button', { name: 'Undo' }).click();
      const dialog = wb.page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      assert.match(
        await dialog.innerText(),
        /build\.sh was changed after the run ended[\s\S]*your edits to it are lost/,
      );
      await wb.screenshot('review-3-edited-since');
      await dialog.getByRole('button', { name: 'Undo Anyway' }).click();
      await eventually('build.sh removed', () => (file('build.sh') === undefined ? true : undefined));
      await card.locator('.title', { hasText: /^3 files changed: 1 kept, 2 undone$/ }).waitFor({ timeout: 30_000 });
      assert.equal(
        await card.getByRole('button', { name: 'Undo all' }).isDisabled(),
        true,
        'what was kept stays: nothing is left for Undo all',
      );
      assert.equal(file('src/notes.md'), '# Notes\n\nsum adds.\n');
      await wb.screenshot('review-4-undone-and-kept');

      // A second run: its own card; Undo all puts back its files only, and the user's own new file stays.
      await wb.send(chat, 'Add two files.');
      await chat.locator('.run-changes').nth(1).waitFor({ timeout: 120_000 });
      card = changesCard(chat);
      assert.deepEqual(await listedPaths(card), ['src/a.js', 'src/b.js']);
      writeFileSync(join(ws, 'mine.txt'), 'mine\n');
      await card.getByRole('button', { name: 'Undo all' }).click();
      await card.locator('.title', { hasText: /^2 files changed: 2 undone$/ }).waitFor({ timeout: 30_000 });
      assert.deepEqual(
        ['src/a.js', 'src/b.js', 'mine.txt', 'src/notes.md', 'src/sum.js'].map((p) => file(p) !== undefined),
        [false, false, true, true, true],
      );
      assert.equal(await card.getByRole('button', { name: 'Undo all' }).isDisabled(), true);
      // The second run's trajectory says the workspace changed before it: the first run's undos, recorded.
      const runs = readdirSync(join(ws, '.lar', 'runs')).sort();
      const second = readFileSync(join(ws, '.lar', 'runs', runs.at(-1)!), 'utf8');
      const restores = second.split('\n').filter((l) => l.includes('"type":"restore"'));
      assert.equal(restores.length, 2, second.slice(0, 2000));
      assert.match(restores[0]!, /"reverted":\["src\/sum\.js"\]/);
      assert.match(restores[1]!, /"deleted":\["build\.sh"\]/);
      await card.scrollIntoViewIfNeeded();
      await wb.screenshot('review-5-undo-all');

      // After a reload, both cards come back with their marks.
      await wb.reload();
      chat = await wb.openChat();
      await chat.locator('.run-changes').nth(1).waitFor({ timeout: 60_000 });
      assert.deepEqual(await chat.locator('.run-changes .title').allInnerTexts(), [
        '3 files changed: 1 kept, 2 undone',
        '2 files changed: 2 undone',
      ]);
      await wb.screenshot('review-6-after-reload');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });
});
