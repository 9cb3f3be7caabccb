import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sep } from 'node:path';
import {
  configDigest,
  inputsOf,
  McpConfigError,
  mergeConfigs,
  parseMcpConfig,
  resolveServer,
  type McpConfig,
  type McpHttpConfig,
  type McpServerConfig,
  type McpStdioConfig,
  type VariableContext,
} from '../../../core/mcp/config';
import { fc } from '../../support/fc';

const VSCODE_FILE = `// Servers for this workspace (VS Code reads this file as JSONC)
{
  "inputs": [
    { "type": "promptString", "id": "github-token", "description": "GitHub personal access token", "password": true },
    { "type": "pickString", "id": "region", "description": "Region", "options": ["eu", "us"], "default": "eu", },
  ],
  "servers": {
    /* a local server, its token asked for once */
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "\${input:github-token}" },
    },
    "files": { "command": "node", "args": ["\${workspaceFolder}\${/}tools\${pathSeparator}files.js"], "cwd": "\${userHome}" },
    "remote": {
      "url": "https://mcp.example.com/\${input:region}/mcp",
      "headers": { "Authorization": "Bearer \${env:REMOTE_TOKEN}" },
    },
    "legacy": { "type": "sse", "url": "http://localhost:3001/sse" },
  },
}
`;

const CLAUDE_FILE = JSON.stringify({
  mcpServers: {
    'api-server': {
      type: 'http',
      url: '${API_BASE_URL:-https://api.example.com}/mcp',
      headers: { Authorization: 'Bearer ${API_KEY}' },
    },
    db: {
      command: '/usr/local/bin/db-mcp',
      args: ['--config', '${CONFIG_PATH:-/etc/db.json}'],
      env: { DB_URL: '${DATABASE_URL}' },
    },
    'cursor-style': { command: 'node', args: ['${workspaceFolder}/srv.js'], env: { WHERE: '${env:HOME}' } },
  },
});

const CLINE_FILE = JSON.stringify({
  mcpServers: {
    weather: {
      type: 'stdio',
      command: 'node',
      args: ['/home/u/mcp/weather/build/index.js'],
      env: { OPENWEATHER_API_KEY: 'owm-0123456789' },
      disabled: false,
      autoApprove: ['get_forecast', 'get_alerts'],
      timeout: 30,
    },
    old: { command: 'python', args: ['-m', 'old_server'], disabled: true },
    remote: {
      type: 'streamableHttp',
      url: 'https://mcp.example.org/mcp',
      headers: { 'X-Api-Key': 'k-0123456789' },
      timeout: 120,
    },
    legacy: { transportType: 'sse', url: 'http://127.0.0.1:8080/sse', autoApprove: [] },
  },
});

function context(env: Record<string, string> = {}, inputs: Record<string, string> = {}): VariableContext {
  return {
    workspaceFolder: '/home/u/proj',
    userHome: '/home/u',
    env,
    input: (id) => (Object.hasOwn(inputs, id) ? inputs[id] : undefined),
  };
}

const byName = (config: McpConfig, name: string): McpServerConfig => {
  const found = config.servers.find((s) => s.name === name);
  assert.ok(found, `no server ${name}`);
  return found;
};
const stdio = (s: McpServerConfig): McpStdioConfig => {
  assert.equal(s.transport, 'stdio');
  return s;
};
const http = (s: McpServerConfig): McpHttpConfig => {
  assert.ok(s.transport !== 'stdio');
  return s;
};
const problemsOf = (text: string, source = '.mcp.json'): string[] => parseMcpConfig(text, source).problems;
const oneServer = (server: unknown): string => JSON.stringify({ mcpServers: { srv: server } });

