import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from '../../support/fc';
import { TerminalSession } from '../../../core/shell/session';
import { MarkerLineFilter, commandBanner, isHiddenLine } from '../../../extension/agent/marker-filter';

const N = '0123456789abcdef';

test('marker lines are hidden, output passes through', () => {
  const f = new MarkerLineFilter();
  const raw = `__LAR_B_${N}__\r\nhello\r\nworld\r\n\r\n__LAR_E_${N}_0__\r\n`;
  assert.equal(f.push(raw) + f.flush(), 'hello\r\nworld\r\n\r\n');
});

test('a marker split across chunks is still hidden; partial ordinary text is shown at once', () => {
  const f = new MarkerLineFilter();
  const raw = `__LAR_B_${N}__\r\nprogress 10%\rprogress 100%\r\n__LAR_E_${N}_127__\r\n__LAR_S_${N}__\r\n`;
  let out = '';
  for (const ch of raw) out += f.push(ch);
  out += f.flush();
  assert.equal(out, 'progress 10%\rprogress 100%\r\n');
  const g = new MarkerLineFilter();
  assert.equal(g.push('downloading'), 'downloading');
  assert.equal(g.push('__LA'), '');
  assert.equal(g.push('TE not a marker\r\n'), '__LATE not a marker\r\n');
});

test('a marker behind the control sequences a line editor writes is hidden, however the stream is cut', () => {
  // bash leaves bracketed paste before it runs a line, zsh resets the keypad and sets a title:
  // when those land on the marker's line is a matter of timing.
  const raw =
    `\x1b[?2004l\r__LAR_R_${N}__\r\n` +
    `\x1b[1;32mok\x1b[0m\r\n` +
    `\x1b]0;user@host: ~\x07__LAR_B_${N}__\r\n` +
    `50%\r\x1b[2K100%\r\n` +
    `\x1b[?1l\x1b>__LAR_E_${N}_0__\r\n` +
    `\x1b]2;t\x1b\\\x1b[?2004h__LAR_S_${N}__\r\n`;
  const shown = `\x1b[1;32mok\x1b[0m\r\n50%\r\x1b[2K100%\r\n`;
  const whole = new MarkerLineFilter();
  assert.equal(whole.push(raw) + whole.flush(), shown);
  // Cut, a control sequence that arrived alone is passed on at once (it may be
  // the screen's last change before a long wait); the text is the same.
  const text = (s: string): string =>
    s.replace(/\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -~])|\r/g, '');
  for (let cut = 0; cut <= raw.length; cut++) {
    for (const cut2 of [cut, Math.min(raw.length, cut + 3)]) {
      const f = new MarkerLineFilter();
      const out = f.push(raw.slice(0, cut)) + f.push(raw.slice(cut, cut2)) + f.push(raw.slice(cut2)) + f.flush();
      assert.doesNotMatch(out, /__LAR_|LAR_|_[0-9a-f]{16}/, `cut at ${cut} and ${cut2}`);
      assert.equal(text(out), text(shown), `cut at ${cut} and ${cut2}`);
      assert.ok(
        out.includes('\x1b[1;32mok\x1b[0m\r\n') && out.includes('50%\r\x1b[2K100%\r\n'),
        `cut at ${cut} and ${cut2}: output whole`,
      );
    }
  }
  // A clear screen before a long wait is shown at once, not held for a newline.
  const c = new MarkerLineFilter();
  assert.equal(c.push('\x1b[2J\x1b[H'), '\x1b[2J\x1b[H');
  // Nothing is held without bound: a long line that never ends, an unterminated OSC.
  const long = new MarkerLineFilter();
  let shownLong = 0;
  for (let i = 0; i < 200; i++) shownLong += long.push(i === 0 ? '\x1b]0;' : 'a'.repeat(1000)).length;
  assert.ok(shownLong >= 190_000, `shown ${shownLong} of 199,004 characters`);
  // DCS and other string sequences are skipped whole.
  const d = new MarkerLineFilter();
  assert.equal(d.push(`\x1bP1$r0m\x1b\\__LAR_S_${N}__\r\nafter\r\n`), 'after\r\n');
  // Output that only looks like a marker behind colour is not one once it has more on the line.
  const g = new MarkerLineFilter();
  assert.equal(g.push(`\x1b[31m__LAR_B_${N}__ failed\x1b[0m\r\n`), `\x1b[31m__LAR_B_${N}__ failed\x1b[0m\r\n`);
});

