/**
 * How many tests an outcome check ran, read from the summary its test runner
 * prints, so that a check that ran none (an empty suite exits 0 under most
 * runners) is not taken for a pass. Only summaries we recognise count;
 * anything else is `undefined` and the exit code decides alone.
 */

/** The last match of `re` in `text` (runners print one summary per run; the last is the final one). */
function last(text: string, re: RegExp): RegExpExecArray | undefined {
  let m: RegExpExecArray | null;
  let found: RegExpExecArray | undefined;
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  while ((m = g.exec(text))) found = m;
  return found;
}

function sum(text: string, re: RegExp): number | undefined {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let total: number | undefined;
  for (let m: RegExpExecArray | null; (m = g.exec(text)); ) total = (total ?? 0) + Number(m[1]);
  return total;
}

export function testsRanFrom(output: string): number | undefined {
  // Colours and carriage returns would split the summaries.
  const text = output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
  // node --test: "# tests 3" (TAP) or "ℹ tests 3" (spec reporter).
  const node = last(text, /^(?:#|ℹ) tests (\d+)$/m);
  if (node) return Number(node[1]);
  // Jest: "Tests:       1 failed, 2 passed, 3 total"; "No tests found, exiting with code 0".
  const jest = last(text, /^Tests:\s+.*?(\d+) total\s*$/m);
  if (jest) return Number(jest[1]);
  if (/^No tests found/m.test(text)) return 0;
  // Vitest: " Tests  3 passed (3)"; "No test files found".
  const vitest = last(text, /^\s*Tests\s+.*\((\d+)\)\s*$/m);
  if (vitest) return Number(vitest[1]);
  if (/No test files found/.test(text)) return 0;
  // Mocha: "  2 passing", "  1 failing", "  1 pending".
  const passing = last(text, /^\s*(\d+) passing\b/m);
  if (passing) {
    const failing = last(text, /^\s*(\d+) failing\b/m);
    const pending = last(text, /^\s*(\d+) pending\b/m);
    return Number(passing[1]) + Number(failing?.[1] ?? 0) + Number(pending?.[1] ?? 0);
  }
  // pytest: "collected 3 items"; "no tests ran".
  if (/\bno tests ran\b/.test(text)) return 0;
  const pytest = last(text, /^collected (\d+) items?\b/m);
  if (pytest) return Number(pytest[1]);
  // cargo test: one "running N tests" per test binary (unit, integration, doc).
  const cargo = sum(text, /^running (\d+) tests?$/m);
  if (cargo !== undefined) return cargo;
  // go test: only packages without tests ("[no test files]") and none that ran.
  if (/\[no test files\]/.test(text) && !/^(ok|FAIL|---|PASS)\b/m.test(text)) return 0;
  return undefined;
}