test("VS Code's mcp.json: comments, trailing commas, inputs, and the transport told from the keys", () => {
  const config = parseMcpConfig(VSCODE_FILE, '.vscode/mcp.json');
  assert.equal(config.format, 'vscode');
  assert.deepEqual(config.problems, []);
  assert.deepEqual(
    config.servers.map((s) => [s.name, s.transport, s.source]),
    [
      ['github', 'stdio', '.vscode/mcp.json'],
      ['files', 'stdio', '.vscode/mcp.json'],
      ['remote', 'http', '.vscode/mcp.json'],
      ['legacy', 'sse', '.vscode/mcp.json'],
    ],
  );
  assert.deepEqual(config.inputs, [
    { id: 'github-token', type: 'promptString', description: 'GitHub personal access token', password: true },
    { id: 'region', type: 'pickString', description: 'Region', password: false, options: ['eu', 'us'], default: 'eu' },
  ]);
  const github = stdio(byName(config, 'github'));
  assert.equal(github.command, 'npx');
  assert.deepEqual(github.args, ['-y', '@modelcontextprotocol/server-github']);
  assert.deepEqual({ ...github.env }, { GITHUB_PERSONAL_ACCESS_TOKEN: '${input:github-token}' });
  assert.deepEqual({ ...http(byName(config, 'remote')).headers }, { Authorization: 'Bearer ${env:REMOTE_TOKEN}' });
});

