// A chat read back from its trajectories (core/agent/resume.ts): the thread
// chain, and the model's conversation rebuilt so that it renders what the
// live run would have sent next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from '../../support/fc';
import type { AgentOptions } from '../../../core/agent/loop';
import { newRunNote, restoreNote, stripNewRunNote, systemFor, toolSpecs } from '../../../core/agent/prompts';
import {
  branchCheckpoint,
  chatEvents,
  NOT_RECORDED,
  readThread,
  rebuildConversation,
  recordedResult,
  threadOf,
  wasInterrupted,
} from '../../../core/agent/resume';
import { ModelClient } from '../../../core/model/client';
import { runWith } from '../../../testkit/agent-run';
import { ScriptedModelServer } from '../../../testkit/scripted-server';
import type { ScriptedTurn } from '../../../testkit/scripted-turns';
import { textOf } from '../../../testkit/text';
import { defaultWorkflow } from '../../../core/workflow/load';
import type { ToolContext, ToolOutcome } from '../../../core/tools/types';
import type { ToolName } from '../../../core/schema/tools';
import type { TrajectoryEvent } from '../../../core/schema/trajectory';
import { TerminalSession } from '../../../core/shell/session';
import { NodeWorkspaceFs } from '../../../core/workspace/node-fs';
import { commandObservation, createToolExecutor } from '../../../core/tools/executor';
import { transcriptOf } from '../../../extension/chat/transcript';
import { ToWebview } from '../../../core/protocol/chat';

const wf = defaultWorkflow();

/** Runs a chat of `messages` against `script`; each run's file in runsDir, linked as the chat links them. Returns the live conversation. */
async function chat(
  script: ScriptedTurn[],
  messages: string[],
  execute: (name: string, args: Record<string, unknown>, ctx: ToolContext) => ToolOutcome | Promise<ToolOutcome>,
) {
  const ws = mkdtempSync(join(tmpdir(), 'lar-resume-'));
  const runsDir = join(ws, '.lar', 'runs');
  mkdirSync(runsDir, { recursive: true });
  const server = new ScriptedModelServer({ contextLength: 32768, script });
  const endpoint = await server.start();
  const model = new ModelClient({ endpoint, retries: 0 });
  let previous: { conversation: AgentOptions['conversation']; file: string } | undefined;
  const files: string[] = [];
  try {
    for (const [i, task] of messages.entries()) {
      const file = `run-${String(i + 1).padStart(3, '0')}.lar.jsonl`;
      const r = await runWith({
        task,
        model,
        workspace: ws,
        trajectoryPath: join(runsDir, file),
        execute: async (name, args, ctx) => execute(name, args, ctx),
        runOutcomeCheck: () => Promise.resolve({ type: 'outcome', command: 'npm test', exitCode: 0 }),
        onIdle: 'end',
        thread: { id: 'chat-1', turn: i + 1, ...(previous ? { previous: previous.file } : {}) },
        ...(previous ? { conversation: previous.conversation } : {}),
      });
      files.push(file);
      previous = { conversation: r.conversation, file };
    }
  } finally {
    await server.stop();
  }
  return { ws, runsDir, files, live: previous!.conversation! };
}

/** Tools that succeed, recording what the real ones record: a command its output and end; a file tool nothing it read. */
const okRead = (name: string, args: Record<string, unknown>): ToolOutcome => {
  if (name === 'run_command') {
    const output = `contents of ${String(args.command)}`;
    return {
      status: 'ok',
      result: { output, exitCode: 0, completion: 'exit' },
      observation: commandObservation(String(args.command), output, { completion: 'exit', exitCode: 0 }),
    };
  }
  return { status: 'ok', result: {}, observation: NOT_RECORDED };
};

