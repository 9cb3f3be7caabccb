import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from '../../support/fc';
import { runFileTool } from '../../../core/tools/file-tools';
import { isInside } from '../../../core/workspace/fs';
import { NodeWorkspaceFs } from '../../../core/workspace/node-fs';
import type { ToolOutcome } from '../../../core/tools/types';

const SECRET = 'SECRET-OUTSIDE-THE-WORKSPACE';

/**
 * tmp/
 *   a                       SECRET (a file named like a workspace folder, one level up)
 *   outside/a, outside/secret.txt   SECRET
 *   ws/                     the workspace
 *     a/a                   inside
 *     src/app.ts, src/util.ts, notes.md, bin.dat (NUL bytes)
 *     .git/config, node_modules/pkg/index.js   (contain the search word too)
 *     link-out  -> ../outside/secret.txt   (file symlink out)
 *     dir-out   -> ../outside              (folder symlink out)
 *     link-in   -> src/util.ts             (symlink inside: allowed)
 *     dangling  -> ../outside/nope.txt     (dangling symlink out)
 */
let tmp: string;
let ws: string;
let fs: NodeWorkspaceFs;
const ctx = () => ({ workspace: ws });
const run = (tool: string, args: unknown): Promise<ToolOutcome> => runFileTool(fs, tool, args, ctx());

function outsideSnapshot(): string {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
      const p = join(dir, d.name);
      if (p === ws) return [];
      return d.isDirectory() && !d.isSymbolicLink()
        ? [p + '/', ...walk(p)]
        : [`${p}=${d.isFile() ? readFileSync(p, 'utf8') : ''}`];
    });
  return walk(tmp).sort().join('\n');
}

before(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'lar-files-')));
  ws = join(tmp, 'ws');
  writeFileSync(join(tmp, 'a'), SECRET);
  mkdirSync(join(tmp, 'outside'));
  writeFileSync(join(tmp, 'outside', 'a'), SECRET);
  writeFileSync(join(tmp, 'outside', 'secret.txt'), SECRET);
  mkdirSync(join(ws, 'a'), { recursive: true });
  writeFileSync(join(ws, 'a', 'a'), 'inside a/a\n');
  mkdirSync(join(ws, 'src'));
  writeFileSync(
    join(ws, 'src', 'app.ts'),
    'import { add } from "./util";\n\nexport function main() {\n  return add(1, 2);\n}\n',
  );
  writeFileSync(
    join(ws, 'src', 'util.ts'),
    'export function add(a: number, b: number) {\n  return a + b;\n}\n\nexport const TODO = "add more";\n',
  );
  writeFileSync(join(ws, 'notes.md'), 'line one\nline two\nline three\nline four\nline five\n');
  writeFileSync(join(ws, 'bin.dat'), Buffer.from([0x61, 0x64, 0x64, 0, 1, 2, 0x61, 0x64, 0x64]));
  mkdirSync(join(ws, '.git'));
  writeFileSync(join(ws, '.git', 'config'), 'add = secret git stuff\n');
  mkdirSync(join(ws, 'node_modules', 'pkg'), { recursive: true });
  writeFileSync(join(ws, 'node_modules', 'pkg', 'index.js'), 'module.exports.add = 1;\n');
  symlinkSync(join(tmp, 'outside', 'secret.txt'), join(ws, 'link-out'));
  symlinkSync('../outside', join(ws, 'dir-out'));
  symlinkSync('src/util.ts', join(ws, 'link-in'));
  symlinkSync('../outside/nope.txt', join(ws, 'dangling'));
  fs = new NodeWorkspaceFs(ws);
});

after(() => rmSync(tmp, { recursive: true, force: true }));

function assertError(o: ToolOutcome, re: RegExp): void {
  assert.equal(o.status, 'error', o.observation);
  assert.match(o.result.error ?? '', re);
  assert.match(o.observation, re);
  assert.ok(typeof o.result.durationMs === 'number');
  assert.ok(!o.observation.includes(SECRET));
  assert.ok(!/\n\s+at /.test(o.observation), 'no stack trace');
}

