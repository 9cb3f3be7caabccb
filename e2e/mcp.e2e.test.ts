// MCP servers from the workspace's own configuration, in the real VS Code (code-server + Chromium): the user
// allows them once in a modal, types a secret input once, the chat lists each server with the tools the stage
// permits, an MCP call runs (card ok), one the stage does not permit is blocked (card and trajectory gutter −1),
// a server that cannot start is said once, and the next run neither asks again nor says it again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_MODEL } from '../devtools/demo-model';
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ScriptedTurn } from '../testkit/scripted-turns';
import {
  BROKEN_STDERR,
  EVERYTHING,
  allowDialog,
  gutterIcons,
  mcpPanel,
  serverRow,
  writeMcpWorkspace,
} from './support/mcp';
import { layoutProblems, setSideBarWidth, sideBarWidth } from './support/width';
import { Suite, eventually, missingPrerequisite, type Workbench } from './support/workbench';

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

const call = (name: string, args: Record<string, unknown>): ScriptedTurn => ({
  toolCalls: [{ name, arguments: args }],
});

const script: ScriptedTurn[] = [
  // The first run, in stage look: echo is permitted, get-sum is not.
  call('mcp__everything__echo', { message: 'hello from the chat' }),
  call('mcp__everything__get-sum', { a: 2, b: 3 }),
  { content: 'Echoed; get-sum is not permitted in this stage.' },
  // The second run: into the work stage, where every tool of the server is.
  call('enter_stage', { stage: 'work' }),
  { content: 'In the work stage now.' },
];

/** The line (1-based) of the trajectory's call of `tool`. */
function lineOf(file: string, tool: string): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes('"type":"tool_call"') && l.includes(`"tool":"${tool}"`));
  assert.ok(i >= 0, `no call of ${tool} in ${file}`);
  return i + 1;
}

/** The trajectory's gutter: a ✗ (−1) on the blocked call, and its explanation says why. */
async function checkGutter(wb: Workbench, ws: string): Promise<void> {
  const runs = readdirSync(join(ws, '.lar', 'runs')).filter((f) => f.endsWith('.lar.jsonl'));
  assert.equal(runs.length, 1);
  const file = join(ws, '.lar', 'runs', runs[0]!);
  const editor = wb.editor('.lar.jsonl');
  await editor.waitFor({ timeout: 30_000 });
  const icons = await eventually('a pass and a fail in the gutter', async () => {
    const seen = await gutterIcons(editor);
    return seen.some((i) => /step-fail-/.test(i)) && seen.some((i) => /step-pass-/.test(i)) ? seen : undefined;
  });
  assert.equal(icons.filter((i) => /step-fail-/.test(i)).length, 1, icons.join('\n'));
  const blocked = lineOf(file, 'mcp__everything__get-sum');
  await editor
    .locator('.margin-view-overlays .line-numbers', { hasText: new RegExp(`^${blocked}$`) })
    .click({ button: 'right' });
  await wb.clickMenuItem("Explain This Line's Reward");
  const hover = wb.page.locator('.monaco-hover:visible');
  let text = '';
  await eventually(
    'the blocked line explained',
    async () => {
      text = await hover.innerText();
      return /mcp__everything__get-sum[\s\S]*tool reward −1[\s\S]*blocked by the verifier gate/.test(text)
        ? true
        : undefined;
    },
    30_000,
    () => JSON.stringify(text.slice(0, 600)),
  );
  await wb.screenshot('mcp-4-gutter');
  await wb.page.keyboard.press('Escape');
}