/** The chat's next run, as the session starts it: one scripted answer, the conversation it goes on from. */
async function nextRun(
  runsDir: string,
  o: {
    task: string;
    answer: string;
    file: string;
    conversation: AgentOptions['conversation'];
    thread: AgentOptions['thread'];
    restored?: AgentOptions['restored'];
  },
) {
  const server = new ScriptedModelServer({ contextLength: 32768, script: [{ content: o.answer }] });
  const endpoint = await server.start();
  try {
    const r = await runWith({
      endpoint,
      task: o.task,
      workspace: join(runsDir, '..', '..'),
      trajectoryPath: join(runsDir, o.file),
      execute: (n, a) => Promise.resolve(okRead(n, a)),
      runOutcomeCheck: () => Promise.resolve({ type: 'outcome', command: 'npm test', exitCode: 0 }),
      onIdle: 'end',
      conversation: o.conversation,
      ...(o.restored ? { restored: o.restored } : {}),
      thread: o.thread,
    });
    return {
      conversation: r.conversation,
      sent: (
        server.requests.find((q) => q.path === '/v1/chat/completions')!.body as {
          messages: { role: string; content: string }[];
        }
      ).messages,
    };
  } finally {
    await server.stop();
  }
}

test('a chat rebuilt from its trajectories renders what the live conversation would send next', async () => {
  const { runsDir, files, live } = await chat(
    [
      {
        content: 'Let me look.',
        toolCalls: [
          { name: 'read_file', arguments: { path: 'sum.js' } },
          { name: 'list_files', arguments: { path: '.' } },
        ],
      },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'sum.test.js' } }] },
      { content: '`sum` subtracts; the test expects addition.' },
      {
        content: 'Sure.',
        reasoning: 'They want a fix plan.',
        toolCalls: [{ name: 'enter_stage', arguments: { stage: 'edit' } }],
      },
      { content: 'In edit now. Shall I change it?' },
    ],
    ['What is wrong with sum.js?', 'Plan the fix.'],
    okRead,
  );
  const runs = readThread(runsDir, files[1]!);
  assert.deepEqual(
    runs.map((r) => r.file),
    files,
    'the chain is followed back from the newest run',
  );
  const rebuilt = rebuildConversation(runs, systemFor(wf), toolSpecs());
  for (const format of ['native', 'hermes', 'qwen3_coder'] as const) {
    assert.deepEqual(rebuilt.render(format), live.render(format), `the ${format} rendering`);
  }
  assert.deepEqual(threadOf(runs), { id: 'chat-1', turn: 2, previous: files[1] });
  assert.equal(wasInterrupted(runs[1]!), false);
});

test('a command that waited for input is rebuilt word for word as the live run showed it to the model', async () => {
  let terminal: TerminalSession | undefined;
  try {
    const { runsDir, files, live } = await chat(
      [
        { toolCalls: [{ name: 'run_command', arguments: { command: 'echo asking; read answer' } }] },
        { content: 'It asks a question: run it with the answer piped in.' },
      ],
      ['Run the script.'],
      // The real executor over a real terminal: what the loop records and shows is what a run records and shows.
      (name, args, ctx) => {
        terminal ??= new TerminalSession({
          cwd: ctx.workspace,
          env: { ...process.env, SHELL: '/bin/bash' },
          outputDir: join(ctx.workspace, '.lar', 'output'),
          inputIdleMs: 300,
          graceMs: 800,
        });
        return createToolExecutor({ fs: new NodeWorkspaceFs(ctx.workspace), terminal })(name as ToolName, args, ctx);
      },
    );
    const sent = live.render('native').find((m) => m.role === 'tool');
    assert.match(
      textOf(sent?.content),
      /^\$ echo asking; read answer\nasking\n\[the command waited for input and was interrupted \(run it non-interactively\)\]/,
    );
    const rebuilt = rebuildConversation(readThread(runsDir, files[0]!), systemFor(wf), toolSpecs());
    assert.deepEqual(rebuilt.render('native'), live.render('native'));
  } finally {
    terminal?.dispose();
  }
});

test('an interrupted run is read as such and its conversation ends with every call answered', async () => {
  const { runsDir, files } = await chat(
    [{ toolCalls: [{ name: 'run_command', arguments: { command: 'npm test' } }] }, { content: 'done' }],
    ['Run the tests.'],
    okRead,
  );
  // The editor died mid-run: the end line never came, and a last line was half written.
  const path = join(runsDir, files[0]!);
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  writeFileSync(
    path,
    `${lines.filter((l) => !/"type":"end"|"role":"assistant","content":"done"/.test(l)).join('\n')}\n{"type":"tool_call","id":"x","tool":"rea`,
  );
  const runs = readThread(runsDir, files[0]!);
  assert.equal(runs.length, 1);
  assert.equal(wasInterrupted(runs[0]!), true);
  const msgs = rebuildConversation(runs, systemFor(wf), toolSpecs()).render('native');
  assert.deepEqual(
    msgs.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool'],
  );
  assert.equal(
    textOf(msgs[3]!.content),
    '$ npm test\ncontents of npm test\n[exit code 0]',
    'the command as the loop showed it, from what was recorded',
  );
});