describe('read_file', () => {
  test('a whole file with line numbers', async () => {
    const o = await run('read_file', { path: 'notes.md' });
    assert.equal(o.status, 'ok');
    assert.equal(
      o.observation,
      'notes.md (5 lines):\n1\tline one\n2\tline two\n3\tline three\n4\tline four\n5\tline five',
    );
    assert.ok(o.result.durationMs! >= 0);
  });

  test('a range, 1-based inclusive; an end past the file is clamped with a note', async () => {
    const o = await run('read_file', { path: 'notes.md', startLine: 2, endLine: 3 });
    assert.equal(o.observation, 'notes.md (lines 2-3 of 5):\n2\tline two\n3\tline three');
    const tail = await run('read_file', { path: 'notes.md', startLine: 4, endLine: 99 });
    assert.equal(tail.status, 'ok');
    assert.match(tail.observation, /4\tline four\n5\tline five\n\[the file ends at line 5\]/);
  });

  test('bad ranges, missing files, folders and binary files are errors the model can read', async () => {
    assertError(
      await run('read_file', { path: 'notes.md', startLine: 9 }),
      /past the end of "notes.md", which has 5 lines/,
    );
    assertError(
      await run('read_file', { path: 'notes.md', startLine: 3, endLine: 2 }),
      /endLine \(2\) is before startLine \(3\)/,
    );
    assertError(await run('read_file', { path: 'nope.txt' }), /"nope.txt" does not exist/);
    assertError(await run('read_file', { path: 'src' }), /is a folder/);
    assertError(await run('read_file', { path: 'bin.dat' }), /binary file/);
    assertError(await run('read_file', { path: 'notes.md/x' }), /is a file, not a folder/);
  });

  test('a long file is capped with a note saying how to read on', async () => {
    writeFileSync(join(ws, 'long.txt'), Array.from({ length: 2500 }, (_, i) => `l${i + 1}`).join('\n'));
    const o = await run('read_file', { path: 'long.txt' });
    assert.equal(o.status, 'ok');
    assert.equal(o.result.outputTruncated, true);
    assert.match(o.observation, /^long.txt \(lines 1-2000 of 2500\):/);
    assert.match(o.observation, /2000\tl2000\n\[shown lines 1-2000 of 2500: .* read on with startLine=2001\]$/);
    const rest = await run('read_file', { path: 'long.txt', startLine: 2001 });
    assert.match(rest.observation, /^long.txt \(lines 2001-2500 of 2500\):\n2001\tl2001/);
    rmSync(join(ws, 'long.txt'));
  });

  test('a symlink inside the workspace to a file inside is followed', async () => {
    const o = await run('read_file', { path: 'link-in' });
    assert.equal(o.status, 'ok');
    assert.match(o.observation, /export function add/);
  });

  test('a cancelled call does not run', async () => {
    const ac = new AbortController();
    ac.abort();
    const o = await runFileTool(
      fs,
      'write_file',
      { path: 'never.txt', content: 'x' },
      { workspace: ws, signal: ac.signal },
    );
    assert.equal(o.status, 'interrupted');
    assert.ok(!existsSync(join(ws, 'never.txt')));
  });

  test('odd arguments give an error, not a crash', async () => {
    assertError(await run('read_file', null), /must be an object/);
    assertError(await run('read_file', { path: 42 }), /"path" must be a string/);
    assertError(await run('read_file', { path: 'notes.md', startLine: 0 }), /positive whole number/);
    assertError(await run('read_file', { path: '' }), /empty/);
    assertError(await run('nope_tool', {}), /not a file tool/);
  });
});

