import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isMcpName, mcpToolName, McpToolsEvent, parseMcpName } from '../../../core/schema/mcp';
import { Workflow, type WorkflowInput } from '../../../core/schema/workflow';
import { VerifierState } from '../../../core/verifier/state';
import { checkWorkflow, hasErrors } from '../../../core/workflow/wellformed';

const digest = 'a'.repeat(64);
const input: WorkflowInput = {
  lar: 1,
  id: 'mcp',
  stages: [
    { id: 'look', tools: ['mcp__github__get_*', 'mcp__docs__search', 'enter_stage'], budget: 10 },
    { id: 'act', tools: ['mcp__*', 'submit'], budget: 10 },
  ],
  transitions: { look: ['act'] },
  start: 'look',
  terminal: ['act'],
  outcome: { command: 'true' },
};
const wf = Workflow.parse(input);
const listing = (server: string, tools: string[], reason: McpToolsEvent['reason'] = 'start'): McpToolsEvent => ({
  type: 'mcp_tools',
  server,
  reason,
  tools: tools.map((t) => ({ name: `mcp__${server}__${t}`, tool: t, digest })),
});
const failed = (s: VerifierState, tool: string, args: unknown = {}) =>
  s
    .gate({ tool, args })
    .verdicts.filter((v) => !v.ok)
    .map((v) => `${v.check}: ${v.reason}`);

test('an MCP tool is known only while its server lists it; a stage permits it by name or pattern', () => {
  const s = new VerifierState(wf);
  assert.deepEqual(failed(s, 'mcp__github__get_issue'), [
    'tool.known: "mcp__github__get_issue" is not a tool any MCP server of this run offers now',
  ]);
  s.append(listing('github', ['get_issue', 'create_issue']), 2);
  s.append(listing('docs', ['search', 'fetch']), 3);
  assert.deepEqual(failed(s, 'mcp__github__get_issue'), []);
  assert.deepEqual(failed(s, 'mcp__docs__search'), []);
  assert.match(
    failed(s, 'mcp__github__create_issue')[0]!,
    /tool.permitted: mcp__github__create_issue is not permitted in stage "look"/,
  );
  assert.match(failed(s, 'mcp__docs__fetch')[0]!, /tool.permitted/);
  assert.equal(s.gate({ tool: 'mcp__github__get_issue', args: {} }).toolReward, 1);
  assert.equal(s.gate({ tool: 'mcp__docs__fetch', args: {} }).decision, 'block');
  // Arguments must be an object; the server judges them against its own schema.
  for (const args of [null, [1], 'text', 3])
    assert.match(
      failed(s, 'mcp__github__get_issue', args)[0]!,
      /tool.args: bad arguments for mcp__github__get_issue: they must be a JSON object/,
    );
  // A new list replaces the server's old one; another server's stays.
  s.append(listing('github', ['get_pr'], 'list_changed'), 4);
  assert.match(failed(s, 'mcp__github__get_issue')[0]!, /tool.known/);
  assert.deepEqual(failed(s, 'mcp__github__get_pr'), []);
  assert.deepEqual(failed(s, 'mcp__docs__search'), []);
  s.append(listing('docs', [], 'stopped'), 5);
  assert.match(failed(s, 'mcp__docs__search')[0]!, /tool.known/);
  // A clone keeps its own list.
  const c = s.clone();
  c.append(listing('github', [], 'stopped'), 6);
  assert.deepEqual(failed(s, 'mcp__github__get_pr'), []);
  assert.match(failed(c, 'mcp__github__get_pr')[0]!, /tool.known/);
});

test("a server's hints never change the verdict: only the workflow decides", () => {
  const s = new VerifierState(wf);
  s.append(
    {
      type: 'mcp_tools',
      server: 'github',
      reason: 'start',
      tools: [
        { name: 'mcp__github__get_a', tool: 'get_a', digest, readOnly: true },
        { name: 'mcp__github__get_b', tool: 'get_b', digest, destructive: true },
      ],
    },
    2,
  );
  assert.deepEqual(s.gate({ tool: 'mcp__github__get_a', args: {} }), s.gate({ tool: 'mcp__github__get_b', args: {} }));
});

test("an mcp_tools line that names another server's tool, or not an MCP name, is malformed", () => {
  assert.equal(McpToolsEvent.safeParse(listing('github', ['get'])).success, true);
  const other = { ...listing('github', []), tools: [{ name: 'mcp__docs__search', tool: 'search', digest }] };
  assert.equal(McpToolsEvent.safeParse(other).success, false);
  const bare = { ...listing('github', []), tools: [{ name: 'run_command', tool: 'run_command', digest }] };
  assert.equal(McpToolsEvent.safeParse(bare).success, false);
  assert.equal(McpToolsEvent.safeParse({ ...listing('git__hub', []) }).success, false);
});

test('names: stable, in the OpenAI alphabet, split back at the first __, at most 64 characters', () => {
  assert.equal(mcpToolName('github.com', 'files.read'), 'mcp__github_com__files_read');
  assert.equal(mcpToolName('my__server', 'x'), 'mcp__my_server__x');
  assert.equal(mcpToolName('...', 'x'), undefined);
  assert.equal(mcpToolName('s', 'x'.repeat(60)), undefined);
  assert.deepEqual(parseMcpName('mcp__a-b__c__d'), { server: 'a-b', tool: 'c__d' });
  for (const bad of [
    'mcp__',
    'mcp____x',
    'mcp__a__',
    'mcp__a_',
    'mcp___a__b',
    'github__x',
    'mcp__a.b__c',
    `mcp__a__${'x'.repeat(60)}`,
  ])
    assert.equal(isMcpName(bad), false, bad);
});

test('a workflow permits MCP tools by name or pattern; anything else is not a tool', () => {
  assert.equal(hasErrors(checkWorkflow(wf)), false);
  for (const bad of ['github__get', 'mcp__a b', 'mcp__a/b']) {
    const w = Workflow.parse({
      ...input,
      stages: [{ ...input.stages[0]!, tools: [bad, 'enter_stage'] }, input.stages[1]!],
    });
    const problems = checkWorkflow(w).filter((p) => p.code === 'workflow.unknown_tool');
    assert.equal(problems.length, 1, bad);
    assert.match(problems[0]!.message, /or an MCP tool mcp__SERVER__TOOL/);
  }
  const exit = Workflow.parse({
    ...input,
    stages: [
      { ...input.stages[0]!, exit: [{ kind: 'tool_succeeded', tool: 'mcp__github__get_issue' }] },
      input.stages[1]!,
    ],
  });
  assert.equal(hasErrors(checkWorkflow(exit)), false);
});
