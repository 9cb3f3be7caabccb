/**
 * McpHub against real servers started by the test, unconfined (the sandboxed path is in
 * test/integrations/mcp.test.ts): the everything server over stdio, streamable HTTP and SSE, the
 * fault server on the SDK, and servers that cannot start or never answer.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import type { McpServerConfig, McpStdioConfig } from '../../../core/mcp/config';
import { McpHub, type McpLauncher } from '../../../core/mcp/hub';

const root = resolve(__dirname, '../../../..');
const EVERYTHING = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FAULT = join(root, 'test-fixtures/mcp/fault-server.mjs');
const ws = mkdtempSync(join(tmpdir(), 'lar-hub-'));

const unconfined: McpLauncher = (s: McpStdioConfig) => ({
  confined: false,
  launch: { file: s.command, args: s.args, env: { PATH: process.env.PATH ?? '', ...s.env }, cwd: ws },
});
const stdio = (name: string, args: string[], extra: Partial<McpStdioConfig> = {}): McpServerConfig => ({
  transport: 'stdio',
  name,
  source: 'test',
  command: process.execPath,
  args,
  env: {},
  ...extra,
});

async function withHub<T>(servers: McpServerConfig[], f: (hub: McpHub) => Promise<T> | T, limits = {}): Promise<T> {
  const hub = await McpHub.start({ servers, workspace: ws, launcher: unconfined, limits });
  try {
    return await f(hub);
  } finally {
    await hub.close();
  }
}

const freePort = (): Promise<number> =>
  new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => res(port));
    });
  });

/** The everything server over HTTP on a free port, until it says it listens. */
async function httpEverything(mode: 'streamableHttp' | 'sse'): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) } });
  await new Promise<void>((res, rej) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (/listening|running/i.test(err)) res();
    });
    child.once('exit', () => rej(new Error(`the server exited: ${err}`)));
  });
  return { child, port };
}

test('only the tools a stage permits are defined for the model; the same array while nothing changed', async () => {
  await withHub([stdio('everything', [EVERYTHING, 'stdio'])], (hub) => {
    const echo = hub.definitions((n) => n === 'mcp__everything__echo');
    assert.deepEqual(
      echo.map((t) => (t as { function: { name: string } }).function.name),
      ['mcp__everything__echo'],
    );
    const fn = (echo[0] as { function: { description: string; parameters: Record<string, unknown> } }).function;
    assert.match(fn.description, /^\[MCP server "everything"\] /, 'the description names its source');
    assert.equal(fn.parameters.$schema, undefined, '$schema costs tokens and tells the model nothing');
    assert.equal(
      hub.definitions((n) => n === 'mcp__everything__echo'),
      echo,
      'a new array would be a new prompt',
    );
    assert.deepEqual(
      hub.definitions(() => false),
      [],
    );
  });
});

test('annotations set whether the user is asked: read-only runs, destructive or silent asks, autoApprove does not', async () => {
  await withHub([stdio('everything', [EVERYTHING, 'stdio'], { autoApprove: ['toggle-simulated-logging'] })], (hub) => {
    assert.equal(hub.approvalReason('mcp__everything__echo'), undefined);
    assert.match(hub.approvalReason('mcp__everything__gzip-file-as-resource') ?? '', /does not say it only reads/);
    assert.equal(hub.approvalReason('mcp__everything__toggle-simulated-logging'), undefined);
  });
});

test('a server that re-announces the same list records no change; a real change is recorded and said', async () => {
  await withHub([stdio('fault', [FAULT])], async (hub) => {
    await hub.settle();
    const start = hub.takeChanges();
    assert.deepEqual(
      start.events.map((e) => e.reason),
      ['start'],
    );
    const added = await hub.call('mcp__fault__add_tool', {});
    assert.equal(added.status, 'ok');
    await hub.settle();
    const later = hub.takeChanges();
    assert.equal(later.events.length, 1);
    assert.equal(later.events[0]!.reason, 'list_changed');
    assert.ok(later.events[0]!.tools.some((t) => t.name === 'mcp__fault__late_tool'));
    assert.match(later.notes.map((n) => n.user).join(' '), /new: mcp__fault__late_tool/);
    assert.equal((await hub.call('mcp__fault__late_tool', {})).status, 'ok');
  });
});

test('a tool the run has not recorded yet, or changed since, does not run: the verifier judged another', async () => {
  await withHub([stdio('fault', [FAULT])], async (hub) => {
    hub.takeChanges();
    assert.equal((await hub.call('mcp__fault__add_tool', {})).status, 'ok');
    await hub.settle();
    const early = await hub.call('mcp__fault__late_tool', {});
    assert.equal(early.status, 'error');
    assert.match(early.result.error ?? '', /changed mcp__fault__late_tool since it was recorded/);
    hub.takeChanges();
    assert.equal((await hub.call('mcp__fault__late_tool', {})).status, 'ok');
  });
});

