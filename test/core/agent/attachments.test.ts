import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  ATTACHMENT_CHARS,
  fileAttachment,
  lastCommand,
  problemsAttachment,
  selectionAttachment,
  TERMINAL_CHARS,
  terminalAttachment,
} from '../../../core/agent/attachments';
import type { TrajectoryEvent } from '../../../core/schema/trajectory';
import { secretRedactor } from '../../../core/secrets/redact';
import { runWith } from '../../../testkit/agent-run';
import { ScriptedModelServer } from '../../../testkit/scripted-server';

function workspace(): string {
  const ws = mkdtempSync(join(tmpdir(), 'lar-attach-'));
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src', 'a.ts'), 'export const a = 1;\n');
  return ws;
}

test('a workspace file is attached with its content, named by its path', async () => {
  const r = await fileAttachment(workspace(), 'src/a.ts');
  assert.ok(r.ok);
  assert.deepEqual(r.value, {
    type: 'attachment',
    kind: 'file',
    label: '@a.ts',
    source: 'src/a.ts',
    content: 'export const a = 1;\n',
  });
});

test('a file outside the workspace is refused, however it is named', async () => {
  const ws = workspace();
  const outside = mkdtempSync(join(tmpdir(), 'lar-outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'top secret');
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'link.txt'));
  symlinkSync(outside, join(ws, 'dir-link'));
  for (const path of [
    '../secret.txt',
    join(outside, 'secret.txt'),
    'link.txt',
    'dir-link/secret.txt',
    '~/x',
    'src/../../x',
  ]) {
    const r = await fileAttachment(ws, path);
    assert.equal(r.ok, false, path);
    if (!r.ok) assert.doesNotMatch(r.error, /top secret/);
  }
});

