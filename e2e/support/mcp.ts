/**
 * The MCP scenario's workspace: a `.vscode/mcp.json` naming the real server-everything (installed in
 * this repository's node_modules) with a secret input, a `.mcp.json` naming a server that cannot
 * start (granted the network) and one no stage permits, and a workflow whose first stage permits
 * `mcp__everything__echo` but not `get-sum`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Locator, Page } from 'playwright-core';
import { REPO_ROOT } from '../../devtools/paths';

export const EVERYTHING = join(
  REPO_ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);
export const BROKEN_STDERR = 'broken: no configuration file here';

export function writeMcpWorkspace(ws: string): void {
  // JSONC, as VS Code writes it: a comment and trailing commas.
  writeFileSync(
    join(ws, '.vscode', 'mcp.json'),
    `// the workspace's MCP servers
{
  "inputs": [{ "type": "promptString", "id": "greeting", "description": "a greeting for the server", "password": true }],
  "servers": {
    "everything": {
      "type": "stdio",
      "command": ${JSON.stringify(process.execPath)},
      "args": [${JSON.stringify(EVERYTHING)}, "stdio"],
      "cwd": "\${workspaceFolder}",
      "env": { "GREETING": "\${input:greeting}" },
    },
  },
}
`,
  );
  writeFileSync(
    join(ws, '.mcp.json'),
    JSON.stringify({
      mcpServers: {
        broken: {
          command: process.execPath,
          args: ['-e', `process.stderr.write(${JSON.stringify(`${BROKEN_STDERR}\n`)}); process.exit(3)`],
        },
        // No stage of the workflow permits its tools: neither asked about nor started.
        unused: { command: process.execPath, args: ['-e', 'process.exit(4)'] },
      },
    }),
  );
  writeFileSync(
    join(ws, 'mcp.larflow.json'),
    JSON.stringify({
      lar: 1,
      id: 'mcp-e2e',
      description: 'Look with echo only; the other tools of the server come in the work stage.',
      stages: [
        { id: 'look', tools: ['mcp__everything__echo', 'read_file', 'enter_stage'], budget: 10 },
        { id: 'work', tools: ['mcp__everything__*', 'mcp__broken__*', 'submit'], budget: 10 },
      ],
      transitions: { look: ['work'] },
      start: 'look',
      terminal: ['work'],
      outcome: { command: 'true' },
      mcp: { network: ['broken'] },
      // The server lives in this repository, which the sandbox does not otherwise see when it is under /tmp (CI).
      sandbox: { readable: [join(REPO_ROOT, 'node_modules')], protected: [] },
    }),
  );
}

/** The modal dialog that asks whether the workspace's servers may start. */
export function allowDialog(page: Page): Locator {
  return page.locator('.monaco-dialog-box', { hasText: 'MCP server' });
}

/** The chat's MCP list of the latest run. */
export function mcpPanel(chat: FrameLocator): Locator {
  return chat.locator('details.mcp-panel').last();
}

/** The row of one server in the list. */
export function serverRow(panel: Locator, name: string): Locator {
  return panel.locator('.mcp-server', { hasText: new RegExp(`^${name}`) });
}

/** The background image of each gutter icon of an editor (each kind of mark is its own SVG). */
export function gutterIcons(editor: Locator): Promise<string[]> {
  return editor
    .locator('.glyph-margin-widgets .cgmr')
    .evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundImage));
}
