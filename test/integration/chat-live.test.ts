// What makes the chat say what is happening, below the webview: the loop's
// request and tool-start events, the output tail of a running command, and
// the policy for links in model text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentEvent } from '../../core/agent/loop';
import { outcomePasses, runWith } from '../../testkit/agent-run';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import { OutputTail } from '../../extension/chat/cards';
import { linkTarget } from '../../extension/chat/links';

test('the loop says when it asks the model and when a call starts, before the call ends', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-live-'));
  const server = new ScriptedModelServer({
    contextLength: 32768,
    script: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] }, { content: 'It says hi.' }],
  });
  const endpoint = await server.start();
  const events: AgentEvent['kind'][] = [];
  let startedArgs: unknown;
  const tokens: number[] = [];
  try {
    await runWith({
      endpoint,
      task: 'what is in a.txt?',
      runOutcomeCheck: outcomePasses,
      workspace: ws,
      execute: () => {
        events.push('executing' as AgentEvent['kind']);
        return Promise.resolve({ status: 'ok', result: { output: 'hi' }, observation: 'hi' });
      },
      onIdle: 'end',
      onEvent: (e) => {
        if (e.kind === 'toolStart') startedArgs = e.args;
        if (e.kind === 'context') tokens.push(e.completionTokens);
        events.push(e.kind);
      },
    });
  } finally {
    await server.stop();
  }
  const kinds = events.filter((k) => ['request', 'toolStart', 'executing', 'step', 'context'].includes(k));
  assert.deepEqual(kinds, ['request', 'context', 'toolStart', 'executing', 'step', 'request', 'context']);
  assert.deepEqual(startedArgs, { path: 'a.txt' });
  assert.ok(
    tokens.length === 2 && tokens[0]! > 0 && tokens[1]! > tokens[0]!,
    `the run's completion tokens add up: ${tokens.join()}`,
  );
});

test('the output tail: escapes and overwrites applied even when split across chunks, the last lines only, bounded', () => {
  const t = new OutputTail(200, 3);
  for (const chunk of [
    '\x1b[3',
    '2mgreen\x1b[0m\n',
    'progress 10%\r',
    'progress 99%\rprogress 100%\n',
    'a\nb\n',
    'c\n',
  ])
    t.push(chunk);
  assert.equal(t.text, 'a\nb\nc');
  const all = new OutputTail(200, 10);
  for (const chunk of ['\x1b[3', '2mgreen\x1b[0m\n', 'progress 10%\r', 'progress 99%\rprogress 100%\n'])
    all.push(chunk);
  assert.equal(all.text, 'green\nprogress 100%');
  const big = new OutputTail(100, 1000);
  for (let i = 0; i < 10_000; i++) big.push(`line ${i}\n`);
  assert.ok(big.text.length <= 100);
  assert.match(big.text, /line 9999$/);
  assert.equal(big.bytes, Array.from({ length: 10_000 }, (_, i) => `line ${i}\n`).join('').length);
});

test('links from model text: web pages, files of the workspace (with a line), nothing else', () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'lar-links-')));
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src', 'sum.js'), 'x');
  const outside = mkdtempSync(join(tmpdir(), 'lar-outside-'));
  writeFileSync(join(outside, 'secret'), 'x');
  symlinkSync(join(outside, 'secret'), join(ws, 'link-out'));
  assert.deepEqual(linkTarget('https://example.com/a?b=1', ws), { kind: 'web', url: 'https://example.com/a?b=1' });
  assert.deepEqual(linkTarget('src/sum.js#L12', ws), { kind: 'file', path: join(ws, 'src', 'sum.js'), line: 12 });
  assert.deepEqual(linkTarget('src/sum.js:7:3', ws), { kind: 'file', path: join(ws, 'src', 'sum.js'), line: 7 });
  assert.deepEqual(linkTarget('./src/sum.js', ws), { kind: 'file', path: join(ws, 'src', 'sum.js') });
  assert.deepEqual(linkTarget(`${pathToFileURL(join(ws, 'src', 'sum.js')).href}#L3`, ws), {
    kind: 'file',
    path: join(ws, 'src', 'sum.js'),
    line: 3,
  });
  for (const bad of [
    'javascript:alert(1)',
    'command:workbench.action.terminal.sendSequence',
    'vscode://file/etc/passwd',
    'data:text/html,x',
    'mailto:a@b.c',
    '../outside',
    '/etc/passwd',
    'src/../../etc/passwd',
    pathToFileURL(join(outside, 'secret')).href,
    'link-out',
    'file://remote-host/share/x',
    '//evil.example/x',
    'http://',
    'src/missing.js',
    'src',
    '',
  ]) {
    const r = linkTarget(bad, ws);
    assert.equal(r.kind, 'refused', `${bad}: ${JSON.stringify(r)}`);
    assert.ok('reason' in r && r.reason.length > 5, 'a refusal says why');
  }
});