test('the chain stops at a loop, a foreign thread, a missing or unnamed file, and reaches back at most 50 runs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-chain-'));
  const header = (id: string | undefined, previous?: string) =>
    `${JSON.stringify({ type: 'header', lar: 1, task: 't', started: '2026-12-01T00:00:00Z', workflow: 'builtin:default-coding', ...(id ? { thread: { id, turn: 1, ...(previous ? { previous } : {}) } } : {}) })}\n`;
  writeFileSync(join(dir, 'a.lar.jsonl'), header('t1', 'a.lar.jsonl'));
  assert.deepEqual(
    readThread(dir, 'a.lar.jsonl').map((r) => r.file),
    ['a.lar.jsonl'],
    'a run naming itself',
  );
  writeFileSync(join(dir, 'b.lar.jsonl'), header('t1', 'c.lar.jsonl'));
  writeFileSync(join(dir, 'c.lar.jsonl'), header('t2'));
  assert.deepEqual(
    readThread(dir, 'b.lar.jsonl').map((r) => r.file),
    ['b.lar.jsonl'],
    'another chat',
  );
  writeFileSync(join(dir, 'd.lar.jsonl'), header('t1', '../../etc/passwd'));
  assert.deepEqual(
    readThread(dir, 'd.lar.jsonl').map((r) => r.file),
    ['d.lar.jsonl'],
    'a previous that is not a run file name',
  );
  writeFileSync(join(dir, 'e.lar.jsonl'), header('t1', 'gone.lar.jsonl'));
  assert.deepEqual(
    readThread(dir, 'e.lar.jsonl').map((r) => r.file),
    ['e.lar.jsonl'],
  );
  writeFileSync(join(dir, 'f.lar.jsonl'), 'not json\n');
  assert.deepEqual(readThread(dir, 'f.lar.jsonl'), [], 'no header: nothing to restore');
  for (let i = 0; i < 60; i++)
    writeFileSync(join(dir, `n${i}.lar.jsonl`), header('t3', i ? `n${i - 1}.lar.jsonl` : undefined));
  const long = readThread(dir, 'n59.lar.jsonl');
  assert.equal(long.length, 50);
  assert.equal(long.at(-1)!.file, 'n59.lar.jsonl');
  appendFileSync(join(dir, 'n59.lar.jsonl'), '{"type":"end","reason":"answered"}\n');
  assert.equal(wasInterrupted(readThread(dir, 'n59.lar.jsonl').at(-1)!), false);
});

test('property: any chat of answers and calls rebuilds to the conversation the live run had', async () => {
  const call = fc.oneof(
    fc.record({
      name: fc.constant('read_file'),
      arguments: fc.record({ path: fc.constantFrom('a.js', 'b.js', 'src/c.ts') }),
    }),
    fc.record({ name: fc.constant('list_files'), arguments: fc.record({ path: fc.constant('.') }) }),
    fc.record({
      name: fc.constant('write_file'),
      arguments: fc.record({ path: fc.constant('x.js'), content: fc.string({ maxLength: 20 }) }),
    }),
  );
  const turn = fc.oneof(
    fc.record({ content: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0) }),
    fc.record({ content: fc.constantFrom('', 'Next.'), toolCalls: fc.array(call, { minLength: 1, maxLength: 3 }) }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(turn, { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 1, max: 3 }),
      async (turns, chats) => {
        // End each user message with an answer so every run ends 'answered'.
        const script: ScriptedTurn[] = [...turns, ...Array.from({ length: chats }, () => ({ content: 'ok' }))];
        const messages = Array.from({ length: chats }, (_, i) => `message ${i + 1}`);
        const { runsDir, files, live } = await chat(script, messages, okRead);
        const runs = readThread(runsDir, files.at(-1)!);
        assert.equal(runs.length, files.length);
        assert.deepEqual(rebuildConversation(runs, systemFor(wf), toolSpecs()).render('native'), live.render('native'));
      },
    ),
    { numRuns: 15 },
  );
});

