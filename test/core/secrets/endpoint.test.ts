import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maskEndpoint, maskUrlsIn } from '../../../core/secrets/endpoint';
import { redact } from '../../../core/secrets/redact';
import { ScriptedModelServer } from '../../../testkit/scripted-server';
import { lar } from '../../support/lar-cli';

test('an endpoint shows without its password, a token before @, or a credential in its query', () => {
  assert.equal(maskEndpoint('http://user:hunter2@gpu.example:8000/v1'), 'http://***@gpu.example:8000/v1');
  assert.equal(maskEndpoint('https://tok_abcdef@gpu.example/v1'), 'https://***@gpu.example/v1');
  assert.equal(
    maskEndpoint('https://gpu.example/v1?api_key=abc123&region=eu'),
    'https://gpu.example/v1?api_key=***&region=eu',
  );
  assert.equal(
    maskEndpoint('https://gpu.example/v1?X-Amz-Signature=ff00&access_token=t0k'),
    'https://gpu.example/v1?X-Amz-Signature=***&access_token=***',
  );
  // Nothing to hide: the text as the user wrote it.
  assert.equal(maskEndpoint('http://127.0.0.1:30000/v1'), 'http://127.0.0.1:30000/v1');
  assert.equal(
    maskEndpoint('https://gpu.example/v1?api-version=2024-10-01'),
    'https://gpu.example/v1?api-version=2024-10-01',
  );
  // A key may be called anything (Azure Functions: code=): only known harmless parameters are shown.
  assert.equal(
    maskEndpoint('https://fn.example/api?code=AbC123&api-version=1'),
    'https://fn.example/api?code=***&api-version=1',
  );
  assert.equal(
    maskUrlsIn('at https://fn.example/api?code=AbC123&x=1 failed'),
    'at https://fn.example/api?code=***&x=*** failed',
  );
  // Not a URL the parser takes, still masked as far as it looks like one.
  assert.equal(maskEndpoint('http://u:p w@host'), 'http://***@host/');
});

test('URLs inside a message lose their credentials, whatever surrounds them', () => {
  const text =
    'fetch failed for http://admin:s3cr3t@10.0.0.5:8000/v1/models (and https://h/v1?token=zzz&x=1): ECONNREFUSED';
  const masked = maskUrlsIn(text);
  assert.doesNotMatch(masked, /s3cr3t|zzz/);
  assert.match(masked, /http:\/\/\*\*\*@10\.0\.0\.5:8000\/v1\/models/);
  assert.match(masked, /token=\*\*\*&x=\*\*\*\): ECONNREFUSED/);
  assert.doesNotMatch(redact(text, undefined), /s3cr3t|zzz/);
});

test('lar run never prints nor records the password or query key of its endpoint', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'lar-mask-'));
  writeFileSync(join(ws, 'a.txt'), 'x\n');
  const server = new ScriptedModelServer({
    script: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] }, { content: 'done' }],
  });
  const endpoint = await server.start();
  try {
    for (const secretful of [
      endpoint.replace('http://', 'http://alice:hunter2pass@'),
      `${endpoint}?api_key=qq-secret-77`,
    ]) {
      const r = await lar([
        'run',
        '--task',
        'read a.txt',
        '--endpoint',
        secretful,
        '--workspace',
        ws,
        '--sandbox',
        'off',
      ]);
      const shown = r.out + r.err;
      assert.doesNotMatch(shown, /hunter2pass|qq-secret-77/, shown);
      assert.match(shown, /127\.0\.0\.1/, 'the endpoint is still named');
      for (const f of safeList(join(ws, '.lar', 'runs')))
        assert.doesNotMatch(readFileSync(join(ws, '.lar', 'runs', f), 'utf8'), /hunter2pass|qq-secret-77/);
    }
  } finally {
    await server.stop();
  }
});

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
