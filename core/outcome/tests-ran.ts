/**
 * How many tests an outcome check ran, read from the summary its test runner
 * prints, so that a check that ran none (an empty suite exits 0 under most
 * runners) is not taken for a pass. Only summaries we recognise count;
 * anything else is `undefined` and the exit code decides alone.
 */

function sum(text: string, re: RegExp): number | undefined {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let total: number | undefined;
  for (let m: RegExpExecArray | null; (m = g.exec(text));) total = (total ?? 0) + Number(m[1]);
  return total;
}

export function testsRanFrom(output: string): number | undefined {
  // Colours and carriage returns would split the summaries.
  const text = output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
  // A check may run the runner several times (workspaces, `a && b`): the tests of every run count.
  // node --test: "# tests 3" (TAP) or "ℹ tests 3" (spec reporter).
  const node = sum(text, /^(?:#|ℹ) tests (\d+)$/m);
  if (node !== undefined) return node;
  // Jest: "Tests:       1 failed, 2 passed, 3 total"; "No tests found, exiting with code 0".
  const jest = sum(text, /^Tests:\s+.*?(\d+) total\s*$/m);
  if (jest !== undefined) return jest;
  if (/^No tests found/m.test(text)) return 0;
  // Vitest: " Tests  3 passed (3)"; "No test files found".
  const vitest = sum(text, /^\s*Tests\s+.*\((\d+)\)\s*$/m);
  if (vitest !== undefined) return vitest;
  if (/No test files found/.test(text)) return 0;
  // Mocha: "  2 passing", "  1 failing", "  1 pending".
  const passing = sum(text, /^\s*(\d+) passing\b/m);
  if (passing !== undefined)
    return passing + (sum(text, /^\s*(\d+) failing\b/m) ?? 0) + (sum(text, /^\s*(\d+) pending\b/m) ?? 0);
  // pytest: "collected 3 items"; "no tests ran".
  const pytest = sum(text, /^collected (\d+) items?\b/m);
  if (pytest !== undefined) return pytest;
  if (/\bno tests ran\b/.test(text)) return 0;
  // cargo test: one "running N tests" per test binary (unit, integration, doc).
  const cargo = sum(text, /^running (\d+) tests?$/m);
  if (cargo !== undefined) return cargo;
  // go test: only packages without tests ("[no test files]") and none that ran.
  if (/\[no test files\]/.test(text) && !/^(ok|FAIL|---|PASS)\b/m.test(text)) return 0;
  return undefined;
}
