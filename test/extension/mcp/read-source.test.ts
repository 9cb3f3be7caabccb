import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_MCP_CONFIG_BYTES } from '../../../core/mcp/config';
import { readWorkspaceSource, sourceExists } from '../../../extension/mcp/read-source';

const CONFIG = JSON.stringify({ mcpServers: { a: { command: 'a' } } });

function workspace(): { root: string; ws: string; done: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'mcp-source-'));
  const ws = join(root, 'ws');
  mkdirSync(join(ws, '.vscode'), { recursive: true });
  return { root, ws, done: () => rmSync(root, { recursive: true, force: true }) };
}

test('a regular file of the workspace is read; none at all is nothing to say', () => {
  const { ws, done } = workspace();
  try {
    assert.deepEqual(readWorkspaceSource(ws, '.mcp.json'), {});
    assert.equal(sourceExists(ws, '.mcp.json'), false);
    writeFileSync(join(ws, '.mcp.json'), CONFIG);
    assert.deepEqual(readWorkspaceSource(ws, '.mcp.json'), { text: CONFIG });
    // A symlink to another file of the workspace is that file.
    mkdirSync(join(ws, 'config'));
    writeFileSync(join(ws, 'config', 'mcp.json'), CONFIG);
    symlinkSync(join('..', 'config', 'mcp.json'), join(ws, '.vscode', 'mcp.json'));
    assert.deepEqual(readWorkspaceSource(ws, '.vscode/mcp.json'), { text: CONFIG });
  } finally {
    done();
  }
});

test('a planted symlink to /dev/zero is refused, not read (reading it aborted the editor)', () => {
  const { ws, done } = workspace();
  try {
    symlinkSync('/dev/zero', join(ws, '.mcp.json'));
    assert.equal(sourceExists(ws, '.mcp.json'), true);
    const r = readWorkspaceSource(ws, '.mcp.json');
    assert.equal(r.text, undefined);
    assert.match(r.problem!, /^\.mcp\.json leads outside the workspace folder \(to \/dev\/zero\): it is not read/);
  } finally {
    done();
  }
});

test('a symlink to a file outside the workspace is refused, even a regular one', () => {
  const { root, ws, done } = workspace();
  try {
    writeFileSync(join(root, 'elsewhere.json'), CONFIG);
    symlinkSync(join(root, 'elsewhere.json'), join(ws, '.mcp.json'));
    assert.match(readWorkspaceSource(ws, '.mcp.json').problem!, /leads outside the workspace folder/);
    // A folder of the path leading out counts as much as the file.
    rmSync(join(ws, '.vscode'), { recursive: true });
    mkdirSync(join(root, 'outside'));
    writeFileSync(join(root, 'outside', 'mcp.json'), CONFIG);
    symlinkSync(join(root, 'outside'), join(ws, '.vscode'));
    assert.match(readWorkspaceSource(ws, '.vscode/mcp.json').problem!, /^\.vscode\/mcp\.json leads outside/);
  } finally {
    done();
  }
});

test('a FIFO, a folder or a file too large is refused at once: nothing hangs, nothing large is read', () => {
  const { ws, done } = workspace();
  try {
    // A FIFO with no writer: opening it for reading would wait for ever.
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    symlinkSync('pipe', join(ws, '.mcp.json'));
    assert.match(
      readWorkspaceSource(ws, '.mcp.json').problem!,
      /^\.mcp\.json: the file .* is not a regular file .*; no MCP server of it is started\.$/,
    );
    rmSync(join(ws, '.mcp.json'));
    execFileSync('mkfifo', [join(ws, '.mcp.json')]);
    assert.match(readWorkspaceSource(ws, '.mcp.json').problem!, /is not a regular file/);
    mkdirSync(join(ws, '.vscode', 'mcp.json'));
    assert.match(readWorkspaceSource(ws, '.vscode/mcp.json').problem!, /is a folder, not a file/);
    rmSync(join(ws, '.mcp.json'));
    writeFileSync(join(ws, '.mcp.json'), Buffer.alloc(MAX_MCP_CONFIG_BYTES + 1, 0x20));
    assert.match(readWorkspaceSource(ws, '.mcp.json').problem!, /more than the 1048576 read at most/);
  } finally {
    done();
  }
});
