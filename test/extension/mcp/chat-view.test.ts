import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../../core/agent/types';
import type { McpServerState } from '../../../core/mcp/types';
import { ToWebview } from '../../../core/protocol/chat';
import { loadWorkflow } from '../../../core/workflow/load';
import { McpChatView } from '../../../extension/mcp/chat-view';

const load = loadWorkflow({
  lar: 1,
  id: 'mcp-chat',
  stages: [
    { id: 'look', tools: ['mcp__everything__echo', 'enter_stage'], budget: 10 },
    { id: 'work', tools: ['mcp__everything__*', 'submit'], budget: 10 },
  ],
  transitions: { look: ['work'] },
  start: 'look',
  terminal: ['work'],
  outcome: { command: 'true' },
});
if (!load.ok) throw new Error(JSON.stringify(load.problems));
const workflow = load.workflow;

const STDERR =
  'node:internal/modules/cjs/loader:1228\n  throw err;\nError: Cannot find module /gone.js (token sk-SECRET)';
const states: McpServerState[] = [
  {
    server: 'everything',
    label: 'everything',
    transport: 'stdio',
    state: 'ready',
    tools: ['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__everything__add'],
  },
  { server: 'broken', label: 'broken', transport: 'stdio', state: 'failed', tools: [], error: STDERR },
];

const mask = (t: string) => t.replaceAll('sk-SECRET', '***');
const mcpEvent = (server: string, error?: string): AgentEvent => ({
  kind: 'mcp',
  line: 2,
  text: '{}',
  event: {
    type: 'mcp_tools',
    server,
    reason: error ? 'stopped' : 'start',
    tools: [],
    ...(error ? { error } : {}),
  },
});
const step = { kind: 'step', line: 5, text: '{}' } as unknown as AgentEvent;

function view(said: Set<string>, runFile = 'run-1.lar.jsonl') {
  return new McpChatView({
    workflow,
    runFile,
    digests: new Map([
      ['everything', 'd-everything'],
      ['broken', 'd-broken'],
    ]),
    said,
    mask,
  });
}

test('the chat lists each server with its state and the tools the current stage permits, again when the stage changes', () => {
  const said = new Set<string>();
  const v = view(said);
  const first = v.onEvent(mcpEvent('everything'), () => states, 'look');
  assert.deepEqual(first.post, [
    {
      type: 'mcp',
      run: 'run-1.lar.jsonl',
      stage: 'look',
      servers: [
        { name: 'everything', transport: 'stdio', state: 'ready', tools: ['echo'], offered: 3 },
        {
          name: 'broken',
          transport: 'stdio',
          state: 'failed',
          tools: [],
          offered: 0,
          error: STDERR.replace('sk-SECRET', '***'),
        },
      ],
    },
  ]);
  // A step that leaves the stage as it was: nothing new to show.
  assert.deepEqual(v.onEvent(step, () => states, 'look').post, []);
  const work = v.onEvent(step, () => states, 'work').post;
  assert.equal(work.length, 1);
  const list = work[0] as Extract<ToWebview, { type: 'mcp' }>;
  assert.equal(list.stage, 'work');
  assert.deepEqual(list.servers[0]!.tools, ['echo', 'get-sum', 'add']);
  // The run submitted (no stage any more): the list keeps the stage it was last in.
  assert.deepEqual(v.onEvent(step, () => states, undefined).post, []);
  // A server that stopped mid-run shows so.
  const stopped = states.map((s) => (s.server === 'everything' ? { ...s, state: 'stopped' as const, tools: [] } : s));
  const after = v.onEvent(mcpEvent('everything'), () => stopped, 'work').post[0] as Extract<ToWebview, { type: 'mcp' }>;
  assert.deepEqual(
    after.servers.map((s) => [s.name, s.state, s.tools.length]),
    [
      ['everything', 'stopped', 0],
      ['broken', 'failed', 0],
    ],
  );
  for (const m of [...first.post, ...work]) assert.equal(ToWebview.safeParse(m).success, true, JSON.stringify(m));
});

test('a server that could not start is said once per configuration, with its stderr, masked; not again the next run', () => {
  const said = new Set<string>();
  const v = view(said);
  const out = v.onEvent(mcpEvent('broken', STDERR), () => states, 'look');
  const notices = out.post.filter((m) => m.type === 'mcpNotice');
  assert.equal(notices.length, 1);
  assert.match(notices[0]!.text, /^MCP server "broken" could not start, so its tools are not offered: node:internal/);
  assert.match(notices[0]!.text, /Cannot find module \/gone\.js \(token \*\*\*\)$/);
  assert.equal(out.warnings.length, 1);
  assert.match(out.warnings[0]!, /^MCP server "broken" could not start: .*Cannot find module/s);
  assert.doesNotMatch(out.warnings[0]! + notices[0]!.text, /sk-SECRET/);
  // The loop's own sentence about the same failure is not said a second time; its other sentences are.
  const notes = v.onEvent(
    {
      kind: 'mcpNotes',
      notes: [
        `MCP server "broken" could not start: ${STDERR}`,
        'MCP server "everything" changed its tools; new: mcp__everything__add.',
      ],
    },
    () => states,
    'look',
  );
  assert.deepEqual(notes.post, [
    { type: 'mcpNotice', text: 'MCP server "everything" changed its tools; new: mcp__everything__add.', warn: false },
  ]);
  // The next run of the chat: the same configuration fails the same way, and only the list says so.
  const next = view(said, 'run-2.lar.jsonl').onEvent(mcpEvent('broken', STDERR), () => states, 'look');
  assert.deepEqual(
    next.post.map((m) => m.type),
    ['mcp'],
  );
  assert.deepEqual(next.warnings, []);
  // Its configuration changed: said again.
  const changed = new McpChatView({
    workflow,
    runFile: 'run-3.lar.jsonl',
    digests: new Map([['broken', 'd-broken-2']]),
    said,
    mask,
  }).onEvent(mcpEvent('broken', STDERR), () => states, 'look');
  assert.equal(changed.warnings.length, 1);
});

test('a long stderr keeps its end, where the reason is', () => {
  const long = `${'noise\n'.repeat(2000)}the real reason`;
  const failing = [{ ...states[1]!, error: long }];
  const out = view(new Set()).onEvent(mcpEvent('broken', long), () => failing, 'look');
  const list = out.post.find((m) => m.type === 'mcp') as Extract<ToWebview, { type: 'mcp' }>;
  assert.match(list.servers[0]!.error!, /^….*the real reason$/s);
  for (const m of out.post) assert.equal(ToWebview.safeParse(m).success, true, m.type);
});