test("VS Code's variables resolve; an input not given yet is listed, and every secret is collected", () => {
  const config = parseMcpConfig(VSCODE_FILE, '.vscode/mcp.json');
  const ctx = context({ REMOTE_TOKEN: 'rt-0123456789', PATH: '/usr/bin' }, { 'github-token': 'ghp_0123456789abcdef' });

  const github = resolveServer(byName(config, 'github'), config.format, config.inputs, ctx);
  assert.deepEqual({ ...stdio(github.server).env }, { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_0123456789abcdef' });
  assert.deepEqual(github.missingInputs, []);
  assert.deepEqual(github.secrets, ['ghp_0123456789abcdef']);
  assert.deepEqual(github.problems, []);

  const files = resolveServer(byName(config, 'files'), config.format, config.inputs, ctx);
  assert.deepEqual(stdio(files.server).args, [`/home/u/proj${sep}tools${sep}files.js`]);
  assert.equal(stdio(files.server).cwd, '/home/u');

  // The region is not known yet: the caller asks for it, then resolves again.
  const remote = byName(config, 'remote');
  assert.deepEqual(inputsOf(remote), ['region']);
  const first = resolveServer(remote, config.format, config.inputs, ctx);
  assert.deepEqual(first.missingInputs, ['region']);
  assert.equal(http(first.server).url, 'https://mcp.example.com/${input:region}/mcp');
  assert.deepEqual({ ...http(first.server).headers }, { Authorization: 'Bearer rt-0123456789' });
  // The variable's value (its name looks secret) and the whole header.
  assert.deepEqual(first.secrets.sort(), ['Bearer rt-0123456789', 'rt-0123456789']);
  const again = resolveServer(
    remote,
    config.format,
    config.inputs,
    context(ctx.env as Record<string, string>, { region: 'eu' }),
  );
  assert.equal(http(again.server).url, 'https://mcp.example.com/eu/mcp');
  assert.deepEqual(again.missingInputs, []);
  // Resolution leaves the configuration as written.
  assert.equal(http(remote).url, 'https://mcp.example.com/${input:region}/mcp');
});

test("VS Code's format keeps a variable it does not know as written and says where it is", () => {
  const text = JSON.stringify({
    inputs: [{ type: 'promptString', id: 'key', password: true }],
    servers: {
      tool: { command: 'run', args: ['${HOME}', '${command:pick}', '${input:nope}'], env: { K: '${input:key}' } },
    },
  });
  const config = parseMcpConfig(text, '.vscode/mcp.json');
  assert.deepEqual(inputsOf(config.servers[0]!), ['nope', 'key']);
  const r = resolveServer(
    config.servers[0]!,
    config.format,
    config.inputs,
    context({ HOME: '/home/u' }, { key: 'pw-0123456789' }),
  );
  assert.deepEqual(stdio(r.server).args, ['${HOME}', '${command:pick}', '${input:nope}']);
  assert.deepEqual(r.problems, [
    `.vscode/mcp.json: server "tool": args[0] uses \${HOME}, which is not one of VS Code's variables here; it is left as written.`,
    `.vscode/mcp.json: server "tool": args[1] uses \${command:pick}, which is not one of VS Code's variables here; it is left as written.`,
    '.vscode/mcp.json: server "tool": args[2] uses ${input:nope}, which no entry of inputs declares; it is left as written.',
  ]);
  assert.deepEqual(r.secrets, ['pw-0123456789']);
});

test("Claude Code's .mcp.json: ${VAR}, ${VAR:-default}, and Cursor's ${env:X} and ${workspaceFolder}", () => {
  const config = parseMcpConfig(CLAUDE_FILE, '.mcp.json');
  assert.equal(config.format, 'mcpServers');
  assert.deepEqual(config.problems, []);
  assert.deepEqual(config.inputs, []);
  const ctx = context({ API_KEY: 'sk-0123456789abcdef', DATABASE_URL: 'postgres://u:pw@db/app', HOME: '/home/u' });
  const resolve = (name: string) => resolveServer(byName(config, name), config.format, config.inputs, ctx);

  const api = resolve('api-server');
  assert.equal(http(api.server).url, 'https://api.example.com/mcp');
  assert.deepEqual({ ...http(api.server).headers }, { Authorization: 'Bearer sk-0123456789abcdef' });
  assert.deepEqual(api.secrets.sort(), ['Bearer sk-0123456789abcdef', 'sk-0123456789abcdef']);
  assert.deepEqual(api.problems, []);

  const db = resolve('db');
  assert.deepEqual(stdio(db.server).args, ['--config', '/etc/db.json']);
  assert.deepEqual({ ...stdio(db.server).env }, { DB_URL: 'postgres://u:pw@db/app' });
  assert.ok(db.secrets.includes('postgres://u:pw@db/app'));

  const cursor = resolve('cursor-style');
  assert.deepEqual(stdio(cursor.server).args, ['/home/u/proj/srv.js']);
  assert.deepEqual({ ...stdio(cursor.server).env }, { WHERE: '/home/u' });

  // A set variable wins over the default; an unset one without a default is said, naming server and key.
  const set = resolveServer(
    byName(config, 'api-server'),
    config.format,
    [],
    context({ API_BASE_URL: 'https://eu.example.com' }),
  );
  assert.equal(http(set.server).url, 'https://eu.example.com/mcp');
  assert.deepEqual(set.problems, [
    '.mcp.json: server "api-server": headers.Authorization uses ${API_KEY}, which is not set in the environment and has no default (${API_KEY:-…}); it is left as written.',
  ]);
  const ftp = resolveServer(
    byName(config, 'api-server'),
    config.format,
    [],
    context({ API_BASE_URL: 'ftp://x', API_KEY: 'k' }),
  );
  assert.deepEqual(ftp.problems, [
    '.mcp.json: server "api-server": url, its variables resolved, is not an http: or https: address.',
  ]);
  // VS Code's inputs are no variable here.
  const input = parseMcpConfig(oneServer({ command: 'x', args: ['${input:key}'] }), '.mcp.json');
  assert.match(
    resolveServer(input.servers[0]!, 'mcpServers', [], context()).problems[0]!,
    /server "srv": args\[0\] uses \$\{input:key\}/,
  );
});

test("Cline's settings: disabled servers skipped, autoApprove and timeout kept, streamableHttp and transportType read", () => {
  const config = parseMcpConfig(CLINE_FILE, 'cline_mcp_settings.json');
  assert.deepEqual(config.problems, []);
  assert.deepEqual(
    config.servers.map((s) => [s.name, s.transport]),
    [
      ['weather', 'stdio'],
      ['remote', 'http'],
      ['legacy', 'sse'],
    ],
  );
  const weather = stdio(byName(config, 'weather'));
  assert.deepEqual(weather.autoApprove, ['get_forecast', 'get_alerts']);
  assert.equal(weather.timeoutMs, 30_000);
  assert.equal(byName(config, 'remote').timeoutMs, 120_000);
  assert.deepEqual(byName(config, 'legacy').autoApprove, []);
  const r = resolveServer(weather, config.format, config.inputs, context());
  assert.deepEqual(r.secrets, ['owm-0123456789']);
});

test('a file that cannot be read at all is refused with the reason, a syntax error with its line:column', () => {
  const refused = (text: string, message: RegExp): void => {
    assert.throws(
      () => parseMcpConfig(text, '.mcp.json'),
      (e: unknown) => e instanceof McpConfigError && message.test(e.message),
    );
  };
  refused(
    '{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": { "command": "y" }\n  }\n}',
    /^\.mcp\.json:4:5: JSON syntax error: comma expected$/,
  );
  refused('{ "mcpServers": { "a": { "command": "x" ', /^\.mcp\.json:1:41: JSON syntax error: close brace expected$/);
  refused('{"servers": {}, "mcpServers": {}}', /has both "servers" .* and "mcpServers" .*; keep one of them/);
  refused('{"server": {}}', /has neither "servers" .* nor "mcpServers"/);
  refused('[]', /expected a JSON object with "servers" or "mcpServers", not an array/);
  refused('{"mcpServers": []}', /"mcpServers" must be an object of server names to configurations/);
  refused('  \n', /the file is empty/);
  refused(`{"mcpServers": {"a": {"command": "${'x'.repeat(1024 * 1024)}"}}}`, /bytes, more than the 1048576/);
  refused(`{"mcpServers": ${'['.repeat(100_000)}`, /^\.mcp\.json:1:79: nested more than 64 levels deep$/);
});

test('a bad server is left out with a sentence naming it and the key; the others are kept', () => {
  const cases: [unknown, string][] = [
    [{ command: 'npx', args: ['-y', 3] }, 'args[1] must be a string, not a number'],
    [{ command: 'npx', args: '-y server' }, 'args must be an array of strings, not a string'],
    [{ command: 'npx', env: { TOKEN: 42 } }, 'env.TOKEN must be a string, not a number'],
    [{ url: 'https://x.example', headers: { 'X Key': true } }, 'headers["X Key"] must be a string, not a boolean'],
    [{ url: 'https://x.example', headers: ['a'] }, 'headers must be an object of names to strings, not an array'],
    [{ command: '  ' }, 'command must name a program, not be empty'],
    [{ command: ['npx'] }, 'command must be a string, not an array'],
    [{ type: 'http', url: 'ftp://files.example/mcp' }, 'url must be an http: or https: address, not ftp:'],
    [{ url: 'not a url' }, 'url must be an http: or https: address, not "not a url"'],
    [{ type: 'websocket', url: 'wss://x' }, 'type must be "stdio", "http", "sse" or "streamableHttp", not "websocket"'],
    [{ type: 'stdio', url: 'https://x.example' }, 'command is missing'],
    [
      { command: 'a', url: 'https://x.example' },
      'type is missing and both command and url are given: set type to "stdio" or "http"',
    ],
    [{ args: [] }, 'command (a program to start) or url (a server to reach) is missing'],
    [{ command: 'a', timeout: '30' }, 'timeout must be a positive number of seconds, at most 86400, not "30"'],
    [{ command: 'a', autoApprove: 'all' }, 'autoApprove must be an array of strings, not a string'],
    [{ command: 'a', disabled: 'yes' }, 'disabled must be true or false, not "yes"'],
    [{ command: 'a', cwd: 1 }, 'cwd must be a string, not a number'],
    ['npx server', 'the configuration must be an object, not a string'],
  ];
  for (const [server, said] of cases) {
    const text = JSON.stringify({ mcpServers: { good: { command: 'ok' }, srv: server } });
    const config = parseMcpConfig(text, '.mcp.json');
    assert.deepEqual(config.problems, [`.mcp.json: server "srv": ${said}; the server is left out.`]);
    assert.deepEqual(
      config.servers.map((s) => s.name),
      ['good'],
    );
  }
  // A password in a bad address is not repeated in the message.
  assert.deepEqual(problemsOf(oneServer({ url: 'ftp//u:hunter2@host' })), [
    '.mcp.json: server "srv": url must be an http: or https: address, not "ftp//***@host"; the server is left out.',
  ]);
  assert.ok(!problemsOf(oneServer({ url: 'gopher ://u:hunter2@host' }))[0]!.includes('hunter2'));
});

test('names: control characters and overlong names refused, __proto__ and constructor are names like any other', () => {
  const text =
    '{"mcpServers": {"bad\\u0007bell": {"command": "a"}, "__proto__": {"command": "p", "env": {"__proto__": "v", "constructor": "c"}}, "constructor": {"command": "c"}, "toString": {"command": "t"}}}';
  const config = parseMcpConfig(text, '.mcp.json');
  assert.deepEqual(
    config.servers.map((s) => s.name),
    ['__proto__', 'constructor', 'toString'],
  );
  assert.deepEqual(config.problems, [
    '.mcp.json: server "bad\\u0007bell": the name must be 1 to 100 characters, none of them a control character; the server is left out.',
  ]);
  const proto = stdio(config.servers[0]!);
  assert.equal(proto.command, 'p');
  assert.deepEqual(Object.keys(proto.env), ['__proto__', 'constructor']);
  assert.equal(proto.env['__proto__'], 'v');
  assert.equal(({} as Record<string, unknown>).command, undefined, 'no prototype was touched');
  const long = 'n'.repeat(101);
  assert.match(
    problemsOf(JSON.stringify({ mcpServers: { [long]: { command: 'a' } } }))[0]!,
    /server "n{60}…": the name must be 1 to 100/,
  );
  assert.deepEqual(problemsOf(JSON.stringify({ mcpServers: { ['n'.repeat(100)]: { command: 'a' } } })), []);
  // A variable named like a prototype member resolves from the environment only.
  const r = resolveServer(
    parseMcpConfig(oneServer({ command: '${constructor}' }), '.mcp.json').servers[0]!,
    'mcpServers',
    [],
    context(),
  );
  assert.equal(stdio(r.server).command, '${constructor}');
  assert.equal(r.problems.length, 1);
});

test('envFile, more than 64 servers, a name given twice, bad inputs: each said, the rest kept', () => {
  const envFile = parseMcpConfig(
    JSON.stringify({ servers: { py: { command: 'uv', envFile: '${workspaceFolder}/.env' } } }),
    '.vscode/mcp.json',
  );
  assert.deepEqual(
    envFile.servers.map((s) => s.name),
    ['py'],
  );
  assert.deepEqual(envFile.problems, [
    '.vscode/mcp.json: server "py": envFile is not supported; put the variables in env.',
  ]);

  const many = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`s${i}`, { command: 'x' }]));
  const capped = parseMcpConfig(JSON.stringify({ mcpServers: many }), '.mcp.json');
  assert.equal(capped.servers.length, 64);
  assert.equal(capped.servers.at(-1)!.name, 's63');
  assert.deepEqual(capped.problems, [
    '.mcp.json: more than 64 servers; the first 64 are kept and the 6 from server "s64" on are left out.',
  ]);

  const twice = parseMcpConfig('{"mcpServers": {"a": {"command": "one"}, "a": {"command": "two"}}}', '.mcp.json');
  assert.equal(stdio(twice.servers[0]!).command, 'two');
  assert.deepEqual(twice.problems, ['.mcp.json: server "a" is defined twice; the later definition is used.']);

  const inputs = parseMcpConfig(
    JSON.stringify({
      inputs: [
        { id: 'a', description: 'no type' },
        { id: 'b', type: 'pickString' },
        { id: 'c', type: 'promptString' },
        { id: 'c', type: 'promptString' },
        'x',
      ],
      servers: {},
    }),
    '.vscode/mcp.json',
  );
  assert.deepEqual(
    inputs.inputs.map((i) => i.id),
    ['c'],
  );
  assert.deepEqual(inputs.problems, [
    '.vscode/mcp.json: input "a": type is missing: "promptString" or "pickString"; the input is left out.',
    '.vscode/mcp.json: input "b": options must be a non-empty array of strings; the input is left out.',
    '.vscode/mcp.json: input "c": id is declared twice; the first declaration is used.',
    '.vscode/mcp.json: inputs[4]: must be an object, not a string; the input is left out.',
  ]);
});

