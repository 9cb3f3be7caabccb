#!/usr/bin/env node
// An MCP stdio server on the official SDK whose tools misbehave on purpose, for the tests of how a
// run confines and survives its servers: network and file probes, a flood, a hang, a crash, a tool
// list that changes (once, or without end), and its environment shown back.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { connect } from 'node:net';
import { writeFileSync } from 'node:fs';
import { z } from 'zod';

const server = new McpServer({ name: 'fault-server', version: '1.0.0' });
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const readOnly = { readOnlyHint: true };

server.registerTool(
  'probe_network',
  { description: 'Connect to a TCP port on 127.0.0.1', inputSchema: { port: z.number().int() }, annotations: readOnly },
  ({ port }) =>
    new Promise((resolve) => {
      const s = connect({ host: '127.0.0.1', port });
      s.setTimeout(3000);
      s.once('connect', () => {
        s.destroy();
        resolve(text('connected'));
      });
      s.once('error', (e) => resolve(text(`refused: ${e.code ?? e.message}`)));
      s.once('timeout', () => {
        s.destroy();
        resolve(text('refused: timeout'));
      });
    }),
);

server.registerTool(
  'write_path',
  { description: 'Write a small file at an absolute path', inputSchema: { path: z.string() } },
  ({ path }) => {
    try {
      writeFileSync(path, 'written by the fault server\n');
      return text(`wrote ${path}`);
    } catch (e) {
      return { ...text(`could not write ${path}: ${e.code ?? e.message}`), isError: true };
    }
  },
);

server.registerTool(
  'flood',
  { description: 'Answer with a text of the given number of MiB', inputSchema: { mib: z.number() }, annotations: readOnly },
  ({ mib }) => text('x'.repeat(Math.floor(mib * 1024 * 1024))),
);

server.registerTool('hang', { description: 'Never answer', annotations: readOnly }, () => new Promise(() => {}));

server.registerTool('crash', { description: 'Exit at once', annotations: readOnly }, () => {
  process.stderr.write('fault-server: crashing on purpose\n');
  process.exit(3);
});

server.registerTool('add_tool', { description: 'Add a tool named late_tool', annotations: readOnly }, () => {
  server.registerTool('late_tool', { description: 'Added mid-run', annotations: readOnly }, () => text('late'));
  return text('added late_tool');
});

server.registerTool(
  'churn',
  { description: 'Say the tool list changed, n times', inputSchema: { n: z.number().int() }, annotations: readOnly },
  async ({ n }) => {
    // Apart in time: the SDK folds notices sent in one tick into one.
    for (let i = 0; i < n; i++) {
      server.sendToolListChanged();
      await new Promise((r) => setTimeout(r, 2));
    }
    return text(`said it ${n} times`);
  },
);

server.registerTool(
  'notify_flood',
  { description: 'Write 20000 progress notices at once, past the SDK', annotations: readOnly },
  () => {
    const line = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'x', progress: 1 } });
    process.stdout.write(`${line}\n`.repeat(20000));
    return text('flooded');
  },
);

server.registerTool(
  'show_env',
  { description: 'Show an environment variable', inputSchema: { name: z.string() }, annotations: readOnly },
  ({ name }) => text(`${name}=${process.env[name] ?? '(unset)'}`),
);

await server.connect(new StdioServerTransport());
