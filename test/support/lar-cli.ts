import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(__dirname, '../../..');

/**
 * Runs the built `lar` CLI (dist/lar.js) as a user would, colours off; resolves with its exit code and output.
 * `stdin`, when given, is written to its standard input, which is then closed.
 */
export function lar(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  stdin?: Buffer | string,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [resolve(root, 'dist/lar.js'), ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env },
    });
    if (stdin !== undefined) {
      // A CLI that refuses the input stops reading it: the rest of the write fails with EPIPE, which is expected.
      child.stdin.on('error', () => undefined);
      child.stdin.end(stdin);
    }
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => res({ code, out, err }));
  });
}
