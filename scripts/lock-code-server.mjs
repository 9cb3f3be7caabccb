#!/usr/bin/env node
// Regenerates scripts/code-server-lock.json and scripts/node-lock.json: the
// lockfiles of the folders setup installs code-server and its Node into,
// resolved from the registry without running any install script. Run it after
// changing a version in scripts/code-server.json, and commit the result.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installEnv } from './install-env.mjs';
import { CODE_SERVER_LOCK, NODE_LOCK, codeServerPackage, nodePackage } from './paths.mjs';

for (const [pkg, lock] of [
  [codeServerPackage(), CODE_SERVER_LOCK],
  [nodePackage(), NODE_LOCK],
]) {
  const dir = mkdtempSync(join(tmpdir(), 'lar-lock-'));
  try {
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
    const r = spawnSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      stdio: 'inherit',
      env: installEnv(process.env),
    });
    if (r.status !== 0) throw new Error(`npm install --package-lock-only exited with ${r.status ?? r.signal}`);
    copyFileSync(join(dir, 'package-lock.json'), fileURLToPath(lock));
    process.stdout.write(`wrote ${fileURLToPath(lock)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
