import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refusalNote } from '../../../core/sandbox/refusals';
import type { SandboxRecord } from '../../../core/schema/trajectory';

const box: SandboxRecord = {
  confined: true,
  network: 'none',
  protected: ['test', 'package.json'],
  protections: [
    { path: 'test', why: 'workflow' },
    { path: 'package.json', why: 'outcome' },
    { path: '.git/hooks', why: 'git' },
  ],
};

test('a write the sandbox refused names the protected path and why, however the tool words it', () => {
  const cases: [string, RegExp][] = [
    [
      "touch: cannot touch 'test/new.test.js': Read-only file system",
      /test is read-only \(protected by the workflow\)/,
    ],
    ["rm: cannot remove 'test/sum.test.js': Read-only file system", /test is read-only/],
    ['bash: package.json: Read-only file system', /package\.json is read-only \(the outcome check runs it\)/],
    ["Error: EROFS: read-only file system, open '/home/u/ws/package.json'", /package\.json is read-only/],
    ["OSError: [Errno 30] Read-only file system: 'test/x.py'", /test is read-only/],
    [
      "cp: cannot create regular file '.git/hooks/pre-commit': Read-only file system",
      /\.git\/hooks is read-only \(git's metadata\)/,
    ],
    ["touch: cannot touch '/usr/lib/x': Read-only file system", /refused a write to \/usr\/lib\/x: only the workspace/],
  ];
  for (const [output, want] of cases)
    assert.match(refusalNote(`$ cmd\n${output}\n`, box, { exitCode: 1, workspace: '/home/u/ws' }) ?? '', want, output);
});

test('a connection the sandbox refused says the network is off, or which hosts it allows', () => {
  for (const output of [
    'npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org',
    'curl: (6) Could not resolve host: example.com',
    "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
    "WARNING: Retrying ... NewConnectionError: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')",
  ])
    assert.match(refusalNote(output, box) ?? '', /^The sandbox refused a connection: the network is off/, output);
  assert.match(
    refusalNote('getaddrinfo ENOTFOUND evil.example', { ...box, network: 'allowlist', hosts: ['pypi.org'] }) ?? '',
    /only 1 allowed host can be reached \(getaddrinfo ENOTFOUND\)/,
  );
});

test('no refusal is read into a command that succeeded, a mention in a log, or a path outside the workspace', () => {
  const ro = "touch: cannot touch 'test/x': Read-only file system";
  assert.equal(refusalNote(ro, box, { exitCode: 0 }), undefined, 'exit 0: nothing was refused');
  assert.equal(refusalNote('  expected error code ENOTFOUND, got ECONNRESET', box, { exitCode: 1 }), undefined);
  assert.equal(refusalNote('grep: found "read-only file system" in notes.md', box, { exitCode: 1 }), undefined);
  // npm -g writes the system's files: the sandbox refused it, but no protection of the workspace is at stake.
  const global = refusalNote(
    "npm error EROFS: read-only file system, open '/usr/lib/node_modules/npm/package.json'",
    box,
    { exitCode: 1, workspace: '/work/ws' },
  );
  assert.match(global ?? '', /refused a write to \/usr\/lib\/node_modules\/npm\/package\.json: only the workspace/);
});

test('no refusal is read into a failure of the command itself, an unconfined run, or the host network', () => {
  assert.equal(refusalNote('not ok 1 - sum\n# fail 1\nnpm ERR! Test failed', box), undefined);
  assert.equal(refusalNote("touch: cannot touch 'test/x': Read-only file system", { confined: false }), undefined);
  assert.equal(refusalNote('getaddrinfo EAI_AGAIN host', { ...box, network: 'host' }), undefined);
  assert.equal(refusalNote('', box), undefined);
  assert.equal(refusalNote('x', undefined), undefined);
});