/** What the terminal shows of a mirrored stream, control sequences (string ones included) and carriage returns left out. */
const shownText = (s: string): string =>
  s.replace(/\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[ -/]*[0-~])|\r/g, '');

/** Every DCS, SOS, PM or APC string the mirror passed on is terminated (xterm.js would swallow what follows one that is not). */
function assertStringsTerminated(out: string, context: string): void {
  const introducer = /\x1b[PX^_]/g;
  for (let m = introducer.exec(out); m; m = introducer.exec(out)) {
    assert.match(
      out.slice(m.index + 2),
      /^[^\x1b]*\x1b\\/,
      `${context}: the string at ${m.index} is not terminated: ${JSON.stringify(out)}`,
    );
  }
}

/** The mirror of `raw` pushed in the pieces `cuts` make (positions, any order). */
function mirrorCut(raw: string, cuts: number[]): string {
  const f = new MarkerLineFilter();
  const at = [...new Set([0, ...cuts.map((c) => Math.min(raw.length, c)), raw.length])].sort((a, b) => a - b);
  let out = '';
  for (let i = 1; i < at.length; i++) out += f.push(raw.slice(at[i - 1], at[i]));
  return out + f.flush();
}

test('a DCS, SOS, PM or APC string cut right after its introducer is held as a string, not shown as a two-character escape: the marker behind it stays hidden', () => {
  for (const introducer of ['P', 'X', '^', '_']) {
    // A terminal's answer to a query (DECRQSS) or a program's APC on the line of a sync marker.
    const raw = `ok\r\n\x1b${introducer}1$r0m\x1b\\__LAR_S_${N}__\r\nafter\r\n`;
    for (let cut = 0; cut <= raw.length; cut++) {
      for (const cut2 of [cut, cut + 1, cut + 2, cut + 5]) {
        const out = mirrorCut(raw, [cut, cut2]);
        const context = `ESC ${introducer}, cut at ${cut} and ${cut2}`;
        // A string that arrived whole before the marker may be passed on at once, as any complete control sequence.
        assert.equal(shownText(out), 'ok\nafter\n', context);
        assert.doesNotMatch(out, /LAR_|_[0-9a-f]{16}/, context);
        assertStringsTerminated(out, context);
      }
    }
  }
});

test('property: however a stream of output, control sequences, strings and markers is cut, the mirror shows the same text, no marker, and no unterminated string', () => {
  const printable = fc.string({ unit: fc.constantFrom(...'abc 01_$;%#'.split('')), maxLength: 8 });
  const control = fc.oneof(
    fc.constantFrom(
      '\x1b[31m',
      '\x1b[0m',
      '\x1b[?2004l',
      '\x1b[2K',
      '\r',
      '\x1b]0;title\x07',
      '\x1b]2;t\x1b\\',
      '\x1b(B',
      '\x1b7',
      '\x1b=',
    ),
    fc.tuple(fc.constantFrom('P', 'X', '^', '_'), printable).map(([i, t]) => `\x1b${i}${t}\x1b\\`),
  );
  // Lines as a shell writes them: a marker only ever starts a line, maybe behind control sequences.
  const marker = fc.constantFrom(
    `__LAR_B_${N}__`,
    `__LAR_E_${N}_0__`,
    `__LAR_S_${N}__`,
    `__LAR_E_${N}_127__`,
    `__LAR_R_${N}__`,
  );
  const piece = fc
    .tuple(
      fc.array(control, { maxLength: 3 }),
      fc.oneof(
        marker,
        fc.array(fc.oneof(printable, control), { maxLength: 4 }).map((a) => a.join('')),
      ),
      fc.boolean(),
    )
    .map(([lead, body, ends]) => `${lead.join('')}${body}${ends ? '\r\n' : ''}`);
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 10 }), fc.array(fc.nat(300), { maxLength: 6 }), (pieces, cuts) => {
      // Each line ends before the next starts (the last may be unfinished).
      const raw = pieces.map((l, i) => (i < pieces.length - 1 && !l.endsWith('\n') ? `${l}\r\n` : l)).join('');
      const whole = mirrorCut(raw, []);
      const out = mirrorCut(raw, cuts);
      assert.doesNotMatch(out, /__LAR_[BERS]_/);
      assert.equal(shownText(out), shownText(whole), `cut at ${cuts.join(', ')}`);
      assertStringsTerminated(out, `cut at ${cuts.join(', ')}`);
    }),
    { numRuns: 2000 },
  );
});

