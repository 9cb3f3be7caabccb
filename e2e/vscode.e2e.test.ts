// The extension as users get it: our VSIX installed into the real VS Code
// (code-server), used through a real browser. Each scenario asserts what the
// user sees; a screenshot of each lands in out/e2e-artifacts/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptedModelServer } from '../testkit/scripted-server';
import type { ScriptedTurn } from '../testkit/scripted-turns';
import { textOf } from '../testkit/text';
import { DEMO_MODEL, startDemoModel } from '../devtools/demo-model';
import { REPO_ROOT } from '../devtools/paths';
import { Suite, eventually, missingPrerequisite, settingsFor } from './support/workbench';

/** A scripted model turn that makes one tool call. */
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

const skip = missingPrerequisite();
if (skip) process.stdout.write(`# end-to-end tests skipped: ${skip}\n`);

describe('Lean4 Agentic in VS Code (code-server + Chromium)', { skip, concurrency: 1 }, () => {
  let suite: Suite;
  before(async () => {
    suite = await Suite.start();
  });
  after(async () => {
    await suite?.stop();
  });

  test('first run: the chat opens and shows the fixture server as connected', async () => {
    const { server, endpoint } = await startDemoModel();
    const wb = await suite.open(suite.workspace('first-run', settingsFor(endpoint)));
    try {
      const chat = await wb.openChat();
      const conn = chat.locator('#connection.conn.connected');
      await conn.waitFor({ timeout: 30_000 });
      assert.match(
        await conn.innerText(),
        new RegExp(`Connected: ${DEMO_MODEL} · ${endpoint.replace(/[.]/g, '\\.')} · 32k context`),
      );
      await wb.screenshot('1-first-run');
      // The webview's security: a strict CSP with a nonce, and nothing loaded from the network.
      const csp = await chat.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
      assert.match(csp ?? '', /default-src 'none'/);
      assert.match(csp ?? '', /script-src 'nonce-[A-Za-z0-9+/=]{16,}'/);
      // The only origin besides the nonce is VS Code's own for webview resources (webview.cspSource).
      assert.doesNotMatch(
        (csp ?? '').replace(/https:\/\/\*\.vscode-cdn\.net/g, ''),
        /unsafe-inline|unsafe-eval|https?:|\*/,
      );
      const sources = await chat
        .locator('script[src], link[href], img[src]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('src') ?? e.getAttribute('href') ?? ''));
      assert.ok(
        sources.length >= 2 &&
          sources.every(
            (u) => !/^https?:\/\/(?!.*vscode-cdn|.*vscode-resource)/.test(u) || /vscode-resource|vscode-cdn/.test(u),
          ),
        sources.join('\n'),
      );
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('a task: streamed reply, terminal output, an edited file, gutter icons, Problems and the status bar', async () => {
    const { server, endpoint } = await startDemoModel();
    const ws = suite.workspace('task', settingsFor(endpoint));
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.send(chat, 'Make npm test pass.');
      await chat.locator('.end').waitFor({ timeout: 120_000 });

      // The chat: the model's words, a card per call with its reward, the blocked premature edit, the outcome.
      const assistant = await chat.locator('.msg.assistant').allInnerTexts();
      assert.ok(
        assistant.some((t) => t.includes('Scripted demo model')),
        'the demo model says it is a script',
      );
      // Its reasoning, collapsed above the answer; the context in use out of the window the server reports.
      const thinking = chat.locator('details.reasoning');
      assert.equal(await thinking.count(), 1);
      assert.equal(await thinking.getAttribute('open'), null, 'collapsed');
      assert.match(await thinking.locator('summary').innerText(), /^Thinking \(\d+ characters\)$/);
      assert.match(await chat.locator('#context').innerText(), /^\d+(\.\d)?k? \/ 32k$/);
      assert.equal(await chat.locator('.card').count(), 8);
      const blocked = chat.locator('.card.blocked');
      assert.equal(await blocked.count(), 1);
      assert.match(await blocked.innerText(), /tool\.permitted/);
      assert.match(await chat.locator('.end').innerText(), /outcome 1 · return 1\.\d{3} · 8 steps/);
      assert.match(await chat.locator('#timeline').innerText(), /explore[\s\S]*edit[\s\S]*verify/);
      // The run's commands were confined (the default), and the chat says so under the task.
      assert.match(
        await chat.locator('.sandbox-note').innerText(),
        /^Commands: sandboxed \(bubblewrap [\d.]+; network off, 2 protected paths\)$/,
      );

      // The file on disk was changed (through the editor, so it is saved).
      assert.match(readFileSync(join(ws, 'src', 'sum.js'), 'utf8'), /return a \+ b;/);

      // The terminal shows the command and its output, without our marker lines. The last `npm test` is the
      // outcome command, which runs as the check runs it (no terminal, so node's TAP output): shown all the same.
      const terminal = wb.page.locator('.terminal-wrapper.active .xterm-rows');
      let seen = '';
      const termText = await eventually(
        'the test output in the terminal',
        async () => {
          seen = await terminal.innerText();
          // Only the visible rows are in the DOM: the end of the test run's output.
          return /# pass 2/.test(seen) && /\[the run ended\]/.test(seen) ? seen : undefined;
        },
        30_000,
        () => `terminal shows: ${JSON.stringify(seen.slice(-800))}`,
      );
      assert.doesNotMatch(termText, /__LAR_|\x1b/);
      // A page or two up, the command's line, which says how it ran.
      await wb.page.locator('.terminal-wrapper.active .xterm-helper-textarea').focus();
      let above = '';
      for (
        let page = 0;
        page < 8 && !/\$ npm test \(run as the outcome check runs it, in a fresh sandbox\)/.test(above);
        page++
      ) {
        await wb.page.keyboard.press('Shift+PageUp');
        above = await terminal.innerText();
      }
      assert.match(
        above,
        /\$ npm test \(run as the outcome check runs it, in a fresh sandbox\)/,
        `the command's line: ${JSON.stringify(above.slice(0, 800))}`,
      );
      assert.doesNotMatch(above, /__LAR_|\x1b/);
      // The terminal is named for the sandbox its commands ran in (the panel's title shows it).
      await eventually('the terminal named for its sandbox', async () =>
        (await wb.page.getByText(/Lean4 Agentic \(sandboxed, network off, 2 protected paths\)/).count()) > 0
          ? true
          : undefined,
      );
      await wb.screenshot('2-task-chat-and-terminal');

      // The edited file: the changed line is marked in the gutter.
      await wb.openFile('sum.js', 'src/sum.js');
      const fileGutter = wb.editor('src/sum.js').locator('.glyph-margin-widgets .cgmr');
      await eventually('an edit mark on src/sum.js', async () => ((await fileGutter.count()) > 0 ? true : undefined));
      await wb.screenshot('2-task-edited-file');

      // The trajectory: gutter icons on its steps.
      await chat.locator('#open-trajectory').click();
      const trajectory = wb.editor('.lar.jsonl');
      await trajectory.waitFor({ timeout: 30_000 });
      const icons = trajectory.locator('.glyph-margin-widgets .cgmr');
      await eventually('gutter icons on the trajectory', async () => ((await icons.count()) >= 8 ? true : undefined));

      // Problems: the blocked call, by its check id.
      const problems = await eventually('the blocked call in Problems', async () => {
        const rows = await wb.problems();
        return rows.some((r) => r.includes('tool.permitted')) ? rows : undefined;
      });
      assert.ok(
        problems.some((r) => /edit_file is not permitted in stage "explore"/.test(r)),
        problems.join('\n'),
      );
      // Listed, but the run passed: a warning to read, not a red error left behind.
      assert.equal(await wb.errorCount(), 0);

      // The status bar: the run's return, and that its commands were sandboxed.
      const status = wb.page.locator('.statusbar-item', { hasText: /lar builtin · R 1\.\d{3}[\s\S]*sandboxed/ });
      await status.first().waitFor({ timeout: 30_000 });
      await wb.screenshot('2-task-trajectory-problems-status');

      // Diff on request: the step's change, before and after, in a diff editor.
      await chat.locator('.card', { hasText: 'edit_file' }).locator('button', { hasText: 'Diff' }).first().click();
      const diff = wb.page.locator('.monaco-diff-editor');
      await diff.first().waitFor({ timeout: 30_000 });
      let diffText = '';
      await eventually(
        'both sides of the diff',
        async () => {
          // Monaco draws spaces as no-break spaces.
          diffText = (await diff.first().innerText()).replace(/\u00a0/g, ' ');
          return /a - b/.test(diffText) && /a \+ b/.test(diffText) ? diffText : undefined;
        },
        30_000,
        () => `the diff shows: ${JSON.stringify(diffText.slice(0, 600))}`,
      );
      await wb.screenshot('2-task-diff');

      // History: the conversation is listed with its first message and how its last turn went.
      await chat.locator('#show-history').click();
      const row = chat.locator('#history button.thread-row').first();
      await row.waitFor({ timeout: 30_000 });
      assert.match(
        await row.innerText(),
        /Make npm test pass\.[\s\S]*1 turn · last turn submitted: outcome 1 · return 1(\.\d{1,3})?/,
      );
      await wb.screenshot('2-task-history');

      // Restore to here: the workspace before the edit, shown as a diff first, confirmed, then undoable.
      await chat.locator('#show-history').click();
      await chat
        .locator('.card', { hasText: 'edit_file' })
        .filter({ hasNot: chat.locator('.blocked') })
        .locator('button', { hasText: 'Restore to here' })
        .last()
        .click();
      await wb.page
        .getByText(/Restore before step \d+/)
        .first()
        .waitFor({ timeout: 30_000 });
      const dialog = wb.page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      assert.match(
        await dialog.innerText(),
        /Restore the workspace to how it was before step \d+[\s\S]*Changed back: src\/sum\.js/,
      );
      await wb.screenshot('8-restore-diff-and-confirm');
      await dialog.getByRole('button', { name: 'Restore' }).click();
      await eventually('src/sum.js as it was', () =>
        /return a - b;/.test(readFileSync(join(ws, 'src', 'sum.js'), 'utf8')) ? true : undefined,
      );
      const restored = chat.locator('.restored-checkpoint');
      await restored.waitFor({ timeout: 30_000 });
      assert.match(await restored.innerText(), /Workspace restored to before step \d+[\s\S]*1 file \(1 changed back/);
      assert.ok(readdirSync(join(ws, '.lar', 'runs')).length >= 1, 'the run records are never restored away');
      await wb.screenshot('8-restored');
      await restored.getByRole('button', { name: 'Undo' }).click();
      await wb.page.locator('.monaco-dialog-box').getByRole('button', { name: 'Restore' }).click();
      await eventually('the fix back after Undo', () =>
        /return a \+ b;/.test(readFileSync(join(ws, 'src', 'sum.js'), 'utf8')) ? true : undefined,
      );
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('approval: a command that needs approval waits for the user; rejected, the model is told and carries on', async () => {
    const script: ScriptedTurn[] = [
      { content: 'Looking around.', toolCalls: [{ name: 'read_file', arguments: { path: 'package.json' } }] },
      {
        content: 'Cleaning the build folder first.',
        toolCalls: [{ name: 'run_command', arguments: { command: 'rm -rf build' } }],
      },
      { content: 'Understood, I will leave it.', toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
      { content: 'Nothing more to do here.' },
    ];
    const server = new ScriptedModelServer({ script, models: [DEMO_MODEL], whenDone: 'repeat' });
    const endpoint = await server.start();
    const ws = suite.workspace('approval', settingsFor(endpoint));
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await wb.send(chat, 'Tidy up.');
      const approval = chat.locator('.approval');
      await approval.waitFor({ timeout: 60_000 });
      assert.match(await approval.innerText(), /Approve run_command\?[\s\S]*rm -rf build/);
      await wb.screenshot('3-approval-asked');
      await approval.getByRole('button', { name: 'Reject' }).click();
      await chat.locator('.approval .why.no').waitFor();
      // The model carries on: its next call runs.
      await chat.locator('.card', { hasText: 'list_files' }).waitFor({ timeout: 60_000 });
      assert.match(await chat.locator('.card', { hasText: 'rm -rf build' }).innerText(), /denied/);
      // What the model was told, as the server received it.
      const told = server.requests
        .flatMap((r) => (r.body as { messages?: { role: string; content?: unknown }[] } | null)?.messages ?? [])
        .filter((m) => m.role === 'tool')
        .map((m) => String(m.content));
      assert.ok(
        told.some((t) => /rejected this call/.test(t)),
        told.join('\n'),
      );
      await wb.screenshot('3-approval-rejected');
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('a small window: the chat shows the context in use and each compaction; the run completes and its trajectory says so', async () => {
    // A model served with an 8k window that reads a 60 KB log again and again before fixing the bug.
    const plan: ScriptedTurn[] = [
      ...Array.from({ length: 6 }, () => ({
        toolCalls: [{ name: 'read_file', arguments: { path: 'logs/build.log' } }],
      })),
      { toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' } }] },
      { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'src/sum.js', search: 'a - b', replace: 'a + b' } }] },
      { toolCalls: [{ name: 'enter_stage', arguments: { stage: 'verify' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test' } }] },
      { toolCalls: [{ name: 'submit', arguments: {} }] },
    ];
    let step = 0;
    const server = new ScriptedModelServer({
      models: [DEMO_MODEL],
      contextLength: 8192,
      enforceWindow: true,
      script: [],
      respond: (body) =>
        textOf(body.messages?.[0]?.content).startsWith('You write the working notes')
          ? {
              content:
                '## Task\n- make npm test pass\n## Plan\n- fix src/sum.js\n## What was tried\n- read the build log\n## Files changed\n- none\n## Current stage\n- explore\n## What failed\n- nothing',
            }
          : plan[Math.min(step++, plan.length - 1)]!,
    });
    const endpoint = await server.start();
    const ws = suite.workspace('small-window', settingsFor(endpoint));
    mkdirSync(join(ws, 'logs'));
    writeFileSync(
      join(ws, 'logs', 'build.log'),
      Array.from(
        { length: 900 },
        (_, i) => `[build ${i}] compiling module_${i % 97}.ts ok (${(i * 7) % 1000} ms)`,
      ).join('\n'),
    );
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected', { hasText: '8k context' }).waitFor({ timeout: 30_000 });
      await chat.locator('#task').fill('Make npm test pass; the build log may help.');
      await chat.locator('#task').press('Enter');
      await chat.locator('.end').waitFor({ timeout: 120_000 });
      assert.match(await chat.locator('.end').innerText(), /Run ended: submitted[\s\S]*outcome 1/);
      assert.ok((await chat.locator('.compaction').count()) >= 1, 'the chat says when the conversation was compacted');
      assert.match(
        await chat.locator('.compaction').first().innerText(),
        /Context compacted to fit the model's 8,192-token window/,
      );
      assert.match(await chat.locator('#context').innerText(), /^\d+(\.\d)?k \/ 8k$/);
      await wb.screenshot('6-small-window');
      const runs = join(ws, '.lar', 'runs');
      const lines = readFileSync(join(runs, readdirSync(runs)[0]!), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string });
      assert.ok(
        lines.some((l) => l.type === 'compaction'),
        'the compactions are in the trajectory',
      );
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('a chat: a question answered without tools, real markdown with Copy and links, a follow-up with the earlier context, a live card, and scrolling that stays put', async () => {
    const rows = Array.from({ length: 24 }, (_, i) => `| \`sum(${i}, 1)\` | ${i - 1} | ${i + 1} |`).join('\n');
    const answer = [
      '## What `sum` does',
      '',
      'It **subtracts** instead of adding:',
      '',
      '- `sum(2, 3)` returns `-1`',
      '- the test expects `5`',
      '',
      '| call | returns | expected |',
      '|:--|--:|--:|',
      rows,
      '',
      '```js',
      'function sum(a, b) {',
      '  return a - b; // the bug',
      '}',
      '```',
      '',
      'See [the test](test/sum.test.js) for what is expected.',
    ].join('\n');
    const slow = 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "tick $i"; sleep 1; done';
    const server = new ScriptedModelServer({
      models: [DEMO_MODEL],
      script: [
        { content: 'Let me read it.', toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' } }] },
        { content: answer },
        { toolCalls: [{ name: 'run_command', arguments: { command: slow } }] },
        { content: 'The ticks ran. As I said above, `sum` subtracts.' },
      ],
    });
    const endpoint = await server.start();
    const ws = suite.workspace('chat', settingsFor(endpoint));
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.send(chat, 'What does src/sum.js do?');
      // A question answered: the turn is the user's, with no error and no nudging.
      await chat.locator('.answered').waitFor({ timeout: 60_000 });
      assert.equal(await chat.locator('#log .error').count(), 0);
      assert.equal(await chat.locator('#log .end').count(), 0, 'not shown as a failed task');
      const md = chat.locator('.msg.assistant').last();
      assert.equal(await md.locator('h2').innerText(), 'What sum does');
      assert.equal(await md.locator('strong').innerText(), 'subtracts');
      assert.equal(await md.locator('li').count(), 2);
      assert.equal(await md.locator('th').count(), 3);
      assert.ok((await md.locator('.code-block .hljs-keyword').count()) >= 2, 'the code is highlighted');
      assert.equal(await md.locator('img').count(), 0);
      await wb.screenshot('7-chat-markdown');
      // Copy puts exactly the code on the clipboard.
      await md.locator('.code-block button', { hasText: 'Copy' }).click();
      await md.locator('.code-block button', { hasText: 'Copied' }).waitFor({ timeout: 5_000 });
      const copied = await eventually('the code on the clipboard', async () => {
        const t = await wb.page.evaluate('navigator.clipboard.readText()').catch(() => '');
        return typeof t === 'string' && t.includes('return a - b') ? t : undefined;
      });
      assert.equal(copied, 'function sum(a, b) {\n  return a - b; // the bug\n}');
      // A link to a workspace file opens it in the editor.
      await md.locator('a', { hasText: 'the test' }).click();
      await wb.editor('test/sum.test.js').waitFor({ timeout: 30_000 });

      // The follow-up: the model gets the earlier exchange; a slow command shows as a live card while it runs.
      await wb.send(chat, 'Run something slow so I can watch.');
      const live = chat.locator('.card.live');
      await live.locator('.live-output', { hasText: 'tick 2' }).waitFor({ timeout: 30_000 });
      assert.match(await live.innerText(), /run_command[\s\S]*running[\s\S]*\d+ s/);
      assert.match(await chat.locator('#activity-text').innerText(), /^Running for i in 1 2 3/);
      await wb.screenshot('7-chat-live-card');
      // Scrolled up to read, the view stays put while the output grows.
      // (As dragging the scrollbar does: the log scrolls, and its scroll listener sees the reader left the bottom.)
      const height = await chat.locator('#log').evaluate((el) => el.scrollHeight - el.clientHeight);
      assert.ok(height > 200, `the log is long enough to scroll (${height} px)`);
      await chat.locator('#log').evaluate((el) => {
        el.scrollTop = 0;
      });
      const top = await chat.locator('#log').evaluate((el) => el.scrollTop);
      await live.locator('.live-output', { hasText: 'tick 5' }).waitFor({ timeout: 30_000 });
      // Its clock runs: five ticks a second apart are at least 4 s.
      await eventually(
        'the live card clock',
        async () => (/^([4-9]|\d\d+) s$/.test(await live.locator('.clock').innerText()) ? true : undefined),
        10_000,
      );
      const after = await chat.locator('#log').evaluate((el) => el.scrollTop);
      assert.ok(Math.abs(after - top) < 5, `the log stayed at ${top}, not pulled to ${after}`);
      await chat.locator('#jump').waitFor({ timeout: 5_000 });
      await chat.locator('#jump').click();
      // The step card takes the live card's place and says how long the command took.
      await chat.locator('.answered').nth(1).waitFor({ timeout: 60_000 });
      assert.equal(await live.count(), 0);
      assert.match(await chat.locator('.card', { hasText: 'run_command' }).innerText(), /\d+\.\d s/);
      assert.match(await chat.locator('#counters').innerText(), /^1 step · [\d.]+k? tokens · \d+ s$/);
      const asked = server.requests
        .filter((q) => q.path === '/v1/chat/completions')
        .map((q) => q.body as { messages?: { role: string; content?: unknown }[] });
      const followUp = asked[2]!.messages!.map((m) => textOf(m.content));
      assert.ok(
        followUp.some((c) => c === 'What does src/sum.js do?'),
        'the first question is in the follow-up request',
      );
      assert.ok(
        followUp.some((c) => c.includes('It **subtracts** instead of adding')),
        'so is the answer',
      );
      await wb.screenshot('7-chat-follow-up');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('the window reloads mid-run: the trajectory is complete up to the last step, marked interrupted, and History reopens it', async () => {
    const script: ScriptedTurn[] = [
      { content: 'Reading first.', toolCalls: [{ name: 'read_file', arguments: { path: 'src/sum.js' } }] },
      // A long command: it is in flight when the window reloads.
      { content: 'Waiting a while.', toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 120' } }] },
      { content: 'Resumed: I had read src/sum.js before the reload.' },
    ];
    const server = new ScriptedModelServer({ script, models: [DEMO_MODEL] });
    const endpoint = await server.start();
    const ws = suite.workspace('reload', settingsFor(endpoint));
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await wb.send(chat, 'Look around.');
      await chat.locator('.card', { hasText: 'read_file' }).waitFor({ timeout: 60_000 });
      await chat.locator('.card.live', { hasText: 'sleep 120' }).waitFor({ timeout: 60_000 });
      await wb.reload();
      const runs = join(ws, '.lar', 'runs');
      const file = await eventually(
        'the run file ended',
        () => {
          const f = readdirSync(runs).find((n) => n.endsWith('.lar.jsonl'));
          if (!f) return undefined;
          const last = readFileSync(join(runs, f), 'utf8').trimEnd().split('\n').at(-1)!;
          return /"type":"end"/.test(last) ? f : undefined;
        },
        60_000,
      );
      const lines = readFileSync(join(runs, file), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; tool?: string; reason?: string; detail?: string });
      // Complete up to the last step; the command in flight has no step, and the end line names it.
      assert.deepEqual(
        lines.filter((l) => l.type === 'tool_call').map((l) => l.tool),
        ['read_file'],
      );
      assert.equal(lines[0]!.type, 'header');
      assert.equal(lines.at(-1)!.reason, 'interrupted');
      assert.match(
        lines.at(-1)!.detail ?? '',
        /reloaded during the run, while the command `sleep 120` was running \(its result is lost\)/,
      );
      const chat2 = await wb.openChat();
      // The chat comes back from its trajectory, says the run was cut short, and offers Resume.
      await chat2.locator('.restored-note').waitFor({ timeout: 30_000 });
      assert.match(await chat2.locator('.msg.user').first().innerText(), /Look around\./);
      assert.equal(await chat2.locator('.card', { hasText: 'read_file' }).count(), 1);
      const notice = chat2.locator('.interrupted');
      assert.match(
        await notice.innerText(),
        /This run was interrupted: the editor closed or reloaded during the run, while the command `sleep 120` was running/,
      );
      await wb.screenshot('6-reload-restored');
      await notice.locator('button', { hasText: 'Resume' }).click();
      await chat2.locator('.answered').waitFor({ timeout: 60_000 });
      assert.match(await chat2.locator('.msg.assistant').last().innerText(), /Resumed: I had read src\/sum\.js/);
      const resumed = (
        server.requests.filter((q) => q.path === '/v1/chat/completions').at(-1)!.body as {
          messages: { role: string; content?: unknown }[];
        }
      ).messages;
      const call = resumed.find((m) => m.role === 'assistant' && /Reading first\./.test(String(m.content))) as
        { tool_calls?: { id: string; function: { name: string } }[] } | undefined;
      assert.equal(
        call?.tool_calls?.[0]?.function.name,
        'read_file',
        'the resumed run has the earlier answer and its call',
      );
      assert.ok(
        resumed.some(
          (m) => m.role === 'tool' && (m as { tool_call_id?: string }).tool_call_id === call.tool_calls![0]!.id,
        ),
        'and a result for that call',
      );
      assert.match(
        String(resumed.at(-1)!.content),
        /interrupted while the command `sleep 120` was running\. Continue the task from where you stopped/,
      );
      const second = readdirSync(runs)
        .filter((n) => n.endsWith('.lar.jsonl'))
        .sort()
        .at(-1)!;
      assert.notEqual(second, file, 'Resume is a new run');
      assert.deepEqual(
        (JSON.parse(readFileSync(join(runs, second), 'utf8').split('\n')[0]!) as { thread?: unknown }).thread,
        { id: file.replace(/\.lar\.jsonl$/, ''), turn: 2, previous: file },
      );
      await wb.screenshot('6-reload-resumed');
      await chat2.locator('#show-history').click();
      // One conversation of two runs; its trajectories are under its Trajectories button.
      const row = chat2.locator('#history .thread-item', { hasText: 'Look around.' });
      await row.waitFor({ timeout: 30_000 });
      assert.match(await row.locator('button.thread-row').innerText(), /Look around\.[\s\S]*2 turns/);
      await row.locator('button.thread-trajectories').click();
      const interruptedRow = row.locator('button.run-row', { hasText: 'interrupted' }).first();
      assert.match(await interruptedRow.innerText(), new RegExp(`1\\. Look around\\.[\\s\\S]*interrupted · ${file}`));
      await interruptedRow.click();
      await wb.editor(file).waitFor({ timeout: 30_000 });
      // Opened again, and the latest run beside it: one editor group, no new empty ones.
      await interruptedRow.click();
      await chat2.locator('#open-trajectory').click();
      await wb.editor(second).waitFor({ timeout: 30_000 });
      assert.equal(await wb.page.locator('.editor-group-container').count(), 1, 'the trajectories share one group');
      await wb.screenshot('6-reload-interrupted');
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('a failed run, then a passing one: the status bar follows the latest run and its real state, and Problems keeps no stale errors', async () => {
    const server = new ScriptedModelServer({
      models: [DEMO_MODEL],
      script: [
        call('read_file', { path: 'src/sum.js' }),
        call('enter_stage', { stage: 'edit' }),
        call('edit_file', { path: 'src/sum.js', search: 'a - b', replace: 'a * b' }),
        call('enter_stage', { stage: 'verify' }),
        call('run_command', { command: 'npm test' }),
        call('submit', { summary: 'multiplied' }),
        // The follow-up is a new run: it starts in explore again.
        call('read_file', { path: 'src/sum.js' }),
        call('enter_stage', { stage: 'edit' }),
        call('edit_file', { path: 'src/sum.js', search: 'a * b', replace: 'a + b' }),
        call('enter_stage', { stage: 'verify' }),
        call('run_command', { command: 'npm test' }),
        call('submit', { summary: 'added' }),
      ],
    });
    const endpoint = await server.start();
    const ws = suite.workspace('two-runs', settingsFor(endpoint));
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.send(chat, 'Make npm test pass.');
      await chat.locator('.end').first().waitFor({ timeout: 120_000 });
      assert.match(await chat.locator('.end').first().innerText(), /Run ended: submitted[\s\S]*outcome 0/);
      const status = wb.page.locator('.statusbar-item', { hasText: /lar builtin · R / }).first();
      await eventually('the failed run in the status bar', async () =>
        /R \d(\.\d+)? \(outcome failed\)/.test(await status.innerText()) ? true : undefined,
      );
      await wb.screenshot('9-status-failed');
      const problemsAfterFailure = await wb.problems();
      assert.ok(
        problemsAfterFailure.some((r) => /outcome/.test(r)),
        problemsAfterFailure.join('\n'),
      );

      await wb.send(chat, 'That still fails: fix it.');
      await chat.locator('.end').nth(1).waitFor({ timeout: 120_000 });
      assert.match(await chat.locator('.end').nth(1).innerText(), /Run ended: submitted[\s\S]*outcome 1/);
      let seen = '';
      await eventually(
        'the passing run in the status bar',
        async () => {
          seen = await status.innerText();
          return /R 1\.\d{3}/.test(seen) && !/failed|live/.test(seen) ? true : undefined;
        },
        30_000,
        () => `status bar: ${seen}`,
      );
      // The first run's errors left the Problems panel with the next run (its trajectory is not open).
      const problems = await wb.problems();
      assert.ok(!problems.some((r) => /outcome\.check_passed|the outcome check failed/i.test(r)), problems.join('\n'));
      // A passed run leaves no error; its two runs wrote in one agent terminal, not one each.
      assert.equal(await wb.errorCount(), 0);
      assert.equal(await wb.terminalCount(), 1);
      await wb.screenshot('9-status-passed');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('branch from here: back to before a step, workspace and conversation; it survives a reload, and the next message goes on from there', async () => {
    const server = new ScriptedModelServer({
      models: [DEMO_MODEL],
      script: [
        call('read_file', { path: 'src/sum.js' }),
        call('enter_stage', { stage: 'edit' }),
        {
          content: 'Multiplying.',
          toolCalls: [{ name: 'edit_file', arguments: { path: 'src/sum.js', search: 'a - b', replace: 'a * b' } }],
        },
        { content: 'Edited.' },
        { content: 'Addition then.' },
      ],
    });
    const endpoint = await server.start();
    const ws = suite.workspace('branch', settingsFor(endpoint));
    const wb = await suite.open(ws);
    try {
      let chat = await wb.openChat();
      await chat.locator('#connection.conn.connected').waitFor({ timeout: 30_000 });
      await wb.send(chat, 'Change sum.');
      await chat.locator('.answered').waitFor({ timeout: 60_000 });
      assert.match(readFileSync(join(ws, 'src', 'sum.js'), 'utf8'), /a \* b/);
      await chat.locator('.card', { hasText: 'edit_file' }).getByRole('button', { name: 'Branch from here' }).click();
      const dialog = wb.page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      await dialog.getByRole('button', { name: 'Restore' }).click();
      await chat.locator('.restored-note', { hasText: 'Branched from before step 3' }).waitFor({ timeout: 30_000 });
      assert.match(readFileSync(join(ws, 'src', 'sum.js'), 'utf8'), /a - b/, 'the workspace is back before the edit');
      assert.equal(
        await chat.locator('.card', { hasText: 'edit_file' }).count(),
        0,
        'the chat shows the run only up to the branch',
      );
      await wb.screenshot('10-branched');
      // A reload before the next message: the branch comes back.
      await wb.reload();
      chat = await wb.openChat();
      await chat.locator('.restored-note', { hasText: 'Branched from before step 3' }).waitFor({ timeout: 30_000 });
      await wb.send(chat, 'Try addition instead.');
      await chat.locator('.answered').last().waitFor({ timeout: 60_000 });
      assert.match(await chat.locator('.msg.assistant').last().innerText(), /Addition then\./);
      const sent = (
        server.requests.filter((q) => q.path === '/v1/chat/completions').at(-1)!.body as {
          messages: { role: string; content?: unknown; tool_calls?: { function: { name: string } }[] }[];
        }
      ).messages;
      const called = sent.flatMap((m) => m.tool_calls?.map((c) => c.function.name) ?? []);
      assert.deepEqual(called, ['read_file', 'enter_stage'], 'the model goes on from before the edit');
      assert.match(
        String(sent.at(-1)!.content),
        /^Try addition instead\.\n\n\[Lean4 Agentic: before this message the user restored the workspace to how it was before step 3/,
      );
      const runs = readdirSync(join(ws, '.lar', 'runs'))
        .filter((f) => f.endsWith('.lar.jsonl'))
        .sort();
      const header = JSON.parse(readFileSync(join(ws, '.lar', 'runs', runs.at(-1)!), 'utf8').split('\n')[0]!) as {
        thread?: { previous?: string; step?: number };
      };
      assert.deepEqual([header.thread?.previous, header.thread?.step], [runs[0], 3]);
      await wb.screenshot('10-branch-continued');
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('a recorded trajectory shows diagnostics, code lenses and gutter icons without any model', async () => {
    const ws = suite.workspace(
      'recorded',
      { 'lean4Agentic.endpoint': 'http://127.0.0.1:9/v1' },
      join(REPO_ROOT, 'test-fixtures', 'trajectories'),
    );
    const file = readdirSync(ws).find((f) => f.endsWith('.lar.jsonl'))!;
    const wb = await suite.open(ws);
    try {
      await wb.openFile(file, file);
      const editor = wb.editor(file);
      await eventually('gutter icons', async () =>
        (await editor.locator('.glyph-margin-widgets .cgmr').count()) > 0 ? true : undefined,
      );
      await eventually('code lenses', async () =>
        (await editor.locator('.codelens-decoration').count()) > 0 ? true : undefined,
      );
      const lenses = await editor.locator('.codelens-decoration').allInnerTexts();
      assert.ok(
        lenses.some((l) => /explore/.test(l)),
        lenses.join(' | '),
      );
      // The gutter's own explanation: its context menu opens the line's hover (the blocked write, line 6).
      await editor.locator('.margin-view-overlays .line-numbers', { hasText: /^6$/ }).click({ button: 'right' });
      await wb.clickMenuItem("Explain This Line's Reward");
      const hover = wb.page.locator('.monaco-hover:visible');
      await eventually('the line hover', async () =>
        /tool\.permitted[\s\S]*write_file is not permitted/.test(await hover.innerText()) ? true : undefined,
      );
      await wb.screenshot('4-recorded-explain');
      await wb.page.keyboard.press('Escape');
      const problems = await wb.problems();
      assert.ok(
        problems.some((r) => /tool\.|stage\.|outcome|return/.test(r)),
        problems.join('\n'),
      );
      await wb.screenshot('4-recorded-trajectory');
    } finally {
      await wb.close();
    }
  });

  test('the endpoint is down: a clear error in the chat and a way to fix the setting', async () => {
    const ws = suite.workspace('down', settingsFor('http://127.0.0.1:9/v1'));
    const wb = await suite.open(ws);
    try {
      const chat = await wb.openChat();
      const conn = chat.locator('#connection.conn.failed');
      await conn.waitFor({ timeout: 30_000 });
      assert.match(
        await conn.innerText(),
        /Not connected to http:\/\/127\.0\.0\.1:9\/v1: .*(cannot reach|refused|unreachable)/i,
      );
      // The value in force comes from the workspace's settings, and the chat says so (the fix must be made there).
      assert.match(await conn.innerText(), /endpoint from Workspace settings/);
      await wb.send(chat, 'Make npm test pass.');
      // Said on the message's own bubble, which stays in the log (e2e/sends.e2e.test.ts follows it further).
      const error = chat.locator('#log .msg.user.send-failed .send-failure');
      await error.waitFor({ timeout: 30_000 });
      assert.match(await error.innerText(), /cannot reach the inference server at http:\/\/127\.0\.0\.1:9\/v1/);
      assert.equal(await chat.locator('#run').isDisabled(), false, 'the chat is ready for another try');
      assert.equal(await chat.locator('#log .send-failure, #log .error').count(), 1, 'said once');
      const runsDir = join(ws, '.lar', 'runs');
      assert.deepEqual(
        existsSync(runsDir) ? readdirSync(runsDir) : [],
        [],
        'a run that never reached the model leaves no empty trajectory',
      );
      await wb.screenshot('5-endpoint-down');
      await error.getByRole('button', { name: 'Open Endpoint Setting' }).click();
      await wb.page.locator('.settings-editor').waitFor({ timeout: 30_000 });
      let settingsText = '';
      await eventually(
        'the endpoint setting',
        async () => {
          settingsText = await wb.page.locator('.settings-editor').innerText();
          // The tab whose value wins: its input holds the workspace's endpoint, not the user's default.
          const values = await wb.page
            .locator('.settings-editor input')
            .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
          return /Lean4 Agentic: Endpoint/.test(settingsText) && values.some((v) => v.includes('127.0.0.1:9/v1'))
            ? true
            : undefined;
        },
        30_000,
        () => `the settings editor shows: ${JSON.stringify(settingsText.slice(0, 800))}`,
      );
      await wb.screenshot('5-endpoint-settings');
      assert.deepEqual(wb.pageErrors, []);
    } finally {
      await wb.close();
    }
  });
});