describe('write_file', () => {
  test('creates parents and reports the file changed', async () => {
    const o = await run('write_file', { path: 'new/deep/file.txt', content: 'hello\nworld\n' });
    assert.equal(o.status, 'ok', o.observation);
    assert.deepEqual(o.result.filesChanged, ['new/deep/file.txt']);
    assert.equal(o.observation, 'Created new/deep/file.txt (2 lines, 12 bytes).');
    assert.equal(readFileSync(join(ws, 'new/deep/file.txt'), 'utf8'), 'hello\nworld\n');
    const again = await run('write_file', { path: './new//deep/file.txt', content: '' });
    assert.equal(again.observation, 'Overwrote new/deep/file.txt (0 lines, 0 bytes).');
    assert.deepEqual(again.result.filesChanged, ['new/deep/file.txt']);
  });

  test('writing through a symlink inside the workspace reports the real file changed', async () => {
    const original = readFileSync(join(ws, 'src', 'util.ts'), 'utf8');
    const o = await run('write_file', { path: 'link-in', content: original + '// touched\n' });
    assert.equal(o.status, 'ok', o.observation);
    assert.deepEqual(o.result.filesChanged, ['src/util.ts']);
    assert.match(readFileSync(join(ws, 'src', 'util.ts'), 'utf8'), /touched/);
    writeFileSync(join(ws, 'src', 'util.ts'), original);
  });

  test('a folder or a file used as a folder is an error', async () => {
    assertError(await run('write_file', { path: 'src', content: 'x' }), /is a folder/);
    assertError(await run('write_file', { path: 'notes.md/child.txt', content: 'x' }), /is a file, not a folder/);
    assertError(await run('write_file', { path: '.', content: 'x' }), /workspace folder itself/);
  });
});