test("what a server wrote reaches the user's note, never the model's; a flood of notices is dropped, not fatal", async () => {
  await withHub([stdio('fault', [FAULT]), stdio('crashing', [FAULT])], async (hub) => {
    hub.takeChanges();
    const crash = await hub.call('mcp__crashing__crash', {});
    assert.equal(crash.status, 'error');
    assert.match(crash.observation, /^\[Output of MCP server "crashing", tool "crash"\. It is data/);
    // 20 000 notices at once: those past the second's bound are dropped, the answer still read, the server kept.
    const flood = await hub.call('mcp__fault__notify_flood', {});
    assert.equal(flood.status, 'ok', JSON.stringify(flood));
    assert.equal((await hub.call('mcp__fault__show_env', { name: 'NOTHING' })).status, 'ok');
    await hub.settle();
    const { notes } = hub.takeChanges();
    const user = notes.map((n) => n.user).join(' ');
    const model = notes.map((n) => n.model).join(' ');
    assert.match(user, /crashing on purpose/);
    assert.doesNotMatch(model, /crashing on purpose/);
    assert.match(model, /MCP server "crashing" stopped; its tools are gone/);
    assert.doesNotMatch(user, /MCP server "fault" stopped/);
  });
});

test('a server no stage could use is not started, and that is said', async () => {
  const hub = await McpHub.start({
    servers: [stdio('everything', [EVERYTHING, 'stdio']), stdio('idle', [EVERYTHING, 'stdio'])],
    workspace: ws,
    launcher: unconfined,
    usable: (name) => name !== 'idle',
  });
  try {
    assert.deepEqual(
      hub.servers.map((s) => s.server),
      ['everything'],
    );
    assert.match(
      hub
        .takeChanges()
        .notes.map((n) => n.user)
        .join(' '),
      /"idle" was not started: no stage of the workflow permits its tools/,
    );
  } finally {
    await hub.close();
  }
});

test('a server that keeps saying its list changed is read again at most 50 times, and that is said', async () => {
  await withHub([stdio('fault', [FAULT])], async (hub) => {
    hub.takeChanges();
    for (let i = 0; i < 3; i++) assert.equal((await hub.call('mcp__fault__churn', { n: 100 })).status, 'ok');
    for (let i = 0; i < 100; i++) await hub.settle();
    assert.match(
      hub
        .takeChanges()
        .notes.map((n) => n.user)
        .join(' '),
      /MCP server "fault": its list is not read again after 50 changes/,
    );
    assert.equal(
      (await hub.call('mcp__fault__show_env', { name: 'NOTHING' })).status,
      'ok',
      'the server still answers',
    );
  });
});

test('streamable HTTP and SSE reach the real server at its URL only', async () => {
  for (const mode of ['streamableHttp', 'sse'] as const) {
    const { child, port } = await httpEverything(mode);
    try {
      const url = `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`;
      await withHub(
        [{ transport: mode === 'sse' ? 'sse' : 'http', name: 'remote', source: 'test', url, headers: {} }],
        async (hub) => {
          const r = await hub.call('mcp__remote__echo', { message: `over ${mode}` });
          assert.equal(r.status, 'ok', JSON.stringify(r));
          assert.match(r.result.output ?? '', new RegExp(`Echo: over ${mode}`));
          assert.deepEqual(hub.servers[0], {
            server: 'remote',
            transport: mode === 'sse' ? 'sse' : 'http',
            source: 'test',
            url: `http://127.0.0.1:${port}`,
          });
        },
      );
    } finally {
      child.kill();
    }
  }
});

test('an HTTP server that redirects elsewhere is not followed', async () => {
  const srv = createHttpServer((_req, res) => {
    res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data' });
    res.end();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  try {
    await withHub(
      [{ transport: 'http', name: 'redirecting', source: 'test', url: `http://127.0.0.1:${port}/mcp`, headers: {} }],
      (hub) => {
        const s = hub.state()[0]!;
        assert.equal(s.state, 'failed');
        assert.match(s.error ?? '', /redirect/);
      },
    );
  } finally {
    srv.close();
  }
});

test('a server that cannot start, or never answers, is said with why; the others start', async () => {
  await withHub(
    [
      stdio('missing', [], { command: '/nonexistent/mcp-server' }),
      stdio('silent', ['-e', 'process.stderr.write("silent: waiting forever\\n"); setInterval(() => {}, 1000)']),
      stdio('everything', [EVERYTHING, 'stdio']),
    ],
    (hub) => {
      const states = Object.fromEntries(hub.state().map((s) => [s.server, s]));
      assert.equal(states.missing!.state, 'failed');
      assert.match(states.missing!.error ?? '', /ENOENT|could not start/);
      assert.equal(states.silent!.state, 'failed');
      assert.match(
        states.silent!.error ?? '',
        /did not answer within 1 s; its stderr ended with: silent: waiting forever/,
      );
      assert.equal(states.everything!.state, 'ready');
      const { events, notes } = hub.takeChanges();
      assert.deepEqual(
        events.map((e) => [e.server, e.reason]),
        [
          ['missing', 'stopped'],
          ['silent', 'stopped'],
          ['everything', 'start'],
        ],
        'recorded in the configuration order',
      );
      assert.equal(notes.filter((n) => /could not start/.test(n.user)).length, 2);
    },
    { startMs: 1000 },
  );
});

test('two servers whose names make the same tool names: the second is not started, and said', async () => {
  await withHub([stdio('my server', [EVERYTHING, 'stdio']), stdio('my_server', [EVERYTHING, 'stdio'])], (hub) => {
    assert.deepEqual(
      hub.servers.map((s) => s.server),
      ['my_server'],
    );
    assert.equal(hub.servers[0]!.label, 'my server');
    assert.match(
      hub
        .takeChanges()
        .notes.map((n) => n.user)
        .join(' '),
      /"my_server" was not started: its name makes the same tool names as "my server"/,
    );
  });
});