test('after a submit, the rebuilt conversation knows the outcome, as the live one does', async () => {
  const calls = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
  const { runsDir, files, live } = await chat(
    [
      calls('read_file', { path: 'sum.js' }),
      calls('enter_stage', { stage: 'edit' }),
      calls('write_file', { path: 'sum.js', content: 'x' }),
      calls('enter_stage', { stage: 'verify' }),
      calls('run_command', { command: 'npm test' }),
      calls('submit', {}),
      { content: 'You are welcome.' },
    ],
    ['Fix sum.js.', 'Thanks!'],
    okRead,
  );
  const rebuilt = rebuildConversation(readThread(runsDir, files[1]!), systemFor(wf), toolSpecs()).render('native');
  assert.deepEqual(rebuilt, live.render('native'));
  assert.ok(
    rebuilt.some((m) => m.role === 'tool' && /Outcome check `npm test`: exit 0, passed\./.test(textOf(m.content))),
  );
});

test('the chat shows a restored conversation as it was, and offers Resume when its last run was cut short', async () => {
  const { runsDir, files } = await chat(
    [
      { content: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
      { content: 'It **subtracts**.' },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'x.js', content: '' } }] },
      { content: 'x' },
    ],
    ['What does sum.js do?', 'Fix it.'],
    okRead,
  );
  // The second run was cut short by a reload: its end says so.
  const path = join(runsDir, files[1]!);
  const kept = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => !/"type":"end"|"content":"x"/.test(l));
  writeFileSync(
    path,
    `${[...kept, JSON.stringify({ type: 'end', reason: 'interrupted', detail: 'the editor closed or reloaded during the run' })].join('\n')}\n`,
  );
  const shown = transcriptOf(readThread(runsDir, files[1]!));
  for (const m of shown) assert.ok(ToWebview.safeParse(m).success, JSON.stringify(m));
  assert.deepEqual(
    shown.map((m) => m.type),
    ['restored', 'userMessage', 'assistant', 'step', 'assistant', 'end', 'userMessage', 'step', 'end', 'interrupted'],
  );
  const cards = shown.filter((m) => m.type === 'step').map((m) => m.type === 'step' && m.card);
  assert.deepEqual(
    cards.map((c) => c && [c.tool, c.status, c.toolReward, c.blocked ?? false]),
    [
      ['read_file', 'ok', 1, false],
      ['write_file', 'blocked', -1, true],
    ],
  );
  assert.deepEqual(shown.at(-1), {
    type: 'interrupted',
    file: files[1],
    resumable: true,
    text: 'This run was interrupted: the editor closed or reloaded during the run.',
  });
  assert.match(JSON.stringify(shown[0]), /the 2 trajectories of this chat/);
});

test('a call whose result the trajectory does not keep is rebuilt with a note saying so, never as an empty result', () => {
  const e = {
    type: 'tool_call' as const,
    id: 'c1',
    tool: 'read_file',
    args: { path: 'a.js' },
    status: 'ok' as const,
    result: { durationMs: 3 },
  };
  assert.equal(recordedResult(e, undefined, wf), NOT_RECORDED);
  assert.equal(
    recordedResult({ ...e, status: 'error', result: { error: 'a.js does not exist' } }, undefined, wf),
    'Error: a.js does not exist',
  );
  assert.equal(
    recordedResult(
      {
        ...e,
        tool: 'run_command',
        args: { command: 'mkdir x' },
        result: { output: '', exitCode: 0, completion: 'exit' },
      },
      undefined,
      wf,
    ),
    '$ mkdir x\n[exit code 0]',
    'a command with no output is not an empty result',
  );
  assert.equal(
    recordedResult({ ...e, tool: 'enter_stage', args: { stage: 'edit' } }, undefined, wf),
    'Now in stage "edit". Tools: read_file, list_files, search, write_file, edit_file, run_command, enter_stage.',
  );
});

