/**
 * `lar verify --backend lean` builds `lar-verify` on the user's machine (`lake build lar-verify`),
 * so a proof that fails to elaborate must not stop it from building: the executable's import
 * closure holds definitions only, and every theorem lives in `LarProofs`, a library it never
 * imports (docs/lean.md, "Two libraries"). Read from the sources, with no toolchain.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importClosure, leanHeaderImports } from '../../core/lean/build';
import { leanCode } from '../support/lean-source';

const LEAN = path.resolve(__dirname, '../../../lean');

/** The package's own modules reachable from `root` (core's `Lean.*`, `Std.*` and `Init.*` are not followed), with their text. */
function closure(root: string): Map<string, string> {
  const files = new Map(importClosure(LEAN, root).map((f) => [f, fs.readFileSync(path.join(LEAN, f), 'utf8')] as const));
  for (const [file, text] of files)
    for (const mod of leanHeaderImports(text))
      if (!files.has(`${mod.split('.').join('/')}.lean`))
        assert.match(mod, /^(Lean|Std|Init)(\.|$)/, `${file} imports ${mod}, which is neither in lean/ nor in Lean core`);
  return files;
}

/** Every `.lean` file of the package. */
function allFiles(dir = ''): string[] {
  return fs.readdirSync(path.join(LEAN, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) return e.name.startsWith('.') ? [] : allFiles(rel);
    return rel.endsWith('.lean') ? [rel] : [];
  });
}

/** Where a proof, or anything elaborated for its own sake, appears in the code of a file: a theorem,
 * lemma or example, a tactic block, a `#`-command (`#guard`, `#eval!`, `#guard_msgs`, …) or a `run_*`
 * command. (A term-mode proof inside a `def` has no word of its own; keeping the checker's modules to
 * definitions of data is a rule for reviewers, not something this test can see.) */
const PROOF_WORDS =
  /(?<![\w.'#])(theorem|lemma|example|by|decreasing_by|termination_by|run_cmd|run_elab|run_meta|#[A-Za-z_]+!?)(?![\w'?])/g;

function findings(re: RegExp, text: string): string[] {
  const code = leanCode(text);
  return [...code.matchAll(re)].map((m) => `${m[1] ?? m[0]} (line ${code.slice(0, m.index).split('\n').length})`);
}

test('lar-verify is built by lake from Main.lean, and the lakefile keeps the proofs in a library of their own', () => {
  const lakefile = fs.readFileSync(path.join(LEAN, 'lakefile.toml'), 'utf8');
  assert.match(lakefile, /\[\[lean_exe\]\]\s*\nname = "lar-verify"\s*\nroot = "Main"/);
  assert.match(lakefile, /\[\[lean_lib\]\]\s*\nname = "LarProofs"/);
  const build = fs.readFileSync(path.resolve(__dirname, '../../../core/lean/build.ts'), 'utf8');
  assert.match(build, /'build', 'lar-verify'/, 'the backend builds the executable target alone');
});

test("the executable's import closure holds no theorem, proof, example or #guard", () => {
  const files = closure('Main.lean');
  // Not vacuous: every checker module is in it, and no module of the proofs or the specification.
  for (const m of ['Glob', 'Num', 'Mcp', 'Schema', 'Tools', 'Checks', 'Rewards', 'Verifier', 'Protocol'])
    assert.ok(files.has(`Lar/${m}.lean`), `Lar/${m}.lean is in the closure`);
  for (const file of files.keys()) assert.doesNotMatch(file, /^(LarProofs|Lar\/Spec)(\/|\.lean$)/, `${file} is a proof module`);
  const found = [...files].flatMap(([file, text]) => findings(PROOF_WORDS, text).map((f) => `${file}: ${f}`));
  assert.deepEqual(found, []);
});

test('the specification only states: no proof in it or in anything it imports', () => {
  // So it elaborates, and can be read, whether or not a proof does (docs/lean.md).
  const spec = allFiles().filter((f) => f.startsWith('Lar/Spec/'));
  for (const m of ['Checks', 'Trajectory', 'Run', 'Verdicts']) assert.ok(spec.includes(`Lar/Spec/${m}.lean`), `Lar/Spec/${m}.lean exists`);
  for (const root of spec) {
    const files = closure(root);
    for (const file of files.keys()) assert.doesNotMatch(file, /^LarProofs(\/|\.lean$)/, `${root} imports the proof module ${file}`);
    const found = [...files].flatMap(([file, text]) => findings(PROOF_WORDS, text).map((f) => `${file}: ${f}`));
    assert.deepEqual(found, [], `${root} and its imports`);
  }
});