describe('MCP servers from the workspace (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('allowed once, listed per stage, a permitted call runs and an unpermitted one is blocked with −1', async () => {
    const server = new ScriptedModelServer({ script, models: [DEMO_MODEL] });
    const endpoint = await server.start();
    const ws = suite.workspace('mcp', {
      'lean4Agentic.endpoint': endpoint,
      'lean4Agentic.model': DEMO_MODEL,
      'lean4Agentic.workflow': 'mcp.larflow.json',
    });
    writeMcpWorkspace(ws);
    const wb = await suite.open(ws);
    let width = 0;
    try {
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.send(chat, 'Echo a greeting, then add two numbers.');

      // The workspace's servers are asked for once, each named with what it runs.
      const dialog = allowDialog(wb.page);
      await dialog.waitFor({ timeout: 60_000 });
      const asked = await dialog.innerText();
      assert.match(asked, /Start these 2 MCP servers that the workspace configures\?/);
      assert.ok(asked.includes('everything (.vscode/mcp.json)'), asked);
      assert.ok(asked.includes(`stdio: ${process.execPath} ${EVERYTHING} stdio`), asked);
      // As written: its env, its cwd and the input it asks for, before they are filled in.
      for (const line of [
        'cwd: ${workspaceFolder}',
        'env: GREETING=${input:greeting}',
        'uses your inputs: ${input:greeting}',
      ])
        assert.ok(asked.includes(line), `${line} not in ${asked}`);
      assert.match(asked, /broken \(\.mcp\.json\)/);
      // The network the workflow grants it is said; a server no stage permits is not asked about.
      assert.match(asked, /runs in a sandbox with the host's network: workflow mcp-e2e grants it/);
      assert.doesNotMatch(asked, /unused/);
      await wb.screenshot('mcp-1-allow');
      await dialog.getByRole('button', { name: 'Allow', exact: true }).click();

      // Its secret input, once, in a password box.
      const input = wb.page.locator('.quick-input-widget input');
      await input.waitFor({ timeout: 30_000 });
      assert.equal(await input.getAttribute('type'), 'password');
      assert.match(await wb.page.locator('.quick-input-widget').innerText(), /a greeting for the server/);
      await input.fill('greeting-s3cret');
      await input.press('Enter');

      await chat.locator('.answered').first().waitFor({ timeout: 120_000 });
      // The list: collapsed to one line, opened to show each server and the tools of the stage.
      const panel = mcpPanel(chat);
      const summary = panel.locator('summary');
      assert.equal(await summary.innerText(), 'MCP · 2 servers (1 failed) · 1 tool in stage look');
      await summary.click();
      const everything = serverRow(panel, 'everything');
      assert.match(await everything.innerText(), /^everything\s+stdio\s+ready\s+1 of \d+ tools in look\s+echo$/);
      const broken = serverRow(panel, 'broken');
      assert.match(await broken.innerText(), /broken\s+stdio\s+failed/);
      assert.ok((await broken.innerText()).includes(BROKEN_STDERR));

      // The permitted call ran; the other was blocked and says why.
      const echo = chat.locator('.card', { hasText: 'everything › echo' });
      assert.match(await echo.innerText(), /^\+1\s+MCP\s+everything › echo\s+ok/);
      assert.match(await echo.innerText(), /hello from the chat/);
      const sum = chat.locator('.card.blocked', { hasText: 'everything › get-sum' });
      assert.match(await sum.innerText(), /^−1\s+MCP\s+everything › get-sum\s+blocked/);
      assert.match(await sum.innerText(), /tool\.permitted: mcp__everything__get-sum is not permitted in stage "look"/);

      // The server no stage permits: one quiet line, not started.
      const unused = chat.locator('.mcp-notice', { hasText: 'MCP server "unused"' });
      assert.equal(
        await unused.innerText(),
        'MCP server "unused" (.mcp.json) is not started: no stage of workflow "mcp-e2e" permits mcp__unused__… tools.',
      );
      assert.equal(await chat.locator('.mcp-notice.warn', { hasText: 'MCP server "unused"' }).count(), 0);

      // The server that could not start: said once in the chat, with its stderr, and in a notification.
      const failed = chat.locator('.mcp-notice.warn', { hasText: 'MCP server "broken" could not start' });
      assert.equal(await failed.count(), 1);
      assert.ok((await failed.innerText()).includes(BROKEN_STDERR));
      await wb.page
        .locator('.notifications-toasts .notification-toast', { hasText: 'MCP server "broken" could not start' })
        .first()
        .waitFor({ timeout: 30_000 });
      await wb.screenshot('mcp-2-listed');

      // At a narrow side bar, the open list and the MCP cards fit without scrolling sideways.
      width = await sideBarWidth(wb.page);
      await setSideBarWidth(wb.page, 250);
      assert.deepEqual(await layoutProblems(chat), [], 'the chat at 250 px');
      await wb.screenshot('mcp-3-narrow');
      await setSideBarWidth(wb.page, width);

      await chat.locator('#open-trajectory').click();
      await checkGutter(wb, ws);

      // The next run: no prompt (allowed and the input kept), the failure not said again, the list per stage.
      await wb.send(chat, 'Go on in the work stage.');
      await eventually(
        'the second run to answer, asking nothing',
        async () => {
          if ((await allowDialog(wb.page).count()) > 0) throw new Error('asked again');
          if (await wb.page.locator('.quick-input-widget input').isVisible())
            throw new Error('asked for the input again');
          return (await chat.locator('.answered').count()) === 2 ? true : undefined;
        },
        120_000,
      );
      const second = mcpPanel(chat);
      assert.match(
        await second.locator('summary').innerText(),
        /^MCP · 2 servers \(1 failed\) · \d+ tools in stage work$/,
      );
      await second.locator('summary').click();
      assert.match(await serverRow(second, 'everything').innerText(), /in work[\s\S]*echo[\s\S]*get-sum/);
      assert.equal(await failed.count(), 1, 'the failure is said once, not per run');
      assert.equal(await unused.count(), 1, 'the server no stage permits is said once, not per run');
      await wb.screenshot('mcp-5-second-run');

      // Forget MCP Inputs: the kept value is gone, and says so.
      await wb.runCommand('Lean4 Agentic: Forget MCP Inputs');
      await wb.page
        .locator('.notifications-toasts .notification-toast', { hasText: 'forgot 1 MCP input value' })
        .waitFor({ timeout: 30_000 });
      // The secret never reached a trajectory.
      for (const f of readdirSync(join(ws, '.lar', 'runs')))
        assert.doesNotMatch(readFileSync(join(ws, '.lar', 'runs', f), 'utf8'), /greeting-s3cret/);
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      if (width) await setSideBarWidth(wb.page, width).catch(() => {});
      await wb.close();
      await server.stop();
    }
  });
});
