/**
 * A confined MCP server's own variables are set inside its sandbox, never on the launchers before it,
 * which run on the host: a configuration's LD_PRELOAD would otherwise run code there.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { McpStdioConfig } from '../../../core/mcp/config';
import { sandboxLauncher } from '../../../core/mcp/launch';
import { BoundedStdioTransport } from '../../../core/mcp/stdio';
import { probeBwrap } from '../../../core/sandbox/bwrap';
import { RunSandbox } from '../../../core/sandbox/run';
import { Workflow } from '../../../core/schema/workflow';

const bwrap = probeBwrap();
const cc = spawnSync('cc', ['--version']).status === 0;
const workflow = Workflow.parse({
  lar: 1,
  id: 'launch',
  stages: [{ id: 's', tools: ['mcp__*', 'submit'], budget: 5 }],
  transitions: {},
  start: 's',
  terminal: ['s'],
  outcome: { command: 'true' },
  sandbox: { protected: [] },
});
const server = (env: Record<string, string>, command = '/bin/true'): McpStdioConfig => ({
  transport: 'stdio',
  name: 'probe',
  source: 'test',
  command,
  args: [],
  env,
});

test(
  "a confined server's env is set inside its sandbox, not on the host's launchers",
  { skip: !bwrap.ok && 'bubblewrap cannot start here' },
  async () => {
    const ws = mkdtempSync(join(tmpdir(), 'lar-launch-'));
    const scratch = mkdtempSync(join(tmpdir(), 'lar-launch-host-'));
    const box = await RunSandbox.open({
      workspace: ws,
      workflow,
      setting: 'required',
      hostEnv: process.env,
      shell: '/bin/sh',
      outputDir: join(ws, '.lar/output'),
    });
    const servers = sandboxLauncher(box, ws, process.env);
    try {
      const how = servers.launcher(server({ LD_PRELOAD: '/nonexistent.so', GREETING: 'hi there' }), false);
      assert.ok('launch' in how && how.confined);
      assert.equal(how.launch.env.LD_PRELOAD, undefined);
      assert.equal(how.launch.env.GREETING, undefined);
      const at = how.launch.args.indexOf('/usr/bin/env');
      assert.ok(at > 0);
      assert.deepEqual(how.launch.args.slice(at), [
        '/usr/bin/env',
        'LD_PRELOAD=/nonexistent.so',
        'GREETING=hi there',
        '/bin/true',
      ]);
      assert.match(JSON.stringify(servers.launcher(server({ 'A=B': 'x' }), false)), /env\(1\) cannot set/);
      // Values with newlines and "=", and odd names env(1) takes, reach the server as written.
      const odd = servers.launcher(server({ 'a.b': 'x=y\nz' }), false);
      assert.ok('launch' in odd && odd.launch.args.includes('a.b=x=y\nz'));
      assert.match(JSON.stringify(servers.launcher(server({}, 'A=b'), false)), /env\(1\) would misread/);

      if (cc) {
        // A library that, loaded anywhere, writes a file where only the host can: it must never be loaded there.
        const marker = join(scratch, 'ran-on-host');
        const src = join(ws, 'evil.c');
        writeFileSync(
          src,
          `#include <stdio.h>\n__attribute__((constructor)) static void f(void) { FILE *o = fopen("${marker}", "a"); if (o) { fputs("x", o); fclose(o); } }\n`,
        );
        assert.equal(spawnSync('cc', ['-shared', '-fPIC', '-o', join(ws, 'evil.so'), src]).status, 0);
        const evil = servers.launcher(server({ LD_PRELOAD: join(ws, 'evil.so') }), false);
        assert.ok('launch' in evil);
        const t = new BoundedStdioTransport(evil.launch, { maxMessageBytes: 1024, onOversized: () => undefined });
        const closed = new Promise<void>((r) => (t.onclose = () => r()));
        t.onerror = () => undefined;
        await t.start();
        await closed;
        assert.ok(!existsSync(marker), 'the configuration ran code on the host');
      }
    } finally {
      await servers.dispose();
      await box.dispose();
    }
  },
);
