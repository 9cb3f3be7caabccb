import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configDigest } from '../../../core/mcp/config';
import { gatherServers } from '../../../extension/mcp/sources';
import { inputsNeeded, resolveCandidates } from '../../../extension/mcp/resolve';

const VSCODE_FILE = `// the workspace's servers, as VS Code reads them (JSONC)
{
  "inputs": [
    { "type": "promptString", "id": "token", "description": "API token", "password": true },
    { "type": "pickString", "id": "region", "options": ["eu", "us"] },
  ],
  "servers": {
    "github": {
      "command": "npx",
      "args": ["-y", "server-github", "\${workspaceFolder}"],
      "env": { "TOKEN": "\${input:token}" },
      "autoApprove": ["delete_repo"],
    },
    "remote": { "type": "http", "url": "https://mcp.example.com/\${input:region}/mcp" },
    "shared": { "command": "from-vscode-json" },
  },
}`;

const PORTABLE_FILE = JSON.stringify({
  mcpServers: {
    shared: { command: 'from-dot-mcp-json' },
    db: { command: 'db-mcp', args: ['${DB_CONFIG:-/etc/db.json}'], env: { URL: '${DATABASE_URL}' } },
  },
});

const ctx = { workspaceFolder: '/work/ws', userHome: '/home/u', env: { DATABASE_URL: 'postgres://u:pw@db/x' } };

test('servers come from the user setting, then .vscode/mcp.json, then .mcp.json; a name defined twice keeps the first, said', () => {
  const { candidates, problems } = gatherServers({
    setting: { shared: { command: 'from-setting', autoApprove: ['read'] }, mine: { url: 'https://me.example/mcp' } },
    vscode: VSCODE_FILE,
    portable: PORTABLE_FILE,
  });
  assert.deepEqual(
    candidates.map((c) => [c.server.name, c.server.source, c.origin, c.format]),
    [
      ['shared', 'lean4Agentic.mcpServers', 'user', 'mcpServers'],
      ['mine', 'lean4Agentic.mcpServers', 'user', 'mcpServers'],
      ['github', '.vscode/mcp.json', 'workspace', 'vscode'],
      ['remote', '.vscode/mcp.json', 'workspace', 'vscode'],
      ['db', '.mcp.json', 'workspace', 'mcpServers'],
    ],
  );
  assert.deepEqual(problems, [
    'MCP server "shared" is defined in both lean4Agentic.mcpServers and .vscode/mcp.json; the one in lean4Agentic.mcpServers is used.',
    'MCP server "shared" is defined in both lean4Agentic.mcpServers and .mcp.json; the one in lean4Agentic.mcpServers is used.',
  ]);
  const shared = candidates[0]!.server;
  assert.equal(shared.transport === 'stdio' && shared.command, 'from-setting');
});

test("autoApprove counts only from the user's setting: a workspace file's is dropped before anything uses it", () => {
  const { candidates } = gatherServers({
    setting: { mine: { command: 'mine', autoApprove: ['read'] } },
    vscode: VSCODE_FILE,
  });
  const byName = new Map(candidates.map((c) => [c.server.name, c]));
  assert.deepEqual(byName.get('mine')!.server.autoApprove, ['read']);
  assert.equal(byName.get('github')!.server.autoApprove, undefined);
  // What the user allows is the server as it will run, without what was dropped.
  assert.equal(byName.get('github')!.digest, configDigest(byName.get('github')!.server));
});

test('each file is resolved in its own format: ${input:…} in VS Code’s, ${VAR:-default} in .mcp.json', () => {
  const { candidates } = gatherServers({ vscode: VSCODE_FILE, portable: PORTABLE_FILE });
  const github = candidates.find((c) => c.server.name === 'github')!;
  assert.deepEqual(
    inputsNeeded(github).map((i) => [i.id, i.password]),
    [['token', true]],
  );
  const r = resolveCandidates(candidates, ctx, new Map([['github', new Map([['token', 'tok-123']])]]));
  const byName = new Map(r.servers.map((s) => [s.name, s]));
  const gh = byName.get('github')!;
  assert.ok(gh.transport === 'stdio');
  assert.deepEqual(gh.args, ['-y', 'server-github', '/work/ws']);
  assert.equal(gh.env.TOKEN, 'tok-123');
  const db = byName.get('db')!;
  assert.ok(db.transport === 'stdio');
  assert.deepEqual(db.args, ['/etc/db.json']);
  // Env values and secret inputs are masked wherever they could show.
  assert.ok(r.secrets.includes('tok-123'));
  assert.ok(r.secrets.includes('postgres://u:pw@db/x'));
  // The region was never given: that server is left out, saying which input it lacks; the others go on.
  assert.equal(byName.has('remote'), false);
  assert.ok(
    r.notes.includes('MCP server "remote" is not started: no value was given for ${input:region}.'),
    r.notes.join('\n'),
  );
});

test("one server's input value never fills in another's: a server without its own value is left out", () => {
  const file = JSON.stringify({
    inputs: [{ type: 'promptString', id: 'token', password: true }],
    servers: {
      github: { command: 'gh', env: { TOKEN: '\${input:token}' } },
      planted: { command: 'evil', env: { TOKEN: '\${input:token}' } },
    },
  });
  const { candidates } = gatherServers({ vscode: file });
  const r = resolveCandidates(candidates, ctx, new Map([['github', new Map([['token', 'tok-123']])]]));
  assert.deepEqual(
    r.servers.map((s) => s.name),
    ['github'],
  );
  assert.ok(r.notes.includes('MCP server "planted" is not started: no value was given for ${input:token}.'));
});

test('a file that cannot be used, or a setting that is not an object, is said and starts nothing; the other sources still do', () => {
  const { candidates, problems } = gatherServers({
    setting: ['not', 'an', 'object'],
    vscode: '{ "servers": { "a": { "command": "x" } ',
    portable: PORTABLE_FILE,
  });
  assert.deepEqual(
    candidates.map((c) => c.server.name),
    ['shared', 'db'],
  );
  assert.equal(problems.length, 2, problems.join('\n'));
  assert.match(
    problems[0]!,
    /^lean4Agentic\.mcpServers must be an object of server names to configurations, not an array/,
  );
  assert.match(problems[1]!, /^\.vscode\/mcp\.json:\d+:\d+: JSON syntax error: .*; no MCP server of it is started\.$/);
});

test('a bad server in a file is left out with a sentence naming the file, the server and the key; its neighbours are kept', () => {
  const { candidates, problems } = gatherServers({
    portable: JSON.stringify({ mcpServers: { good: { command: 'ok' }, bad: { command: 42 } } }),
    setting: {},
  });
  assert.deepEqual(
    candidates.map((c) => c.server.name),
    ['good'],
  );
  assert.deepEqual(problems, [
    '.mcp.json: server "bad": command must be a string, not a number; the server is left out.',
  ]);
});

test('no configuration at all: no server and nothing to say', () => {
  assert.deepEqual(gatherServers({}), { candidates: [], problems: [] });
});
