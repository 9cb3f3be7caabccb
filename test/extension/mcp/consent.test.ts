import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Workflow } from '../../../core/schema/workflow';
import { loadWorkflow } from '../../../core/workflow/load';
import {
  consentPrompt,
  describeServer,
  splitByConsent,
  splitByWorkflow,
  unusedNote,
  withAnswers,
  type ConsentAnswers,
} from '../../../extension/mcp/consent';
import { gatherServers } from '../../../extension/mcp/sources';

const everything = { command: '/usr/bin/node', args: ['/repo/node_modules/server-everything/dist/index.js', 'stdio'] };

function candidates(workspace: Record<string, unknown>, setting: Record<string, unknown> = {}) {
  return gatherServers({ setting, portable: JSON.stringify({ mcpServers: workspace }) }).candidates;
}

test("the user's own servers need no answer; the workspace's are asked for once, then kept by configuration", () => {
  const cs = candidates({ everything, other: { url: 'https://mcp.example.com/mcp' } }, { mine: { command: 'mine' } });
  const wf = workflowFor(['everything', 'other', 'mine']);
  let answers: ConsentAnswers = {};
  const first = splitByConsent(cs, answers, wf);
  assert.deepEqual(
    first.allowed.map((c) => c.server.name),
    ['mine'],
  );
  assert.deepEqual(
    first.ask.map((c) => c.server.name),
    ['everything', 'other'],
  );
  answers = withAnswers(answers, first.ask.slice(0, 1), 'allow', wf);
  answers = withAnswers(answers, first.ask.slice(1), 'deny', wf);
  const second = splitByConsent(cs, answers, wf);
  assert.deepEqual(
    [second.allowed, second.denied, second.ask].map((l) => l.map((c) => c.server.name)),
    [['mine', 'everything'], ['other'], []],
  );
});

test('a server whose configuration changed is asked for again; one moved to another file is not', () => {
  const cs = candidates({ everything });
  const wf = workflowFor(['everything']);
  const answers = withAnswers({}, cs, 'allow', wf);
  const changed = candidates({ everything: { ...everything, args: [...everything.args, '--evil'] } });
  assert.deepEqual(
    splitByConsent(changed, answers, wf).ask.map((c) => c.server.name),
    ['everything'],
  );
  const moved = gatherServers({ vscode: JSON.stringify({ servers: { everything } }) }).candidates;
  assert.deepEqual(
    splitByConsent(moved, answers, wf).allowed.map((c) => c.server.name),
    ['everything'],
  );
  // A planted autoApprove is dropped, so it neither changes nor slips past what the user allowed.
  const planted = candidates({ everything: { ...everything, autoApprove: ['echo'] } });
  assert.deepEqual(splitByConsent(planted, answers, wf).ask, []);
  // Allowed without the network is not allowed with it: a workflow that grants it asks again.
  assert.deepEqual(
    splitByConsent(cs, answers, workflowFor(['everything'], ['everything'])).ask.map((c) => c.server.name),
    ['everything'],
  );
});

/** A workflow whose stages permit the tools of `servers` (by pattern), granting the network to `network`. */
function workflowFor(servers: string[], network: string[] = []): Workflow {
  const load = loadWorkflow({
    lar: 1,
    id: 'consent-wf',
    stages: [{ id: 'only', tools: [...servers.map((s) => `mcp__${s}__*`), 'submit'], budget: 5 }],
    transitions: {},
    start: 'only',
    terminal: ['only'],
    outcome: { command: 'true' },
    ...(network.length ? { mcp: { network } } : {}),
  });
  if (!load.ok) throw new Error(JSON.stringify(load.problems));
  return load.workflow;
}

test('the prompt names each server, its file, its transport and what it runs or reaches, as written', () => {
  const cs = candidates({
    everything,
    spaced: { command: 'my tool', args: ['--dir', 'a b'] },
    remote: { url: 'https://user:pw@mcp.example.com/v1/mcp?key=SECRET' },
  });
  const { message, detail } = consentPrompt(cs, workflowFor(['everything', 'spaced', 'remote']));
  assert.match(message, /^Start these 3 MCP servers that the workspace configures\?/);
  assert.match(message, /workflow consent-wf,/);
  const lines = detail.split('\n');
  for (const line of [
    'everything (.mcp.json)',
    '  stdio: /usr/bin/node /repo/node_modules/server-everything/dist/index.js stdio',
    'spaced (.mcp.json)',
    '  stdio: "my tool" --dir "a b"',
    // A planted file's address is its own: shown whole, query and credentials, so the user sees where it goes.
    'remote (.mcp.json)',
    '  http: https://user:pw@mcp.example.com/v1/mcp?key=SECRET',
  ])
    assert.ok(lines.includes(line), `${line}\nnot in:\n${detail}`);
  assert.match(
    consentPrompt(cs.slice(0, 1), workflowFor(['everything'])).message,
    /^Start this MCP server that the workspace configures\? It starts/,
  );
  const [withVar] = candidates({ v: { url: 'https://${HOST}/mcp?token=${TOKEN}' } });
  assert.equal(describeServer(withVar!.server), 'http: https://${HOST}/mcp?token=${TOKEN}');
});