test('the scan finds the proofs where they are (it is not blind)', () => {
  const proofs = closure('LarProofs.lean');
  const theorems = [...proofs.values()].flatMap((t) => findings(PROOF_WORDS, t)).filter((f) => f.startsWith('theorem'));
  assert.ok(theorems.length > 100, `${theorems.length} theorems found in LarProofs`);
  assert.ok([...proofs.keys()].some((f) => f.startsWith('Lar/Spec/')), 'the specification is part of LarProofs');
  // A word in a comment or a string is not code.
  assert.deepEqual(findings(PROOF_WORDS, '/- theorem -/ def x := "by" -- example\n/-- #guard -/ def y := \'b\''), []);
  assert.deepEqual(findings(PROOF_WORDS, 'def z : Nat := by exact 1'), ['by (line 1)']);
  // A brace in a plain string is a character: the theorem between two such strings is still code.
  assert.deepEqual(findings(PROOF_WORDS, 'def a := "{"\ntheorem t : True := trivial\ndef b := "}"'), ['theorem (line 2)']);
  // Interpolated strings hide their text but not the code after them; raw strings and char literals are text.
  assert.deepEqual(findings(PROOF_WORDS, 'def m := s!"a {f "}"} b"\n#guard_msgs in\n#eval! 1'), ['#guard_msgs (line 2)', '#eval! (line 3)']);
  assert.deepEqual(findings(PROOF_WORDS, 'def r := r#"by " theorem"#\ndef q := \'\\\'\'\nrun_cmd pure ()'), ['run_cmd (line 3)']);
});

test('every module of the package is imported by the checker or by LarProofs', () => {
  const reached = new Set([...closure('Main.lean').keys(), ...closure('LarProofs.lean').keys()]);
  const missed = allFiles().filter((f) => f !== 'lakefile.lean' && !reached.has(f));
  assert.deepEqual(missed, [], 'a module nothing imports is never built, so its proofs are never checked');
});

test('no tactic block swallows the comma after it', () => {
  // `cases`, `rcases`, `induction`, `obtain` and `generalize` take a comma-separated list, so in
  // `⟨fun h => by cases h, fun g => …⟩` the second component parses as a second target: the anonymous
  // constructor gets one argument. Such a block inside brackets is parenthesized: `(by cases h)`.
  const swallow = /\bby\s+(cases|rcases|induction|obtain|generalize)\b[^\n⟨⟩()[\]]*,/g;
  const found = allFiles().flatMap((file) => findings(swallow, fs.readFileSync(path.join(LEAN, file), 'utf8')).map((f) => `${file}: ${f}`));
  assert.deepEqual(found, []);
  assert.deepEqual(findings(swallow, 'theorem t : A ↔ B := ⟨fun h => by cases h, fun g => g.elim⟩'), ['cases (line 1)']);
  assert.deepEqual(findings(swallow, 'theorem t : A ↔ B := ⟨fun h => (by cases h), fun g => g.elim⟩'), []);
});

/** The theorems of `text` with no doc comment right above them (an `open … in` or an attribute may
 * stand between): issue 26 asks that every theorem say what it proves. */
function undocumented(text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    const m = /^(?:private |protected )?(?:theorem|lemma) (\S+)/.exec(line);
    if (!m) return;
    let j = i - 1;
    while (j >= 0 && /^(open .* in|@\[.*\])\s*$/.test(lines[j]!)) j--;
    const above = lines.slice(0, j + 1).join('\n');
    const start = above.lastIndexOf('/-');
    if (!above.trimEnd().endsWith('-/') || above.slice(start, start + 3) !== '/--') found.push(`${m[1]} (line ${i + 1})`);
  });
  return found;
}

test('every theorem says what it proves: a doc comment right above it', () => {
  const found = allFiles()
    .filter((f) => f.startsWith('LarProofs/'))
    .flatMap((file) => undocumented(fs.readFileSync(path.join(LEAN, file), 'utf8')).map((f) => `${file}: ${f}`));
  assert.deepEqual(found, []);
  assert.deepEqual(undocumented('def x := 1\n\ntheorem t : True := trivial'), ['t (line 3)']);
  assert.deepEqual(undocumented('/- a plain comment -/\ntheorem t : True := trivial'), ['t (line 2)']);
  assert.deepEqual(undocumented('open Classical in\n/-- It holds. -/\ntheorem t : True := trivial'), []);
  assert.deepEqual(undocumented('/-- It holds. -/\n@[simp]\ntheorem t : True := trivial'), []);
});

test('no sorry, admit, native_decide or axiom anywhere in the package', () => {
  const found = allFiles().flatMap((file) =>
    findings(/(?<![\w.'])(sorry|admit|native_decide|axiom|sorryAx|implemented_by|extern)(?![\w'!?])/g, fs.readFileSync(path.join(LEAN, file), 'utf8')).map(
      (f) => `${file}: ${f}`,
    ),
  );
  assert.deepEqual(found, []);
});

test('the VSIX ships every file lake needs to build lar-verify', () => {
  // .vscodeignore leaves out everything but what its `!` lines bring back.
  const ignore = fs.readFileSync(path.resolve(__dirname, '../../../.vscodeignore'), 'utf8');
  const kept = ignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('!lean/'))
    .map((l) => new RegExp(`^${l.slice(1).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\u0000/g, '.*')}$`));
  const needed = ['lakefile.toml', 'lean-toolchain', ...closure('Main.lean').keys()].map((f) => `lean/${f}`);
  const missing = needed.filter((f) => !kept.some((re) => re.test(f)));
  assert.deepEqual(missing, [], 'a module the checker imports would be missing from the packaged extension');
  assert.ok(!kept.some((re) => re.test('lean/LarProofs/Spec.lean')), 'the proofs are not shipped');
});