test('the digest is stable under key order and changes with what the user would be asked about', () => {
  const a = parseMcpConfig(
    '{"mcpServers": {"s": {"command": "npx", "args": ["-y", "srv"], "env": {"A": "1", "B": "2"}}}}',
    '.mcp.json',
  );
  const b = parseMcpConfig(
    '{"mcpServers": {"s": {"env": {"B": "2", "A": "1"}, "args": ["-y", "srv"], "command": "npx"}}}',
    'other/.mcp.json',
  );
  const c = parseMcpConfig(
    '{"mcpServers": {"s": {"command": "npx", "args": ["-y", "srv@2"], "env": {"A": "1", "B": "2"}}}}',
    '.mcp.json',
  );
  const d = parseMcpConfig(
    '{"mcpServers": {"s": {"command": "npx", "args": ["-y", "srv"], "env": {"A": "1", "B": "3"}}}}',
    '.mcp.json',
  );
  const digest = configDigest(a.servers[0]!);
  assert.match(digest, /^[0-9a-f]{64}$/);
  assert.equal(configDigest(b.servers[0]!), digest);
  assert.notEqual(configDigest(c.servers[0]!), digest);
  assert.notEqual(configDigest(d.servers[0]!), digest);
  const http1 = parseMcpConfig(oneServer({ url: 'https://a.example/mcp', headers: { X: '1' } }), '.mcp.json')
    .servers[0]!;
  const http2 = parseMcpConfig(oneServer({ url: 'https://b.example/mcp', headers: { X: '1' } }), '.mcp.json')
    .servers[0]!;
  assert.notEqual(configDigest(http1), configDigest(http2));
});