test('a run the model never answered is not carried into the next: the rebuilt chat starts afresh there, as the live one did', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-fresh-'));
  const line = (o: object) => JSON.stringify(o);
  const header = (task: string, turn: number, previous?: string) =>
    line({
      type: 'header',
      lar: 1,
      task,
      started: '2026-12-01T00:00:00Z',
      workflow: 'builtin:default-coding',
      thread: { id: 't', turn, ...(previous ? { previous } : {}) },
    });
  writeFileSync(
    join(dir, 'a.lar.jsonl'),
    [
      header('task one', 1),
      line({ type: 'message', role: 'user', content: 'task one' }),
      line({ type: 'end', reason: 'error', detail: 'server down' }),
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'b.lar.jsonl'),
    [
      header('task two', 2, 'a.lar.jsonl'),
      line({ type: 'message', role: 'user', content: 'task two' }),
      line({ type: 'message', role: 'assistant', content: 'done two' }),
      line({ type: 'end', reason: 'answered' }),
    ].join('\n'),
  );
  const msgs = rebuildConversation(readThread(dir, 'b.lar.jsonl'), systemFor(wf), toolSpecs()).render('native');
  assert.deepEqual(
    msgs.slice(1).map((m) => [m.role, m.content]),
    [
      ['user', 'task two'],
      ['assistant', 'done two'],
    ],
  );
});

test('branch from here: the conversation as it was before a step, continued in a run that names the branch point, rebuilds the same after a reload', async () => {
  const { runsDir, files } = await chat(
    [
      { content: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { path: 'sum.js' } }] },
      { content: 'Now the tests.', toolCalls: [{ name: 'run_command', arguments: { command: 'npm test' } }] },
      { content: 'They fail.' },
    ],
    ['Why does the test fail?'],
    okRead,
  );
  // Branch from before step 2 (the command): its reply, words and call, is left out.
  const base = readThread(runsDir, files[0]!);
  base[base.length - 1]!.cutAtStep = 2;
  assert.deepEqual(
    chatEvents(base[0]!).map((e) => e.event.type),
    ['message', 'message', 'tool_call'],
  );
  const branched = rebuildConversation(base, systemFor(wf), toolSpecs());
  assert.deepEqual(
    branched
      .render('native')
      .slice(1)
      .map((m) => m.role),
    ['user', 'assistant', 'tool'],
  );
  // The branch's run, as the session starts it: that conversation, the thread with the step.
  const { conversation: live } = await nextRun(runsDir, {
    task: 'Try a different approach.',
    answer: 'Let me try another way.',
    file: 'run-branch.lar.jsonl',
    conversation: branched,
    thread: { id: 'chat-1', turn: 2, previous: files[0]!, step: 2 },
  });
  const again = readThread(runsDir, 'run-branch.lar.jsonl');
  assert.equal(again[0]!.cutAtStep, 2, 'the branch point is read from the header of the run after it');
  assert.deepEqual(rebuildConversation(again, systemFor(wf), toolSpecs()).render('native'), live.render('native'));
  const shown = transcriptOf(again).map((m) => m.type);
  assert.equal(
    shown.filter((t) => t === 'step').length,
    1,
    'the chat shows the branched-from run only up to the branch',
  );
});