describe('edit_file', () => {
  test('replaces exactly one occurrence and reports the file changed', async () => {
    writeFileSync(join(ws, 'edit.ts'), 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    const o = await run('edit_file', {
      path: 'edit.ts',
      search: 'const b = 2;',
      replace: 'const b = 20;\nconst bb = 21;',
    });
    assert.equal(o.status, 'ok', o.observation);
    assert.deepEqual(o.result.filesChanged, ['edit.ts']);
    assert.equal(o.observation, 'Edited edit.ts: replaced 1 line at line 2 with 2 lines.');
    assert.equal(
      readFileSync(join(ws, 'edit.ts'), 'utf8'),
      'const a = 1;\nconst b = 20;\nconst bb = 21;\nconst c = 3;\n',
    );
  });

  test('replacement text is literal ($& and $1 are not patterns)', async () => {
    writeFileSync(join(ws, 'dollar.txt'), 'price: X\n');
    const o = await run('edit_file', { path: 'dollar.txt', search: 'X', replace: '$& $1 $$' });
    assert.equal(o.status, 'ok');
    assert.equal(readFileSync(join(ws, 'dollar.txt'), 'utf8'), 'price: $& $1 $$\n');
  });

  test('not found: an error naming near matches', async () => {
    writeFileSync(join(ws, 'near.ts'), 'function f() {\n    return compute(x, y);\n}\n');
    const o = await run('edit_file', { path: 'near.ts', search: 'return compute(x,  y);\n', replace: 'return 0;' });
    assertError(o, /search text was not found in "near.ts"\. Similar text .* is at line 2;/);
    assert.equal(o.result.filesChanged, undefined);
    assertError(
      await run('edit_file', { path: 'near.ts', search: 'nothing like it', replace: '' }),
      /not found.*copy the text to replace exactly/,
    );
    assert.equal(readFileSync(join(ws, 'near.ts'), 'utf8'), 'function f() {\n    return compute(x, y);\n}\n');
  });

  test('not unique: an error saying how many times and asking for more context', async () => {
    writeFileSync(join(ws, 'dup.ts'), 'x = 1;\ny = 2;\nx = 1;\nx = 1;\n');
    const o = await run('edit_file', { path: 'dup.ts', search: 'x = 1;', replace: 'x = 9;' });
    assertError(
      o,
      /found 3 times in "dup.ts" \(at lines 1, 3, 4\); it must match exactly once\. Include more surrounding lines/,
    );
    assert.equal(readFileSync(join(ws, 'dup.ts'), 'utf8'), 'x = 1;\ny = 2;\nx = 1;\nx = 1;\n');
  });

  test('a CRLF file is matched by an LF search, and keeps its line ends', async () => {
    writeFileSync(join(ws, 'crlf.txt'), 'one\r\ntwo\r\nthree\r\n');
    const o = await run('edit_file', { path: 'crlf.txt', search: 'one\ntwo', replace: 'uno\ndos' });
    assert.equal(o.status, 'ok', o.observation);
    assert.equal(readFileSync(join(ws, 'crlf.txt'), 'utf8'), 'uno\r\ndos\r\nthree\r\n');
  });

  test('a missing file is an error', async () => {
    assertError(
      await run('edit_file', { path: 'missing.ts', search: 'a', replace: 'b' }),
      /"missing.ts" does not exist/,
    );
  });
});

describe('list_files', () => {
  test('top level by default, folders marked, .git and node_modules left out', async () => {
    const o = await run('list_files', {});
    assert.equal(o.status, 'ok');
    const lines = o.observation.split('\n');
    assert.ok(lines.includes('src/'));
    assert.ok(lines.includes('notes.md'));
    assert.ok(lines.includes('link-out (symlink)'));
    assert.ok(!lines.some((l) => l.startsWith('.git') || l.startsWith('node_modules')));
    assert.ok(!lines.includes('src/app.ts'));
    assert.equal(lines.at(-1), '[not listed: .git, node_modules]');
  });

  test('recursive lists a folder before its contents and does not follow symlinked folders', async () => {
    const o = await run('list_files', { path: '.', recursive: true });
    const lines = o.observation.split('\n');
    assert.ok(lines.indexOf('src/') < lines.indexOf('src/app.ts'));
    assert.ok(lines.includes('a/a'));
    assert.ok(lines.includes('dir-out (symlink)'));
    assert.ok(!lines.some((l) => l.startsWith('dir-out/')));
    assert.ok(!lines.some((l) => l.includes('.git/') || l.includes('node_modules/')));
  });

  test('a subfolder; a missing folder or a file is an error', async () => {
    const o = await run('list_files', { path: 'src' });
    assert.equal(o.observation, 'src/app.ts\nsrc/util.ts');
    assertError(await run('list_files', { path: 'nope' }), /does not exist/);
    assertError(await run('list_files', { path: 'notes.md' }), /is a file, not a folder/);
  });

  test('a big folder is capped with a note', async () => {
    mkdirSync(join(ws, 'many'));
    for (let i = 0; i < 1005; i++) writeFileSync(join(ws, 'many', `f${String(i).padStart(4, '0')}`), '');
    const o = await run('list_files', { path: 'many' });
    assert.equal(o.status, 'ok');
    assert.equal(o.result.outputTruncated, true);
    assert.match(o.observation, /\[listing stopped at 1000 entries; list a subfolder to see more\]$/);
    rmSync(join(ws, 'many'), { recursive: true });
  });
});

describe('search', () => {
  test('plain text: path:line: text, skipping binary files, .git, node_modules and links out', async () => {
    const o = await run('search', { pattern: 'add' });
    assert.equal(o.status, 'ok', o.observation);
    const lines = o.observation.split('\n');
    assert.ok(lines.includes('src/app.ts:1: import { add } from "./util";'), o.observation);
    assert.ok(lines.includes('src/app.ts:4: return add(1, 2);'));
    assert.ok(lines.includes('src/util.ts:1: export function add(a: number, b: number) {'));
    assert.ok(!o.observation.includes('.git') && !o.observation.includes('node_modules'));
    assert.ok(!o.observation.includes('bin.dat:'));
    assert.ok(o.observation.includes('[1 binary file skipped]'));
    assert.match(lines[0]!, /^\d+ matches for "add":$/);
  });

  test('plain text is not a regex; regex when asked', async () => {
    const plain = await run('search', { pattern: 'a + b', path: 'src' });
    assert.match(plain.observation, /src\/util.ts:2: return a \+ b;/);
    const re = await run('search', { pattern: '^export (function|const) \\w+', regex: true });
    assert.equal(re.status, 'ok');
    assert.match(
      re.observation,
      /^3 matches for .* \(regex\):\nsrc\/app.ts:3: export function main\(\) \{\nsrc\/util.ts:1: /,
    );
    const none = await run('search', { pattern: 'zzz-not-there' });
    assert.equal(none.status, 'ok');
    assert.equal(none.observation, 'No matches for "zzz-not-there" in the workspace.\n[1 binary file skipped]');
  });

  test('one file as the path', async () => {
    const o = await run('search', { pattern: 'line t', path: 'notes.md' });
    assert.equal(o.observation, '2 matches for "line t":\nnotes.md:2: line two\nnotes.md:3: line three');
  });

  test('an invalid regex is an error with the reason', async () => {
    assertError(
      await run('search', { pattern: 'foo(', regex: true }),
      /invalid regular expression "foo\(": .*(Unterminated group|unterminated)/i,
    );
  });

  test('a regex that backtracks catastrophically is stopped with an error, not left to freeze the process', async () => {
    writeFileSync(join(ws, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    const o = await run('search', { pattern: '^(a+)+$', path: 'evil.txt', regex: true });
    assertError(o, /took longer than \d+ ms \(in evil\.txt\) and was stopped: it backtracks catastrophically/);
    // The same search tool answers the next call as usual.
    const next = await run('search', { pattern: 'a{40}!', path: 'evil.txt', regex: true });
    assert.equal(next.status, 'ok');
    assert.match(next.observation, /evil\.txt:1:/);
  });

  test('many matches are capped with a note', async () => {
    writeFileSync(join(ws, 'big.txt'), 'hit\n'.repeat(300));
    const o = await run('search', { pattern: 'hit', path: 'big.txt' });
    assert.equal(o.result.outputTruncated, true);
    assert.match(o.observation, /\[300 matches; the first 200 are shown/);
    rmSync(join(ws, 'big.txt'));
  });
});

describe('security: nothing outside the workspace', () => {
  test('lexical escapes are refused with a clear reason', async () => {
    for (const tool of ['read_file', 'write_file', 'edit_file', 'list_files', 'search'] as const) {
      const args = (path: string) =>
        tool === 'write_file'
          ? { path, content: 'x' }
          : tool === 'edit_file'
            ? { path, search: 'a', replace: 'b' }
            : tool === 'search'
              ? { pattern: 'root', path }
              : { path };
      assertError(await run(tool, args('../x')), /climbs out of the workspace/);
      assertError(await run(tool, args('a/../../x')), /climbs out of the workspace/);
      assertError(await run(tool, args('/etc/passwd')), /absolute path/);
      assertError(await run(tool, args('~/.bashrc')), /"~"/);
      assertError(await run(tool, args('..\\x')), /climbs out/);
      assertError(await run(tool, args('C:/Windows/win.ini')), /drive/);
    }
    assert.ok(!existsSync(join(tmp, 'x')));
  });

  test('a symlink pointing outside: read, edit and write through it are refused', async () => {
    assertError(await run('read_file', { path: 'link-out' }), /"link-out" is a symbolic link pointing out of it/);
    assertError(await run('edit_file', { path: 'link-out', search: 'SECRET', replace: 'x' }), /outside the workspace/);
    assertError(await run('write_file', { path: 'link-out', content: 'pwned' }), /outside the workspace/);
    assert.equal(readFileSync(join(tmp, 'outside', 'secret.txt'), 'utf8'), SECRET);
  });

  test('a symlinked folder pointing outside: reads, writes, new files and listings under it are refused', async () => {
    assertError(
      await run('read_file', { path: 'dir-out/secret.txt' }),
      /"dir-out" is a symbolic link pointing out of it/,
    );
    assertError(await run('write_file', { path: 'dir-out/secret.txt', content: 'pwned' }), /outside the workspace/);
    assertError(await run('write_file', { path: 'dir-out/new.txt', content: 'pwned' }), /outside the workspace/);
    assertError(await run('write_file', { path: 'dir-out/sub/new.txt', content: 'pwned' }), /outside the workspace/);
    assertError(await run('list_files', { path: 'dir-out' }), /outside the workspace/);
    assertError(await run('search', { pattern: 'SECRET', path: 'dir-out' }), /outside the workspace/);
    assert.ok(!existsSync(join(tmp, 'outside', 'new.txt')));
    assert.ok(!existsSync(join(tmp, 'outside', 'sub')));
  });

  test('a dangling symlink is not written through', async () => {
    assertError(
      await run('write_file', { path: 'dangling', content: 'pwned' }),
      /does not exist; refusing to follow it/,
    );
    assert.ok(!existsSync(join(tmp, 'outside', 'nope.txt')));
  });

  test('search never shows what symlinks out point to', async () => {
    const o = await run('search', { pattern: 'SECRET' });
    assert.equal(o.status, 'ok');
    assert.ok(!o.observation.includes(SECRET.slice(6)), o.observation);
  });

  test('a symlink whose target differs only in case is judged by its real path', async () => {
    // On Linux `WS` is another folder, outside; on a case-insensitive file system it is the workspace itself.
    symlinkSync(join(tmp, 'WS'), join(ws, 'case-link'));
    const o = await run('read_file', { path: 'case-link/notes.md' });
    const caseInsensitive = existsSync(join(tmp, 'WS'));
    if (caseInsensitive) assert.equal(o.status, 'ok');
    else assertError(o, /does not exist; refusing to follow it/);
    rmSync(join(ws, 'case-link'));
  });

  test('isInside compares by path segments, case-folded only when asked', () => {
    assert.ok(isInside('/w/proj', '/w/proj', false));
    assert.ok(isInside('/w/proj', '/w/proj/a', false));
    assert.ok(!isInside('/w/proj', '/w/proj-evil/a', false));
    assert.ok(!isInside('/w/proj', '/w/PROJ/a', false));
    assert.ok(isInside('/w/proj', '/w/PROJ/a', true));
    assert.ok(!isInside('/w/proj', '/w', true));
  });

  const SEGMENTS = [
    '..',
    '.',
    'a',
    '',
    'link-out',
    'dir-out',
    'dangling',
    'link-in',
    'secret.txt',
    '~',
    'outside',
    'ws',
    'src',
  ];
  const pathArb = fc
    .tuple(
      fc.constantFrom('', '/', '\\', './', '~/'),
      fc.array(fc.tuple(fc.constantFrom(...SEGMENTS), fc.constantFrom('/', '\\', '//')), {
        minLength: 1,
        maxLength: 6,
      }),
    )
    .map(([lead, parts]) => lead + parts.map(([s, sep], i) => (i === 0 ? s : sep + s)).join(''))
    .filter((p) => p.length > 0);

  test('property: no generated path reads a file outside the workspace', async () => {
    await fc.assert(
      fc.asyncProperty(pathArb, async (p) => {
        const r = await fs.readText(p);
        if (r.ok) assert.ok(!r.value.text.includes(SECRET), `read outside through ${JSON.stringify(p)}`);
        const real = await fs.realPath(p);
        if (real.ok) assert.ok(isInside(ws, real.value.absolute, false), `${p} → ${real.value.absolute}`);
        const o = await run('read_file', { path: p });
        assert.ok(!o.observation.includes(SECRET), `read_file ${JSON.stringify(p)}`);
      }),
      { numRuns: 400 },
    );
  });

  test('property: no generated path writes anything outside the workspace', async () => {
    const before = outsideSnapshot();
    await fc.assert(
      fc.asyncProperty(pathArb, async (p) => {
        const w = await fs.writeText(p + (p.endsWith('/') || p.endsWith('\\') ? 'f' : ''), 'written');
        if (w.ok) assert.ok(!w.value.path.startsWith('..'), `${p} → ${w.value.path}`);
        assert.equal(outsideSnapshot(), before, `wrote outside through ${JSON.stringify(p)}`);
      }),
      { numRuns: 150 },
    );
  });
});