test('the echoed shell set-up line, the ready marker and the lines typed for the shell are hidden; look-alikes are not', () => {
  assert.equal(isHiddenLine(`stty -echo 2>/dev/null; set +o emacs; PS1=''; printf '__LAR_R_%s__\\n' ${N}\r\n`), true);
  assert.equal(isHiddenLine(`__LAR_R_${N}__\r\n`), true);
  // The set-up line as the shell now gets it (it sources the shell's start file), and the lines the
  // session types into the shell's loop (fish's line editor shows them as it reads them).
  assert.equal(
    isHiddenLine(`stty -echo 2>/dev/null; set +o emacs +o vi; PS1=''; . '/dev/shm/lar-run-x/start-0a1b2c.sh'\r\n`),
    true,
  );
  assert.equal(isHiddenLine(`\x1b[K__LAR_C_12__\r\n`), true);
  assert.equal(isHiddenLine(`__LAR_Y_${N}__\r\n`), true);
  assert.equal(isHiddenLine(`__LAR_Z_${N}__\r\n`), true);
  assert.equal(isHiddenLine(`echo __LAR_B_${N}__\r\n`), false);
  assert.equal(isHiddenLine(`__LAR_B_${N}__ trailing\r\n`), false);
  const f = new MarkerLineFilter();
  assert.equal(f.push(`__LAR_X_1__\r\n`), '__LAR_X_1__\r\n');
});

test('the command banner uses CRLF and indents continuation lines', () => {
  assert.equal(commandBanner('npm test'), '\x1b[1m$ npm test\x1b[0m\r\n');
  assert.equal(commandBanner('a\nb'), '\x1b[1m$ a\r\n  b\x1b[0m\r\n');
});

test('against a real shell: the mirror shows the output and no framing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-mirror-'));
  const session = new TerminalSession({
    cwd: dir,
    env: { ...process.env, SHELL: '/bin/bash' },
    outputDir: join(dir, 'out'),
  });
  const f = new MarkerLineFilter();
  let shown = '';
  session.onData((d) => (shown += f.push(d)));
  try {
    const r = await session.run('echo mirrored-$((40+2)); false', { timeoutMs: 10_000 });
    assert.equal(r.exitCode, 1);
    await session.run('echo second', { timeoutMs: 10_000 });
  } finally {
    session.dispose();
  }
  shown += f.flush();
  assert.match(shown, /mirrored-42/);
  assert.match(shown, /second/);
  assert.doesNotMatch(shown, /__LAR_/);
});

test('hideUntilReady drops the shell start-up (first prompt, echoed set-up line) up to the ready marker, again after a restart', () => {
  const f = new MarkerLineFilter({ hideUntilReady: true });
  let out = '';
  const startup = `root@box:/tmp/ws# stty -echo 2>/dev/null; PS1=''; printf '__LAR_R_%s__\\n' ${N}\r\n\x1b[?2004l__LAR_R_${N}__\r\n`;
  for (const ch of startup) out += f.push(ch);
  assert.equal(out, '');
  out += f.push(`__LAR_B_${N}__\r\nPASS\r\n__LAR_E_${N}_0__\r\n`);
  assert.equal(out, 'PASS\r\n');
  f.restart();
  assert.equal(f.push('root@box:/tmp/ws# '), '');
  assert.equal(f.flush(), '');
  assert.equal(f.push(`__LAR_R_${N}__\r\nagain\r\n`), 'again\r\n');
});

test('against a real shell with a prompt: hideUntilReady shows no prompt text in the mirror', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lar-mirror-'));
  const session = new TerminalSession({
    cwd: dir,
    env: { ...process.env, SHELL: '/bin/bash', PS1: 'PROMPT-LEAK# ' },
    shellArgs: ['--norc', '--noprofile'],
    outputDir: join(dir, 'out'),
  });
  const f = new MarkerLineFilter({ hideUntilReady: true });
  let shown = '';
  session.onData((d) => (shown += f.push(d)));
  try {
    await session.run('echo only-this', { timeoutMs: 10_000 });
  } finally {
    session.dispose();
  }
  shown += f.flush();
  assert.match(shown, /only-this/);
  assert.doesNotMatch(shown, /PROMPT-LEAK|__LAR_|stty/);
});
