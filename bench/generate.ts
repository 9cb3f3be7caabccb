/**
 * Generates realistic trajectories for benchmarks: explore, then repeated
 * edit → verify cycles with failing and passing test runs, occasional
 * violations and loops, and a submit at the end.
 */
export function generateTrajectory(steps: number): string {
  const lines: string[] = [
    JSON.stringify({
      lar: 1,
      type: 'header',
      task: 'benchmark',
      workflow: 'builtin:default-coding',
      model: { name: 'bench' },
      started: '2026-11-30T00:00:00Z',
    }),
  ];
  const call = (tool: string, args: unknown, status = 'ok', result?: unknown) =>
    lines.push(
      JSON.stringify({
        type: 'tool_call',
        id: `call_${lines.length}`,
        tool,
        args,
        status,
        ...(result ? { result } : {}),
      }),
    );
  let n = 0;
  const push = (tool: string, args: unknown, status = 'ok', result?: unknown) => {
    if (n < steps) {
      call(tool, args, status, result);
      n++;
    }
  };
  push('list_files', { path: '.' }, 'ok', { output: 'src\ntest', durationMs: 2 });
  push('read_file', { path: 'src/index.ts' }, 'ok', { output: 'export const x = 1;', durationMs: 1 });
  push('enter_stage', { stage: 'edit' });
  let i = 0;
  // Each cycle is at most 7 steps; stop early enough to finish properly.
  while (n < steps - 10) {
    const file = `src/module${i % 50}.ts`;
    push('read_file', { path: file }, 'ok', { output: 'export function f() { return 1; }', durationMs: 1 });
    push('edit_file', { path: file, search: 'return 1', replace: `return ${i}` }, 'ok', {
      filesChanged: [file],
      durationMs: 3,
    });
    if (i % 7 === 3) push('write_file', { path: '../outside.txt', content: 'x' }, 'blocked');
    push('enter_stage', { stage: 'verify' });
    const passes = i % 3 === 2;
    push('run_command', { command: 'npm test' }, 'ok', {
      exitCode: passes ? 0 : 1,
      completion: 'marker',
      output: passes ? '# pass 12' : '# fail 1',
      durationMs: 900,
    });
    if (!passes && i % 5 === 0)
      push('run_command', { command: 'npm test' }, 'ok', {
        exitCode: 1,
        completion: 'marker',
        output: '# fail 1',
        durationMs: 880,
      });
    push('enter_stage', { stage: 'edit' });
    i++;
  }
  // Pad in edit so the run has exactly `steps` calls, then verify and submit.
  while (n < steps - 3) push('read_file', { path: `src/module${n % 50}.ts` }, 'ok', { output: 'x', durationMs: 1 });
  push('enter_stage', { stage: 'verify' });
  push('run_command', { command: 'npm test' }, 'ok', {
    exitCode: 0,
    completion: 'marker',
    output: '# pass 12',
    durationMs: 900,
  });
  push('submit', { summary: 'done' });
  lines.push(JSON.stringify({ type: 'outcome', command: 'npm test', exitCode: 0, completion: 'exit' }));
  return lines.join('\n') + '\n';
}