test('a branch goes back to the checkpoint of the first call of the reply it cuts; an unknown step is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-branchpoint-'));
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);
  const line = (o: object) => JSON.stringify(o);
  writeFileSync(
    join(dir, 'r.lar.jsonl'),
    [
      line({
        type: 'header',
        lar: 1,
        task: 't',
        started: '2026-12-01T00:00:00Z',
        workflow: 'builtin:default-coding',
        thread: { id: 'c', turn: 1 },
      }),
      line({ type: 'message', role: 'user', content: 't' }),
      line({ type: 'tool_call', id: 'c1', tool: 'read_file', args: { path: 'a' }, status: 'ok', result: {}, reply: 1 }),
      line({ type: 'message', role: 'assistant', content: 'Both at once.' }),
      line({
        type: 'tool_call',
        id: 'c2',
        tool: 'list_files',
        args: { path: '.' },
        status: 'ok',
        result: {},
        reply: 2,
      }),
      line({
        type: 'tool_call',
        id: 'c3',
        tool: 'run_command',
        args: { command: 'touch x' },
        status: 'ok',
        result: { exitCode: 0, completion: 'exit' },
        reply: 2,
        checkpoint: A,
      }),
      line({
        type: 'tool_call',
        id: 'c4',
        tool: 'run_command',
        args: { command: 'touch y' },
        status: 'ok',
        result: { exitCode: 0, completion: 'exit' },
        reply: 2,
        checkpoint: B,
      }),
      line({ type: 'tool_call', id: 'c5', tool: 'read_file', args: { path: 'y' }, status: 'ok', result: {}, reply: 3 }),
      line({ type: 'end', reason: 'answered' }),
    ].join('\n'),
  );
  const [run] = readThread(dir, 'r.lar.jsonl');
  // Step 4 (touch y) came in reply 2 with steps 2 and 3: the branch cuts the whole reply, so the workspace goes back to before step 3.
  assert.deepEqual(branchCheckpoint(run!, 4), { commit: A });
  assert.deepEqual(
    branchCheckpoint(run!, 2),
    { commit: A },
    'a read-only call has no checkpoint: the next one that could change files stands for it',
  );
  assert.deepEqual(branchCheckpoint(run!, 1), { commit: A });
  assert.match(
    JSON.stringify(branchCheckpoint(run!, 5)),
    /no checkpoint was taken from step 5/,
    'after the last checkpoint nothing could have changed a file: there is nothing to go back to',
  );
  assert.match(JSON.stringify(branchCheckpoint(run!, 9)), /has no step 9/);
  run!.cutAtStep = 4;
  assert.deepEqual(
    chatEvents(run!).map((e) => (e.event as { id?: string; type: string }).id ?? e.event.type),
    ['message', 'c1'],
  );
  run!.cutAtStep = 9;
  assert.deepEqual(chatEvents(run!), [], 'a step the run does not have keeps nothing');
});

test('notes: a restore note survives when a message is asked again; an undo is told as an undo', () => {
  const restore = {
    type: 'restore' as const,
    checkpoint: 'c'.repeat(40),
    step: 2,
    run: 'r.lar.jsonl',
    before: 'd'.repeat(40),
    reverted: ['a'],
    deleted: [],
    restored: [],
  };
  const text = `Fix it.\n\n${restoreNote(restore)}\n${newRunNote(wf)}`;
  assert.equal(stripNewRunNote(text), `Fix it.\n\n${restoreNote(restore)}`);
  assert.equal(stripNewRunNote(`Fix it.\n\n${newRunNote(wf)}`), 'Fix it.');
  assert.match(
    restoreNote({ ...restore, undo: true }),
    /undid a restore: the workspace is back as it was before that restore/,
  );
  assert.doesNotMatch(restoreNote({ ...restore, undo: true }), /step/);
});

test('a follow-up after a restore tells the model of it, and a restored chat tells it the same', async () => {
  const { runsDir, files, live } = await chat([{ content: 'Done editing.' }], ['Edit a.'], okRead);
  const restore = {
    type: 'restore' as const,
    checkpoint: 'c'.repeat(40),
    step: 3,
    run: files[0]!,
    before: 'd'.repeat(40),
    reverted: ['a.js'],
    deleted: ['b.js'],
    restored: [],
  };
  const { conversation: after, sent } = await nextRun(runsDir, {
    task: 'Start over from there.',
    answer: 'Understood: a.js is back.',
    file: 'run-002.lar.jsonl',
    conversation: live,
    restored: [restore],
    thread: { id: 'chat-1', turn: 2, previous: files[0]! },
  });
  assert.match(
    sent.at(-1)!.content,
    /^Start over from there\.\n\n\[Lean4 Agentic: before this message the user restored the workspace to how it was before step 3 of run-001\.lar\.jsonl \(files: 1 changed back, 1 deleted\)/,
  );
  const first = readFileSync(join(runsDir, 'run-002.lar.jsonl'), 'utf8').split('\n')[1]!;
  assert.equal((JSON.parse(first) as TrajectoryEvent).type, 'restore', 'recorded right after the header');
  assert.deepEqual(
    rebuildConversation(readThread(runsDir, 'run-002.lar.jsonl'), systemFor(wf), toolSpecs()).render('native'),
    after.render('native'),
  );
});
