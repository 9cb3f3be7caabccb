/**
 * `npm run bench`: what MCP servers cost where the user waits, and what gating them by stage saves.
 * The real everything and filesystem servers from npm: the time to start both (listed and ready),
 * unconfined and each in its bubblewrap sandbox; a call's round trip (echo) both ways; and the
 * tokens the tool definitions add to every request — the servers' whole lists against what one stage
 * permits. Ratios are measured in the same run. Figures go to docs/performance.md (BENCH:mcp).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { McpServerConfig, McpStdioConfig } from '../core/mcp/config';
import { McpHub, type McpLauncher } from '../core/mcp/hub';
import { sandboxLauncher } from '../core/mcp/launch';
import { TokenMeter } from '../core/model/tokens';
import { RunSandbox } from '../core/sandbox/run';
import { toolDefinitions } from '../core/schema/tool-definitions';
import { Workflow } from '../core/schema/workflow';
import { stagePermits } from '../core/verifier/pre-checks';
import { machineLine, writeSection } from './report';
import { loadNote, summarize } from './stats';

const root = resolve(__dirname, '../..');
const STARTS = 5;
const CALLS = 200;

const servers = (ws: string): McpServerConfig[] => [
  {
    transport: 'stdio',
    name: 'everything',
    source: 'bench',
    command: process.execPath,
    args: [join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    env: {},
  },
  {
    transport: 'stdio',
    name: 'fs',
    source: 'bench',
    command: process.execPath,
    args: [join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), ws],
    env: {},
  },
];

const workflow = Workflow.parse({
  lar: 1,
  id: 'mcp-bench',
  stages: [{ id: 'look', tools: ['read_file', 'mcp__fs__read_*', 'mcp__everything__echo', 'submit'], budget: 10 }],
  transitions: {},
  start: 'look',
  terminal: ['look'],
  outcome: { command: 'true' },
  sandbox: { readable: [join(root, 'node_modules')], protected: [] },
});

async function measure(ws: string, launcher: McpLauncher) {
  const starts: number[] = [];
  let hub: McpHub | undefined;
  for (let i = 0; i < STARTS; i++) {
    await hub?.close();
    const t0 = performance.now();
    hub = await McpHub.start({ servers: servers(ws), workspace: ws, launcher });
    starts.push(performance.now() - t0);
    if (hub.state().some((s) => s.state !== 'ready')) throw new Error(JSON.stringify(hub.state()));
  }
  const calls: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const r = await hub!.call('mcp__everything__echo', { message: `call ${i}` });
    calls.push(performance.now() - t0);
    if (r.status !== 'ok') throw new Error(r.observation);
  }
  return { hub: hub!, start: summarize(starts), call: summarize(calls) };
}

async function main(): Promise<void> {
  const load = loadNote();
  const ws = mkdtempSync(join(tmpdir(), 'lar-mcp-bench-'));
  writeFileSync(join(ws, 'README'), 'a workspace\n');
  const unconfined: McpLauncher = (s: McpStdioConfig) => ({
    confined: false,
    launch: { file: s.command, args: s.args, env: { PATH: process.env.PATH ?? '' }, cwd: ws },
  });
  const box = await RunSandbox.open({
    workspace: ws,
    workflow,
    setting: 'required',
    hostEnv: process.env,
    shell: '/bin/bash',
    outputDir: join(ws, '.lar/output'),
  });
  const confined = sandboxLauncher(box, ws, process.env);
  let section = '';
  try {
    const plain = await measure(ws, unconfined);
    const boxed = await measure(ws, confined.launcher);
    if (!boxed.hub.servers.every((s) => s.confined)) throw new Error('the servers did not run confined');
    const meter = new TokenMeter();
    const builtin = toolDefinitions();
    const everyTool = boxed.hub.definitions(() => true);
    const stage = workflow.stages[0]!;
    const permitted = boxed.hub.definitions((n) => stagePermits(stage, n));
    const tokens = (tools: unknown[]) => meter.estimate([], tools);
    const row = (what: string, tools: unknown[]) =>
      `| ${what} | ${tools.length} | ${JSON.stringify(tools).length} | ${tokens(tools)} |`;
    await plain.hub.close();
    await boxed.hub.close();
    section = [
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${load}. The real everything and filesystem servers from npm, started ${STARTS} times (both at once, listed and ready) and called ${CALLS} times (echo), each way in the same run.`,
      '',
      '| | unconfined | in its bubblewrap sandbox | ratio |',
      '|---|---:|---:|---:|',
      `| start both servers, median ms | ${plain.start.p50.toFixed(0)} | ${boxed.start.p50.toFixed(0)} | ${(boxed.start.p50 / plain.start.p50).toFixed(2)}× |`,
      `| one call (echo), median ms | ${plain.call.p50.toFixed(2)} | ${boxed.call.p50.toFixed(2)} | ${(boxed.call.p50 / plain.call.p50).toFixed(2)}× |`,
      `| one call, p95 ms | ${plain.call.p95.toFixed(2)} | ${boxed.call.p95.toFixed(2)} | ${(boxed.call.p95 / plain.call.p95).toFixed(2)}× |`,
      '',
      "What the tool definitions add to every request (tokens: the agent's estimate before a server counts):",
      '',
      '| tools sent | count | JSON bytes | tokens |',
      '|---|---:|---:|---:|',
      row('built-in only', builtin),
      row("built-in + both servers' whole lists (no gating)", [...builtin, ...everyTool]),
      row(`built-in + what the stage permits (${stage.tools.filter((t) => t.startsWith('mcp__')).join(', ')})`, [
        ...builtin,
        ...permitted,
      ]),
    ].join('\n');
  } finally {
    await confined.dispose();
    await box.dispose();
    rmSync(ws, { recursive: true, force: true });
  }
  console.log(section);
  writeSection(resolve(__dirname, '../../docs/performance.md'), 'mcp', section);
  console.log('figures written to docs/performance.md');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
