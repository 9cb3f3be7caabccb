import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  consentPrompt,
  describeServer,
  splitByConsent,
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
  let answers: ConsentAnswers = {};
  const first = splitByConsent(cs, answers);
  assert.deepEqual(
    first.allowed.map((c) => c.server.name),
    ['mine'],
  );
  assert.deepEqual(
    first.ask.map((c) => c.server.name),
    ['everything', 'other'],
  );
  answers = withAnswers(answers, first.ask.slice(0, 1), 'allow');
  answers = withAnswers(answers, first.ask.slice(1), 'deny');
  const second = splitByConsent(cs, answers);
  assert.deepEqual(
    [second.allowed, second.denied, second.ask].map((l) => l.map((c) => c.server.name)),
    [['mine', 'everything'], ['other'], []],
  );
});

test('a server whose configuration changed is asked for again; one moved to another file is not', () => {
  const cs = candidates({ everything });
  const answers = withAnswers({}, cs, 'allow');
  const changed = candidates({ everything: { ...everything, args: [...everything.args, '--evil'] } });
  assert.deepEqual(
    splitByConsent(changed, answers).ask.map((c) => c.server.name),
    ['everything'],
  );
  const moved = gatherServers({ vscode: JSON.stringify({ servers: { everything } }) }).candidates;
  assert.deepEqual(
    splitByConsent(moved, answers).allowed.map((c) => c.server.name),
    ['everything'],
  );
  // A planted autoApprove is dropped, so it neither changes nor slips past what the user allowed.
  const planted = candidates({ everything: { ...everything, autoApprove: ['echo'] } });
  assert.deepEqual(splitByConsent(planted, answers).ask, []);
});

test('the prompt names each server, its file, its transport and what it runs or reaches, without credentials', () => {
  const cs = candidates({
    everything,
    spaced: { command: 'my tool', args: ['--dir', 'a b'] },
    remote: { url: 'https://user:pw@mcp.example.com/v1/mcp?key=SECRET' },
  });
  const { message, detail } = consentPrompt(cs);
  assert.match(message, /^Start these 3 MCP servers that the workspace configures\?/);
  assert.deepEqual(detail.split('\n'), [
    'everything (.mcp.json) — stdio: /usr/bin/node /repo/node_modules/server-everything/dist/index.js stdio',
    'spaced (.mcp.json) — stdio: "my tool" --dir "a b"',
    'remote (.mcp.json) — http: https://mcp.example.com/v1/mcp?…',
  ]);
  assert.doesNotMatch(detail, /SECRET|pw/);
  assert.match(
    consentPrompt(cs.slice(0, 1)).message,
    /^Start this MCP server that the workspace configures\? It starts/,
  );
  // A URL still holding a variable is shown as written up to its query.
  const [withVar] = candidates({ v: { url: 'https://${HOST}/mcp?token=${TOKEN}' } });
  assert.equal(describeServer(withVar!.server), 'http: https://${HOST}/mcp?…');
});
