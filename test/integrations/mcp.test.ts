/**
 * MCP servers under the workflow, end to end through `lar run --mcp-config`: the real
 * `@modelcontextprotocol/server-everything` and `server-filesystem` from npm, and a fault server on
 * the official SDK (test-fixtures/mcp/fault-server.mjs), each started by lar in its sandbox; the
 * model is the scripted OpenAI-compatible server, so every request's tool list can be read back.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { probeBwrap } from '../../core/sandbox/bwrap';
import { ScriptedModelServer } from '../../testkit/scripted-server';
import type { ScriptedToolCall, ScriptedTurn } from '../../testkit/scripted-turns';
import { lar } from '../support/lar-cli';

const root = resolve(__dirname, '../../..');
const bwrap = probeBwrap();
const call = (name: string, args: Record<string, unknown> = {}): ScriptedTurn => ({
  toolCalls: [{ name, arguments: args } satisfies ScriptedToolCall],
});
const SECRET = 'mcp-secret-7f3a9c2e';
const LITERAL_SECRET = 'lit-9c2e';

interface Line {
  type: string;
  tool?: string;
  status?: string;
  args?: unknown;
  result?: { output?: string; error?: string; filesChanged?: string[] };
  mcp?: { server: string; tool: string; digest: string };
  reason?: string;
  server?: string;
  tools?: { name: string }[];
  error?: string;
}

function workflowFile(dir: string): string {
  const file = join(dir, 'mcp.larflow.json');
  writeFileSync(
    file,
    JSON.stringify({
      lar: 1,
      id: 'mcp-test',
      stages: [
        { id: 'look', tools: ['mcp__everything__echo', 'mcp__fs__list_*', 'enter_stage'], budget: 20 },
        { id: 'work', tools: ['mcp__fs__*', 'mcp__fault__*', 'run_command', 'submit'], budget: 30 },
      ],
      transitions: { look: ['work'] },
      start: 'look',
      terminal: ['work'],
      outcome: { command: 'true' },
      // The servers live in this repository, which a sandbox does not otherwise see under /tmp.
      sandbox: { readable: [join(root, 'node_modules'), join(root, 'test-fixtures/mcp')], protected: [] },
    }),
  );
  return file;
}

function mcpConfig(dir: string): string {
  const file = join(dir, 'mcp.json');
  const node = process.execPath;
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        everything: {
          command: node,
          args: [join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
        },
        fs: {
          command: node,
          args: [
            join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'),
            '${workspaceFolder}',
          ],
        },
        fault: {
          command: node,
          args: [join(root, 'test-fixtures/mcp/fault-server.mjs')],
          // API_TOKEN is written in the file, not in lar's environment: only the MCP secrets can mask it.
          env: {
            SECRET_TOKEN: '${LAR_TEST_MCP_SECRET}',
            API_TOKEN: LITERAL_SECRET,
            GREETING: 'hello-from-config',
            DEBUG: 'true',
          },
          timeout: 3,
        },
      },
    }),
  );
  return file;
}

function listen(): Promise<{ server: Server; port: number }> {
  return new Promise((res) => {
    const server = createServer((s) => s.end()).listen(0, '127.0.0.1', () =>
      res({ server, port: (server.address() as { port: number }).port }),
    );
  });
}

test(
  'MCP tools under the workflow: gated per stage, globbed, offered only where permitted, confined, faults handled, secrets masked',
  { skip: !bwrap.ok && 'bubblewrap cannot start here' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lar-mcp-'));
    const ws = mkdtempSync(join(tmpdir(), 'lar-mcp-ws-'));
    const outside = mkdtempSync(join(tmpdir(), 'lar-mcp-outside-'));
    writeFileSync(join(ws, 'README'), 'a task\n');
    const host = await listen();
    const script: ScriptedTurn[] = [
      call('mcp__everything__echo', { message: 'hello' }),
      call('mcp__fs__write_file', { path: join(ws, 'early.txt'), content: 'too early' }),
      call('mcp__fs__list_allowed_directories'),
      call('enter_stage', { stage: 'work' }),
      call('mcp__fs__write_file', { path: join(ws, 'made.txt'), content: 'made by the filesystem server\n' }),
      call('mcp__fault__write_path', { path: join(outside, 'escape.txt') }),
      call('mcp__fault__probe_network', { port: host.port }),
      call('mcp__fault__show_env', { name: 'SECRET_TOKEN' }),
      call('mcp__fault__show_env', { name: 'GREETING' }),
      call('mcp__fault__show_env', { name: 'API_TOKEN' }),
      call('mcp__fault__add_tool'),
      call('mcp__fault__late_tool'),
      call('mcp__fault__flood', { mib: 50 }),
      call('mcp__fault__hang'),
      call('mcp__fault__crash'),
      call('submit'),
    ];
    const model = new ScriptedModelServer({ script });
    const endpoint = await model.start();
    const out = join(dir, 'run.lar.jsonl');
    try {
      const r = await lar(
        [
          ...['run', '--task', 'use the MCP tools', '--endpoint', endpoint, '--workspace', ws, '--out', out],
          ...['--workflow', workflowFile(dir), '--mcp-config', mcpConfig(dir), '--sandbox', 'required', '--yes'],
        ],
        { LAR_TEST_MCP_SECRET: SECRET },
      );
      assert.equal(r.code, 0, r.err + r.out);
      const text = readFileSync(out, 'utf8');
      const [header, ...lines] = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Line & Record<string, unknown>);
      const calls = lines.filter((l) => l.type === 'tool_call');
      const byTool = (t: string) => calls.filter((c) => c.tool === t);

      // The header says how each server ran: all three confined, none with the network.
      const servers = (
        header!.mcp as unknown as { servers: { server: string; confined?: boolean; network?: string }[] }
      ).servers;
      assert.deepEqual(
        servers.map((s) => [s.server, s.confined, s.network]),
        [
          ['everything', true, 'none'],
          ['fs', true, 'none'],
          ['fault', true, 'none'],
        ],
      );

      // Permitted in one stage, blocked in another with the reason fed back; a glob permits a family.
      assert.equal(byTool('mcp__everything__echo')[0]!.status, 'ok');
      assert.equal(byTool('mcp__everything__echo')[0]!.mcp?.tool, 'echo');
      const early = byTool('mcp__fs__write_file')[0]!;
      assert.equal(early.status, 'blocked');
      assert.ok(!existsSync(join(ws, 'early.txt')));
      const toolMessages = (i: number) =>
        (
          model.requests.filter((q) => q.path.endsWith('/chat/completions'))[i]!.body as {
            messages: { role: string; content: unknown }[];
          }
        ).messages
          .filter((m) => m.role === 'tool')
          .map((m) => String(m.content));
      assert.match(toolMessages(2).at(-1)!, /mcp__fs__write_file is not permitted in stage "look"/);
      assert.equal(byTool('mcp__fs__list_allowed_directories')[0]!.status, 'ok');

      // Only the permitted tools reach the model: in look, echo and the fs list_* family; in work, all of fs and fault.
      const chats = model.requests.filter((q) => q.path.endsWith('/chat/completions'));
      const mcpTools = (i: number) =>
        ((chats[i]!.body as { tools?: { function: { name: string } }[] }).tools ?? [])
          .map((t) => t.function.name)
          .filter((n) => n.startsWith('mcp__'))
          .sort();
      assert.deepEqual(mcpTools(0), [
        'mcp__everything__echo',
        'mcp__fs__list_allowed_directories',
        'mcp__fs__list_directory',
        'mcp__fs__list_directory_with_sizes',
      ]);
      assert.ok(mcpTools(4).includes('mcp__fs__write_file') && mcpTools(4).includes('mcp__fault__hang'));
      assert.ok(!mcpTools(4).some((n) => n.startsWith('mcp__everything__')));

      // A server writes the workspace (its change recorded), never outside it, and reaches no network.
      const made = byTool('mcp__fs__write_file')[1]!;
      assert.equal(made.status, 'ok');
      assert.deepEqual(made.result?.filesChanged, ['made.txt']);
      assert.equal(readFileSync(join(ws, 'made.txt'), 'utf8'), 'made by the filesystem server\n');
      assert.equal(byTool('mcp__fault__write_path')[0]!.status, 'error');
      assert.ok(!existsSync(join(outside, 'escape.txt')), 'a confined server wrote outside the workspace');
      assert.match(byTool('mcp__fault__probe_network')[0]!.result?.output ?? '', /^refused/);

      // A secret in the server's env is masked in the trajectory (and so in what the model read).
      assert.equal(byTool('mcp__fault__show_env')[0]!.status, 'ok');
      // The server's env reaches it inside its sandbox; what is not a secret is not masked (`true` stays JSON).
      assert.equal(byTool('mcp__fault__show_env')[1]!.result?.output, 'GREETING=hello-from-config');
      assert.ok(!text.includes(SECRET), 'the secret reached the trajectory');
      assert.equal(byTool('mcp__fault__show_env')[2]!.result?.output, 'API_TOKEN=***');
      assert.ok(!text.includes(LITERAL_SECRET), "a secret of the server's env reached the trajectory");
      assert.ok(!r.err.includes(LITERAL_SECRET), 'a secret reached the terminal');
      for (const s of [SECRET, LITERAL_SECRET])
        assert.ok(!JSON.stringify(model.requests.map((q) => q.body)).includes(s), 'a secret reached the model');

      // list_changed mid-run: recorded, the new tool checked against the stage and offered, the model told.
      const changed = lines.find((l) => l.type === 'mcp_tools' && l.reason === 'list_changed' && l.server === 'fault');
      assert.ok(changed?.tools?.some((t) => t.name === 'mcp__fault__late_tool'));
      assert.equal(byTool('mcp__fault__late_tool')[0]!.status, 'ok');

      // A 50 MB answer is not read; a hang times out; a crash is said with its stderr; the run goes on.
      assert.equal(byTool('mcp__fault__flood')[0]!.status, 'error');
      assert.match(byTool('mcp__fault__flood')[0]!.result?.error ?? '', /was not read/);
      assert.equal(byTool('mcp__fault__hang')[0]!.status, 'timeout');
      const crash = byTool('mcp__fault__crash')[0]!;
      assert.equal(crash.status, 'error');
      assert.match(crash.result?.error ?? '', /crashing on purpose/);
      const stopped = lines.find((l) => l.type === 'mcp_tools' && l.reason === 'stopped');
      assert.equal(stopped?.server, 'fault');
      assert.ok(
        !mcpTools(chats.length - 1).some((n) => n.startsWith('mcp__fault__')),
        "a stopped server's tools were still offered",
      );
      assert.match(r.err, /MCP server "fault" stopped/);
      assert.equal(byTool('submit')[0]!.status, 'ok');

      // The verifier reads the same file to the same rewards: known only while listed.
      const v = await lar(['verify', out, '--json']);
      assert.equal(v.code, 0, v.err);
      // JSON Lines: a {"step": …} line per judged event.
      const steps = v.out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { step?: { tool?: string; toolReward?: number } })
        .flatMap((l) => (l.step ? [l.step] : []));
      const rewards = steps.filter((s) => s.tool).map((s) => [s.tool, s.toolReward]);
      assert.deepEqual(
        rewards.find(([t]) => t === 'mcp__fs__write_file'),
        ['mcp__fs__write_file', -1],
      );
      assert.deepEqual(
        rewards.find(([t]) => t === 'mcp__everything__echo'),
        ['mcp__everything__echo', 1],
      );
    } finally {
      await model.stop();
      host.server.close();
    }
  },
);

test('without --yes a tool that does not say it only reads is refused at approval, a read-only one runs; under warn a tool the stage does not permit is still blocked; unconfined is recorded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-mcp-'));
  const ws = mkdtempSync(join(tmpdir(), 'lar-mcp-ws-'));
  const model = new ScriptedModelServer({
    script: [
      call('mcp__everything__echo', { message: 'read only' }),
      call('mcp__everything__get-sum', { a: 1, b: 2 }),
      call('mcp__everything__no-such-tool', {}),
      call('enter_stage', { stage: 'work' }),
      call('mcp__fs__create_directory', { path: join(ws, 'made') }),
      call('submit'),
    ],
  });
  const endpoint = await model.start();
  const out = join(dir, 'run.lar.jsonl');
  try {
    const r = await lar([
      ...['run', '--task', 'approvals', '--endpoint', endpoint, '--workspace', ws, '--out', out],
      ...['--workflow', workflowFile(dir), '--mcp-config', mcpConfig(dir), '--sandbox', 'off', '--enforcement', 'warn'],
    ]);
    assert.equal(r.code, 0, r.err + r.out);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line & { mcp?: { servers?: { confined?: boolean }[] } });
    assert.ok(
      lines[0]!.mcp?.servers?.every((s) => s.confined === false),
      'the header says the servers ran unconfined',
    );
    const calls = lines.filter((l) => l.type === 'tool_call');
    assert.deepEqual(
      calls.map((c) => [c.tool, c.status]),
      [
        ['mcp__everything__echo', 'ok'],
        // Under `warn` too: an MCP tool's permission is its only policy.
        ['mcp__everything__get-sum', 'blocked'],
        ['mcp__everything__no-such-tool', 'blocked'],
        ['enter_stage', 'ok'],
        ['mcp__fs__create_directory', 'denied'],
        ['submit', 'ok'],
      ],
    );
    assert.ok(!existsSync(join(ws, 'made')));
    assert.match(
      r.err,
      /mcp__fs__create_directory needs approval \(the MCP tool "create_directory" of server "fs" does not say it only reads/,
    );
  } finally {
    await model.stop();
  }
});
