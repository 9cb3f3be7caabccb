import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrajectoryWriter } from '../../../core/agent/trajectory-writer';
import { maskUrlsIn } from '../../../core/secrets/endpoint';
import { combineRedactors, redact } from '../../../core/secrets/redact';
import type { Header, TrajectoryEvent } from '../../../core/schema/trajectory';

const header: Header = {
  lar: 1,
  type: 'header',
  task: 't',
  workflow: 'builtin:default-coding',
  started: '2026-12-04T00:00:00Z',
};

/** The events written with `redactor`, read back from the file. */
function roundTrip(events: TrajectoryEvent[], redactor: (t: string) => string): Record<string, unknown>[] {
  const dir = mkdtempSync(join(tmpdir(), 'lar-writer-'));
  try {
    const w = TrajectoryWriter.create(join(dir, 'run.lar.jsonl'), header, redactor);
    for (const e of events) w.append(e);
    w.close();
    return readFileSync(join(dir, 'run.lar.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(1)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const call = (args: Record<string, unknown>): TrajectoryEvent => ({
  type: 'tool_call',
  id: 'c1',
  tool: 'run_command',
  args,
  status: 'ok',
  result: { exitCode: 0, completion: 'marker', output: 'ok' },
});

test('a redaction never reaches across a value: the recorded arguments keep every key that ran', () => {
  // A URL's user-info pattern stops at "/", "?", "#", "@" or whitespace, not at a quote: run over the
  // JSON text it ate the rest of the command, the quote and the next key.
  for (const args of [
    { command: 'pwd; echo x://', cwd: '@' },
    { cwd: 'x://', command: '@; pwd' },
    { command: 'echo "x://a', timeoutMs: 5, cwd: 'b@c' },
  ]) {
    const [written] = roundTrip([call(args)], maskUrlsIn);
    assert.deepEqual(Object.keys(written!.args as object).sort(), Object.keys(args).sort(), JSON.stringify(args));
    const back = written!.args as Record<string, unknown>;
    for (const [k, v] of Object.entries(args)) if (typeof v !== 'string') assert.equal(back[k], v);
  }
});

test('secrets are still masked inside a value, in a key, and in nested results', () => {
  const key = 'sk-live-0123456789abcdef';
  const redactor = combineRedactors(maskUrlsIn, (t) => redact(t, key));
  const [written] = roundTrip(
    [
      {
        ...call({ command: `curl https://user:pw@example.com/x && echo ${key}`, [key]: 'x' }),
        result: { exitCode: 0, completion: 'marker', output: `token ${key}` },
      } as TrajectoryEvent,
    ],
    redactor,
  );
  const text = JSON.stringify(written);
  assert.ok(!text.includes(key), text);
  assert.ok(!text.includes('user:pw'), text);
  assert.match((written!.args as { command: string }).command, /^curl https:\/\/\*\*\*@example\.com\/x && echo /);
});

test('a number the redactor would mask is written masked, as the text it became', () => {
  const [written] = roundTrip([call({ command: 'echo', pin: 493817 })], (t) => t.replaceAll('493817', '***'));
  assert.equal((written!.args as { pin: unknown }).pin, '***');
  assert.ok(!JSON.stringify(written).includes('493817'));
});