test('the prompt shows every env and header entry, the cwd and the variables a server would read, before they are resolved', () => {
  const vscodeFile = JSON.stringify({
    inputs: [{ type: 'promptString', id: 'token', password: true }],
    servers: {
      gh: {
        command: 'npx',
        args: ['-y', 'server-github'],
        cwd: 'tools/gh',
        env: { GITHUB_TOKEN: '${input:token}', LEAK: '${env:AWS_SECRET_ACCESS_KEY}', PLAIN: 'yes' },
      },
      web: {
        type: 'http',
        url: 'https://mcp.example.com/mcp?session=${env:HOME}',
        headers: { Authorization: 'Bearer ${input:token}', 'X-Evil': 'line one\nline two\u202e' },
      },
    },
  });
  const portable = JSON.stringify({
    mcpServers: { db: { command: 'db-mcp', args: ['${DB_CONFIG:-/etc/db.json}'], env: { URL: '${DATABASE_URL}' } } },
  });
  const cs = gatherServers({ vscode: vscodeFile, portable }).candidates;
  const { detail } = consentPrompt(cs, workflowFor(['gh', 'web', 'db']));
  const lines = detail.split('\n');
  for (const line of [
    '  cwd: tools/gh',
    '  env: GITHUB_TOKEN=${input:token}',
    '  env: LEAK=${env:AWS_SECRET_ACCESS_KEY}',
    '  env: PLAIN=yes',
    '  uses your inputs: ${input:token} (a value you gave before is used)',
    '  reads your environment: ${env:AWS_SECRET_ACCESS_KEY}',
    '  http: https://mcp.example.com/mcp?session=${env:HOME}',
    '  header: Authorization: "Bearer ${input:token}"',
    // A value cannot fake a line of its own, nor reorder what follows it.
    '  header: X-Evil: "line one\\nline two\\u202e"',
    '  reads your environment: ${env:HOME}',
    '  env: URL=${DATABASE_URL}',
    '  reads your environment: ${DB_CONFIG:-/etc/db.json}, ${DATABASE_URL}',
  ])
    assert.ok(lines.includes(line), `${line}\nnot in:\n${detail}`);
  // A long value is cut and the cut said; where it runs and what it reads come before any value.
  const [long] = candidates({
    long: { command: 'x', args: ['a'.repeat(5000)], env: { B: '${env:AWS_SECRET_ACCESS_KEY}' } },
  });
  const shown = consentPrompt([long!], workflowFor(['long'])).detail.split('\n');
  assert.ok(shown.includes(`  stdio: x ${'a'.repeat(600)} … (4400 more characters: read the file)`), shown.join('\n'));
  assert.ok(
    shown.indexOf('  reads your environment: ${env:AWS_SECRET_ACCESS_KEY}') <
      shown.findIndex((l) => l.startsWith('  stdio:')),
  );
});

test('a server the workflow grants the network is said to have it, never to be confined without it', () => {
  const cs = candidates({ open: { command: 'open-mcp' }, closed: { command: 'closed-mcp' } });
  const { message, detail } = consentPrompt(cs, workflowFor(['open', 'closed'], ['open']));
  assert.doesNotMatch(message, /confined/);
  const block = (name: string) => detail.split('\n\n').find((b) => b.startsWith(`${name} `))!;
  assert.match(block('open'), /in a sandbox with the host's network: workflow consent-wf grants it/);
  assert.doesNotMatch(block('open'), /without network|confined/);
  assert.match(block('closed'), /runs in the run's sandbox, without network/);
});

test('many servers: the prompt stays bounded and names the ones it does not show', () => {
  const many: Record<string, unknown> = {};
  for (let i = 0; i < 40; i++)
    many[`s${i}`] = { command: 'x', args: Array.from({ length: 30 }, () => 'y'.repeat(190)) };
  const cs = candidates(many);
  const { detail, asked } = consentPrompt(cs, workflowFor(Object.keys(many)));
  assert.ok(detail.length < 20_000, String(detail.length));
  // Only what was shown is asked about: the answer never covers a server the user did not see.
  assert.ok(asked.length > 0 && asked.length < cs.length, String(asked.length));
  for (const c of asked) assert.ok(detail.includes(`${c.server.name} (.mcp.json)`));
  assert.match(detail, new RegExp(`${cs.length - asked.length} more servers of the workspace are not asked about now`));
});

test('a server no stage of the workflow could use is neither asked about nor started, and said so', () => {
  const cs = candidates({ everything, unused: { command: 'unused-mcp' }, 'git.hub': { command: 'gh' } });
  const { usable, unused } = splitByWorkflow(cs, workflowFor(['everything', 'git_hub']));
  assert.deepEqual(
    usable.map((c) => c.server.name),
    ['everything', 'git.hub'],
  );
  assert.deepEqual(
    unused.map((c) => c.server.name),
    ['unused'],
  );
  assert.equal(
    unusedNote(unused[0]!, workflowFor(['everything'])),
    'MCP server "unused" (.mcp.json) is not started: no stage of workflow "consent-wf" permits mcp__unused__… tools.',
  );
  // The user's own servers too: nothing would call them.
  const mine = gatherServers({ setting: { mine: { command: 'mine' } } }).candidates;
  assert.equal(splitByWorkflow(mine, workflowFor(['everything'])).unused.length, 1);
});
