/**
 * The scripted run the agent benchmark replays: a small workspace and a model
 * script of one tool call per turn that follows the default-coding workflow
 * (explore, then edit → verify cycles, then submit), so every call passes the
 * gate and the run ends with `submit` at exactly the asked number of steps.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScriptedToolCall, ScriptedTurn } from '../testkit/scripted-turns';

const DIRS = ['core', 'api', 'util', 'store', 'ui'];
const FILES_PER_DIR = 8;
/** The file the edits toggle, and the line they toggle. */
const EDITED = 'src/core/m0.js';
const TEST_COMMAND = 'sh test.sh';

const sourcePath = (i: number): string =>
  `src/${DIRS[i % DIRS.length]}/m${Math.floor(i / DIRS.length) % FILES_PER_DIR}.js`;

/** 40 source files of 60 lines, a test script and a README, in a fresh temp folder. */
export function benchWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lar-agent-bench-'));
  for (const d of DIRS) {
    mkdirSync(join(dir, 'src', d), { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const lines = [
        `const mode = 'A';`,
        ...Array.from(
          { length: 59 },
          (_, i) => `function ${d}${f}_${i}(value${i % 10}) { return value${i % 10} * ${i}; }`,
        ),
      ];
      writeFileSync(join(dir, 'src', d, `m${f}.js`), `${lines.join('\n')}\n`);
    }
  }
  writeFileSync(join(dir, 'test.sh'), "echo 'tests: 12 passed'\n");
  writeFileSync(join(dir, 'README.md'), '# bench workspace\n');
  return dir;
}

export const OUTCOME_COMMAND = TEST_COMMAND;

/** Tool calls for a run of exactly `steps` steps (at least 23), the last one `submit`. */
export function scriptedCalls(steps: number): ScriptedToolCall[] {
  if (steps < 23) throw new Error('a scripted run needs at least 23 steps');
  let reads = 0;
  const read = (): ScriptedToolCall => ({ name: 'read_file', arguments: { path: sourcePath(reads++) } });
  const calls: ScriptedToolCall[] = [
    { name: 'list_files', arguments: {} },
    { name: 'list_files', arguments: { path: 'src', recursive: true } },
    ...Array.from({ length: 6 }, read),
    { name: 'run_command', arguments: { command: 'ls src | wc -l' } },
    { name: 'search', arguments: { pattern: 'mode', path: 'src/core' } },
    { name: 'enter_stage', arguments: { stage: 'edit', reason: 'found the code' } },
  ];
  for (let k = 0; ; k++) {
    const [from, to] = k % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
    calls.push(
      read(),
      read(),
      read(),
      { name: 'search', arguments: { pattern: `value${k % 10}`, path: 'src/util' } },
      {
        name: 'edit_file',
        arguments: { path: EDITED, search: `const mode = '${from}';`, replace: `const mode = '${to}';` },
      },
      { name: 'enter_stage', arguments: { stage: 'verify' } },
      { name: 'run_command', arguments: { command: TEST_COMMAND } },
      read(),
      read(),
      { name: 'list_files', arguments: { path: 'src' } },
    );
    // Another cycle needs enter_stage, its 10 calls and the final submit; else pad this verify visit (budget 20).
    const left = steps - calls.length;
    if (left >= 13) {
      calls.push({ name: 'enter_stage', arguments: { stage: 'edit', reason: 'next change' } });
      continue;
    }
    for (let i = 0; i < left - 1; i++) calls.push(read());
    calls.push({ name: 'submit', arguments: { summary: 'done' } });
    return calls;
  }
}

/** One call per turn; every fourth turn also says something, as models do. */
export function scriptedTurns(steps: number): ScriptedTurn[] {
  return scriptedCalls(steps).map((call, i) => ({
    ...(i % 4 === 0 ? { content: `Step ${i + 1}: next I call ${call.name}.` } : {}),
    toolCalls: [call],
  }));
}
