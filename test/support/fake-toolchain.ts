import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { shellQuote } from '../../core/shell/quote';

/** The protocol stand-in: the builtin verifier behind the lar-verify protocol (no Lean toolchain can exist here). */
export const FAKE = path.resolve(__dirname, 'fake-lar-verify.js');

/** A folder with `lean` and `lake` scripts: lean prints a version, lake "builds" lar-verify as a wrapper of the stand-in. */
export function fakeToolchain(): { bin: string; buildCount: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lar-toolchain-'));
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin);
  const buildCount = path.join(root, 'builds');
  fs.writeFileSync(
    path.join(bin, 'lean'),
    '#!/bin/sh\necho "Lean (version 4.34.1, x86_64-unknown-linux-gnu, commit 0000000, Release)"\n',
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(bin, 'lake'),
    [
      '#!/bin/sh',
      '[ "$1" = build ] && [ "$2" = lar-verify ] || { echo "unexpected: $*" >&2; exit 2; }',
      '[ -f lakefile.toml ] && [ -f Main.lean ] && [ -f Lar/Verifier.lean ] || { echo "sources were not copied" >&2; exit 3; }',
      `echo built >> ${shellQuote(buildCount)}`,
      'mkdir -p .lake/build/bin',
      // The generated script names node and the fake checker as quoted words too (printf %s writes them as given).
      `printf '#!/bin/sh\\nexec %s %s --serve "$@"\\n' ${shellQuote(shellQuote(process.execPath))} ${shellQuote(shellQuote(FAKE))} > .lake/build/bin/lar-verify`,
      'chmod +x .lake/build/bin/lar-verify',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { bin, buildCount };
}
