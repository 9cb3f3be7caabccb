import fc from 'fast-check';
import type { TrajectoryEvent } from '../../core/schema/trajectory';

/** Random but plausible trajectory events over the default workflow's vocabulary, bad ones included. */
const stageName = fc.constantFrom('explore', 'edit', 'verify', 'nowhere');
const path = fc.constantFrom('src/a.ts', 'test/a.test.ts', '../etc/passwd', '/abs', 'src\\b.ts', '.git/config', 'a/../b');
const command = fc.constantFrom('npm test', 'ls', 'rm -rf /', 'ls && rm -rf /', 'sudo ls', 'echo $(whoami)', 'npm   test', 'git push origin');

const args = fc.oneof(
  fc.record({ command }),
  fc.record({ path }),
  fc.record({ path, content: fc.string({ maxLength: 5 }) }),
  fc.record({ path, search: fc.constantFrom('a', 'b'), replace: fc.string({ maxLength: 3 }) }),
  fc.record({ stage: stageName }),
  fc.record({ summary: fc.string({ maxLength: 5 }) }),
  fc.record({ pattern: fc.constantFrom('TODO', 'x') }),
  fc.constant({}),
  fc.constant(null),
  fc.record({ bogus: fc.integer() }),
);

const toolCall: fc.Arbitrary<TrajectoryEvent> = fc
  .record({
    tool: fc.constantFrom('run_command', 'read_file', 'write_file', 'edit_file', 'list_files', 'search', 'enter_stage', 'submit', 'rm_everything'),
    args,
    status: fc.constantFrom('ok', 'ok', 'ok', 'error', 'blocked', 'denied', 'timeout', 'interrupted'),
    exitCode: fc.constantFrom(0, 0, 1, null, undefined),
    completion: fc.constantFrom('marker', 'exit', 'timeout', 'unobserved', undefined),
    changed: fc.constantFrom<string[] | undefined>(undefined, [], ['src/a.ts']),
  })
  .map(({ tool, args, status, exitCode, completion, changed }) => {
    const result: Record<string, unknown> = {};
    if (exitCode !== undefined) result.exitCode = exitCode;
    if (completion !== undefined) result.completion = completion;
    if (changed !== undefined) result.filesChanged = changed;
    return { type: 'tool_call', tool, args, status, result } as TrajectoryEvent;
  });

const outcome: fc.Arbitrary<TrajectoryEvent> = fc
  .record({ exitCode: fc.constantFrom(0, 1, null), completion: fc.constantFrom('exit', 'timeout', undefined) })
  .map(({ exitCode, completion }) => ({ type: 'outcome', command: 'npm test', exitCode, ...(completion ? { completion } : {}) }) as TrajectoryEvent);

const message: fc.Arbitrary<TrajectoryEvent> = fc.constant({ type: 'message', role: 'assistant', content: 'thinking' });

export const events = fc.array(fc.oneof({ weight: 8, arbitrary: toolCall }, { weight: 1, arbitrary: outcome }, { weight: 1, arbitrary: message }), {
  maxLength: 40,
});
