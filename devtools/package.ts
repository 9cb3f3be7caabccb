/**
 * `npm run package`: platform VSIXs with @vscode/vsce. Everything but node-pty
 * is bundled (minified) by esbuild; each package carries node-pty's JavaScript
 * and the one native binary its platform loads:
 *
 * - linux-x64: the binary built from source by `npm ci` on this machine;
 * - darwin-x64, darwin-arm64: the prebuilt binaries node-pty ships on npm;
 * - linux-arm64: none can be had here (no prebuild on npm, no cross compiler):
 *   the package leaves node-pty out and the agent's commands run through the
 *   child-process fallback (the user is told once).
 *
 * Windows is not a target: the agent's terminal detects the end of a command
 * with markers written by a POSIX shell (use VS Code's WSL or Remote-SSH, where
 * the extension runs on Linux).
 *
 * It also writes the `lar` CLI as an npm tarball into out/cli/ (devtools/cli-package.ts).
 *
 * The package carries the README without its screenshots (`packagedReadme`): the seven of docs/images weigh
 * ~1.1 MB as PNG and still ~370 KB as lossless WebP, over a third of the 1 MB a package may weigh
 * (test/devtools/package-size.test.ts), and a relative image with no file behind it shows broken in the
 * Extensions view. Each becomes its caption, naming the file in the repository.
 *
 * Usage: node out/devtools/package.js [--target T ...] [--out DIR]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { linuxX64PtyBinary, writeCliPackage } from './cli-package';
import { REPO_ROOT } from './paths';

export const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'] as const;
export type Target = (typeof TARGETS)[number];

const PTY_BINARY_LINE = '!node_modules/node-pty/build/Release/pty.node';

/** The .vscodeignore for a target: the repository's one with the node-pty binary line swapped. */
export function ignoreFileFor(target: Target, base: string): string {
  const lines = base.split('\n');
  if (!lines.includes(PTY_BINARY_LINE))
    throw new Error(`.vscodeignore has no "${PTY_BINARY_LINE}" line to swap per platform`);
  switch (target) {
    case 'linux-x64':
      return base;
    case 'darwin-x64':
    case 'darwin-arm64':
      return lines.map((l) => (l === PTY_BINARY_LINE ? `!node_modules/node-pty/prebuilds/${target}/*` : l)).join('\n');
    case 'linux-arm64':
      return lines.filter((l) => !l.includes('node_modules/node-pty/')).join('\n');
  }
}

/** Where the packaged README is written: inside the repository, where vsce looks for files. */
const PACKAGED_README = 'out/package/README.md';

/** The README as packaged: each screenshot of docs/images (not in the package) replaced by its caption. */
export function packagedReadme(readme: string): string {
  return readme.replace(
    /!\[([^\]]*)\]\((docs\/images\/[^)\s]+)\)/g,
    (_, alt: string, file: string) => `*Screenshot (${file} in the repository): ${alt}.*`,
  );
}

/** One file of a VSIX (a zip): its path, its size, its size compressed, and how to read it. */
export interface VsixEntry {
  path: string;
  bytes: number;
  compressed: number;
  read(): Buffer;
}

/** The files of a VSIX, read from the zip's central directory (no ZIP64: a VSIX is far below 4 GB). */
export function vsixEntries(file: string): VsixEntry[] {
  const zip = readFileSync(file);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error(`${file} is not a zip`);
  const entries: VsixEntry[] = [];
  let at = zip.readUInt32LE(end + 16);
  for (let n = zip.readUInt16LE(end + 10); n > 0; n--) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: bad central directory`);
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const read = () => {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      return method === 8 ? inflateRawSync(data) : Buffer.from(data);
    };
    entries.push({
      path: zip.toString('utf8', at + 46, at + 46 + nameLength),
      bytes: zip.readUInt32LE(at + 24),
      compressed,
      read,
    });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}

/** Why a target cannot be packaged on this machine, if it cannot. */
function unavailable(target: Target): string | undefined {
  const pty = join(REPO_ROOT, 'node_modules', 'node-pty');
  if (target === 'linux-x64') {
    const binary = linuxX64PtyBinary();
    return 'why' in binary ? binary.why : undefined;
  }
  if (target.startsWith('darwin-') && !existsSync(join(pty, 'prebuilds', target, 'pty.node')))
    return `node-pty ships no ${target} prebuild in this version`;
  return undefined;
}

async function main(argv: string[]): Promise<number> {
  const wanted: Target[] = [];
  let outDir = join(REPO_ROOT, 'out', 'vsix');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--target') {
      const t = argv[++i];
      if (!TARGETS.includes(t as Target)) {
        process.stderr.write(`package: unknown target "${t}" (supported: ${TARGETS.join(', ')})\n`);
        return 2;
      }
      wanted.push(t as Target);
    } else if (a === '--out') {
      outDir = argv[++i] ?? outDir;
    } else {
      process.stderr.write(`package: unknown argument "${a}"\n`);
      return 2;
    }
  }
  const targets = wanted.length ? wanted : [...TARGETS];
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const base = readFileSync(join(REPO_ROOT, '.vscodeignore'), 'utf8');

  execFileSync(process.execPath, ['esbuild.mjs', '--production'], { cwd: REPO_ROOT, stdio: 'inherit' });
  mkdirSync(join(REPO_ROOT, 'out', 'package'), { recursive: true });
  writeFileSync(join(REPO_ROOT, PACKAGED_README), packagedReadme(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')));
  const cli = await writeCliPackage(join(REPO_ROOT, 'out', 'cli'));
  process.stdout.write(
    `package: cli: ${relative(process.cwd(), cli.file)} (${Math.round(cli.bytes / 1024)} KB)${cli.withoutPty ? ` — without node-pty (${cli.withoutPty}): commands use the child-process fallback` : ''}\n`,
  );
  mkdirSync(outDir, { recursive: true });
  const vsce = join(REPO_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  let failed = 0;
  for (const target of targets) {
    const why = unavailable(target);
    if (why) {
      process.stdout.write(`package: ${target}: skipped (${why})\n`);
      if (wanted.includes(target)) failed++;
      continue;
    }
    const ignore = join(outDir, `.vscodeignore-${target}`);
    writeFileSync(ignore, ignoreFileFor(target, base));
    const file = join(outDir, `${manifest.name}-${target}-${manifest.version}.vsix`);
    rmSync(file, { force: true });
    execFileSync(
      process.execPath,
      [
        vsce,
        'package',
        '--target',
        target,
        '--ignoreFile',
        ignore,
        '--out',
        file,
        '--allow-missing-repository',
        '--no-rewrite-relative-links',
        '--readme-path',
        PACKAGED_README,
      ],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const kb = Math.round(statSync(file).size / 1024);
    process.stdout.write(
      `package: ${target}: ${relative(process.cwd(), file)} (${kb} KB)${target === 'linux-arm64' ? ' — without node-pty: commands use the child-process fallback' : ''}\n`,
    );
  }
  return failed ? 1 : 0;
}

if (require.main === module)
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