test('merging keeps the first definition of a name and says both sources', () => {
  const workspace = parseMcpConfig(VSCODE_FILE, '.vscode/mcp.json');
  const portable = parseMcpConfig(
    JSON.stringify({
      mcpServers: {
        github: { command: 'docker', args: ['run', 'ghcr.io/github/github-mcp-server'] },
        extra: { command: 'x' },
      },
    }),
    '.mcp.json',
  );
  const merged = mergeConfigs([workspace, portable]);
  assert.deepEqual(
    merged.servers.map((s) => `${s.name} ${s.source}`),
    [
      'github .vscode/mcp.json',
      'files .vscode/mcp.json',
      'remote .vscode/mcp.json',
      'legacy .vscode/mcp.json',
      'extra .mcp.json',
    ],
  );
  assert.equal(stdio(merged.servers[0]!).command, 'npx');
  assert.deepEqual(merged.problems, [
    'server "github" is defined in both .vscode/mcp.json and .mcp.json; the one in .vscode/mcp.json is used.',
  ]);
  assert.deepEqual(merged.inputs, workspace.inputs);
  assert.equal(merged.format, 'vscode');
  assert.deepEqual(mergeConfigs([]), { servers: [], inputs: [], problems: [], format: 'vscode' });
});

test('nothing throws but McpConfigError, whatever the file and the context', () => {
  const ctx = context({ A: 'x' }, {});
  const throwing: VariableContext = {
    ...ctx,
    input: () => {
      throw new Error('no prompt here');
    },
  };
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), (value, vscode) => {
      const text = JSON.stringify({
        [vscode ? 'servers' : 'mcpServers']: { s: value, t: { command: 'x', args: [JSON.stringify(value)] } },
        inputs: value,
      });
      const config = parseMcpConfig(text, 'f.json');
      for (const server of config.servers) {
        inputsOf(server);
        configDigest(server);
        resolveServer(server, config.format, config.inputs, throwing);
      }
    }),
    { numRuns: 300 },
  );
  fc.assert(
    // Real files cut and spliced anywhere, and text at random.
    fc.property(fc.nat(VSCODE_FILE.length), fc.nat(40), fc.string({ maxLength: 80 }), (at, cut, noise) => {
      const text = at % 3 === 0 ? noise : `${VSCODE_FILE.slice(0, at)}${noise}${VSCODE_FILE.slice(at + cut)}`;
      try {
        const config = parseMcpConfig(text, 'f.json');
        for (const server of config.servers) resolveServer(server, config.format, config.inputs, throwing);
      } catch (e) {
        assert.ok(e instanceof McpConfigError, String(e));
      }
    }),
    { numRuns: 300 },
  );
});