test('a binary file, a folder and a missing file are refused with a reason', async () => {
  const ws = workspace();
  writeFileSync(join(ws, 'img.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]));
  const bin = await fileAttachment(ws, 'img.png');
  assert.ok(!bin.ok && /binary/.test(bin.error));
  const dir = await fileAttachment(ws, 'src');
  assert.ok(!dir.ok && /not a regular file/.test(dir.error));
  const missing = await fileAttachment(ws, 'nope.ts');
  assert.ok(!missing.ok && /does not exist/.test(missing.error));
});

test('a long file is cut to the cap and marked truncated', async () => {
  const ws = workspace();
  writeFileSync(join(ws, 'big.txt'), 'x'.repeat(ATTACHMENT_CHARS * 20));
  const r = await fileAttachment(ws, 'big.txt');
  assert.ok(r.ok);
  assert.equal(r.value.content.length, ATTACHMENT_CHARS);
  assert.equal(r.value.truncated, true);
});

test('the selection is named by file and lines, the Problems one line each', () => {
  const s = selectionAttachment({ path: 'src/a.ts', startLine: 3, endLine: 9, text: 'const b = 2;' });
  assert.equal(s.source, 'src/a.ts:3-9');
  assert.equal(s.label, '@selection');
  const p = problemsAttachment('src/a.ts', [
    { line: 2, column: 5, severity: 'error', message: "Type 'string'\nis not number", source: 'ts', code: '2322' },
  ]);
  assert.equal(p.content, "src/a.ts:2:5 error: Type 'string' is not number (ts 2322)");
  assert.match(problemsAttachment('src/a.ts', []).content, /No problems/);
});

test("the terminal's last command is attached with the end of its output, secrets masked", () => {
  const events: TrajectoryEvent[] = [
    {
      type: 'tool_call',
      tool: 'run_command',
      args: { command: 'npm test' },
      status: 'ok',
      result: { output: 'old', exitCode: 0 },
    },
    { type: 'tool_call', tool: 'read_file', args: { path: 'a' }, status: 'ok', result: { output: 'file' } },
    {
      type: 'tool_call',
      tool: 'run_command',
      args: { command: 'echo $TOKEN' },
      status: 'ok',
      result: { output: `${'y'.repeat(TERMINAL_CHARS)}\ntoken=hunter2-very-secret\nFAIL`, exitCode: 1 },
    },
  ];
  const cmd = lastCommand(events);
  assert.ok(cmd);
  assert.equal(cmd.command, 'echo $TOKEN');
  const t = terminalAttachment(cmd, secretRedactor({ MY_TOKEN: 'hunter2-very-secret' }));
  assert.doesNotMatch(t.content, /hunter2/);
  assert.match(t.content, /FAIL$/);
  assert.equal(t.truncated, true);
  assert.equal(t.content.length, TERMINAL_CHARS);
  assert.equal(t.source, 'agent terminal: $ echo $TOKEN (exit 1)');
  assert.equal(lastCommand([]), undefined);
  const user = terminalAttachment({ command: 'make', output: 'ok', exitCode: 0 }, (x) => x, 'terminal "bash"');
  assert.equal(user.source, 'terminal "bash": $ make (exit 0)');
  assert.match(
    terminalAttachment({ command: 'true', output: '', exitCode: 0 }, (x) => x).content,
    /no output was reported/,
  );
});

test('the model reads the attachments in the user message, and the trajectory records them as its parts', async () => {
  const server = new ScriptedModelServer({ contextLength: 32768, script: [{ content: 'Seen.' }] });
  const endpoint = await server.start();
  const ws = workspace();
  const trajectoryPath = join(ws, '.lar', 'runs', 'r.lar.jsonl');
  try {
    const file = await fileAttachment(ws, 'src/a.ts');
    assert.ok(file.ok);
    const sel = selectionAttachment({ path: 'src/a.ts', startLine: 1, endLine: 1, text: 'SELECTED ```` text' });
    await runWith({
      endpoint,
      workspace: ws,
      trajectoryPath,
      task: 'Explain @a.ts @selection',
      attachments: [file.value, sel],
      onIdle: 'end',
      runOutcomeCheck: () => Promise.resolve({ type: 'outcome', command: 'true', exitCode: 0 }),
    });
    const body = server.requests.find((q) => q.path === '/v1/chat/completions')!.body as {
      messages: { role: string; content: string }[];
    };
    const user = body.messages.find((m) => m.role === 'user')!.content;
    assert.match(
      user,
      /^Explain @a\.ts @selection\n\nAttached by the user, file src\/a\.ts:\n```\nexport const a = 1;/,
    );
    // A fence longer than any in the content: the selection cannot close its block.
    assert.match(user, /selection src\/a\.ts:1:\n`````\nSELECTED ```` text\n`````$/);
    const lines = readFileSync(trajectoryPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const header = lines[0] as { task: string; parts?: { type: string }[] };
    assert.equal(header.task, 'Explain @a.ts @selection');
    assert.deepEqual(
      header.parts?.map((p) => p.type),
      ['text', 'attachment', 'attachment'],
    );
    const message = lines.find((l) => l.type === 'message' && l.role === 'user') as {
      content: string;
      parts: unknown[];
    };
    assert.equal(message.content, 'Explain @a.ts @selection');
    assert.deepEqual(message.parts, header.parts);
  } finally {
    await server.stop();
  }
});

test("git's metadata and the agent's records are never attached, however the path names them", async () => {
  const ws = workspace();
  mkdirSync(join(ws, '.git'), { recursive: true });
  writeFileSync(join(ws, '.git', 'config'), '[credential]\n\thelper = store');
  mkdirSync(join(ws, 'sub', '.git'), { recursive: true });
  writeFileSync(join(ws, 'sub', '.git', 'HEAD'), 'ref');
  mkdirSync(join(ws, '.lar', 'runs'), { recursive: true });
  writeFileSync(join(ws, '.lar', 'runs', 'r.lar.jsonl'), '{}');
  for (const path of [
    '.git/config',
    './.git/config',
    'src/../.git/config',
    'sub/.git/HEAD',
    '.lar/runs/r.lar.jsonl',
    '.GIT/config',
    '.Lar/runs/r.lar.jsonl',
  ]) {
    const r = await fileAttachment(ws, path);
    assert.ok(!r.ok && /\.git or \.lar/.test(r.error), path);
  }
});
